#!/usr/bin/python3
"""`make_upsample.py OUT`: an ONNX model with input x [n, 2, h, w] (batch, height and width
dynamic) resized by constant scales, as exporters write F.interpolate(scale_factor=...): nearest
x2 (asymmetric, floor), linear x2 (half_pixel), linear x2 (align_corners), nearest x0.5
(round_prefer_ceil, pytorch_half_pixel) and linear x(1, 4) (asymmetric)."""
import sys

import onnx
from onnx import TensorProto, helper

cases = [("up_nearest", [1, 1, 2, 2], "nearest", "asymmetric", "floor"),
         ("up_linear", [1, 1, 2, 2], "linear", "half_pixel", "round_prefer_floor"),
         ("up_corners", [1, 1, 2, 2], "linear", "align_corners", "round_prefer_floor"),
         ("down_nearest", [1, 1, 0.5, 0.5], "nearest", "pytorch_half_pixel", "round_prefer_ceil"),
         ("wide_linear", [1, 1, 1, 4], "linear", "asymmetric", "round_prefer_floor")]
nodes, inits, outputs = [], [], []
for name, scales, mode, coord, nearest in cases:
    inits.append(helper.make_tensor(name + "_scales", TensorProto.FLOAT, [4], scales))
    nodes.append(helper.make_node("Resize", ["x", "", name + "_scales"], [name], mode=mode,
                                  coordinate_transformation_mode=coord, nearest_mode=nearest))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
g = helper.make_graph(nodes, "upsample",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, "h", "w"])],
                      outputs, initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
