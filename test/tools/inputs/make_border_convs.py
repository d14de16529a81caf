"""Convs over symbolic sizes whose tiles reach past the input's borders (conv-border-window.test).

  make_border_convs.py OUT.onnx   x [n, 3, h, w] -> a 7x7 stride-2 stem (plain input) -> s
      [n, 32, (h+1)/2, (w+1)/2]; from s: a 3x3 conv (a), a depthwise 7x7 (d), a 3x3 stride-2 (b),
      a 3x3 dilation-2 conv with asymmetric pads (e), a depthwise 1x3 conv of dilation 300
      along w whose input window is too wide to stage (f), and a depthwise 3x3x3 conv over a
      volume [n, 32, 2, h', w'] of s stacked twice (g), and a 3x1 conv padded along h only (p);
      every conv with a bias and seeded weights
"""
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

F = T.FLOAT
rng = np.random.default_rng(7)
inits = []


def weight(name, shape):
    inits.append(onnx.numpy_helper.from_array(
        (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32), name))
    return name


def conv(x, y, out_channels, in_channels, kernel, **attrs):
    w = weight(y + "_w", [out_channels, in_channels] + kernel)
    b = weight(y + "_b", [out_channels])
    return h.make_node("Conv", [x, w, b], [y], **attrs)


def main(path):
    nodes = [
        conv("x", "s", 32, 3, [7, 7], strides=[2, 2], pads=[3, 3, 3, 3]),
        conv("s", "a", 32, 32, [3, 3], pads=[1, 1, 1, 1]),
        conv("s", "d", 32, 1, [7, 7], pads=[3, 3, 3, 3], group=32),
        conv("s", "b", 32, 32, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("s", "e", 32, 32, [3, 3], dilations=[2, 2], pads=[2, 1, 2, 3]),
        conv("s", "f", 32, 1, [1, 3], dilations=[1, 300], pads=[0, 300, 0, 300], group=32),
        h.make_node("Constant", [], ["axis"], value=onnx.numpy_helper.from_array(
            np.array([2], dtype=np.int64), "axis")),
        h.make_node("Unsqueeze", ["s", "axis"], ["u"]),
        h.make_node("Concat", ["u", "u"], ["v"], axis=2),
        conv("v", "g", 32, 1, [3, 3, 3], pads=[1, 1, 1, 1, 1, 1], group=32),
        conv("s", "p", 32, 32, [3, 1], pads=[1, 0, 1, 0]),
    ]
    outputs = [h.make_tensor_value_info(o, F, None) for o in "adbefgp"]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", F, ["n", 3, "h", "w"])],
                     outputs, inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)


if __name__ == "__main__":
    main(sys.argv[1])
