#!/usr/bin/python3
"""Writes one hostile input for the lit tests: `make_hostile.py CASE OUT`; an indexing op with an
out-of-range index and its inputs, one folder per case: `make_hostile.py index OUT_DIR`; models
whose external data escapes their folder: `make_hostile.py external OUT_DIR`."""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

SRC_MODEL = __file__.rsplit("/test/", 1)[0] + "/models/digits/digits.onnx"


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def build(case):
    if case == "empty":
        return b""
    if case == "truncated":
        data = open(SRC_MODEL, "rb").read()
        return data[: len(data) // 2]
    if case == "random":
        rng = random.Random(1234)
        return bytes(rng.randrange(256) for _ in range(4096))
    if case == "missing-input":
        n = helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")
        return model([n], [vi("x", [2])], [vi("y", [2])])
    if case == "wrong-attr-type":
        n = helper.make_node("Transpose", ["x"], ["y"], name="bad_perm")
        n.attribute.append(helper.make_attribute("perm", "not a list"))
        return model([n], [vi("x", [2, 3])], [vi("y", [3, 2])])
    if case == "shape-mismatch":
        n = helper.make_node("Add", ["x", "z"], ["y"], name="add_mismatch")
        return model([n], [vi("x", [2, 3]), vi("z", [4, 5])], [vi("y", [2, 3])])
    if case == "unknown-op":
        nodes = [helper.make_node("FrobnicateV2", ["x"], ["a"], name="frob_1"),
                 helper.make_node("FrobnicateV2", ["a"], ["b"], name="frob_2"),
                 helper.make_node("Relu", ["b"], ["c"], name="relu_ok"),
                 helper.make_node("MaxUnpool", ["c"], ["y"], name="unpool_1")]
        return model(nodes, [vi("x", [4])], [vi("y", [4])])
    if case == "negative-dim":
        n = helper.make_node("Relu", ["x"], ["y"], name="relu_neg")
        return model([n], [vi("x", [2, -3])], [vi("y", [2, 3])])
    if case == "absurd-dim":
        n = helper.make_node("Relu", ["x"], ["y"], name="relu_huge")
        return model([n], [vi("x", [1 << 20, 1 << 20, 1 << 20])], [vi("y", [1])])
    if case == "absurd-constant":
        shape = helper.make_tensor("shape", TensorProto.INT64, [3], [1 << 20, 1 << 20, 1 << 20])
        n = helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill_huge")
        return model([n], [], [vi("y", [1 << 20, 1 << 20, 1 << 20])], inits=[shape])
    if case == "bad-initializer":
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1000])
        t.raw_data = b"\x00" * 12  # 3 floats where 1000 are declared
        n = helper.make_node("Add", ["x", "w"], ["y"], name="add_w")
        return model([n], [vi("x", [1000])], [vi("y", [1000])], inits=[t])
    if case == "cycle":
        nodes = [helper.make_node("Relu", ["b"], ["a"], name="relu_a"),
                 helper.make_node("Neg", ["a"], ["b"], name="neg_b"),
                 helper.make_node("Add", ["x", "a"], ["y"], name="add_out")]
        return model(nodes, [vi("x", [2])], [vi("y", [2])])
    if case.startswith("chain-"):  # chain-N: N elementwise ops in one chain (fused into a kernel)
        nodes, prev = [], "x"
        for i in range(int(case[len("chain-"):])):
            op = ("Neg", "Relu", "Abs", "Sigmoid")[i % 4]
            nodes.append(helper.make_node(op, [prev], [f"v{i}"], name=f"n{i}"))
            prev = f"v{i}"
        nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
        return model(nodes, [vi("x", [4])], [vi("y", [4])])
    if case == "sum-3000":  # one Sum of 3,000 inputs
        n = helper.make_node("Sum", [f"x{i}" for i in range(3000)], ["y"], name="sum_all")
        return model([n], [vi(f"x{i}", [2]) for i in range(3000)], [vi("y", [2])])
    if case == "duplicate-output":  # two nodes define the same value
        nodes = [helper.make_node("Relu", ["x"], ["t"], name="first"),
                 helper.make_node("Neg", ["x"], ["t"], name="second"),
                 helper.make_node("Abs", ["t"], ["y"], name="use")]
        return model(nodes, [vi("x", [2])], [vi("y", [2])])
    if case == "unknown-dtype":  # an elem_type no ONNX version defines
        n = helper.make_node("Relu", ["x"], ["y"], name="relu_x")
        m = model([n], [vi("x", [2])], [vi("y", [2])])
        m.graph.input[0].type.tensor_type.elem_type = 99
        return m
    if case == "int-div-zero":  # integer Div and Mod with zero divisors (defined: 0)
        nodes = [helper.make_node("Div", ["a", "b"], ["q"], name="div_ab"),
                 helper.make_node("Mod", ["a", "b"], ["r"], name="mod_ab")]
        return model(nodes, [vi("a", [4], TensorProto.INT32), vi("b", [4], TensorProto.INT32)],
                     [vi("q", [4], TensorProto.INT32), vi("r", [4], TensorProto.INT32)])
    if case == "nan-inf":  # IEEE specials through arithmetic, comparisons and reductions
        nodes = [helper.make_node("Add", ["x", "x"], ["s"], name="add_xx"),
                 helper.make_node("Mul", ["s", "x"], ["p"], name="mul_sx"),
                 helper.make_node("Max", ["p", "x"], ["m"], name="max_px"),
                 helper.make_node("Relu", ["m"], ["r"], name="relu_m"),
                 helper.make_node("Exp", ["r"], ["e"], name="exp_r"),
                 helper.make_node("ReduceSum", ["e"], ["y"], name="sum_e", keepdims=1)]
        return model(nodes, [vi("x", [2, 4])], [vi("y", [1, 1])])
    if case == "rank-40":  # a rank beyond the max-rank limit
        n = helper.make_node("Relu", ["x"], ["y"], name="relu_deep")
        return model([n], [vi("x", [1] * 40)], [vi("y", [1] * 40)])
    if case in ("loop-huge", "if-runtime", "if-nested", "if-nested-30", "loop-body-unknown-op"):
        return control_flow_case(case)
    if case.startswith("ir-chain-"):  # ir-chain-N: graph IR text, a chain of N negations
        n, t = int(case[len("ir-chain-"):]), "tensor<4xf32>"
        lines = [f"graph @main(%x: {t}) -> (y: {t}) {{"]
        lines += [f"  %v{i} = neg(%{'x' if i == 0 else f'v{i - 1}'}) : {t}" for i in range(n)]
        lines += [f"  return %v{n - 1}", "}"]
        return ("\n".join(lines) + "\n").encode()
    if case.startswith("nested-"):  # nested-N: graph IR text with kernels nested N deep
        depth = int(case[len("nested-"):])
        t = "tensor<4xf32>"
        lines = [f"graph @main(%x: {t}) -> (y: {t}) {{"]
        for d in range(depth):
            arg = "%x" if d == 0 else f"%a{d}"
            lines.append(f'%k{d} = kernel({arg}) {{kind = "elementwise"}} : {t} {{')
            lines.append(f"graph @r{d}(%a{d + 1}: {t}) -> (o: {t}) {{")
        lines.append(f"%n = neg(%a{depth}) : {t}")
        lines.append("return %n")
        for d in reversed(range(depth)):
            lines += ["}", "}", f"return %k{d}"]
        lines.append("}")
        return ("\n".join(lines) + "\n").encode()
    raise SystemExit(f"unknown case {case}")


def control_flow_case(case):
    """If/Loop models the importer must refuse cleanly (it resolves control flow at import)."""
    i64 = lambda name, v: helper.make_tensor(name, TensorProto.INT64, [], [v])
    if case == "loop-huge":  # a trillion iterations of a body that passes its state through
        body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                                  helper.make_node("Identity", ["v_in"], ["v_out"])], "body",
                                 [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL),
                                  vi("v_in", [2])],
                                 [vi("c_out", [], TensorProto.BOOL), vi("v_out", [2])])
        n = helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop_forever", body=body)
        return model([n], [vi("x", [2])], [vi("y", [2])], inits=[i64("m", 10 ** 12)])
    branch = lambda name, op: helper.make_graph(
        [helper.make_node(op, ["x"], [name + "_y"])], name, [], [vi(name + "_y", [2])])
    if case == "if-runtime":  # the condition is a graph input: known only at run time
        n = helper.make_node("If", ["c"], ["y"], name="if_data", then_branch=branch("t", "Relu"),
                             else_branch=branch("e", "Neg"))
        return model([n], [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", [2])])
    if case.startswith("if-nested"):  # Ifs nested 70 (or 30) deep, on a true constant
        g = branch("leaf", "Relu")
        for d in range(30 if case.endswith("-30") else 70):
            n = helper.make_node("If", ["c"], [f"o{d}"], then_branch=g,
                                 else_branch=branch(f"e{d}", "Neg"))
            g = helper.make_graph([n], f"g{d}", [], [vi(f"o{d}", [2])])
        n = helper.make_node("If", ["c"], ["y"], name="if_outer", then_branch=g,
                             else_branch=branch("e_outer", "Neg"))
        return model([n], [vi("x", [2])], [vi("y", [2])],
                     inits=[helper.make_tensor("c", TensorProto.BOOL, [], [True])])
    # loop-body-unknown-op: an op strata does not know, inside a body
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("FrobnicateV2", ["v_in"], ["v_out"], name="frob")],
                             "body", [vi("i", [], TensorProto.INT64),
                                      vi("c_in", [], TensorProto.BOOL), vi("v_in", [2])],
                             [vi("c_out", [], TensorProto.BOOL), vi("v_out", [2])])
    n = helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop_frob", body=body)
    return model([n], [vi("x", [2])], [vi("y", [2])], inits=[i64("m", 3)])


def external_cases(out_dir):
    """OUT_DIR/models/{symlink,fifo,absolute}.onnx: an initializer whose external data is a
    symlink out of the model's folder, a FIFO inside it, an absolute path."""
    models = out_dir + "/models"
    os.makedirs(models, exist_ok=True)
    np.arange(4, dtype=np.float32).tofile(out_dir + "/outside.bin")
    os.symlink("../outside.bin", models + "/w.bin")
    os.mkfifo(models + "/fifo.bin")
    for name, location in (("symlink", "w.bin"), ("fifo", "fifo.bin"),
                           ("absolute", os.path.abspath(out_dir + "/outside.bin"))):
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value=location)
        n = helper.make_node("Add", ["x", "w"], ["y"], name="add_w")
        m = model([n], [vi("x", [4])], [vi("y", [4])], inits=[w])
        with open(f"{models}/{name}.onnx", "wb") as f:
            f.write(m.SerializeToString())


# Indexing ops fed an index outside its axis: (node, inputs as (name, array), output shape).
I64, I32 = np.int64, np.int32
INDEX_CASES = {
    "gather": (helper.make_node("Gather", ["data", "indices"], ["y"], name="gather_rows", axis=0),
               [("data", np.arange(12, dtype=np.float32).reshape(3, 4)),
                ("indices", np.array([0, 5, -1], I64))], [3, 4]),
    "gather-negative": (helper.make_node("Gather", ["data", "indices"], ["y"], name="gather_neg",
                                         axis=1),
                        [("data", np.arange(12, dtype=np.float32).reshape(3, 4)),
                         ("indices", np.array([[-5]], I32))], [3, 1, 1]),
    "gather-elements": (helper.make_node("GatherElements", ["data", "indices"], ["y"],
                                         name="gather_el", axis=1),
                        [("data", np.arange(6, dtype=np.float32).reshape(2, 3)),
                         ("indices", np.array([[0, 3, 1], [1, 0, 2]], I64))], [2, 3]),
    "gather-nd": (helper.make_node("GatherND", ["data", "indices"], ["y"], name="gather_tuples"),
                  [("data", np.arange(6, dtype=np.float32).reshape(2, 3)),
                   ("indices", np.array([[1, 2], [2, 0]], I64))], [2]),
    "scatter-elements": (helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"],
                                          name="scatter_el", axis=0),
                         [("data", np.zeros(3, np.float32)), ("indices", np.array([1, 7], I64)),
                          ("updates", np.ones(2, np.float32))], [3]),
    "scatter-nd": (helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                                    name="scatter_tuples"),
                   [("data", np.zeros((4, 2), np.float32)), ("indices", np.array([[1], [-5]], I64)),
                    ("updates", np.ones((2, 2), np.float32))], [4, 2]),
}


def index_case(case, out_dir):
    """Writes OUT_DIR/model.onnx and one NAME.npy per input."""
    os.makedirs(out_dir, exist_ok=True)
    node, feeds, out_shape = INDEX_CASES[case]
    dtypes = {np.float32: TensorProto.FLOAT, I64: TensorProto.INT64, I32: TensorProto.INT32}
    inputs = [vi(n, list(a.shape), dtypes[a.dtype.type]) for n, a in feeds]
    m = model([node], inputs, [vi("y", out_shape)], opset=16)
    with open(out_dir + "/model.onnx", "wb") as f:
        f.write(m.SerializeToString())
    for n, a in feeds:
        np.save(f"{out_dir}/{n}.npy", a)


def main():
    if sys.argv[1] == "index":  # make_hostile.py index OUT_DIR: OUT_DIR/CASE for every case
        for case in INDEX_CASES:
            index_case(case, f"{sys.argv[2]}/{case}")
        return
    if sys.argv[1] == "external":  # make_hostile.py external OUT_DIR
        external_cases(sys.argv[2])
        return
    case, out = sys.argv[1], sys.argv[2]
    m = build(case)
    with open(out, "wb") as f:
        f.write(m if isinstance(m, bytes) else m.SerializeToString())


if __name__ == "__main__":
    main()
