"""Writes a Loop whose body holds sizes decided each iteration: a Compress (NonZero's count, a
bounded data-dependent size) and a Range to iteration + 1 (a size read from data, unbounded),
over a trip count given as an input.

  acc = 0; for i in range(n): acc += sum(x[x > i]) + sum(range(i + 1))

With --append, the shapes torchvision's Mask R-CNN pastes its masks with: a loop over a trip
count given as an input whose body builds an entry of a size it decides (a Range to i + 1,
padded with 10 zeros and cut back to `width`, an input: the cut's length is read from data)
and appends it to a carried value (rows = concat(rows, entry[None])), and a scan output of the
count of x > i:

  rows = zeros(0, 10); for i in range(n): rows = cat(rows, pad(range(i + 1))[:width][None]);
  counts[i] = (x > i).sum()

With --early, a loop a condition can end before its trip count (a greedy decode stopping at
its end token), the trip count an input, with a scan output whose length is the iterations run:

  acc = 0; for i in range(n): acc += x[i % 8]; rows[i] = [acc, i]; if acc >= limit: break

With --carried, a carried value the body gives back at a shape it decides each iteration (a
slice of a width read from data, ONNX's test_loop11 pattern): a width of 2 keeps its shape,
another changes it (the run fails):

  y = zeros(2); for i in range(n): y = x[i : i + w] + mean(y)

--early-none: the same as --early without a trip count (`while acc < limit`); --early-max:
with the trip count torch exports a scripted `while` with, 2^63 - 1; --early-empty:
--early-none with each row cut to no elements (rows [iterations, 0]).

  make_loop_sizes.py MODEL.onnx [--append | --append-read | --early | --early-none |
                                 --early-max | --early-empty | --carried]  write the model
                                               (--append-read: the body also reads the list it
                                               builds)
  make_loop_sizes.py --check OUT X N           compare the run's acc with numpy's
  make_loop_sizes.py --check-append OUT X N W  compare rows and counts with numpy's
  make_loop_sizes.py --check-carried OUT X N   compare y with numpy's (w = 2)
  make_loop_sizes.py --check-early OUT X N LIMIT  compare acc and rows with numpy's (N "-":
                                                  no trip count)
"""
import sys

import numpy as np


def build(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    c = lambda name, dt, v: h.make_node("Constant", [], [name], value=h.make_tensor(name, dt, [], [v]))
    body = h.make_graph(
        [c("zero", T.INT64, 0), c("one", T.INT64, 1),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Greater", ["x", "fi"], ["gt"]),
         h.make_node("Compress", ["x", "gt"], ["sel"], axis=0),
         h.make_node("ReduceSum", ["sel"], ["s1"], keepdims=0),
         h.make_node("Add", ["i", "one"], ["ip1"]),
         h.make_node("Range", ["zero", "ip1", "one"], ["r"]),
         h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT),
         h.make_node("ReduceSum", ["rf"], ["s2"], keepdims=0),
         h.make_node("Add", ["acc", "s1"], ["a1"]),
         h.make_node("Add", ["a1", "s2"], ["acc_out"]),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("acc", T.FLOAT, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("acc_out", T.FLOAT, [])])
    g = h.make_graph(
        [c("acc0", T.FLOAT, 0.0), h.make_node("Loop", ["n", "", "acc0"], ["acc"], body=body)],
        "loop_sizes",
        [h.make_tensor_value_info("x", T.FLOAT, [8]), h.make_tensor_value_info("n", T.INT64, [])],
        [h.make_tensor_value_info("acc", T.FLOAT, [])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def build_append(path, read=False):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    c = lambda name, dt, dims, v: h.make_node("Constant", [], [name],
                                              value=h.make_tensor(name, dt, dims, v))
    body = h.make_graph(
        [c("zero", T.INT64, [], [0]), c("one", T.INT64, [], [1]), c("z1", T.INT64, [1], [0]),
         c("ten", T.INT64, [1], [10]), c("pad", T.FLOAT, [10], [0.0] * 10),
         c("axis0", T.INT64, [1], [0]),
         h.make_node("Add", ["i", "one"], ["ip1"]),
         h.make_node("Range", ["zero", "ip1", "one"], ["r"]),
         h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT),
         h.make_node("Concat", ["rf", "pad"], ["long"], axis=0),
         h.make_node("Slice", ["long", "z1", "width"], ["entry"]),
         h.make_node("Unsqueeze", ["entry", "axis0"], ["row"]),
         h.make_node("Concat", ["rows", "row"], ["rows_out"], axis=0),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Greater", ["x", "fi"], ["gt"]),
         h.make_node("Cast", ["gt"], ["gti"], to=T.INT64),
         h.make_node("ReduceSum", ["gti"], ["count"], keepdims=0),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("rows", T.FLOAT, [None, 10])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("rows_out", T.FLOAT, [None, None]),
         h.make_tensor_value_info("count", T.INT64, [])])
    if read:  # the list read while it is built (its running total): not an append-only value
        body.node.append(h.make_node("ReduceSum", ["rows_out"], ["total"], keepdims=0))
        body.output.append(h.make_tensor_value_info("total", T.FLOAT, []))
    g = h.make_graph(
        [c("rows0", T.FLOAT, [0, 10], []),
         h.make_node("Loop", ["n", "", "rows0"], ["rows", "counts"] + (["totals"] if read else []),
                     body=body)],
        "loop_append",
        [h.make_tensor_value_info("x", T.FLOAT, [8]), h.make_tensor_value_info("n", T.INT64, []),
         h.make_tensor_value_info("width", T.INT64, [1])],
        [h.make_tensor_value_info("rows", T.FLOAT, None),
         h.make_tensor_value_info("counts", T.INT64, None)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def build_early(path, trips="data", empty=False):
    """trips: "data" (the input n), "none" (no trip count: the condition alone ends it) or
    "max" (2^63 - 1, as torch exports a scripted `while`); empty: each row cut to 0 elements."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    c = lambda name, dt, dims, v: h.make_node("Constant", [], [name],
                                              value=h.make_tensor(name, dt, dims, v))
    body = h.make_graph(
        [c("eight", T.INT64, [], [8]), c("axis0", T.INT64, [1], [0]),
         h.make_node("Mod", ["i", "eight"], ["at"]),
         h.make_node("Gather", ["x", "at"], ["xi"], axis=0),
         h.make_node("Add", ["acc", "xi"], ["acc_out"]),
         h.make_node("Less", ["acc_out", "limit"], ["cond_out"]),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Unsqueeze", ["acc_out", "axis0"], ["a1"]),
         h.make_node("Unsqueeze", ["fi", "axis0"], ["i1"]),
         h.make_node("Concat", ["a1", "i1"], ["row2"], axis=0),
         c("zero", T.INT64, [1], [0]), c("keep", T.INT64, [1], [0 if empty else 2]),
         h.make_node("Slice", ["row2", "zero", "keep"], ["row"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("acc", T.FLOAT, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("acc_out", T.FLOAT, []),
         h.make_tensor_value_info("row", T.FLOAT, [0 if empty else 2])])
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [8]),
              h.make_tensor_value_info("limit", T.FLOAT, [])]
    nodes = [c("acc0", T.FLOAT, [], [0.0])]
    if trips == "data":
        inputs.insert(1, h.make_tensor_value_info("n", T.INT64, []))
    elif trips == "max":
        nodes.append(c("n", T.INT64, [], [2**63 - 1]))
    g = h.make_graph(
        nodes + [h.make_node("Loop", ["" if trips == "none" else "n", "", "acc0"],
                             ["acc", "rows"], body=body)],
        "loop_early",
        inputs,
        [h.make_tensor_value_info("acc", T.FLOAT, []),
         h.make_tensor_value_info("rows", T.FLOAT, None)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def build_carried(path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    c = lambda name, dt, dims, v: h.make_node("Constant", [], [name],
                                              value=h.make_tensor(name, dt, dims, v))
    body = h.make_graph(
        [c("axis0", T.INT64, [1], [0]),
         h.make_node("Unsqueeze", ["i", "axis0"], ["start"]),
         h.make_node("Add", ["start", "w"], ["end"]),
         h.make_node("Slice", ["x", "start", "end"], ["part"]),
         h.make_node("ReduceMean", ["y_in"], ["mean"], keepdims=0),
         h.make_node("Add", ["part", "mean"], ["y_out"]),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("y_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("y_out", T.FLOAT, None)])
    g = h.make_graph(
        [c("y0", T.FLOAT, [2], [0.0, 0.0]),
         h.make_node("Loop", ["n", "", "y0"], ["y"], body=body)],
        "loop_carried",
        [h.make_tensor_value_info("x", T.FLOAT, [8]), h.make_tensor_value_info("n", T.INT64, []),
         h.make_tensor_value_info("w", T.INT64, [1])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def check_carried(out, x, n):
    x, n = np.load(x), int(np.load(n))
    y = np.zeros(2, np.float32)
    for i in range(n):
        y = x[i: i + 2] + y.mean(dtype=np.float32)
    np.testing.assert_allclose(np.load(out + "/y.npy"), y, rtol=1e-6)
    print("ok", y)


def check_early(out, x, n, limit):
    x, limit = np.load(x), float(np.load(limit))
    n = 2**63 - 1 if n == "-" else int(np.load(n))  # "-": no trip count
    acc, rows = np.float32(0), []
    for i in range(n):
        acc = np.float32(acc + x[i % 8])
        rows.append([acc, i])
        if not acc < limit:
            break
    rows = np.array(rows, np.float32).reshape(-1, 2)
    got = np.load(out + "/rows.npy")
    if got.shape[1:] == (0,):  # (--early-empty)
        rows = rows[:, :0]
    np.testing.assert_array_equal(got, rows)
    np.testing.assert_array_equal(np.load(out + "/acc.npy"), acc)
    print("ok", rows.shape)


def check_append(out, x, n, width):
    x, n, width = np.load(x), int(np.load(n)), int(np.load(width)[0])
    rows = np.zeros((n, width), np.float32)
    for i in range(n):
        k = min(i + 1, width)
        rows[i, :k] = np.arange(k)
    counts = np.array([(x > i).sum() for i in range(n)], np.int64)
    np.testing.assert_array_equal(np.load(out + "/rows.npy"), rows)
    np.testing.assert_array_equal(np.load(out + "/counts.npy"), counts)
    print("ok", rows.shape)


def check(out, x, n):
    x, n = np.load(x), int(np.load(n))
    want = sum(float(x[x > i].sum()) + i * (i + 1) / 2 for i in range(n))
    got = float(np.load(out + "/acc.npy"))
    assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (got, want)
    print("ok", got)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(*sys.argv[2:5])
    elif sys.argv[1] == "--check-append":
        check_append(*sys.argv[2:6])
    elif sys.argv[1] == "--check-carried":
        check_carried(*sys.argv[2:5])
    elif "--carried" in sys.argv:
        build_carried(sys.argv[1])
    elif sys.argv[1] == "--check-early":
        check_early(*sys.argv[2:6])
    elif "--early" in sys.argv:
        build_early(sys.argv[1])
    elif "--early-none" in sys.argv or "--early-max" in sys.argv:
        build_early(sys.argv[1], "none" if "--early-none" in sys.argv else "max")
    elif "--early-empty" in sys.argv:
        build_early(sys.argv[1], "none", empty=True)
    elif "--append" in sys.argv or "--append-read" in sys.argv:
        build_append(sys.argv[1], read="--append-read" in sys.argv)
    else:
        build(sys.argv[1])
