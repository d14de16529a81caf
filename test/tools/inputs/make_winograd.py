#!/usr/bin/python3
"""`make_winograd.py OUT`: an ONNX model of 3x3 stride-1 convs the winograd pass rewrites, on an
input x [n, 5, h, w] (batch dynamic; h and w given as `--size HxW`, default 11x13: tiles of 2 and
4 leave partial last tiles): a 5-channel conv (too few channels to block: it reads its input
plain), a 40-channel conv + bias + relu (padded to 48 in 16-lane blocks), one with a residual add and
relu in its epilogue, a conv without padding or bias, one with asymmetric pads, and a 5x5 conv
and a stride-2 conv the pass leaves alone. `--symbolic`: h and w symbolic too (one library for
every image size: the transforms' tile counts run-time extents)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

size = "11x13"
if "--size" in sys.argv:
    size = sys.argv[sys.argv.index("--size") + 1]
h, w = (int(v) for v in size.split("x"))
rng = np.random.default_rng(7)
nodes, inits = [], []


def conv(x, y, cin, cout, k=3, pads=(1, 1, 1, 1), stride=1, bias=True):
    wname = y + "_w"
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32), wname))
    ins = [x, wname]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32),
                                             y + "_b"))
        ins.append(y + "_b")
    nodes.append(helper.make_node("Conv", ins, [y], kernel_shape=[k, k], pads=list(pads),
                                  strides=[stride, stride]))


conv("x", "stem", 5, 40)
nodes.append(helper.make_node("Relu", ["stem"], ["a"]))
conv("a", "b0", 40, 40)
nodes.append(helper.make_node("Relu", ["b0"], ["b"]))
conv("b", "c0", 40, 40)
nodes.append(helper.make_node("Add", ["c0", "a"], ["c1"]))
nodes.append(helper.make_node("Relu", ["c1"], ["c"]))
conv("c", "valid", 40, 32, pads=(0, 0, 0, 0), bias=False)
conv("valid", "skew", 32, 16, pads=(2, 0, 1, 1))
conv("skew", "wide", 16, 16, k=5, pads=(2, 2, 2, 2))
conv("wide", "strided", 16, 16, stride=2)
g = helper.make_graph(
    nodes, "winograd",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                   ["n", 5, "h", "w"] if "--symbolic" in sys.argv else ["n", 5, h, w])],
    [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in ("c", "skew", "strided")],
    initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[-1])
