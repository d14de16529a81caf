"""`check_attention.py make DIR` writes inputs for inputs/attention.sg at two sizes (DIR/1, DIR/2:
the symbolic n, s, m differ); `check_attention.py run DIR/K OUT MODEL FLAGS...` runs `strata run
MODEL FLAGS...` on the inputs DIR/K, writing OUT; `check_attention.py check DIR/K OUT...` compares
each OUT's results with numpy's softmax(scale * q @ k^T + bias) @ v in f64 (attention.test)."""
import os
import subprocess
import sys

NAMES = ["qa", "ka", "va", "ma", "qb", "ktb", "vb", "bb", "qc", "kc", "vc", "mc", "qd", "kd", "vd",
         "bd", "qe", "ke", "ve", "qf", "kf", "vf", "qg", "kg", "vg"]

import numpy as n

SIZES = {"1": dict(n=1, s=37, m=70), "2": dict(n=2, s=130, m=3)}


def make(d):
    r = n.random.default_rng(7)
    for key, z in SIZES.items():
        os.makedirs(f"{d}/{key}", exist_ok=True)
        f = lambda *s: r.standard_normal(s).astype(n.float32)
        ma = f(1, 3, 5, 19)
        ma[0, 1, 2, 4] = ma[0, 2, :, 18] = -n.inf
        mc = n.where(r.random((z["n"], 1, 1, z["s"])) < 0.2, -1e4, 0).astype(n.float32)
        arrays = dict(qa=f(2, 3, 5, 24), ka=f(2, 3, 19, 24), va=f(2, 3, 19, 24), ma=ma,
                      qb=f(1, 16), ktb=f(16, 7), vb=f(7, 8), bb=f(7),
                      qc=f(z["n"], 4, z["s"], 32), kc=f(z["n"], 4, z["s"], 32),
                      vc=f(z["n"], 4, z["s"], 16), mc=mc,
                      qd=f(1, z["m"], 16), kd=f(1, 20, 16), vd=f(1, 20, 32), bd=f(z["m"], 1),
                      qe=f(2, 5, 16), ke=f(2, 7, 16), ve=f(2, 7, 12),
                      qf=f(2, 16), kf=f(0, 16), vf=f(0, 8),
                      qg=f(2, 1, 64), kg=f(2, 300, 64), vg=f(2, 300, 8))
        for name, a in arrays.items():
            n.save(f"{d}/{key}/{name}.npy", a)


def attention(q, kt, v, scale, bias=0.0):
    s = scale * (q.astype(n.float64) @ kt.astype(n.float64)) + bias
    e = n.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v.astype(n.float64)


def check(d, outs):
    i = lambda name: n.load(f"{d}/{name}.npy")
    t = lambda k: n.swapaxes(k, -1, -2)
    want = dict(a=attention(i("qa"), t(i("ka")), i("va"), 1 / n.float64(n.float32(4.9)), i("ma")),
                b=attention(i("qb"), i("ktb"), i("vb"), 1.0, i("bb")),
                c=attention(i("qc"), t(i("kc")), i("vc"), 0.25, i("mc")),
                d=attention(i("qd"), t(i("kd")), i("vd"), 1.0, i("bd")),
                e=attention(i("qe"), t(i("ke")), i("ve"), 0.5),
                f=n.zeros((2, 8)),
                g=attention(i("qg"), t(i("kg")), i("vg"), 0.125))
    for out in outs:
        for name, w in want.items():
            got = n.load(f"{out}/{name}.npy")
            assert got.shape == w.shape, (out, name, got.shape, w.shape)
            n.testing.assert_allclose(got, w, rtol=2e-5, atol=2e-6, err_msg=f"{out}/{name}")


if sys.argv[1] == "make":
    make(sys.argv[2])
elif sys.argv[1] == "run":
    d, out, model = sys.argv[2:5]
    inputs = [a for k in NAMES for a in ("--input", f"{k}={d}/{k}.npy")]
    subprocess.run(["strata", "run", model, *sys.argv[5:], *inputs, "--output-dir", out], check=True)
else:
    check(sys.argv[2], sys.argv[3:])
