#!/usr/bin/python3
"""`check_topk.py X.npy Y.npy DIR`: compares topk-sorted.sg's outputs in DIR with numpy: entries
in order (larger first for largest, NaN beyond every number), ties to the lower index."""
import sys

import numpy as np


def topk(x, k, largest):
    idx = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    filled = np.where(nan, 0, x).astype(np.float64)
    # lexsort's last key is the primary one: NaN first when largest, last otherwise.
    order = np.array([np.lexsort((idx[r], -filled[r] if largest else filled[r],
                                  ~nan[r] if largest else nan[r]))[:k] for r in range(len(x))])
    order = order.reshape(len(x), k)
    return np.take_along_axis(x, order, 1), order


x, y, out = np.load(sys.argv[1]), np.load(sys.argv[2]), sys.argv[3]
for name, (want_v, want_i) in {"": topk(x, 20, True), "s": topk(x, 20, False),
                               "y": topk(y, 9, True)}.items():
    got_v, got_i = np.load(f"{out}/{name}v.npy"), np.load(f"{out}/{name}i.npy")
    assert np.array_equal(got_i, want_i), (name, got_i, want_i)
    assert np.array_equal(got_v, want_v, equal_nan=True), (name, got_v, want_v)
print("topk matches numpy")
