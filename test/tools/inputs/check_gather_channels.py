"""`check_gather_channels.py DIR`: numpy's answer for inputs/gather-channels.sg against the
interpreter's results in DIR/interp2 and DIR/interp3 (gather-channels.test)."""
import sys

import numpy as n

d = sys.argv[1]
for b in (2, 3):
    a, bb = n.load(f"{d}/a{b}.npy"), n.load(f"{d}/b{b}.npy")
    unblock = lambda x: x.transpose(0, 1, 4, 2, 3).reshape(x.shape[0], -1, 3, 5)
    cat = n.concatenate([unblock(a)[:, :14], unblock(bb)[:, :6]], 1)
    src = [0, 14, 1, 15, 2, 16, 3, 17, 4, 18, 5, 19, 6, 7, 8, 9, 10, 11, 12, 13]
    y = unblock(n.load(f"{d}/interp{b}/y.npy"))
    assert (y[:, :20] == cat[:, src]).all() and (y[:, 20:] == 0).all()
    c2 = n.concatenate([n.load(f"{d}/p{b}.npy"), n.load(f"{d}/q{b}.npy")], 1)
    assert (n.load(f"{d}/interp{b}/z.npy") == c2[:, [10, 0, 1, 2, 9, 8, 3]]).all()
