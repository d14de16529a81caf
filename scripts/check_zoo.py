#!/usr/bin/python3
"""Checks every zoo model end to end: import, verify, print -> parse -> print identity (with the
weights' text for models up to 25 MB), the interpreter's outputs against torch's (max |diff|
<= 1e-4 * max |reference|), and the same for the graph optimized by the default pipeline (also
run under --verify-semantics), the JIT engine
and an AOT library (`strata compile -o model.so`, run through its C API; a dynamic-batch model's
one library at batch 1 and 8). The arena `strata compile --stats` reports must be the one the
library's executor allocates (`strata run` prints it).
Unfolded exports must optimize to the same op and kernel counts as their folded twins; past the
text round trip they are checked through the optimizer (--verify-semantics) and the JIT only
(what runs after the optimizer is, by those counts, their twin's). --shard I/N checks the I-th of N groups of models (a model and its
twins stay together), so ctest can run the zoo on several cores."""
import argparse
import glob
import os
import subprocess
import sys
import time

import numpy as np

TOLERANCE = 1e-4
BLOB_ROUND_TRIP_BYTES = 25 << 20


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
    return r.stdout


def check_model(args, onnx_path):
    name = os.path.basename(onnx_path)[: -len(".onnx")]
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    strata = os.path.join(args.bin, "strata")
    opt = os.path.join(args.bin, "strata-opt")
    start = time.time()
    # An unfolded export shares its folded twin's reference data.
    unfolded = name.endswith("_unfolded")
    ref = name[: -len("_unfolded")] if unfolded else name

    # The weights' text too where the model is small (printing and parsing 100 MB of weights as
    # text takes ten seconds and checks nothing the small ones do not).
    blobs = ["--emit-blobs"] if os.path.getsize(onnx_path) <= BLOB_ROUND_TRIP_BYTES else []
    first = os.path.join(work, "model.sg")
    second = os.path.join(work, "reparsed.sg")
    run([strata, "import", onnx_path, "-o", first, *blobs])
    run([opt, first, "-o", second, *blobs])
    with open(first) as a, open(second) as b:
        if a.read() != b.read():
            raise RuntimeError(f"{name}: print(parse(print(g))) differs from print(g)")
    # The default pipeline, checked pass by pass against the interpreter.
    optimized = os.path.join(work, "optimized.sg")
    stats_text = run([strata, "compile", onnx_path, "--emit=graph", "--emit-blobs",
                      "--verify-semantics", "--stats", "-o", optimized])
    stats = dict(line.split(": ", 1) for line in stats_text.splitlines() if ": " in line)

    report = []
    cases = [("", f"{ref}.input.npy", f"{ref}.output.npy")]
    if os.path.exists(os.path.join(args.zoo, f"{ref}.b8.input.npy")):
        cases.append(("b8", f"{ref}.b8.input.npy", f"{ref}.b8.output.npy"))
    # The interpreter on the imported and the optimized graph, the JIT engine, and one AOT
    # library that serves every batch size.
    runs = [(onnx_path, "jit", "jit")]
    if not unfolded:
        runs = [(onnx_path, "", "interp"), (optimized, "opt", "interp")] + runs
        library = os.path.join(work, "model.so")
        compile_start = time.time()
        lib_stats_text = run([strata, "compile", onnx_path, "-o", library, "--stats"])
        lib_stats = dict(line.split(": ", 1) for line in lib_stats_text.splitlines()
                         if ": " in line)
        report.append(f"aot compile {time.time() - compile_start:.1f} s")
        runs.append((library, "aot", "aot"))
    for (tag, inp, outp), (model, kind, engine) in [(c, r) for c in cases for r in runs]:
        tag = "-".join(t for t in (tag or "b1", kind) if t)
        out_dir = os.path.join(work, tag)
        engine_args = [] if engine == "aot" else ["--engine", engine]
        # Models with more inputs than "input" keep each as NAME.<input>.npy (batch 1).
        extra = []
        if not tag.startswith("b8"):
            for f in sorted(glob.glob(os.path.join(args.zoo, f"{ref}.*.npy"))):
                part = os.path.basename(f)[len(ref) + 1: -len(".npy")]
                if part not in ("input", "output") and not part.startswith("b8"):
                    extra += ["--input", f"{part}={f}"]
        run_out = run([strata, "run", model, *engine_args, "--input",
                       "input=" + os.path.join(args.zoo, inp), *extra, "--output-dir", out_dir])
        if engine == "aot" and tag == "b1-aot":
            ran = [line.split()[1] for line in run_out.splitlines() if line.startswith("arena:")]
            if ran != [lib_stats["arena_peak_bytes"]]:
                raise RuntimeError(f"{name}: --stats reports arena {lib_stats['arena_peak_bytes']} "
                                   f"but the executor allocated {ran}")
        got = np.load(os.path.join(out_dir, "output.npy"))
        want = np.load(os.path.join(args.zoo, outp))
        if got.shape != want.shape:
            raise RuntimeError(f"{name}{tag}: shape {got.shape} but torch gives {want.shape}")
        rel = float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))
        if not rel <= TOLERANCE:
            raise RuntimeError(f"{name}{tag}: max error {rel:.3g} of max |reference| > {TOLERANCE}")
        report.append(f"{tag} rel.err {rel:.2e}")
    print(f"PASS {name}: ops {stats['ops_imported']} -> {stats['ops_optimized']}, kernels "
          f"{stats['kernels']}, arena {stats['arena_peak_bytes']} of "
          f"{stats['intermediate_total_bytes']} bytes; {', '.join(report)}; "
          f"{time.time() - start:.1f} s", flush=True)
    if name.startswith("resnet50") and 2 * int(stats["arena_peak_bytes"]) > int(
            stats["intermediate_total_bytes"]):
        raise RuntimeError(f"{name}: arena exceeds half of the intermediate bytes")
    return stats


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--zoo", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--shard", default="0/1", help="I/N: the I-th of N groups of models")
    args = p.parse_args()
    models = sorted(glob.glob(os.path.join(args.zoo, "*.onnx")))
    if not models:
        print(f"no models in {args.zoo}: run `make test-data` first", file=sys.stderr)
        return 1
    try:
        index, count = (int(x) for x in args.shard.split("/"))
    except ValueError:
        index, count = -1, 0
    if not 0 <= index < count:
        print(f"--shard {args.shard}: expected I/N with 0 <= I < N", file=sys.stderr)
        return 1
    groups = sorted({os.path.basename(m)[: -len(".onnx")].removesuffix("_unfolded")
                     for m in models})
    mine = set(groups[index::count])
    models = [m for m in models
              if os.path.basename(m)[: -len(".onnx")].removesuffix("_unfolded") in mine]
    if not models:
        print(f"shard {args.shard} of {len(groups)} model groups holds none", file=sys.stderr)
        return 1
    failed = 0
    results = {}
    for m in models:
        try:
            results[os.path.basename(m)[: -len(".onnx")]] = check_model(args, m)
        except RuntimeError as e:
            failed += 1
            print(f"FAIL {e}", flush=True)
    # strata folds BatchNorms, shapes and constants itself: unfolded twins end up identical.
    for name, stats in results.items():
        twin = results.get(name[: -len("_unfolded")]) if name.endswith("_unfolded") else None
        if twin and (stats["ops_optimized"], stats["kernels"]) != (twin["ops_optimized"],
                                                                 twin["kernels"]):
            failed += 1
            print(f"FAIL {name}: optimizes to {stats['ops_optimized']} ops / {stats['kernels']} "
                  f"kernels but its folded twin to {twin['ops_optimized']} / {twin['kernels']}")
    print(f"{len(models) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
