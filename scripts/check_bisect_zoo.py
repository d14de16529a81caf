#!/usr/bin/python3
"""strata bisect on zoo models (docs/bisect.md): without a fault it prints `no mismatch`; with a
fault injected at each rung (a graph pass, a kernel, a schedule step) its last line names that
culprit, its reproducer has at most a few ops, and the reproducer's rerun.sh fails the same way.

usage: check_bisect_zoo.py --bin BUILD/bin --zoo BUILD/zoo --work DIR"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

# Per model: the faults and the culprit each must be named as (a regular expression).
CASES = {
    "resnet18": [
        ("graph-pass:fold-batchnorm", r"graph-pass: fold-batchnorm"),
        ("kernel:k4_kernel", r"kernel: k4_kernel"),
        ("schedule:vectorize", r"schedule: vectorize\(.*\)"),
    ],
    "mobilenet_v2": [
        ("graph-pass:fuse", r"graph-pass: fuse"),
        ("kernel:k7_kernel", r"kernel: k7_kernel"),
        ("schedule:parallel", r"schedule: parallel\(.*\)"),
    ],
}
MAX_REPRO_OPS = 4


def run(cmd):
    start = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r, time.time() - start


def last_line(r):
    lines = r.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    strata = os.path.join(a.bin, "strata")
    failures = 0
    for model, faults in CASES.items():
        onnx = os.path.join(a.zoo, model + ".onnx")
        base = [strata, "bisect", onnx, "--input", os.path.join(a.zoo, model + ".input.npy"),
                "--threads", "2"]
        r, secs = run(base + ["--repro-dir", os.path.join(a.work, model, "none")])
        ok = r.returncode == 0 and last_line(r) == "no mismatch"
        print(f"{model}: no fault: {last_line(r)!r} in {secs:.1f} s {'ok' if ok else 'FAILED'}")
        failures += not ok
        for fault, culprit in faults:
            d = os.path.join(a.work, model, fault.replace(":", "_"))
            shutil.rmtree(d, ignore_errors=True)
            r, secs = run(base + ["--inject-fault=" + fault, "--repro-dir", d])
            m = re.search(r"^reproducer: .* \((\d+) ops\)", r.stdout, re.M)
            ops = int(m.group(1)) if m else None
            problems = []
            if r.returncode != 1:
                problems.append(f"exit code {r.returncode}")
            if not re.fullmatch("culprit: " + culprit, last_line(r)):
                problems.append(f"last line {last_line(r)!r}")
            if ops is None or ops > MAX_REPRO_OPS:
                problems.append(f"reproducer of {ops} ops")
            rerun = None
            if os.path.exists(os.path.join(d, "rerun.sh")):
                rr, _ = run(["sh", os.path.join(d, "rerun.sh")])
                rerun = last_line(rr)
                # The reduced model names its kernel by its own plan index (k0_...).
                want = re.sub(r"k\d+_", "k0_", culprit)
                if rr.returncode != 1 or not re.fullmatch("culprit: " + want, rerun):
                    problems.append(f"rerun says {rerun!r}")
            else:
                problems.append("no rerun.sh")
            status = "ok" if not problems else "FAILED: " + "; ".join(problems)
            print(f"{model}: {fault}: {last_line(r)!r}, reproducer {ops} ops, rerun {rerun!r}, "
                  f"{secs:.1f} s {status}")
            if problems:
                failures += 1
                sys.stdout.write(r.stdout + r.stderr)
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
