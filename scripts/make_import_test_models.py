#!/usr/bin/python3
"""Generates the small ONNX models the importer's unit tests read (unittests/import/models/).

Run with Debian's python3 (onnx 1.12, numpy):  /usr/bin/python3 scripts/make_import_test_models.py

cases/<name>/: model.onnx, input_<i>.npy, output_<i>.npy -- imported, interpreted and compared.
bad/<name>.onnx: models the importer must reject with a clear error (see ImportErrorTest.cpp).
external/: a model whose weights live in a separate file (external data).
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unittests", "import", "models")
RNG = np.random.default_rng(7)

NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.uint8): TensorProto.UINT8}


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def vi(name, arr_or_type, shape=None):
    if shape is None:
        return helper.make_tensor_value_info(name, NP_TO_ONNX[arr_or_type.dtype], arr_or_type.shape)
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save_case(name, nodes, inputs, outputs, inits=(), opset=13, input_shapes=None, check=True):
    """inputs: list of (name, array); outputs: list of (name, expected array)."""
    graph = helper.make_graph(
        nodes, name,
        [vi(n, a) if not input_shapes or n not in input_shapes
         else vi(n, NP_TO_ONNX[a.dtype], input_shapes[n]) for n, a in inputs],
        [vi(n, a) for n, a in outputs],
        initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if check:  # the checker insists on topological order
        onnx.checker.check_model(model)
    d = os.path.join(ROOT, "cases", name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (_, a) in enumerate(inputs):
        np.save(os.path.join(d, f"input_{i}.npy"), np.array(a, order="C"))
    for i, (_, a) in enumerate(outputs):
        np.save(os.path.join(d, f"output_{i}.npy"), np.array(a, order="C"))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)


def data_movement_cases():
    x = rand(2, 3, 4)
    save_case("reshape", [node("Reshape", ["x", "s"], ["y"])], [("x", x)],
              [("y", x.reshape(2, 12))], [const("s", np.array([0, -1], np.int64))])
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to a static reshape.
    save_case("shape_chain", [
        node("Shape", ["x"], ["sh"]),
        node("Gather", ["sh", "i0"], ["d0"], axis=0),
        node("Unsqueeze", ["d0", "ax0"], ["d0u"]),
        node("Concat", ["d0u", "m1"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["y"])],
        [("x", x)], [("y", x.reshape(2, 12))],
        [const("i0", np.array(0, np.int64)), const("ax0", np.array([0], np.int64)),
         const("m1", np.array([-1], np.int64))])
    x4 = rand(2, 3, 4, 5)
    save_case("flatten", [node("Flatten", ["x"], ["y"], axis=2)], [("x", x4)],
              [("y", x4.reshape(6, 20))])
    x1 = rand(3, 1, 4, 1)
    save_case("squeeze13", [node("Squeeze", ["x", "a"], ["y"])], [("x", x1)],
              [("y", x1.reshape(3, 4, 1))], [const("a", np.array([1], np.int64))])
    save_case("squeeze11_all", [node("Squeeze", ["x"], ["y"])], [("x", x1)],
              [("y", x1.reshape(3, 4))], opset=11)
    save_case("unsqueeze11", [node("Unsqueeze", ["x"], ["y"], axes=[0, -1])], [("x", x)],
              [("y", x.reshape(1, 2, 3, 4, 1))], opset=11)
    save_case("transpose", [node("Transpose", ["x"], ["y"]),
                            node("Transpose", ["x"], ["z"], perm=[1, 0, 2])], [("x", x)],
              [("y", x.transpose()), ("z", x.transpose(1, 0, 2))])
    a, b = rand(2, 3), rand(2, 5)
    save_case("concat", [node("Concat", ["a", "b"], ["y"], axis=-1)], [("a", a), ("b", b)],
              [("y", np.concatenate([a, b], -1))])
    x6 = rand(6, 4)
    save_case("split13", [node("Split", ["x", "s"], ["p", "q"], axis=0)], [("x", x6)],
              [("p", x6[:2]), ("q", x6[2:])], [const("s", np.array([2, 4], np.int64))])
    save_case("split_equal11", [node("Split", ["x"], ["p", "q"], axis=1)], [("x", x6)],
              [("p", x6[:, :2]), ("q", x6[:, 2:])], opset=11)
    x5 = rand(5, 6)
    save_case("slice", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [("x", x5)],
              [("y", x5[4:0:-2, 1:100])],
              [const("st", np.array([-1, 1], np.int64)), const("en", np.array([0, 100], np.int64)),
               const("ax", np.array([0, 1], np.int64)), const("sp", np.array([-2, 1], np.int64))])
    save_case("slice9", [node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[1])], [("x", x5)],
              [("y", x5[:, 1:3])], opset=9)
    save_case("pad_reflect", [node("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", x5)],
              [("y", np.pad(x5, [(1, 0), (2, 1)], mode="reflect"))],
              [const("p", np.array([1, 2, 0, 1], np.int64))])
    save_case("pad_constant", [node("Pad", ["x", "p", "v"], ["y"])], [("x", x5)],
              [("y", np.pad(x5, [(0, 1), (1, 0)], constant_values=2.5))],
              [const("p", np.array([0, 1, 1, 0], np.int64)), const("v", np.array(2.5, np.float32))])
    save_case("pad2", [node("Pad", ["x"], ["y"], pads=[1, 0, 0, 2], value=1.0)], [("x", x5)],
              [("y", np.pad(x5, [(1, 0), (0, 2)], constant_values=1.0))], opset=7)
    x23 = rand(2, 3)
    save_case("tile", [node("Tile", ["x", "r"], ["y"])], [("x", x23)],
              [("y", np.tile(x23, (2, 3)))], [const("r", np.array([2, 3], np.int64))])
    x31 = rand(3, 1)
    save_case("expand", [node("Expand", ["x", "s"], ["y"])], [("x", x31)],
              [("y", x31 * np.ones((2, 1, 4), np.float32))], [const("s", np.array([2, 1, 4], np.int64))])
    idx = np.array([[0, -1], [1, 2]], np.int64)
    save_case("gather", [node("Gather", ["x", "i"], ["y"], axis=1)], [("x", x5)],
              [("y", np.take(x5, np.where(idx < 0, idx + 6, idx), axis=1))], [const("i", idx)])
    ge = np.array([[0, 1], [2, 0]], np.int64)
    x23b = rand(2, 3)
    save_case("gather_elements", [node("GatherElements", ["x", "i"], ["y"], axis=1)], [("x", x23b)],
              [("y", np.take_along_axis(x23b, ge, axis=1))], [const("i", ge)])
    gnd = np.array([[1, 0], [0, 2]], np.int64)
    save_case("gather_nd", [node("GatherND", ["x", "i"], ["y"])], [("x", x23b)],
              [("y", np.array([x23b[1, 0], x23b[0, 2]]))], [const("i", gnd)])
    data = np.zeros((3, 3), np.float32)
    upd = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    si = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    exp = data.copy()
    for i in range(2):
        for j in range(3):
            exp[si[i, j], j] = upd[i, j]
    save_case("scatter_elements", [node("ScatterElements", ["d", "i", "u"], ["y"], axis=0)],
              [("d", data)], [("y", exp)], [const("i", si), const("u", upd)])
    snd_i = np.array([[0], [2]], np.int64)
    snd_u = np.array([[9, 9, 9], [7, 7, 7]], np.float32)
    exp = data.copy()
    exp[0], exp[2] = 9, 7
    save_case("scatter_nd", [node("ScatterND", ["d", "i", "u"], ["y"])], [("d", data)],
              [("y", exp)], [const("i", snd_i), const("u", snd_u)])
    xd = rand(1, 8, 2, 3)
    b = 2
    n, c, h, w = xd.shape
    dcr = xd.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, h * b, w * b)
    crd = xd.reshape(n, c // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 4, h * b, w * b)
    save_case("depth_to_space", [node("DepthToSpace", ["x"], ["y"], blocksize=2),
                                 node("DepthToSpace", ["x"], ["z"], blocksize=2, mode="CRD")],
              [("x", xd)], [("y", dcr), ("z", crd)])
    xs = rand(1, 2, 4, 6)
    n, c, h, w = xs.shape
    s2d = xs.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * 4, h // 2, w // 2)
    save_case("space_to_depth", [node("SpaceToDepth", ["x"], ["y"], blocksize=2)], [("x", xs)],
              [("y", s2d)])
    save_case("identity_dropout", [node("Identity", ["x"], ["y"]),
                                   node("Dropout", ["y"], ["z", "mask"])], [("x", x23)],
              [("z", x23), ("mask", np.ones((2, 3), np.bool_))])
    save_case("shape_size", [node("Shape", ["x"], ["s"], start=1), node("Size", ["x"], ["n"])],
              [("x", x)], [("s", np.array([3, 4], np.int64)), ("n", np.array(24, np.int64))],
              opset=15)
    xr = np.arange(8, dtype=np.float32).reshape(4, 2)
    rev = xr.copy()
    rev[:3, 0] = xr[2::-1, 0]
    save_case("reverse_sequence", [node("ReverseSequence", ["x", "l"], ["y"])], [("x", xr)],
              [("y", rev)], [const("l", np.array([3, 1], np.int64))], opset=10)
    # Symbolic batch dim through unsqueeze, flatten and tile (the concat path).
    xb = rand(2, 3, 4)
    save_case("symbolic_batch", [
        node("Unsqueeze", ["x", "ax"], ["u"]), node("Flatten", ["u"], ["f"], axis=1),
        node("Tile", ["f", "r"], ["y"])], [("x", xb)], [("y", np.tile(xb.reshape(2, 12), (1, 2)))],
        [const("ax", np.array([1], np.int64)), const("r", np.array([1, 2], np.int64))],
        input_shapes={"x": ["N", 3, 4]})
    x44 = rand(2, 4, 4)
    save_case("trilu", [node("Trilu", ["x", "k"], ["u"]), node("Trilu", ["x"], ["l"], upper=0)],
              [("x", x44)], [("u", np.triu(x44, 1)), ("l", np.tril(x44))],
              [const("k", np.array(1, np.int64))], opset=14)


def misc_cases():
    x23 = rand(2, 3)
    save_case("constant", [
        helper.make_node("Constant", [], ["c"], value=const("cv", np.arange(6, dtype=np.float32).reshape(2, 3))),
        helper.make_node("Constant", [], ["f"], value_floats=[1.0, 2.0]),
        node("Add", ["x", "c"], ["y"])],
        [("x", x23)], [("y", x23 + np.arange(6, dtype=np.float32).reshape(2, 3)),
                       ("f", np.array([1, 2], np.float32))])
    save_case("constant_of_shape", [
        node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["y"], value=const("v", np.array([3], np.int64)))],
        [("x", x23)], [("y", np.full((2, 3), 3, np.int64))])
    save_case("range", [node("Range", ["a", "b", "d"], ["r"]), node("Add", ["x", "r"], ["y"])],
              [("x", np.ones(4, np.float32))],
              [("y", np.arange(1, 9, 2, dtype=np.float32) + 1)],
              [const("a", np.array(1, np.float32)), const("b", np.array(8, np.float32)),
               const("d", np.array(2, np.float32))], opset=11)
    save_case("eye_like", [node("EyeLike", ["x"], ["y"], k=1)], [("x", rand(3, 4))],
              [("y", np.eye(3, 4, 1, dtype=np.float32))])
    ind = np.array([[1, -1], [0, 5]], np.int64)
    vals = np.array([-1, 2], np.float32)
    oh = np.full((2, 3, 2), -1, np.float32)  # axis 1, depth 3
    for i in range(2):
        for j in range(2):
            k = ind[i, j] + 3 if ind[i, j] < 0 else ind[i, j]
            if 0 <= k < 3:
                oh[i, k, j] = 2
    save_case("one_hot", [node("OneHot", ["i", "d", "v"], ["y"], axis=1)], [("i", ind)],
              [("y", oh)], [const("d", np.array(3, np.int64)), const("v", vals)], opset=11)
    xf = np.array([[1.7, -2.2, 0.0]], np.float32)
    save_case("cast", [node("Cast", ["x"], ["y"], to=TensorProto.INT32),
                       node("CastLike", ["x", "t"], ["z"])], [("x", xf)],
              [("y", xf.astype(np.int32)), ("z", xf.astype(np.int64))],
              [const("t", np.array([0], np.int64))], opset=15)
    xt = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.float32)
    order = np.argsort(-xt, axis=1, kind="stable")[:, :2]
    save_case("topk", [node("TopK", ["x", "k"], ["v", "i"])], [("x", xt)],
              [("v", np.take_along_axis(xt, order, 1)), ("i", order.astype(np.int64))],
              [const("k", np.array([2], np.int64))], opset=11)
    save_case("topk1", [node("TopK", ["x"], ["v", "i"], k=2)], [("x", xt)],
              [("v", np.take_along_axis(xt, order, 1)), ("i", order.astype(np.int64))], opset=9)
    save_case("cumsum", [node("CumSum", ["x", "a"], ["y"]), node("CumSum", ["x", "a"], ["z"], exclusive=1, reverse=1)],
              [("x", xt)],
              [("y", np.cumsum(xt, 1)),
               ("z", np.flip(np.cumsum(np.flip(xt, 1), 1), 1) - xt)],
              [const("a", np.array(1, np.int64))], opset=11)
    xr = rand(1, 1, 2, 2)
    save_case("resize_nearest", [node("Resize", ["x", "", "sc"], ["y"])], [("x", xr)],
              [("y", xr.repeat(2, 2).repeat(2, 3))],
              [const("sc", np.array([1, 1, 2, 2], np.float32))], opset=13)
    xl = np.array([[[[1, 3]]]], np.float32)
    save_case("resize_linear", [node("Resize", ["x", "", "", "sz"], ["y"], mode="linear",
                                     coordinate_transformation_mode="align_corners")],
              [("x", xl)], [("y", np.array([[[[1, 2, 3]]]], np.float32))],
              [const("sz", np.array([1, 1, 1, 3], np.int64))], opset=13)
    save_case("upsample", [node("Upsample", ["x", "sc"], ["y"])], [("x", xr)],
              [("y", xr.repeat(2, 2).repeat(3, 3))],
              [const("sc", np.array([1, 1, 2, 3], np.float32))], opset=9)
    a, b = rand(2, 3), rand(3, 4)
    save_case("einsum", [node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")],
              [("a", a), ("b", b)], [("y", np.einsum("ij,jk->ik", a, b))], opset=12)
    c = np.array([[True, False, True]])
    save_case("where", [node("Where", ["c", "a", "b"], ["y"])],
              [("c", c), ("a", x23), ("b", -x23)], [("y", np.where(c, x23, -x23))])
    xh = np.array([[[1, 3, 3], [0, -1, 2]], [[5, 0, 1], [2, 2, 2]]], np.float32)
    hm13 = np.eye(3, dtype=np.float32)[np.argmax(xh, -1)]
    flat = xh.reshape(2, 6)
    hm11 = np.eye(6, dtype=np.float32)[np.argmax(flat, -1)].reshape(2, 2, 3)
    save_case("windows", [node("HannWindow", ["n"], ["h"], periodic=0),
                          node("BlackmanWindow", ["n"], ["b"], periodic=0),
                          node("HammingWindow", ["n"], ["m"]), node("Add", ["x", "h"], ["y"])],
              [("x", np.zeros(10, np.float32))],
              [("h", np.hanning(10).astype(np.float32)), ("b", np.blackman(10).astype(np.float32)),
               ("m", (25 / 46 - 21 / 46 * np.cos(2 * np.pi * np.arange(10) / 10)).astype(np.float32)),
               ("y", np.hanning(10).astype(np.float32))],
              [const("n", np.array(10, np.int64))], opset=17)
    save_case("hardmax13", [node("Hardmax", ["x"], ["y"])], [("x", xh)], [("y", hm13)])
    save_case("hardmax11", [node("Hardmax", ["x"], ["y"], axis=1)], [("x", xh)], [("y", hm11)],
              opset=11)
    # Nodes written consumers first, as some exporters do: imported in dependence order.
    xu = rand(2, 3)
    au = xu + 1
    save_case("unsorted_nodes", [node("Mul", ["a", "b"], ["y"]), node("Relu", ["a"], ["b"]),
                                 node("Add", ["x", "one"], ["a"])],
              [("x", xu)], [("y", au * np.maximum(au, 0))],
              [const("one", np.array(1, np.float32))], check=False)


def save_bad(name, model):
    d = os.path.join(ROOT, "bad")
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, name + ".onnx"))


def bad_models():
    f = TensorProto.FLOAT

    def model(nodes, inputs, outputs, inits=(), opset=13):
        g = helper.make_graph(nodes, "bad", inputs, outputs, initializer=list(inits))
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])

    x = helper.make_tensor_value_info("x", f, [2, 3])
    y = helper.make_tensor_value_info("y", f, None)
    save_bad("missing_input", model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add_0")], [x], [y]))
    save_bad("wrong_attr_type", model([helper.make_node("Transpose", ["x"], ["y"], name="t0", perm=1.5)], [x], [y]))
    save_bad("absurd_dim", model([helper.make_node("Identity", ["x"], ["y"])],
                                 [helper.make_tensor_value_info("x", f, [2, 10**12])], [y]))
    bad_init = TensorProto(name="w", data_type=f, dims=[4, 4], raw_data=b"\0" * 12)
    save_bad("short_initializer", model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [bad_init]))
    huge_init = TensorProto(name="big", data_type=f, dims=[10**9, 10**9], raw_data=b"")
    save_bad("huge_initializer", model([helper.make_node("Add", ["x", "big"], ["y"])], [x], [y], [huge_init]))
    save_bad("unknown_ops", model([
        helper.make_node("Relu", ["x"], ["a"], name="relu_ok"),
        helper.make_node("NonZero", ["a"], ["b"], name="nz_0"),
        helper.make_node("Unique", ["b"], ["c"], name="uniq_1"),
        helper.make_node("NonZero", ["c"], ["d"], name="nz_2"),
        helper.make_node("Foo", ["d"], ["y"], domain="com.example")], [x], [y]))
    save_bad("string_input", model([helper.make_node("Identity", ["s"], ["y"])],
                                   [helper.make_tensor_value_info("s", TensorProto.STRING, [2])], [y]))
    save_bad("future_opset", model([helper.make_node("Identity", ["x"], ["y"])], [x], [y], opset=99))
    # Reshape whose shape is a graph input: importable only when the input is specialized.
    shp = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    save_bad("dynamic_reshape", model([
        helper.make_node("Add", ["shape", "one"], ["s2"], name="bump"),
        helper.make_node("Reshape", ["x", "s2"], ["y"], name="reshape_0")],
        [x, shp], [y], [const("one", np.array([0, 0], np.int64))]))
    # A true cycle: add_a reads relu_b's output, which reads add_a's.
    save_bad("cycle", model([helper.make_node("Identity", ["a"], ["y"], name="out_id"),
                             helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                             helper.make_node("Relu", ["a"], ["b"], name="relu_b")], [x], [y]))
    # dim_param symbols, sanitized; one unnamed dim.
    xs = helper.make_tensor_value_info("in:put", f, ["batch size", "3d", None])
    save_bad("symbols", model([helper.make_node("Relu", ["in:put"], ["y"])], [xs], [y]))
    # External data that escapes the model's directory.
    esc = TensorProto(name="w", data_type=f, dims=[2, 3])
    esc.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "../escape.bin"), ("offset", "0"), ("length", "24")):
        e = esc.external_data.add()
        e.key, e.value = k, v
    save_bad("escaping_external", model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [esc]))


def external_model():
    d = os.path.join(ROOT, "external")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([1, 2, 3, 4], np.float32)
    x = np.ones((2, 3), np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])],
        "external", [vi("x", x)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[const("w", w), const("b", b)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(d, "model.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    np.save(os.path.join(d, "input_0.npy"), x)
    np.save(os.path.join(d, "output_0.npy"), x @ w + b)


def main():
    shutil.rmtree(os.path.join(ROOT, "cases"), ignore_errors=True)
    shutil.rmtree(os.path.join(ROOT, "bad"), ignore_errors=True)
    data_movement_cases()
    misc_cases()
    bad_models()
    external_model()


if __name__ == "__main__":
    main()
