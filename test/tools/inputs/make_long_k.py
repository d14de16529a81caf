#!/usr/bin/python3
"""`make_long_k.py OUT`: an ONNX model of matmuls whose K is summed in blocks (a panel of b past
a core's cache): x [m, 2048] (m symbolic) times a constant [2048, 200] + bias, then erf-GELU
(an epilogue stored only after the last block; 200 columns leave a scalar tail at 16 lanes);
and a batched product of two inputs, a [3, 37, 8192] x b [3, 8192, 64] (37 rows: a row tail,
groups of row tiles that do not divide them). Outputs `dense` and `batched`."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)
inits = [numpy_helper.from_array((rng.standard_normal((4096, 200)) / 64).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(200).astype(np.float32), "bias"),
         numpy_helper.from_array(np.array(np.sqrt(0.5), np.float32), "rsqrt2"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one"),
         numpy_helper.from_array(np.array(0.5, np.float32), "half")]
nodes = [
    helper.make_node("MatMul", ["x", "w"], ["xw"]),
    helper.make_node("Add", ["xw", "bias"], ["h"]),
    helper.make_node("Mul", ["h", "rsqrt2"], ["hs"]),
    helper.make_node("Erf", ["hs"], ["e"]),
    helper.make_node("Add", ["e", "one"], ["e1"]),
    helper.make_node("Mul", ["h", "e1"], ["he"]),
    helper.make_node("Mul", ["he", "half"], ["dense"]),
    helper.make_node("MatMul", ["a", "b"], ["batched"]),
]
graph = helper.make_graph(
    nodes, "long_k",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "m", 4096]),
     helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 37, 8192]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 8192, 64])],
    [helper.make_tensor_value_info("dense", TensorProto.FLOAT, [2, "m", 200]),
     helper.make_tensor_value_info("batched", TensorProto.FLOAT, [3, 37, 64])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
