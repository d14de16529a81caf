#!/usr/bin/python3
"""`check_outputs.py DIR NAME=VALUES...`: each DIR/NAME.npy must equal VALUES (a Python list,
NaN written as nan, compared elementwise with NaN equal to NaN)."""
import sys

import numpy as np

d = sys.argv[1]
for spec in sys.argv[2:]:
    name, values = spec.split("=", 1)
    got = np.load(f"{d}/{name}.npy")
    want = np.array(eval(values, {"nan": np.nan, "inf": np.inf}), dtype=got.dtype)
    if got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        sys.exit(f"{d}/{name}.npy: got {got.tolist()}, expected {want.tolist()}")
print("outputs as expected")
