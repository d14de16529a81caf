"""Writes a model (opset 18) whose axes, counts, scales and limits are graph inputs read when it
runs, and checks its outputs against numpy.

  make_data_axes.py MODEL.onnx                 write the model
  make_data_axes.py --inputs DIR SET           write one set of inputs (1 or 2)
  make_data_axes.py --run DIR ARGS...          `strata run ARGS... -i NAME=DIR/NAME.npy` for
                                               every input; its exit code and output
  make_data_axes.py --check OUT_DIR IN_DIR     compare a run's outputs with numpy's

Outputs: Trilu with k given, OneHot with depth given, HannWindow of a given size,
ReverseSequence with given lengths, CumSum along a given axis, Squeeze (also to a scalar) and
Unsqueeze with given axes, Split into given sizes, Slice with given axes and steps, ReduceSum (keepdims 0 and 1),
ReduceMax and ReduceLogSumExp over given axes (and ReduceSum over an empty axis), Pad along
given axes, Dropout
with a given ratio and training mode (nothing dropped), Resize by given scales (nearest and linear), and
NonMaxSuppression with a given max count, IoU and score threshold.
"""
import os
import subprocess
import sys

import numpy as np

INPUTS = [
    # name, dtype, shape
    ("x", np.float32, [3, 4]),
    ("k", np.int64, []),
    ("idx", np.int64, [4]),
    ("depth", np.int64, []),
    ("wsize", np.int64, []),
    ("seq", np.float32, [5, 3]),
    ("lens", np.int64, [3]),
    ("caxis", np.int64, []),
    ("ones", np.float32, [1, 3, 1, 1]),
    ("sqaxes", np.int64, [2]),
    ("usaxes", np.int64, [2]),
    ("parts", np.int64, [2]),
    ("cube", np.float32, [4, 5, 6]),
    ("sstarts", np.int64, [2]),
    ("sends", np.int64, [2]),
    ("saxes", np.int64, [2]),
    ("ssteps", np.int64, [2]),
    ("raxes", np.int64, [1]),
    ("empty", np.float32, [2, 0, 3]),
    ("ppads", np.int64, [2]),
    ("paxes", np.int64, [1]),
    ("dratio", np.float32, []),
    ("dtrain", np.bool_, []),
    ("single", np.float32, [1, 1]),
    ("sq2", np.int64, [2]),
    ("img", np.float32, [1, 1, 3, 4]),
    ("scales", np.float32, [4]),
    ("boxes", np.float32, [1, 5, 4]),
    ("bscores", np.float32, [1, 1, 5]),
    ("maxout", np.int64, [1]),
    ("iou", np.float32, [1]),
    ("floor", np.float32, [1]),
]

OUTPUTS = ["tri", "hot", "win", "rev", "csum", "squeezed", "unsqueezed", "part0", "part1",
           "sliced", "rsum", "rsumk", "rmax", "rlse", "rempty", "padded", "kept", "scalar", "nearest", "linear", "picked"]


def build(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [
        h.make_node("Trilu", ["x", "k"], ["tri"], upper=1),
        h.make_node("Constant", [], ["onoff"],
                    value=h.make_tensor("onoff", T.FLOAT, [2], [-1.0, 3.0])),
        h.make_node("OneHot", ["idx", "depth", "onoff"], ["hot"], axis=0),
        h.make_node("HannWindow", ["wsize"], ["win"], periodic=0),
        h.make_node("ReverseSequence", ["seq", "lens"], ["rev"], time_axis=0, batch_axis=1),
        h.make_node("CumSum", ["x", "caxis"], ["csum"], reverse=1),
        h.make_node("Squeeze", ["ones", "sqaxes"], ["squeezed"]),
        h.make_node("Unsqueeze", ["x", "usaxes"], ["unsqueezed"]),
        h.make_node("Split", ["x", "parts"], ["part0", "part1"], axis=1),
        h.make_node("Slice", ["cube", "sstarts", "sends", "saxes", "ssteps"], ["sliced"]),
        h.make_node("ReduceSum", ["cube", "raxes"], ["rsum"], keepdims=0),
        h.make_node("ReduceSum", ["cube", "raxes"], ["rsumk"], keepdims=1),
        h.make_node("ReduceMax", ["cube", "saxes"], ["rmax"], keepdims=0),
        h.make_node("ReduceLogSumExp", ["cube", "raxes"], ["rlse"], keepdims=1),
        h.make_node("ReduceSum", ["empty", "raxes"], ["rempty"], keepdims=1),
        h.make_node("Constant", [], ["pv"], value=h.make_tensor("pv", T.FLOAT, [], [9.0])),
        h.make_node("Pad", ["x", "ppads", "pv", "paxes"], ["padded"]),
        h.make_node("Dropout", ["x", "dratio", "dtrain"], ["kept"]),
        h.make_node("Squeeze", ["single", "sq2"], ["scalar"]),
        h.make_node("Resize", ["img", "", "scales"], ["nearest"], mode="nearest",
                    coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        h.make_node("Resize", ["img", "", "scales"], ["linear"], mode="linear"),
        h.make_node("NonMaxSuppression", ["boxes", "bscores", "maxout", "iou", "floor"],
                    ["picked"]),
    ]
    onnx_type = {np.float32: T.FLOAT, np.int64: T.INT64, np.bool_: T.BOOL}
    ins = [h.make_tensor_value_info(n, onnx_type[t], s) for n, t, s in INPUTS]
    outs = [h.make_tensor_value_info(o, T.INT64 if o == "picked" else T.FLOAT, None)
            for o in OUTPUTS]
    g = h.make_graph(nodes, "data_axes", ins, outs)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)


SETS = {
    "1": dict(k=1, idx=[0, 2, -1, 5], depth=4, wsize=6, lens=[5, 2, 0], caxis=0,
              sqaxes=[0, 2], usaxes=[-1, 0], parts=[1, 3], sstarts=[4, 0], sends=[0, 5],
              saxes=[2, 0], ssteps=[-2, 2], raxes=[1], scales=[1, 1, 2, 0.5], maxout=[2],
              iou=[0.5], floor=[0.0], ppads=[1, 2], paxes=[1], dratio=0.75, dtrain=False, sq2=[0, 1]),
    "2": dict(k=-1, idx=[1, 1, 0, -2], depth=2, wsize=0, lens=[1, 3, 4], caxis=-1,
              sqaxes=[-1, 2], usaxes=[1, 3], parts=[4, 0], sstarts=[-1, 1], sends=[-100, 3],
              saxes=[0, -1], ssteps=[-1, 1], raxes=[-3], scales=[1, 1, 0.7, 1.5], maxout=[5],
              iou=[0.9], floor=[0.25], ppads=[0, 1], paxes=[-2], dratio=0.0, dtrain=True, sq2=[-1, 0]),
}


def write_inputs(d, key):
    os.makedirs(d, exist_ok=True)
    r = np.random.default_rng(int(key))
    v = SETS[key]
    for name, dtype, shape in INPUTS:
        if name in v:
            a = np.array(v[name], dtype).reshape(shape)
        elif name == "boxes":  # [y1, x1, y2, x2]: two overlapping pairs and one apart
            a = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 5, 1, 6], [0.05, 5, 1.05, 6],
                           [3, 3, 4, 4]]], np.float32)
        elif name == "bscores":
            a = np.array([[[0.9, 0.8, 0.3, 0.7, 0.2]]], np.float32)
        else:
            a = r.standard_normal(shape).astype(dtype)
        np.save(os.path.join(d, name + ".npy"), a)


def run(in_dir, args):
    cmd = ["strata", "run"] + args
    for name, _, _ in INPUTS:
        cmd += ["-i", f"{name}={os.path.join(in_dir, name + '.npy')}"]
    sys.exit(subprocess.run(cmd).returncode)


def resize_nearest_asymmetric(img, scales):
    out = img
    for axis, s in enumerate(scales):
        n = out.shape[axis]
        m = int(np.floor(n * np.float64(np.float32(s))))
        src = np.minimum(np.floor(np.arange(m) / np.float64(np.float32(s))).astype(np.int64), n - 1)
        out = np.take(out, src, axis=axis)
    return out


def resize_linear_half_pixel(img, scales):
    out = img.astype(np.float64)
    for axis, s in enumerate(scales):
        s = np.float64(np.float32(s))
        n = out.shape[axis]
        m = int(np.floor(n * s))
        x = np.clip((np.arange(m) + 0.5) / s - 0.5, 0, n - 1)
        lo = np.floor(x).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        w = (x - lo).reshape([-1 if a == axis else 1 for a in range(out.ndim)])
        out = np.take(out, lo, axis=axis) * (1 - w) + np.take(out, hi, axis=axis) * w
    return out.astype(np.float32)


def nms(boxes, scores, max_out, iou, floor):
    def area(b):
        return (b[2] - b[0]) * (b[3] - b[1])

    def overlap(a, b):
        ih = min(a[2], b[2]) - max(a[0], b[0])
        iw = min(a[3], b[3]) - max(a[1], b[1])
        if ih <= 0 or iw <= 0:
            return 0.0
        inter = ih * iw
        return inter / (area(a) + area(b) - inter)

    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] > floor]
    kept = []
    for i in order:
        if len(kept) >= max_out:
            break
        if all(overlap(boxes[k], boxes[i]) <= iou for k in kept):
            kept.append(i)
    return np.array([[0, 0, i] for i in kept], np.int64).reshape(-1, 3)


def check(out_dir, in_dir):
    a = {n[:-4]: np.load(os.path.join(in_dir, n)) for n in os.listdir(in_dir)}
    x, cube = a["x"], a["cube"]
    n = int(a["wsize"])
    onehot = np.full((int(a["depth"]), 4), -1.0, np.float32)
    for j, i in enumerate(a["idx"]):
        i = i + a["depth"] if i < 0 else i
        if 0 <= i < a["depth"]:
            onehot[i, j] = 3.0
    rev = a["seq"].copy()
    for b, length in enumerate(a["lens"]):
        rev[:length, b] = a["seq"][:length, b][::-1]
    axes = sorted(int(ax) % 4 for ax in a["usaxes"])
    unsq = x
    for ax in axes:
        unsq = np.expand_dims(unsq, ax)
    cut = int(a["parts"][0])
    sl = [slice(None)] * 3
    for start, end, axis, step in zip(a["sstarts"], a["sends"], a["saxes"], a["ssteps"]):
        sl[int(axis)] = slice(int(start), int(end), int(step))
    raxis = int(a["raxes"][0])
    m = cube.max(axis=raxis, keepdims=True)
    want = dict(
        tri=np.triu(x, int(a["k"])),
        hot=onehot,
        win=(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / max(n - 1, 1))).astype(np.float32),
        rev=rev,
        csum=np.flip(np.cumsum(np.flip(x, int(a["caxis"])), int(a["caxis"])), int(a["caxis"])),
        squeezed=np.squeeze(a["ones"], tuple(int(ax) for ax in a["sqaxes"])),
        unsqueezed=unsq,
        part0=x[:, :cut],
        part1=x[:, cut:],
        sliced=cube[tuple(sl)],
        rsum=cube.sum(axis=raxis),
        rsumk=cube.sum(axis=raxis, keepdims=True),
        rmax=cube.max(axis=tuple(int(ax) for ax in a["saxes"])),
        rlse=np.log(np.exp(cube - m).sum(axis=raxis, keepdims=True)) + m,
        rempty=a["empty"].sum(axis=raxis, keepdims=True),
        kept=x,
        scalar=a["single"].reshape([]),
        padded=np.pad(x, [(int(a["ppads"][0]), int(a["ppads"][1])) if d == int(a["paxes"][0]) % 2
                          else (0, 0) for d in range(2)], constant_values=9.0),
        nearest=resize_nearest_asymmetric(a["img"], a["scales"]),
        linear=resize_linear_half_pixel(a["img"], a["scales"]),
        picked=nms(a["boxes"][0], a["bscores"][0, 0], int(a["maxout"][0]), float(a["iou"][0]),
                   float(a["floor"][0])),
    )
    for name, w in want.items():
        got = np.load(os.path.join(out_dir, name + ".npy"))
        assert got.shape == w.shape, (name, got.shape, w.shape)
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg=name)
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "--inputs":
        write_inputs(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--run":
        run(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3])
    else:
        build(sys.argv[1])
