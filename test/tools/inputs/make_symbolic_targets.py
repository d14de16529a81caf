"""Models whose shapes are computed from their symbolic input dims, as exporters write them.

  make_symbolic_targets.py OUT.onnx --shuffle     channel shuffle: x [n, 8, h, w] reshaped to
      [n, 2, 4, h, w] (a shape built from Shape(x)), transposed, reshaped back to [n, 8, h, w]
  make_symbolic_targets.py OUT.onnx --resize-like Resize(x [n, 4, h, w], sizes = Shape(skip))
      (bilinear, half_pixel), added to skip [n, 4, H, W]: FPN's upsample to the lateral's size
  make_symbolic_targets.py OUT.onnx --upsample-skip  a stride-2 conv, then a stride-2
      ConvTranspose added to the conv's input: U-Net's skip connection (equal sizes only when h
      and w are even)
  make_symbolic_targets.py --check MODEL DIR INPUT.npy [SKIP.npy]  DIR/y.npy against numpy
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
    if model == "shuffle":
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
        {"--shuffle": shuffle, "--resize-like": resize_like,
         "--upsample-skip": upsample_skip}[sys.argv[2]](sys.argv[1])
