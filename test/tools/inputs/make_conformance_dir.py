#!/usr/bin/python3
"""Writes a folder of ONNX backend-style tests for the conformance runner's lit test:
`make_conformance_dir.py OUT`. Each test is an Identity model with one data set whose expected
output says what the runner must decide:
  test_inf_matches   input [1, inf, -inf], expected the same          -> pass
  test_inf_vs_finite input [1, 2, 3],      expected [1, inf, 3]       -> fail (inf matches only inf)
  test_finite_vs_inf input [1, inf, 3],    expected [1, 2, 3]         -> fail
  test_nan_matches   input [nan, 1],       expected [nan, 1]          -> pass
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = {
    "test_inf_matches": ([1, np.inf, -np.inf], [1, np.inf, -np.inf]),
    "test_inf_vs_finite": ([1, 2, 3], [1, np.inf, 3]),
    "test_finite_vs_inf": ([1, np.inf, 3], [1, 2, 3]),
    "test_nan_matches": ([np.nan, 1], [np.nan, 1]),
}


def write(out, name, given, expected):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    n = len(given)
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, values, tname in (("input", given, "x"), ("output", expected, "y")):
        t = numpy_helper.from_array(np.array(values, np.float32), tname)
        with open(os.path.join(d, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(t.SerializeToString())


def main():
    out = sys.argv[1]
    for name, (given, expected) in CASES.items():
        write(out, name, given, expected)


if __name__ == "__main__":
    main()
