"""Writes value-inputs.onnx: inputs whose values decide shapes at import.

y = TopK(Reshape(x, shape), k) along the last axis (values only), with `shape` and `k` graph
inputs, so every run binds their values; and a data-sized input `x` of symbolic batch.
"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

nodes = [
    h.make_node("Reshape", ["x", "shape"], ["r"]),
    h.make_node("TopK", ["r", "k"], ["y", "i"], axis=-1),
]
g = h.make_graph(
    nodes, "value_inputs",
    [h.make_tensor_value_info("x", T.FLOAT, ["n", 12]),
     h.make_tensor_value_info("shape", T.INT64, [3]),
     h.make_tensor_value_info("k", T.INT64, [1])],
    [h.make_tensor_value_info("y", T.FLOAT, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1])
