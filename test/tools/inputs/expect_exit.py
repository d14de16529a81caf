#!/usr/bin/python3
"""`expect_exit.py CODE CMD...`: runs CMD, passes its stdout and stderr through, and exits 0 only
if CMD exited with CODE (lit's `not` only tells zero from non-zero)."""
import subprocess
import sys

want = int(sys.argv[1])
r = subprocess.run(sys.argv[2:])
if r.returncode != want:
    print(f"expected exit code {want}, got {r.returncode}", file=sys.stderr)
    sys.exit(1)
