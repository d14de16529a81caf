#!/usr/bin/python3
"""`make_shape_reader.py OUT [--range | --area]`: an ONNX model with input x [n, 3, h, w] (all but
the channels dynamic) that flattens it to [n, 3*h*w] through its own shape: Shape -> Gather ->
ReduceProd -> Concat -> Reshape, as exporters write view(n, -1) with a computed size. With
--range it also outputs Range(0, n, 1) (a length an input has as a dim), with --area
Range(0, h * w, 1) (a length no input has)."""
import sys

import onnx
from onnx import TensorProto, helper

nodes = [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
    helper.make_node("Gather", ["s", "rest"], ["r"], axis=0),
    helper.make_node("ReduceProd", ["r"], ["p"], keepdims=1),
    helper.make_node("Concat", ["n", "p"], ["target"], axis=0),
    helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten"),
]
inits = [helper.make_tensor("i0", TensorProto.INT64, [1], [0]),
         helper.make_tensor("rest", TensorProto.INT64, [3], [1, 2, 3])]
outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", None])]
if "--range" in sys.argv or "--area" in sys.argv:
    if "--range" in sys.argv:
        nodes.append(helper.make_node("Squeeze", ["n", "i0"], ["count"]))
    else:
        nodes += [helper.make_node("Gather", ["s", "hw"], ["dims"], axis=0),
                  helper.make_node("ReduceProd", ["dims"], ["count"], keepdims=0)]
        inits.append(helper.make_tensor("hw", TensorProto.INT64, [2], [2, 3]))
    nodes.append(helper.make_node("Range", ["zero", "count", "one"], ["steps"], name="range"))
    inits += [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
              helper.make_tensor("one", TensorProto.INT64, [], [1])]
    outputs.append(helper.make_tensor_value_info("steps", TensorProto.INT64, None))
g = helper.make_graph(nodes, "reader",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
                      outputs, initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
