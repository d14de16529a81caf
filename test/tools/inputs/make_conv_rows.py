#!/usr/bin/python3
"""`make_conv_rows.py OUT`: an ONNX model whose blocked convs run their output rows outside their
groups of output channel blocks (input larger than a core's cache, weights small): x [1, 32, 100,
96] (1.2 MB) -> 1x1 conv to 256 channels + relu, and a 3x3 conv (pads 1) of x to 128 channels
with a bias; outputs `pointwise` and `spatial`."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
inits = [
    numpy_helper.from_array((rng.standard_normal((256, 32, 1, 1)) / 6).astype(np.float32), "w1"),
    numpy_helper.from_array((rng.standard_normal((128, 32, 3, 3)) / 17).astype(np.float32), "w3"),
    numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), "b3"),
]
nodes = [
    helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[1, 1]),
    helper.make_node("Relu", ["c1"], ["pointwise"]),
    helper.make_node("Conv", ["x", "w3", "b3"], ["spatial"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
]
graph = helper.make_graph(
    nodes, "conv_rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 100, 96])],
    [helper.make_tensor_value_info("pointwise", TensorProto.FLOAT, [1, 256, 100, 96]),
     helper.make_tensor_value_info("spatial", TensorProto.FLOAT, [1, 128, 100, 96])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
