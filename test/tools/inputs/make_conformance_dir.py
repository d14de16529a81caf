#!/usr/bin/python3
"""Writes a folder of ONNX backend-style tests for the conformance runner's lit test:
`make_conformance_dir.py OUT`. Each test is an Identity model with one data set whose expected
output says what the runner must decide:
  test_inf_matches   input [1, inf, -inf], expected the same          -> pass
  test_inf_vs_finite input [1, 2, 3],      expected [1, inf, 3]       -> fail (inf matches only inf)
  test_finite_vs_inf input [1, inf, 3],    expected [1, 2, 3]         -> fail
  test_nan_matches   input [nan, 1],       expected [nan, 1]          -> pass
With --hang, also test_j_hangs: a Loop of 10^12 iterations that a test's timeout must end; the
runner must then go on with the tests after it.
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


def write_hang(out):
    d = os.path.join(out, "test_j_hangs")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v_in", "v_in"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])])
    cond = numpy_helper.from_array(np.array(True), "cond")
    g = helper.make_graph([helper.make_node("Loop", ["trips", "cond", "x"], ["y"], body=body)],
                          "test_j_hangs",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
                           helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                          initializer=[cond])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for file, value, tname in (("input_0", np.array([0], np.float32), "x"),
                               ("input_1", np.array(10**12, np.int64), "trips"),
                               ("output_0", np.array([0], np.float32), "y")):
        with open(os.path.join(d, "test_data_set_0", f"{file}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, tname).SerializeToString())


def main():
    out = sys.argv[1]
    for name, (given, expected) in CASES.items():
        write(out, name, given, expected)
    if "--hang" in sys.argv[2:]:
        write_hang(out)


if __name__ == "__main__":
    main()
