"""Writes a model (opset 18) whose Pad amounts may be negative (ONNX: a crop) where their sign is
only known when it runs, and checks its outputs against numpy.

  make_pad_crop.py MODEL.onnx                 write the model
  make_pad_crop.py --inputs DIR SET           write one set of inputs (1, 2, or a bad one)
  make_pad_crop.py --check OUT_DIR IN_DIR     compare a run's outputs with numpy's

Outputs: constant, reflect and edge Pads of `x` [3, 5] by amounts read from data (`pads`, either
sign per entry); a constant Pad along axes read from data; and static negative Pads (constant
and wrap) of `y`, whose dims are symbolic (n, w), so whether the crop fits is known only when
it runs.
"""
import os
import sys

import numpy as np

INPUTS = [("x", np.float32, [3, 5]), ("pads", np.int64, [4]), ("epads", np.int64, [4]),
          ("apads", np.int64, [2]), ("paxes", np.int64, [1]), ("y", np.float32, ["n", "w"])]
OUTPUTS = ["constant", "reflect", "edge", "along", "ycrop", "ywrap"]
SETS = {
    # crop the rows, grow the columns; then the reverse
    "1": dict(pads=[-1, 2, 0, -2], epads=[1, -1, -1, 3], apads=[-2, 1], paxes=[1], n=4, w=6),
    "2": dict(pads=[2, -3, -2, 1], epads=[-2, 2, 0, -4], apads=[1, -3], paxes=[-2], n=3, w=3),
    # a crop past the axis' end (-4 of 3 rows)
    "bad": dict(pads=[-4, 0, 0, 0], epads=[0, 0, 0, 0], apads=[0, 0], paxes=[0], n=3, w=3),
    # two crops of 2 rows each from 3 (each alone fits)
    "both": dict(pads=[-2, 0, -2, 0], epads=[0, 0, 0, 0], apads=[0, 0], paxes=[0], n=3, w=3),
    # y too narrow for its static crop of 2 columns
    "narrow": dict(pads=[0, 0, 0, 0], epads=[0, 0, 0, 0], apads=[0, 0], paxes=[0], n=2, w=1),
}


def write_model(path):
    import onnx
    from onnx import TensorProto, helper as h
    c = lambda name, vals: h.make_node("Constant", [], [name], value=helper_tensor(name, vals))

    def helper_tensor(name, vals):
        return h.make_tensor(name + "_t", TensorProto.INT64, [len(vals)], vals)
    nodes = [
        h.make_node("Pad", ["x", "pads"], ["constant"], mode="constant"),
        h.make_node("Pad", ["x", "epads"], ["reflect"], mode="reflect"),
        h.make_node("Pad", ["x", "epads"], ["edge"], mode="edge"),
        h.make_node("Pad", ["x", "apads", "", "paxes"], ["along"]),
        c("ycrop_pads", [-1, 1, 0, -1]),
        h.make_node("Pad", ["y", "ycrop_pads"], ["ycrop"]),
        c("ywrap_pads", [0, -1, 0, 3]),
        h.make_node("Pad", ["y", "ywrap_pads"], ["ywrap"], mode="wrap"),
    ]
    ins = [h.make_tensor_value_info(n, TensorProto.FLOAT if t == np.float32 else TensorProto.INT64,
                                    s) for n, t, s in INPUTS]
    outs = [h.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in OUTPUTS]
    m = h.make_model(h.make_graph(nodes, "pad_crop", ins, outs),
                     opset_imports=[h.make_opsetid("", 18)])
    onnx.save(m, path)


def inputs(s):
    rng = np.random.default_rng(7)
    v = SETS[s]
    return dict(x=rng.standard_normal((3, 5)).astype(np.float32),
                pads=np.array(v["pads"], np.int64), epads=np.array(v["epads"], np.int64),
                apads=np.array(v["apads"], np.int64), paxes=np.array(v["paxes"], np.int64),
                y=rng.standard_normal((v["n"], v["w"])).astype(np.float32))


def pad(x, pads, mode="constant"):
    """ONNX Pad, negative amounts cropping first (as ONNX Runtime applies them)."""
    r = x.ndim
    crop = tuple(slice(max(0, -pads[d]), x.shape[d] - max(0, -pads[d + r])) for d in range(r))
    widths = [(max(0, pads[d]), max(0, pads[d + r])) for d in range(r)]
    return np.pad(x[crop], widths, mode={"edge": "edge", "reflect": "reflect", "wrap": "wrap"}
                  .get(mode, "constant"))


def expected(a):
    full = [0, 0, 0, 0]
    axis = int(a["paxes"][0]) % 2
    full[axis], full[axis + 2] = int(a["apads"][0]), int(a["apads"][1])
    return dict(constant=pad(a["x"], list(a["pads"])), reflect=pad(a["x"], list(a["epads"]), "reflect"),
                edge=pad(a["x"], list(a["epads"]), "edge"), along=pad(a["x"], full),
                ycrop=pad(a["y"], [-1, 1, 0, -1]), ywrap=pad(a["y"], [0, -1, 0, 3], "wrap"))


def main():
    if sys.argv[1] == "--inputs":
        os.makedirs(sys.argv[2], exist_ok=True)
        for k, v in inputs(sys.argv[3]).items():
            np.save(os.path.join(sys.argv[2], k + ".npy"), v)
    elif sys.argv[1] == "--check":
        out_dir, in_dir = sys.argv[2], sys.argv[3]
        a = {n: np.load(os.path.join(in_dir, n + ".npy")) for n, _, _ in INPUTS}
        bad = 0
        for name, want in expected(a).items():
            got = np.load(os.path.join(out_dir, name + ".npy"))
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
                print(f"{name}: got {got.shape} {got.ravel()[:8]}, want {want.shape} {want.ravel()[:8]}")
                bad += 1
        print("MISMATCH" if bad else f"all {len(OUTPUTS)} outputs match numpy")
        sys.exit(1 if bad else 0)
    else:
        write_model(sys.argv[1])


main()
