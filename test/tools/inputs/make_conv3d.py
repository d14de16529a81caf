#!/usr/bin/python3
"""`make_conv3d.py OUT`: an ONNX model of 3-D convolutions (video nets: r3d, mc3, r(2+1)d) on
x [n, 3, t, h, w] (n, t, h, w symbolic): a stem of 3 input channels, kernel (3, 7, 7), stride
(1, 2, 2) and pads (1, 3, 3) + bias + relu (padded to whole channel blocks); a 3x3x3 conv with
a residual add and relu; a (3, 1, 1) temporal conv; a strided (2, 2, 2) conv to 24 channels; a
depthwise 3x3x3 conv with dilation 2; a global average pool over t, h, w. Outputs `features`
(the last conv's) and `pooled`."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)
nodes, inits = [], []


def conv(x, y, cin, cout, k, pads, strides=(1, 1, 1), dilations=(1, 1, 1), group=1, bias=True):
    fan = cin // group * k[0] * k[1] * k[2]
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((cout, cin // group) + tuple(k)) / np.sqrt(fan)).astype(np.float32),
        y + "_w"))
    ins = [x, y + "_w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), y + "_b"))
        ins.append(y + "_b")
    nodes.append(helper.make_node("Conv", ins, [y], kernel_shape=list(k), pads=list(pads) * 2,
                                  strides=list(strides), dilations=list(dilations), group=group))


conv("x", "stem", 3, 20, (3, 7, 7), (1, 3, 3), strides=(1, 2, 2))
nodes.append(helper.make_node("Relu", ["stem"], ["a"]))
conv("a", "c1", 20, 20, (3, 3, 3), (1, 1, 1), bias=False)
nodes.append(helper.make_node("Add", ["c1", "a"], ["r1"]))
nodes.append(helper.make_node("Relu", ["r1"], ["b"]))
conv("b", "temporal", 20, 20, (3, 1, 1), (1, 0, 0))
conv("temporal", "down", 20, 24, (3, 3, 3), (1, 1, 1), strides=(2, 2, 2))
conv("down", "features", 24, 24, (3, 3, 3), (2, 2, 2), dilations=(2, 2, 2), group=24)
nodes.append(helper.make_node("ReduceMean", ["features"], ["pooled"], axes=[2, 3, 4], keepdims=1))
graph = helper.make_graph(
    nodes, "conv3d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "t", "h", "w"])],
    [helper.make_tensor_value_info("features", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("pooled", TensorProto.FLOAT, None)], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
