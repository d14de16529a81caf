"""Writes a model (opset 13) whose input [?n, 8, ?h, ?w] goes through DepthToSpace (DCR and CRD),
SpaceToDepth, InstanceNormalization, a Reshape merging a dim into a -1 (whole only for some
sizes) and a ConstantOfShape of [h * w, 1] (a size no input has: a YOLO head's strides), and
checks its outputs against numpy.

  make_rearrange.py MODEL.onnx              write the model
  make_rearrange.py --inputs DIR N H W      write x [N, 8, H, W]
  make_rearrange.py --check OUT_DIR IN_DIR  compare a run's outputs with numpy's
"""
import os
import sys

import numpy as np

OUTPUTS = ["dcr", "crd", "s2d", "inorm", "pairs", "strides"]


def write_model(path):
    import onnx
    from onnx import TensorProto, helper as h
    rng = np.random.default_rng(3)
    scale = h.make_tensor("scale", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32))
    bias = h.make_tensor("bias", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32))
    shape = h.make_tensor("shape", TensorProto.INT64, [2], [-1, 16])
    nodes = [
        h.make_node("DepthToSpace", ["x"], ["dcr"], blocksize=2, mode="DCR"),
        h.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"),
        h.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=2),
        h.make_node("InstanceNormalization", ["x", "scale", "bias"], ["inorm"], epsilon=1e-5),
        h.make_node("Reshape", ["x", "shape"], ["pairs"]),
        h.make_node("Shape", ["x"], ["xshape"]),
        h.make_node("Gather", ["xshape", "two"], ["hh"]),
        h.make_node("Gather", ["xshape", "three"], ["ww"]),
        h.make_node("Mul", ["hh", "ww"], ["hw"]),
        h.make_node("Concat", ["hw", "one"], ["sshape"], axis=0),
        h.make_node("ConstantOfShape", ["sshape"], ["strides"],
                    value=h.make_tensor("v", TensorProto.FLOAT, [1], [4.0])),
    ]
    consts = [h.make_tensor("two", TensorProto.INT64, [1], [2]),
              h.make_tensor("three", TensorProto.INT64, [1], [3]),
              h.make_tensor("one", TensorProto.INT64, [1], [1])]
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8, "h", "w"])
    outs = [h.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in OUTPUTS]
    m = h.make_model(h.make_graph(nodes, "rearrange", [x], outs, [scale, bias, shape] + consts),
                     opset_imports=[h.make_opsetid("", 13)])
    onnx.save(m, path)


def expected(x, model_path):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model_path)
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    n, c, hh, ww = x.shape
    b = 2
    dcr = x.reshape(n, b, b, c // 4, hh, ww).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, hh * b, ww * b)
    crd = x.reshape(n, c // 4, b, b, hh, ww).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 4, hh * b, ww * b)
    s2d = x.reshape(n, c, hh // b, b, ww // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * 4, hh // b, ww // b)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    inorm = (x - mean) / np.sqrt(var + 1e-5) * init["scale"].reshape(1, -1, 1, 1) + init["bias"].reshape(1, -1, 1, 1)
    return dict(dcr=dcr, crd=crd, s2d=s2d, inorm=inorm, pairs=x.reshape(-1, 16),
                strides=np.full((hh * ww, 1), 4.0, np.float32))


def main():
    if sys.argv[1] == "--inputs":
        os.makedirs(sys.argv[2], exist_ok=True)
        n, hh, ww = (int(v) for v in sys.argv[3:6])
        x = np.random.default_rng(hh * 100 + ww).standard_normal((n, 8, hh, ww)).astype(np.float32)
        np.save(os.path.join(sys.argv[2], "x.npy"), x)
    elif sys.argv[1] == "--check":
        out_dir, in_dir = sys.argv[2], sys.argv[3]
        x = np.load(os.path.join(in_dir, "x.npy"))
        bad = 0
        for name, want in expected(x, sys.argv[4]).items():
            got = np.load(os.path.join(out_dir, name + ".npy"))
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                print(f"{name}: got {got.shape}, want {want.shape}, max diff "
                      f"{np.abs(got - want).max() if got.shape == want.shape else '-'}")
                bad += 1
        print("MISMATCH" if bad else f"all {len(OUTPUTS)} outputs match numpy")
        sys.exit(1 if bad else 0)
    else:
        write_model(sys.argv[1])


main()
