#!/usr/bin/python3
"""`make_recurrent.py DIR`: ONNX LSTM, GRU and RNN nodes with their less common options, each
written twice: NAME.static.onnx with the sequence length 5 in X's type (imported unrolled, the
path the ONNX conformance tests check) and NAME.dyn.onnx with it symbolic (imported as a run-time
loop over the sequence). Also the inputs NAME.x.npy (and sequence lengths, initial states).
`make_recurrent.py --run DIR`: runs each static model with the interpreter as the reference,
then each dynamic one with the interpreter, the jit compiled once (--any-shape) and a library
(`strata compile`), at the written inputs; every output must match the reference (1e-5 relative
to its max |value|). The cases:
  lstm_bidi   LSTM, bidirectional, peepholes, initial h and c, sequence_lens, clip;
  gru_rev     GRU, reverse, linear_before_reset, layout 1 (batch first), a symbolic batch too;
  rnn_relu    RNN, forward, Relu activation, sequence_lens, no bias, initial state absent;
  scan_dirs   Scan (opset 9+) with a state, two scan inputs along axes 0 and 1 (the second
              reversed) and two scan outputs (the first reversed, the second along axis 1)."""
import os
import subprocess
import sys

import numpy as np

SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def build(out):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)

    def t(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    cases = []
    # LSTM: W [2, 4H, I], R [2, 4H, H], B [2, 8H], P [2, 3H].
    cases.append(("lstm_bidi", "LSTM", 2, 4, dict(direction="bidirectional", clip=2.5),
                  {"B": t(2, 8 * HIDDEN), "P": t(2, 3 * HIDDEN)},
                  {"seq_lens": np.array([5, 2, 4], np.int32), "h0": t(2, BATCH, HIDDEN),
                   "c0": t(2, BATCH, HIDDEN)},
                  ["x", "W", "R", "B", "seq_lens", "h0", "c0", "P"], ["y", "yh", "yc"], False))
    cases.append(("gru_rev", "GRU", 1, 3,
                  dict(direction="reverse", linear_before_reset=1, layout=1),
                  {"B": t(1, 6 * HIDDEN)}, {"h0": t(BATCH, 1, HIDDEN)},
                  ["x", "W", "R", "B", "", "h0"], ["y", "yh"], True))
    cases.append(("rnn_relu", "RNN", 1, 1, dict(activations=["Relu"]), {},
                  {"seq_lens": np.array([3, 5, 1], np.int32)},
                  ["x", "W", "R", "", "seq_lens"], ["y", "yh"], False))
    for name, op, dirs, gates, attrs, inits, inputs, node_inputs, outputs, batch_first in cases:
        w = t(dirs, gates * HIDDEN, INPUT)
        r = t(dirs, gates * HIDDEN, HIDDEN)
        x = t(BATCH, SEQ, INPUT) if batch_first else t(SEQ, BATCH, INPUT)
        np.save(os.path.join(out, name + ".x.npy"), x)
        for k, v in inputs.items():
            np.save(os.path.join(out, f"{name}.{k}.npy"), v)
        node = helper.make_node(op, node_inputs, outputs, hidden_size=HIDDEN, **attrs)
        for dyn in (False, True):
            seq = "seq" if dyn else SEQ
            batch = "batch" if dyn and batch_first else BATCH
            x_shape = [batch, seq, INPUT] if batch_first else [seq, batch, INPUT]
            graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
            for k, v in inputs.items():
                shape = list(v.shape)
                if batch_first and k == "h0" and dyn:
                    shape[0] = "batch"
                graph_inputs.append(helper.make_tensor_value_info(
                    k, TensorProto.INT32 if v.dtype == np.int32 else TensorProto.FLOAT, shape))
            initializers = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")]
            initializers += [numpy_helper.from_array(v, k) for k, v in inits.items()]
            g = helper.make_graph([node], name, graph_inputs,
                                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                   for o in outputs], initializer=initializers)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
            m.ir_version = 8
            onnx.save(m, os.path.join(out, f"{name}.{'dyn' if dyn else 'static'}.onnx"))


def build_scan(out):
    import onnx
    from onnx import TensorProto, helper
    rng = np.random.default_rng(8)
    a = rng.standard_normal((SEQ, 4)).astype(np.float32)
    b = rng.standard_normal((4, SEQ)).astype(np.float32)
    s0 = rng.standard_normal(4).astype(np.float32)
    for k, v in (("a", a), ("b", b), ("s0", s0)):
        np.save(os.path.join(out, f"scan_dirs.{k}.npy"), v)
    f4 = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [4])
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "ai"], ["s2"]), helper.make_node("Identity", ["s2"], ["run"]),
         helper.make_node("Mul", ["ai", "bi"], ["prod"])],
        "body", [f4("s"), f4("ai"), f4("bi")], [f4("s2"), f4("run"), f4("prod")])
    node = helper.make_node("Scan", ["s0", "a", "b"], ["s_final", "running", "products"],
                            body=body, num_scan_inputs=2, scan_input_axes=[0, 1],
                            scan_input_directions=[0, 1], scan_output_directions=[1, 0],
                            scan_output_axes=[0, 1])
    for dyn in (False, True):
        seq = "seq" if dyn else SEQ
        g = helper.make_graph(
            [node], "scan",
            [f4("s0"), helper.make_tensor_value_info("a", TensorProto.FLOAT, [seq, 4]),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, seq])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
             for o in ("s_final", "running", "products")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
        m.ir_version = 8
        onnx.save(m, os.path.join(out, f"scan_dirs.{'dyn' if dyn else 'static'}.onnx"))


def run(out):
    failures = []
    names = sorted({f.split(".")[0] for f in os.listdir(out) if f.endswith(".static.onnx")})
    for name in names:
        inputs = []
        for f in sorted(os.listdir(out)):
            if f.startswith(name + ".") and f.endswith(".npy"):
                inputs += ["-i", f[len(name) + 1:-4] + "=" + os.path.join(out, f)]

        def strata_run(model, extra, tag):
            d = os.path.join(out, f"{name}-{tag}")
            subprocess.run(["strata", "run", model, *extra, *inputs, "--output-dir", d],
                           check=True, stdout=subprocess.DEVNULL)
            return d

        lib = os.path.join(out, name + ".so")
        subprocess.run(["strata", "compile", os.path.join(out, name + ".dyn.onnx"), "-o", lib],
                       check=True, stdout=subprocess.DEVNULL)
        ref = strata_run(os.path.join(out, name + ".static.onnx"), ["--engine", "interp"], "ref")
        dyn = os.path.join(out, name + ".dyn.onnx")
        for tag, model, extra in (("interp", dyn, ["--engine", "interp"]),
                                  ("any", dyn, ["--no-cache", "--any-shape"]),
                                  ("aot", lib, [])):
            got = strata_run(model, extra, tag)
            for f in sorted(os.listdir(ref)):
                want, have = np.load(os.path.join(ref, f)), np.load(os.path.join(got, f))
                err = np.abs(want - have).max() / max(np.abs(want).max(), 1e-30)
                if want.shape != have.shape or not err <= 1e-5:
                    failures.append(f"{name} {tag} {f}: shape {have.shape} vs {want.shape}, "
                                    f"error {err:.2e}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(names)} cases, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        sys.exit(run(sys.argv[2]))
    build(sys.argv[1])
    build_scan(sys.argv[1])
