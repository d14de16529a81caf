#!/usr/bin/python3
"""Checks every zoo model end to end: import, verify, print -> parse -> print identity, and the
interpreter's outputs against torch's (max |diff| <= 1e-4 * max |reference|)."""
import argparse
import glob
import os
import subprocess
import sys
import time

import numpy as np

TOLERANCE = 1e-4


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

    first = os.path.join(work, "model.sg")
    second = os.path.join(work, "reparsed.sg")
    run([strata, "import", onnx_path, "-o", first, "--emit-blobs"])
    run([opt, first, "-o", second, "--emit-blobs"])
    with open(first) as a, open(second) as b:
        if a.read() != b.read():
            raise RuntimeError(f"{name}: print(parse(print(g))) differs from print(g)")

    # An unfolded export shares its folded twin's reference data.
    ref = name[: -len("_unfolded")] if name.endswith("_unfolded") else name
    cases = [("", f"{ref}.input.npy", f"{ref}.output.npy")]
    if os.path.exists(os.path.join(args.zoo, f"{ref}.b8.input.npy")):
        cases.append(("b8", f"{ref}.b8.input.npy", f"{ref}.b8.output.npy"))
    report = []
    for tag, inp, outp in cases:
        out_dir = os.path.join(work, tag or "b1")
        run([strata, "run", onnx_path, "--input", "input=" + os.path.join(args.zoo, inp),
             "--output-dir", out_dir])
        got = np.load(os.path.join(out_dir, "output.npy"))
        want = np.load(os.path.join(args.zoo, outp))
        if got.shape != want.shape:
            raise RuntimeError(f"{name}{tag}: shape {got.shape} but torch gives {want.shape}")
        rel = float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))
        if not rel <= TOLERANCE:
            raise RuntimeError(f"{name}{tag}: max error {rel:.3g} of max |reference| > {TOLERANCE}")
        report.append(f"{tag or 'b1'} rel.err {rel:.2e}")
    ops = sum(1 for line in open(first) if " = " in line)
    print(f"PASS {name}: {ops} ops, {', '.join(report)}, {time.time() - start:.1f} s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--zoo", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    models = sorted(glob.glob(os.path.join(args.zoo, "*.onnx")))
    if not models:
        print(f"no models in {args.zoo}: run `make test-data` first", file=sys.stderr)
        return 1
    failed = 0
    for m in models:
        try:
            check_model(args, m)
        except RuntimeError as e:
            failed += 1
            print(f"FAIL {e}", flush=True)
    print(f"{len(models) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
