#!/usr/bin/python3
"""An If decided by data whose branches give different shapes, as torchvision's batched_nms
writes `if boxes.numel() == 0: return empty`, on an input x [n]:
  (a, b) = If(sum(x) > 0) then (x[x > 0] (NonZero + GatherND: a data-dependent size inside the
  branch), x[:2]) else (an empty [0] constant, -x); outputs y = a * 2, z = b + 2.
`make_if_shapes.py OUT`: writes the model.
`make_if_shapes.py --check DIR X.npy`: compares DIR/y.npy and DIR/z.npy with numpy's."""
import sys

import numpy as np

if sys.argv[1] == "--check":
    x = np.load(sys.argv[3])
    if x.sum() > 0:
        want = {"y": x[x > 0] * 2, "z": x[:2] + 2}
    else:
        want = {"y": np.zeros(0, np.float32), "z": -x + 2}
    for name, ref in want.items():
        got = np.load(sys.argv[2] + "/" + name + ".npy")
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        np.testing.assert_array_equal(got, ref)
    sys.exit(0)

import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def const(name, values, dtype=np.int64):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(values, dtype), name))


then = h.make_graph(
    [h.make_node("Greater", ["x", "zero"], ["pos"]),
     h.make_node("NonZero", ["pos"], ["idx"]),
     h.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
     h.make_node("GatherND", ["x", "idx_t"], ["sel"]),
     const("s0", [0]), const("s2", [2]),
     h.make_node("Slice", ["x", "s0", "s2"], ["head"])],
    "then", [], [h.make_tensor_value_info("sel", T.FLOAT, None),
                 h.make_tensor_value_info("head", T.FLOAT, None)])
other = h.make_graph(
    [const("empty", np.zeros((0,)), np.float32), h.make_node("Neg", ["x"], ["negx"])],
    "else", [], [h.make_tensor_value_info("empty", T.FLOAT, None),
                 h.make_tensor_value_info("negx", T.FLOAT, None)])
nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         h.make_node("Greater", ["s", "zero"], ["cond"]),
         h.make_node("If", ["cond"], ["a", "b"], then_branch=then, else_branch=other),
         h.make_node("Mul", ["a", "two"], ["y"]),
         h.make_node("Add", ["b", "two"], ["z"])]
g = h.make_graph(nodes, "if_shapes", [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
                 [h.make_tensor_value_info("y", T.FLOAT, None),
                  h.make_tensor_value_info("z", T.FLOAT, None)],
                 [nh.from_array(np.array(0, np.float32), "zero"),
                  nh.from_array(np.array(2, np.float32), "two")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
