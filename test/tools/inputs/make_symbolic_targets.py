"""Models whose shapes are computed from their symbolic input dims, as exporters write them.

  make_symbolic_targets.py OUT.onnx --shuffle     channel shuffle: x [n, 8, h, w] reshaped to
      [n, 2, 4, h, w] (a shape built from Shape(x)), transposed, reshaped back to [n, 8, h, w]
  make_symbolic_targets.py OUT.onnx --resize-like Resize(x [n, 4, h, w], sizes = Shape(skip))
      (bilinear, half_pixel), added to skip [n, 4, H, W]: FPN's upsample to the lateral's size
  make_symbolic_targets.py OUT.onnx --upsample-skip  a stride-2 conv, then a stride-2
      ConvTranspose added to the conv's input: U-Net's skip connection (equal sizes only when h
      and w are even)
  make_symbolic_targets.py OUT.onnx --window-pad   x [n, c, h, w] padded on h and w to multiples
      of 7, the pads (7 - h % 7) % 7 computed from Shape(x) (Mod, and a [2, 4] round trip through
      Transpose as torch's F.pad writes it) -> z; z rolled by one along w (slices of part of a
      symbolic dim) -> r; r cropped back to [h, w] with ends read from Shape(x) -> y
  make_symbolic_targets.py OUT.onnx --unsqueeze   x [3, h, w] unsqueezed to [1, 3, h, w] (two
      symbolic dims move: a reshape to dims)
  make_symbolic_targets.py --check MODEL DIR INPUT.npy [SKIP.npy]  DIR/y.npy (and for window-pad
      z.npy, r.npy) against numpy
"""
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

F = T.FLOAT


def const(name, values, dtype=np.int64):
    return h.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(
        np.array(values, dtype=dtype), name))


def dim(shape, i, name):
    return [const(name + "_i", [i]), h.make_node("Gather", [shape, name + "_i"], [name], axis=0)]


def save(nodes, inputs, outputs, inits, path):
    g = h.make_graph(nodes, "g", inputs, outputs, inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)


def shuffle(path):
    nodes = [h.make_node("Shape", ["x"], ["s"])]
    for i, name in [(0, "n"), (2, "hh"), (3, "ww")]:
        nodes += dim("s", i, name)
    nodes += [const("two", [2]), const("four", [4]), const("eight", [8]),
              h.make_node("Concat", ["n", "two", "four", "hh", "ww"], ["split"], axis=0),
              h.make_node("Reshape", ["x", "split"], ["r"]),
              h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
              h.make_node("Concat", ["n", "eight", "hh", "ww"], ["back"], axis=0),
              h.make_node("Reshape", ["t", "back"], ["y"])]
    save(nodes, [h.make_tensor_value_info("x", F, ["n", 8, "h", "w"])],
         [h.make_tensor_value_info("y", F, None)], [], path)


def resize_like(path):
    nodes = [h.make_node("Shape", ["skip"], ["sizes"]),
             h.make_node("Resize", ["x", "", "", "sizes"], ["up"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
             h.make_node("Add", ["up", "skip"], ["y"])]
    save(nodes, [h.make_tensor_value_info("x", F, ["n", 4, "h", "w"]),
                 h.make_tensor_value_info("skip", F, ["n", 4, "H", "W"])],
         [h.make_tensor_value_info("y", F, None)], [], path)


def upsample_skip(path):
    r = np.random.default_rng(0)
    w = onnx.numpy_helper.from_array((r.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32), "w")
    wt = onnx.numpy_helper.from_array((r.standard_normal((4, 4, 2, 2)) * 0.3).astype(np.float32), "wt")
    nodes = [h.make_node("Conv", ["x", "w"], ["down"], strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("ConvTranspose", ["down", "wt"], ["up"], strides=[2, 2]),
             h.make_node("Add", ["up", "x"], ["y"])]
    save(nodes, [h.make_tensor_value_info("x", F, ["n", 4, "h", "w"])],
         [h.make_tensor_value_info("y", F, None)], [w, wt], path)


def window_pad(path):
    nodes = [h.make_node("Shape", ["x"], ["s"])]
    nodes += dim("s", 2, "hh") + dim("s", 3, "ww")
    nodes += [const("seven", [7]), const("zeros", [0, 0, 0, 0, 0, 0]), const("pair", [2, 4]),
              const("flat", [8])]
    for d in ["hh", "ww"]:
        nodes += [h.make_node("Mod", [d, "seven"], [d + "_m"]),
                  h.make_node("Sub", ["seven", d + "_m"], [d + "_s"]),
                  h.make_node("Mod", [d + "_s", "seven"], [d + "_p"])]
    nodes += [h.make_node("Concat", ["zeros", "hh_p", "ww_p"], ["p8"], axis=0),
              h.make_node("Reshape", ["p8", "pair"], ["p24"]),
              h.make_node("Transpose", ["p24"], ["p42"], perm=[1, 0]),
              h.make_node("Transpose", ["p42"], ["p24b"], perm=[1, 0]),
              h.make_node("Reshape", ["p24b", "flat"], ["pads"]),
              h.make_node("Pad", ["x", "pads"], ["z"]),
              const("last", [-1]), const("big", [2 ** 62]), const("first", [0]),
              const("axis3", [3]),
              h.make_node("Slice", ["z", "last", "big", "axis3"], ["tail"]),
              h.make_node("Slice", ["z", "first", "last", "axis3"], ["head"]),
              h.make_node("Concat", ["tail", "head"], ["r"], axis=3),
              const("zero2", [0, 0]), const("axes23", [2, 3]),
              h.make_node("Concat", ["hh", "ww"], ["hw"], axis=0),
              h.make_node("Slice", ["r", "zero2", "hw", "axes23"], ["y"])]
    save(nodes, [h.make_tensor_value_info("x", F, ["n", 2, "h", "w"])],
         [h.make_tensor_value_info(o, F, None) for o in ["y", "z", "r"]], [], path)


def unsqueeze(path):
    nodes = [const("axes", [0]), h.make_node("Unsqueeze", ["x", "axes"], ["y"])]
    save(nodes, [h.make_tensor_value_info("x", F, [3, "h", "w"])],
         [h.make_tensor_value_info("y", F, [1, 3, "h", "w"])], [], path)


def linear_axis(x, axis, out):
    """ONNX Resize linear, half_pixel, along one axis (coordinates clamped to the edges)."""
    size = x.shape[axis]
    coord = (np.arange(out) + 0.5) * size / out - 0.5
    coord = np.clip(coord, 0, size - 1)
    lo = np.floor(coord).astype(np.int64)
    hi = np.minimum(lo + 1, size - 1)
    frac = (coord - lo).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    return np.take(x, lo, axis) * (1 - frac) + np.take(x, hi, axis) * frac


def check(model, out_dir, x, skip=None):
    y = np.load(out_dir + "/y.npy")
    if model == "window-pad":
        pads = [(0, 0), (0, 0)] + [(0, (7 - s % 7) % 7) for s in x.shape[2:]]
        z = np.pad(x, pads)
        r = np.roll(z, 1, axis=3)
        np.testing.assert_array_equal(np.load(out_dir + "/z.npy"), z)
        np.testing.assert_array_equal(np.load(out_dir + "/r.npy"), r)
        want = r[:, :, :x.shape[2], :x.shape[3]]
    elif model == "shuffle":
        n, c, hh, ww = x.shape
        want = x.reshape(n, 2, c // 2, hh, ww).transpose(0, 2, 1, 3, 4).reshape(n, c, hh, ww)
    else:
        want = linear_axis(linear_axis(x.astype(np.float64), 2, skip.shape[2]), 3,
                           skip.shape[3]) + skip
    assert y.shape == want.shape, (y.shape, want.shape)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        args = sys.argv[2:]
        check(args[0], args[1], np.load(args[2]), np.load(args[3]) if len(args) > 3 else None)
    else:
        {"--shuffle": shuffle, "--resize-like": resize_like, "--upsample-skip": upsample_skip,
         "--window-pad": window_pad, "--unsqueeze": unsqueeze}[sys.argv[2]](sys.argv[1])
