#!/usr/bin/env python3
"""strata explain's reports, opened in Chromium: for each model, writes the report, takes
`strata compile --emit=loop --stats` as the counts it must show, and runs
test/explain/report_test.js (playwright-core driving /usr/bin/chromium) on it. Screenshots land in
the work directory. With --bench, also prints each model's per-kernel times next to
`strata bench --profile`'s (not asserted: timings are noisy)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def report_data(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--node-modules", required=True)
    ap.add_argument("--models", default="resnet18,mobilenet_v2,transformer")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--bench", action="store_true")
    args = ap.parse_args()
    strata = os.path.join(args.bin, "strata")
    os.makedirs(args.work, exist_ok=True)
    test_js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "explain",
                           "report_test.js")
    chromium = os.environ.get("STRATA_CHROMIUM", "/usr/bin/chromium")
    if not os.path.exists(chromium) or not os.path.isdir(
            os.path.join(args.node_modules, "playwright-core")):
        print(f"check_explain: needs {chromium} and playwright-core in {args.node_modules}: "
              "run `make browser-deps`", file=sys.stderr)
        return 1
    env = dict(os.environ, NODE_PATH=args.node_modules)
    failed = False
    for name in args.models.split(","):
        model = os.path.join(args.zoo, name + ".onnx")
        report = os.path.join(args.work, name + ".html")
        start = time.time()
        run([strata, "explain", model, "-o", report, "--threads", args.threads, "--iters", "10",
             "-q"])
        explain_s = time.time() - start
        stats = run([strata, "compile", model, "--emit=loop", "-o", os.devnull, "--stats"]).stdout
        stats_path = os.path.join(args.work, name + ".stats.txt")
        open(stats_path, "w").write(stats)
        size = os.path.getsize(report) / 1e6
        r = subprocess.run(["node", test_js, report, stats_path, args.work], text=True,
                           capture_output=True, env=env)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        print(f"{name}: explain {explain_s:.1f} s, report {size:.1f} MB, browser test "
              f"{'ok' if r.returncode == 0 else 'FAILED'}")
        failed |= r.returncode != 0
        if args.bench:
            data = report_data(report)
            out = run([strata, "bench", model, "--threads", args.threads, "--iters", "10",
                       "--warmup", "2", "--profile", "1000"]).stdout
            bench = {}
            for line in out.splitlines():
                m = re.match(r"\s+[\d.]+%\s+([\d.]+)\s+[\d.]+ GFLOP/s\s+[\d.]+ GB/s\s+[\d.]+%\s+(.*)$",
                             line)
                if m:
                    bench[m.group(2)] = float(m.group(1))
            kernel_sum = sum(k["ms"] for k in data["kernels"])
            bench_sum = sum(bench.values())
            print(f"{name}: kernel time per run: explain {kernel_sum:.3f} ms, bench --profile "
                  f"{bench_sum:.3f} ms (ratio {kernel_sum / bench_sum:.2f})")
            top = sorted(data["kernels"], key=lambda k: -k["ms"])[:5]
            for k in top:
                b = bench.get(k["step"])
                print(f"  {k['name']:<28} explain {k['ms']:.3f} ms   bench "
                      f"{'%.3f' % b if b is not None else '-'} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
