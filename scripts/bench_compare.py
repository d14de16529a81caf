#!/usr/bin/python3
"""Side-by-side latency of strata and ONNX Runtime on the zoo models (`make bench`).

For each model, runs `strata bench --json` and `node scripts/bench_ort.js --json` with the same
threads, iterations, warmup and symbolic dim sizes (both feed seeded random inputs of the
declared shapes), then prints one row per model: each engine's median/min/max latency in ms and
the ratio of the medians (strata / ORT; above 1 means strata is slower). `--json` prints the
rows as a JSON list instead. Exits non-zero if any run failed; the other rows are still shown.
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "transformer",
              # scripts/export_bench_models.py
              "shufflenet_v2_x1_0", "regnet_y_400mf", "efficientnet_b0", "mobilenet_v3_small",
              "bert_encoder", "gpt2_decoder"]


def run_json(cmd, timeout):
    """Runs `cmd` and returns (report, None) from the last stdout line, or (None, error)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    except OSError as e:
        return None, str(e)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        err = [l for l in proc.stderr.splitlines() if l.startswith("error")] or \
            proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return None, err[0]
    return json.loads(lines[-1]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*",
                    help="ONNX files (default: the zoo models present in --zoo)")
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--strata", default=os.path.join(ROOT, "build", "bin", "strata"))
    ap.add_argument("--node", default="node")
    ap.add_argument("--engine", default="jit", choices=["jit", "interp"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per engine and model")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()

    models = args.models or [p for p in (os.path.join(args.zoo, m + ".onnx") for m in ZOO_MODELS)
                             if os.path.exists(p)]
    if not models:
        sys.exit(f"error: no models given and none of {ZOO_MODELS} in {args.zoo} "
                 "(make test-data writes them)")
    common = ["--threads", str(args.threads), "--iters", str(args.iters),
              "--warmup", str(args.warmup), "--json"]
    for d in args.dim:
        common += ["--dim", d]

    rows, failed = [], False
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        if not args.json:
            print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
        strata, strata_err = run_json(
            [args.strata, "bench", model, "--engine", args.engine] + common, args.timeout)
        ort, ort_err = run_json(
            [args.node, os.path.join(ROOT, "scripts", "bench_ort.js"), model] + common,
            args.timeout)
        row = {"model": name, "strata": strata, "ort": ort}
        if strata_err:
            row["strata_error"] = strata_err
        if ort_err:
            row["ort_error"] = ort_err
        row["ratio"] = strata["median_ms"] / ort["median_ms"] if strata and ort else None
        failed |= bool(strata_err or ort_err)
        rows.append(row)

    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows, args)
    return 1 if failed else 0


def print_table(rows, args):
    def cells(r):
        return [f"{r['median_ms']:.3f}", f"{r['min_ms']:.3f}", f"{r['max_ms']:.3f}"] if r \
            else ["error", "-", "-"]

    header = ["model", "strata median", "min", "max", "ORT median", "min", "max", "strata/ORT"]
    table = [header] + [[r["model"]] + cells(r["strata"]) + cells(r["ort"]) +
                        [f"{r['ratio']:.2f}x" if r["ratio"] else "-"] for r in rows]
    widths = [max(len(t[i]) for t in table) for i in range(len(header))]
    print(f"latency in ms: strata --engine {args.engine} vs onnxruntime-node (CPU), "
          f"{args.threads} threads, {args.iters} runs after {args.warmup} warmup")
    for i, t in enumerate(table):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in
                        enumerate(zip(t, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geometric mean strata/ORT over {len(ratios)} models: {geo:.2f}x; "
              f"worst {max(ratios):.2f}x")
    for r in rows:
        for key in ("strata_error", "ort_error"):
            if key in r:
                print(f"{r['model']}: {key.split('_')[0]}: {r[key]}")


if __name__ == "__main__":
    sys.exit(main())
