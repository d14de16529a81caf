#!/usr/bin/python3
"""Writes a tiny static-shape model for the `strata bench` tests: `make_tiny.py OUT.onnx`.

relu(x @ w + b) with x: 2x8 f32, w: 8x4, b: 4 (fixed values, so the file is reproducible)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4), "w")
b = numpy_helper.from_array(np.full(4, 0.5, np.float32), "b")
nodes = [
    helper.make_node("MatMul", ["x", "w"], ["xw"]),
    helper.make_node("Add", ["xw", "b"], ["xwb"]),
    helper.make_node("Relu", ["xwb"], ["y"]),
]
graph = helper.make_graph(
    nodes, "tiny",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    initializer=[w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
