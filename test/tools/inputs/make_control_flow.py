#!/usr/bin/python3
"""Control flow decided by data at run time, on an input x [n, 4] (n symbolic).
`make_control_flow.py OUT --if`: y = If(sum(x) > 0) then (x * w + 1, then doubled by a nested If
on max(x) > 2) else relu(-x); the branches read x and the initializer w from the enclosing graph.
`make_control_flow.py OUT --loop`: a while loop (no trip count; its condition computed from the
data) halving acc = x until max|acc| <= 0.25, counting its iterations; and a loop over the rows
(trip count Shape(x)[0]) summing them as it goes, with a scan output of row * iteration.
`make_control_flow.py OUT --until`: the loop over the rows (trip count Shape(x)[0]) with a
condition ending it once the running sum's max reaches 3: its scan output of row * iteration has
as many entries as iterations ran (a data-dependent size bounded by n).
`make_control_flow.py OUT --counted`: a loop run m times (m a graph input, i64 []) without scan
outputs: acc = acc * 0.5 + 1 from acc = x; output "counted".
`make_control_flow.py --check DIR X.npy`: compares the outputs in DIR with numpy's (both models'
output names differ, so one DIR may hold either).
`make_control_flow.py --engines DIR MODEL.onnx LIB.so X.npy...`: runs `strata run` on each input
with the interpreter, the jit per shape, the jit compiled once (--any-shape) and the library,
checking each against numpy."""
import os
import subprocess
import sys

import numpy as np

W = np.array([0.5, -1.0, 2.0, 0.25], np.float32)


def reference(x):
    out = {}
    if x.sum() > 0:
        y = x * W + 1
        out["y"] = y * 2 if x.max() > 2 else y
    else:
        out["y"] = np.maximum(-x, 0)
    acc, k = x.copy(), 0
    while np.abs(acc).max() > 0.25:  # the condition input decides the first iteration
        acc, k = acc * np.float32(0.5), k + 1
    out["halved"], out["halvings"] = acc, np.array(k, np.int64)
    out["rowsum"] = x.sum(0)
    out["scaled"] = x * np.arange(x.shape[0], dtype=np.float32)[:, None]
    s, entries = np.zeros(4, np.float32), []
    for i in range(x.shape[0]):  # stops early once max(s) reaches 3
        s = s + x[i]
        entries.append(x[i] * np.float32(i))
        if not s.max() < 3:
            break
    out["untilsum"] = s
    out["untilscan"] = np.array(entries, np.float32).reshape(-1, 4)
    return out


def check(out_dir, x):
    checked = 0
    for name, ref in reference(x).items():
        path = os.path.join(out_dir, name + ".npy")
        if not os.path.exists(path):
            continue
        got = np.load(path)
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
        checked += 1
    assert checked, "no outputs to check"


if sys.argv[1] == "--check":
    check(sys.argv[2], np.load(sys.argv[3]))
    sys.exit(0)

if sys.argv[1] == "--engines":
    out, model, lib = sys.argv[2:5]
    for x_path in sys.argv[5:]:
        for name, args in (("interp", [model, "--engine", "interp"]), ("jit", [model, "--no-cache"]),
                           ("any", [model, "--no-cache", "--any-shape"]), ("aot", [lib])):
            d = os.path.join(out, os.path.basename(x_path)[:-4] + "-" + name)
            subprocess.run(["strata", "run"] + args + ["-i", "x=" + x_path, "--output-dir", d],
                           check=True, stdout=subprocess.DEVNULL)
            check(d, np.load(x_path))
    sys.exit(0)

import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
x_info = helper.make_tensor_value_info("x", F, ["n", 4])


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype), name)


def any_out(name, dtype=F):
    return helper.make_tensor_value_info(name, dtype, None)


if "--until" in sys.argv:
    rows = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Add", ["s", "row"], ["s2"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["row", "fi"], ["entry"]),
         helper.make_node("ReduceMax", ["s2"], ["m"], keepdims=0),
         helper.make_node("Less", ["m", "three"], ["again"])],
        "rows", [helper.make_tensor_value_info("i", I64, []),
                 helper.make_tensor_value_info("c", B, []),
                 helper.make_tensor_value_info("s", F, [4])],
        [helper.make_tensor_value_info("again", B, []), any_out("s2"), any_out("entry")],
        initializer=[scalar("three", 3.0, np.float32)])
    g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "idx0"], ["n"], axis=0),
         helper.make_node("Loop", ["n", "", "zeros4"], ["untilsum", "untilscan"], body=rows)],
        "until", [x_info], [any_out("untilsum"), any_out("untilscan")],
        initializer=[scalar("idx0", 0, np.int64),
                     numpy_helper.from_array(np.zeros(4, np.float32), "zeros4")])
elif "--counted" in sys.argv:
    step = helper.make_graph(
        [helper.make_node("Mul", ["acc", "half"], ["h"]), helper.make_node("Add", ["h", "one"], ["acc2"]),
         helper.make_node("Identity", ["c"], ["c2"])],
        "step", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", B, []),
                 helper.make_tensor_value_info("acc", F, ["n", 4])],
        [helper.make_tensor_value_info("c2", B, []), any_out("acc2")],
        initializer=[scalar("half", 0.5, np.float32), scalar("one", 1.0, np.float32)])
    g = helper.make_graph([helper.make_node("Loop", ["m", "", "x"], ["counted"], body=step)],
                          "counted", [x_info, helper.make_tensor_value_info("m", I64, [])],
                          [any_out("counted")])
elif "--if" in sys.argv:
    nested = helper.make_node(
        "If", ["big"], ["y_then"],
        then_branch=helper.make_graph([helper.make_node("Add", ["y1", "y1"], ["y2"])], "twice",
                                      [], [any_out("y2")]),
        else_branch=helper.make_graph([helper.make_node("Identity", ["y1"], ["y3"])], "same", [],
                                      [any_out("y3")]))
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "one"], ["y1"]),
         helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
         helper.make_node("Greater", ["mx", "two"], ["big"]), nested],
        "then", [], [any_out("y_then")], initializer=[scalar("one", 1.0, np.float32)])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["nx"]), helper.make_node("Relu", ["nx"], ["y_else"])],
        "else", [], [any_out("y_else")])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    g = helper.make_graph(nodes, "if", [x_info], [any_out("y")],
                          initializer=[numpy_helper.from_array(W, "w"),
                                       scalar("zero", 0.0, np.float32),
                                       scalar("two", 2.0, np.float32)])
else:
    # While max|acc| > 0.25: acc *= 0.5, k += 1.
    halve = helper.make_graph(
        [helper.make_node("Mul", ["acc", "half"], ["acc2"]),
         helper.make_node("Add", ["k", "one"], ["k2"]),
         helper.make_node("Abs", ["acc2"], ["a"]),
         helper.make_node("ReduceMax", ["a"], ["m"], keepdims=0),
         helper.make_node("Greater", ["m", "quarter"], ["again"])],
        "halve", [helper.make_tensor_value_info("i", I64, []),
                  helper.make_tensor_value_info("c", B, []),
                  helper.make_tensor_value_info("acc", F, ["n", 4]),
                  helper.make_tensor_value_info("k", I64, [])],
        [helper.make_tensor_value_info("again", B, []), any_out("acc2"), any_out("k2", I64)],
        initializer=[scalar("one", 1, np.int64)])
    # For i in range(n): s += x[i]; scan x[i] * i.
    rows = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Add", ["s", "row"], ["s2"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["row", "fi"], ["entry"]),
         helper.make_node("Identity", ["c"], ["c2"])],
        "rows", [helper.make_tensor_value_info("i", I64, []),
                 helper.make_tensor_value_info("c", B, []),
                 helper.make_tensor_value_info("s", F, [4])],
        [helper.make_tensor_value_info("c2", B, []), any_out("s2"), any_out("entry")])
    nodes = [
        helper.make_node("Abs", ["x"], ["ax"]),
        helper.make_node("ReduceMax", ["ax"], ["mx"], keepdims=0),
        helper.make_node("Greater", ["mx", "quarter"], ["go"]),
        helper.make_node("Loop", ["", "go", "x", "zero_k"], ["halved", "halvings"], body=halve),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "idx0"], ["n"], axis=0),
        helper.make_node("Loop", ["n", "", "zeros4"], ["rowsum", "scaled"], body=rows),
    ]
    g = helper.make_graph(
        nodes, "loop", [x_info],
        [any_out("halved"), any_out("halvings", I64), any_out("rowsum"), any_out("scaled")],
        initializer=[scalar("half", 0.5, np.float32), scalar("quarter", 0.25, np.float32),
                     scalar("zero_k", 0, np.int64), scalar("idx0", 0, np.int64),
                     numpy_helper.from_array(np.zeros(4, np.float32), "zeros4")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
