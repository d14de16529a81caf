"""Writes a model whose shapes are computed from tensor values (inputs and data), and checks its
outputs against numpy.

  make_data_shapes.py MODEL.onnx            write the model
  make_data_shapes.py --inputs DIR SEED     write one set of inputs (their values decide sizes)
  make_data_shapes.py --check OUT_DIR IN_DIR  compare a run's outputs with numpy's

Outputs: Reshape to a given shape (with a 0 and a -1), Expand, ConstantOfShape, Range (int and
float), Tile, Resize to given sizes (linear and cubic), TopK with a given k, a reflect Pad by
given amounts, a Range whose limit is computed from data (the count of positive elements), and
Slices with given starts and ends (step 2; step -1 from a start past either end), and a Resize to
sizes whose first two come from the input's Shape (known at import) and the rest from data.
"""
import os
import sys

import numpy as np


def build(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [
        h.make_node("Reshape", ["x", "shape"], ["reshaped"]),
        h.make_node("Expand", ["col", "eshape"], ["expanded"]),
        h.make_node("ConstantOfShape", ["cshape"], ["filled"],
                    value=h.make_tensor("v", T.FLOAT, [1], [2.5])),
        h.make_node("Range", ["start", "limit", "delta"], ["irange"]),
        h.make_node("Range", ["fstart", "flimit", "fdelta"], ["frange"]),
        h.make_node("Tile", ["small", "repeats"], ["tiled"]),
        h.make_node("Resize", ["img", "", "", "sizes"], ["linear"], mode="linear"),
        h.make_node("Resize", ["img", "", "", "sizes"], ["cubic"], mode="cubic"),
        h.make_node("TopK", ["x", "k"], ["top", "topi"], axis=-1),
        h.make_node("Pad", ["small", "pads"], ["padded"], mode="reflect"),
        h.make_node("Constant", [], ["ax1"], value=h.make_tensor("ax1", T.INT64, [1], [1])),
        h.make_node("Constant", [], ["two"], value=h.make_tensor("two", T.INT64, [1], [2])),
        h.make_node("Constant", [], ["back"], value=h.make_tensor("back", T.INT64, [1], [-1])),
        h.make_node("Slice", ["x", "sstart", "send", "ax1", "two"], ["sliced"]),
        h.make_node("Slice", ["x", "rstart", "rend", "ax1", "back"], ["reversed"]),
        # sizes = concat(shape(img)[:2], sizes[2:]): the first two known at import
        h.make_node("Shape", ["img"], ["imgshape"]),
        h.make_node("Constant", [], ["s0"], value=h.make_tensor("s0", T.INT64, [1], [0])),
        h.make_node("Slice", ["imgshape", "s0", "two"], ["lead"]),
        h.make_node("Constant", [], ["four"], value=h.make_tensor("four", T.INT64, [1], [4])),
        h.make_node("Slice", ["sizes", "two", "four"], ["hw"]),
        h.make_node("Concat", ["lead", "hw"], ["psizes"], axis=0),
        h.make_node("Resize", ["img", "", "", "psizes"], ["partial"], mode="linear"),
        # Range(0, count of x > 0): a limit computed from data, not given.
        h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", T.FLOAT, [], [0.0])),
        h.make_node("Greater", ["x", "zero"], ["pos"]),
        h.make_node("Cast", ["pos"], ["posi"], to=T.INT64),
        h.make_node("ReduceSum", ["posi"], ["npos"], keepdims=0),
        h.make_node("Constant", [], ["i0"], value=h.make_tensor("i0", T.INT64, [], [0])),
        h.make_node("Constant", [], ["i1"], value=h.make_tensor("i1", T.INT64, [], [1])),
        h.make_node("Range", ["i0", "npos", "i1"], ["counted"]),
    ]
    f, i = T.FLOAT, T.INT64
    ins = [("x", f, [2, 12]), ("shape", i, [3]), ("col", f, [3, 1]), ("eshape", i, [2]),
           ("cshape", i, [2]), ("start", i, []), ("limit", i, []), ("delta", i, []),
           ("fstart", f, []), ("flimit", f, []), ("fdelta", f, []), ("small", f, [2, 3]),
           ("repeats", i, [2]), ("img", f, [1, 1, 4, 5]), ("sizes", i, [4]), ("k", i, [1]),
           ("pads", i, [4]), ("sstart", i, [1]), ("send", i, [1]), ("rstart", i, [1]),
           ("rend", i, [1])]
    outs = ["reshaped", "expanded", "filled", "irange", "frange", "tiled", "linear", "cubic",
            "top", "padded", "counted", "sliced", "reversed", "partial"]
    g = h.make_graph(nodes, "data_shapes", [h.make_tensor_value_info(n, t, s) for n, t, s in ins],
                     [h.make_tensor_value_info(o, f if o not in ("irange", "counted") else i, None)
                      for o in outs])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


SETS = {
    "1": dict(shape=[0, 3, -1], eshape=[3, 4], cshape=[2, 3], start=2, limit=11, delta=3,
              fstart=0.5, flimit=-1.0, fdelta=-0.25, repeats=[2, 3], sizes=[1, 1, 7, 3], k=[5],
              pads=[1, 2, 1, 0], sstart=[1], send=[100], rstart=[-10], rend=[-100]),
    "2": dict(shape=[-1, 3, 2], eshape=[3, 5], cshape=[0, 4], start=5, limit=1, delta=1,
              fstart=1.0, flimit=4.0, fdelta=0.5, repeats=[1, 0], sizes=[1, 1, 2, 9], k=[0],
              pads=[0, 0, 1, 2], sstart=[5], send=[3], rstart=[100], rend=[4]),
}


def write_inputs(d, seed):
    os.makedirs(d, exist_ok=True)
    r = np.random.default_rng(int(seed))
    v = SETS[seed]
    arrays = dict(
        x=r.standard_normal((2, 12)).astype(np.float32),
        col=r.standard_normal((3, 1)).astype(np.float32),
        small=r.standard_normal((2, 3)).astype(np.float32),
        img=r.standard_normal((1, 1, 4, 5)).astype(np.float32))
    for name in ("start", "limit", "delta"):
        arrays[name] = np.array(v[name], np.int64)
    for name in ("fstart", "flimit", "fdelta"):
        arrays[name] = np.array(v[name], np.float32)
    for name in ("shape", "eshape", "cshape", "repeats", "sizes", "k", "pads", "sstart", "send",
                 "rstart", "rend"):
        arrays[name] = np.array(v[name], np.int64)
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)


def check(out_dir, in_dir):
    import torch

    a = {n[:-4]: np.load(os.path.join(in_dir, n)) for n in os.listdir(in_dir)}
    x = a["x"]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(a["shape"])]
    k = int(a["k"][0])
    img = torch.from_numpy(a["img"])
    size = tuple(int(s) for s in a["sizes"][2:])
    want = dict(
        reshaped=x.reshape(shape),
        expanded=a["col"] * np.ones(a["eshape"], np.float32),
        filled=np.full(a["cshape"], 2.5, np.float32),
        irange=np.arange(a["start"], a["limit"], a["delta"], dtype=np.int64),
        frange=np.arange(a["fstart"], a["flimit"], a["fdelta"], dtype=np.float32),
        tiled=np.tile(a["small"], a["repeats"]),
        linear=torch.nn.functional.interpolate(img, size=size, mode="bilinear",
                                               align_corners=False).numpy(),
        cubic=None,
        top=-np.sort(-x, axis=-1)[:, :k],
        padded=np.pad(a["small"], [(a["pads"][0], a["pads"][2]), (a["pads"][1], a["pads"][3])],
                      mode="reflect"),
        counted=np.arange(int((x > 0).sum()), dtype=np.int64),
        sliced=x[:, int(a["sstart"][0]):int(a["send"][0]):2],
        reversed=x[:, int(a["rstart"][0]):int(a["rend"][0]):-1],
        partial=torch.nn.functional.interpolate(img, size=size, mode="bilinear",
                                                align_corners=False).numpy(),
    )
    for name, w in want.items():
        got = np.load(os.path.join(out_dir, name + ".npy"))
        if w is None:  # cubic (A = -0.75, ONNX's): against bicubic only in shape
            assert got.shape == (1, 1) + size, (name, got.shape)
            continue
        assert got.shape == w.shape, (name, got.shape, w.shape)
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg=name)
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "--inputs":
        write_inputs(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3])
    else:
        build(sys.argv[1])
