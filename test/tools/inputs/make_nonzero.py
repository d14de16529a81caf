#!/usr/bin/python3
"""`make_nonzero.py OUT`: an ONNX model with data-dependent sizes on an input x [3, 5]: the indices
of its positive elements (NonZero), the values there as torch's x[x > 0] exports them (NonZero,
Transpose, GatherND) with a relu after, the columns whose sum is positive (Compress along axis 1),
the negative elements (Compress of the flattened input), the
concatenation of the two data-dependent vectors (a size that is a sum of two counts) and its sum
(a static output computed from them).
`make_nonzero.py --check DIR X.npy`: compares the outputs in DIR with numpy's on input X.
`make_nonzero.py OUT --select`: rows of x [n, 8] (batch dynamic) whose max is above 0.5 (Compress
along axis 0), through a MatMul, a Softmax and a mean over the selected rows: a data-dependent
dim bounded by an input's symbol, as a batch of later ops.
`make_nonzero.py OUT --unique`: Unique of an i64 vector v [12] (sorted) and of the rows of a
matrix m [6, 3] (axis 0, in order of first occurrence), all four outputs each.
`make_nonzero.py --check-unique DIR V.npy M.npy`: compares them with numpy's np.unique.
`make_nonzero.py OUT --topk`: the 3 largest positive elements of x [n] (n dynamic) as
torchvision's detectors pick candidates: x[x > 0] (NonZero, GatherND), then TopK with
K = min(3, count) (ReduceMin of a Concat with Shape of a second NonZero of the mask: a k computed
from another data-dependent size).
`make_nonzero.py --check-topk DIR X.npy`: compares values and indices with numpy's."""
import sys

import numpy as np

if sys.argv[1] == "--check-unique":
    v, m = np.load(sys.argv[3]), np.load(sys.argv[4])
    y, idx, inv, cnt = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
    for name, ref in (("y", y), ("idx", idx), ("inv", inv), ("cnt", cnt)):
        np.testing.assert_array_equal(np.load(sys.argv[2] + "/" + name + ".npy"), ref)
    rows, first, inv, cnt = np.unique(m, axis=0, return_index=True, return_inverse=True,
                                      return_counts=True)
    order = np.argsort(first)  # in order of first occurrence
    place = np.empty_like(order)
    place[order] = np.arange(len(order))
    for name, ref in (("rows", rows[order]), ("rows_idx", first[order]),
                      ("rows_inv", place[inv.reshape(-1)]), ("rows_cnt", cnt[order])):
        np.testing.assert_array_equal(np.load(sys.argv[2] + "/" + name + ".npy"), ref)
    sys.exit(0)

if sys.argv[1] == "--check-topk":
    x = np.load(sys.argv[3])
    sel = x[x > 0]
    order = np.argsort(-sel, kind="stable")[:3]
    np.testing.assert_array_equal(np.load(sys.argv[2] + "/top.npy"), sel[order])
    np.testing.assert_array_equal(np.load(sys.argv[2] + "/at.npy"), order)
    sys.exit(0)

if sys.argv[1] == "--check":
    x = np.load(sys.argv[3])
    both = np.concatenate([x[x > 0], x[x < 0]])
    want = {"idx": np.array(np.nonzero(x > 0)), "vals": np.maximum(x[x > 0], 0),
            "cols": x[:, x.sum(0) > 0], "both": both, "total": np.array(both.sum(), np.float32)}
    for name, ref in want.items():
        got = np.load(sys.argv[2] + "/" + name + ".npy")
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    sys.exit(0)

import onnx
from onnx import TensorProto, helper, numpy_helper

if "--unique" in sys.argv:
    nodes = [helper.make_node("Unique", ["v"], ["y", "idx", "inv", "cnt"], sorted=1),
             helper.make_node("Unique", ["m"], ["rows", "rows_idx", "rows_inv", "rows_cnt"],
                              axis=0, sorted=0)]
    g = helper.make_graph(
        nodes, "unique", [helper.make_tensor_value_info("v", TensorProto.INT64, [12]),
                          helper.make_tensor_value_info("m", TensorProto.FLOAT, [6, 3])],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o != "rows" else
                                       TensorProto.FLOAT, None)
         for o in ("y", "idx", "inv", "cnt", "rows", "rows_idx", "rows_inv", "rows_cnt")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, sys.argv[1])
    sys.exit(0)

if "--topk" in sys.argv:
    nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("NonZero", ["pos"], ["idx"]),
             helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx_t"], ["sel"]),
             # K counts a second NonZero of the mask, as torchvision's where(keep)[0]: equal to
             # the first at run time, another symbol to the plan (its check waits for both).
             helper.make_node("NonZero", ["pos"], ["idx2"]),
             helper.make_node("Shape", ["idx2"], ["shape2"]),
             helper.make_node("Slice", ["shape2", "one", "two"], ["count"]),
             helper.make_node("Concat", ["three", "count"], ["both"], axis=0),
             helper.make_node("ReduceMin", ["both"], ["k0"], keepdims=0),
             helper.make_node("Reshape", ["k0", "one"], ["k"]),
             helper.make_node("TopK", ["sel", "k"], ["top", "at"])]
    g = helper.make_graph(
        nodes, "topk", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("top", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("at", TensorProto.INT64, None)],
        initializer=[numpy_helper.from_array(np.array(0, np.float32), "zero"),
                     numpy_helper.from_array(np.array([3], np.int64), "three"),
                     numpy_helper.from_array(np.array([1], np.int64), "one"),
                     numpy_helper.from_array(np.array([2], np.int64), "two")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, sys.argv[1])
    sys.exit(0)

if "--select" in sys.argv:
    w = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], axes=[1], keepdims=0),
             helper.make_node("Greater", ["m", "half"], ["keep"]),
             helper.make_node("Compress", ["x", "keep"], ["sel"], axis=0),
             helper.make_node("MatMul", ["sel", "w"], ["h"]),
             helper.make_node("Softmax", ["h"], ["p"], axis=1),
             helper.make_node("ReduceMean", ["p"], ["avg"], axes=[0], keepdims=0)]
    g = helper.make_graph(
        nodes, "select", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("p", "avg")],
        initializer=[numpy_helper.from_array(w, "w"),
                     numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, sys.argv[1])
    sys.exit(0)

nodes = [
    helper.make_node("Greater", ["x", "zero"], ["pos"]),
    helper.make_node("NonZero", ["pos"], ["idx"]),
    helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
    helper.make_node("GatherND", ["x", "idx_t"], ["vals0"]),
    helper.make_node("Relu", ["vals0"], ["vals"]),
    helper.make_node("ReduceSum", ["x", "axis0"], ["colsum"], keepdims=0),
    helper.make_node("Greater", ["colsum", "zero"], ["keep"]),
    helper.make_node("Compress", ["x", "keep"], ["cols"], axis=1),
    helper.make_node("Less", ["x", "zero"], ["neg"]),
    helper.make_node("Reshape", ["neg", "flat"], ["neg1"]),
    helper.make_node("Compress", ["x", "neg1"], ["negs"]),
    helper.make_node("Concat", ["vals", "negs"], ["both"], axis=0),
    helper.make_node("ReduceSum", ["both", "axis0"], ["total"], keepdims=0),
]
inits = [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array([0], np.int64), "axis0"),
         numpy_helper.from_array(np.array([-1], np.int64), "flat")]
outputs = [helper.make_tensor_value_info("idx", TensorProto.INT64, None)]
outputs += [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
            for o in ("vals", "cols", "both", "total")]
g = helper.make_graph(nodes, "nonzero",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])], outputs,
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
