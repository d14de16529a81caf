#!/usr/bin/python3
"""Export a small model zoo to ONNX, with reference inputs/outputs, for strata tests.

Usage: /usr/bin/python3 scripts/export_zoo.py [OUTDIR] [--opset N] [--no-verify]
       (OUTDIR defaults to build/zoo)

For each NAME in resnet18, resnet50, mobilenet_v2, transformer it writes
  NAME.onnx            exported with do_constant_folding=True (exporter's usual output;
                       Conv+BatchNorm already fused by torch's eval peephole)
  NAME_unfolded.onnx   do_constant_folding=False and training=PRESERVE, which also skips
                       torch's eval peephole, so BatchNormalization nodes and shape
                       arithmetic (Shape/Gather/Concat/...) stay in the graph
  NAME.input.npy       seeded random float32 input, batch 1
  NAME.output.npy      torch's output for that input
plus resnet18_dynbatch.onnx (batch dim symbolic, "batch") with batch-1 and batch-8
(.b8.input.npy / .b8.output.npy) references.  Graph input is "input", output "output".

Weights are random (weights=None) but seeded, and BatchNorm running statistics are
calibrated on random data so that eval-mode activations keep a sane scale instead of
exploding/vanishing through 50 layers with the default mean=0/var=1 statistics.

Needs Debian's torch/torchvision/onnx, i.e. /usr/bin/python3.  onnxruntime is not
available, so every exported file is checked with onnx.checker and then executed by
a small numpy-only ONNX interpreter (below) and compared against torch's output.
Idempotent: a model whose files all exist is skipped (its files are still verified).
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
import onnx.mapping
import onnx.numpy_helper
import torch
import torch.nn as nn
import torchvision

DEFAULT_OPSET = 13
CALIB_BATCHES = 10
CALIB_BATCH_SIZE = 8
SEQ, D_MODEL = 128, 256


# --------------------------------------------------------------------------- models

class TransformerEncoderModel(nn.Module):
    """4-layer post-norm encoder, [1,128,256] -> [1,128,256]."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=4, dim_feedforward=1024,
                                           dropout=0.1, batch_first=True)
        # enable_nested_tensor=False: the nested-tensor/sparsity fast path cannot be exported.
        self.encoder = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def build(name):
    if name == "transformer":
        return TransformerEncoderModel(), (1, SEQ, D_MODEL)
    ctor = {"resnet18": torchvision.models.resnet18,
            "resnet50": torchvision.models.resnet50,
            "mobilenet_v2": torchvision.models.mobilenet_v2}[name]
    return ctor(weights=None), (1, 3, 224, 224)


def calibrate_bn(model, shape, gen):
    """Set BN running stats to the cumulative average over random batches."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # None => cumulative moving average over all batches seen
    model.train()
    with torch.no_grad():
        for _ in range(CALIB_BATCHES):
            model(torch.randn((CALIB_BATCH_SIZE,) + shape[1:], generator=gen))


def torch_reference(model, x):
    # Run with grad enabled (params require grad) so that the transformer takes the
    # same non-fast-path code that gets traced for export; identical math otherwise.
    with torch.enable_grad():
        return model(x).detach().numpy().astype(np.float32)


def export(model, x, path, fold, dynamic_batch=False, opset=DEFAULT_OPSET):
    tmp = path + ".tmp"
    kwargs = dict(input_names=["input"], output_names=["output"], opset_version=opset,
                  do_constant_folding=fold)
    if not fold:
        # PRESERVE (model is in eval mode, so it exports inference ops) skips torch's
        # Conv+BN fusing eval peephole: the unfolded model is as raw as torch makes it.
        kwargs["training"] = torch.onnx.TrainingMode.PRESERVE
    if dynamic_batch:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    # Grad enabled + parameters requiring grad keeps TransformerEncoderLayer off its
    # fused fast path (torch._transformer_encoder_layer_fwd), which has no ONNX symbolic.
    with torch.enable_grad():
        torch.onnx.export(model, (x,), tmp, **kwargs)
    os.replace(tmp, path)


def save_npy(path, arr):
    tmp = path + ".tmp.npy"
    np.save(tmp, arr)
    os.replace(tmp, path)


def targets(name):
    files = [f"{name}.onnx", f"{name}_unfolded.onnx", f"{name}.input.npy", f"{name}.output.npy"]
    if name == "resnet18":
        files += ["resnet18_dynbatch.onnx", "resnet18_dynbatch.input.npy",
                  "resnet18_dynbatch.output.npy", "resnet18_dynbatch.b8.input.npy",
                  "resnet18_dynbatch.b8.output.npy"]
    return files


def export_model(name, outdir, opset):
    p = lambda f: os.path.join(outdir, f)
    if all(os.path.exists(p(f)) for f in targets(name)):
        print(f"[{name}] up to date, skipping export")
        return
    t0 = time.time()
    torch.manual_seed(0)  # weight init
    model, shape = build(name)
    data_gen = torch.Generator().manual_seed(1234)  # calibration + reference inputs
    calibrate_bn(model, shape, data_gen)
    model.eval()
    for prm in model.parameters():
        prm.requires_grad_(True)

    x = torch.randn(shape, generator=data_gen)
    y = torch_reference(model, x)
    if name == "transformer":
        with torch.no_grad():  # sanity: fast path (if taken) agrees with traced path
            d = np.abs(model(x).numpy() - y).max()
        print(f"[{name}] fast-path vs export-path max|diff| = {d:.2e}")
    save_npy(p(f"{name}.input.npy"), x.numpy())
    save_npy(p(f"{name}.output.npy"), y)
    print(f"[{name}] output {tuple(y.shape)} mean={y.mean():.4f} std={y.std():.4f}")
    export(model, x, p(f"{name}.onnx"), fold=True, opset=opset)
    export(model, x, p(f"{name}_unfolded.onnx"), fold=False, opset=opset)

    if name == "resnet18":
        base = "resnet18_dynbatch"
        export(model, x, p(f"{base}.onnx"), fold=True, dynamic_batch=True, opset=opset)
        save_npy(p(f"{base}.input.npy"), x.numpy())
        save_npy(p(f"{base}.output.npy"), y)
        x8 = torch.randn((8,) + shape[1:], generator=data_gen)
        save_npy(p(f"{base}.b8.input.npy"), x8.numpy())
        save_npy(p(f"{base}.b8.output.npy"), torch_reference(model, x8))
    print(f"[{name}] exported in {time.time() - t0:.1f}s")


# ------------------------------------------------------- numpy reference interpreter
# Just enough ONNX (opset 13) semantics to run the zoo; used only for verification.

def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _pads(pads, nd):
    return list(pads) if pads else [0] * (2 * nd)


def _conv(x, w, b, a):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = a.get("group", 1)
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pt, pl, pb, pr = _pads(a.get("pads"), 2)
    assert a.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    # im2col: cols[n, c, ky, kx, oh, ow]
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            cols[:, :, ky, kx] = x[:, :, ky * dh: ky * dh + sh * (oh - 1) + 1: sh,
                                   kx * dw: kx * dw + sw * (ow - 1) + 1: sw]
    cols = cols.reshape(n, g, cg * kh * kw, oh * ow)
    wg = w.reshape(g, m // g, cg * kh * kw)
    y = np.einsum("gok,ngkp->ngop", wg, cols, optimize=True).reshape(n, m, oh, ow)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def _maxpool(x, a):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pt, pl, pb, pr = _pads(a.get("pads"), 2)
    assert not a.get("ceil_mode", 0) and a.get("dilations", [1, 1]) == [1, 1]
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, dtype=x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            y = np.maximum(y, x[:, :, ky: ky + sh * (oh - 1) + 1: sh, kx: kx + sw * (ow - 1) + 1: sw])
    return y


def _gemm(a_, b_, c_, a):
    if a.get("transA", 0):
        a_ = a_.T
    if a.get("transB", 0):
        b_ = b_.T
    y = a.get("alpha", 1.0) * (a_ @ b_)
    if c_ is not None:
        y = y + a.get("beta", 1.0) * c_
    return y.astype(np.float32)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        sl[int(ax)] = slice(int(s), int(e), int(st))  # python slicing clamps like ONNX
    return x[tuple(sl)]


def _reshape(x, shape):
    shape = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]
    return x.reshape(shape)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _erf(x):
    # Abramowitz-Stegun 7.1.26 would be too coarse; use math.erf elementwise.
    import math
    return np.vectorize(math.erf, otypes=[np.float32])(x)


def _split(x, split, a, nout):
    axis = a.get("axis", 0)
    if split is None:
        split = [x.shape[axis] // nout] * nout
    idx = np.cumsum(split)[:-1]
    return np.split(x, idx, axis=axis)


def run_onnx(model, feeds):
    env = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        a = _attrs(node)
        ins = [env[n] if n else None for n in node.input]
        op = node.op_type
        x = ins[0] if ins else None
        if op == "Conv":
            out = _conv(x, ins[1], ins[2] if len(ins) > 2 else None, a)
        elif op == "BatchNormalization":
            sc, bi, mean, var = [v.reshape(1, -1, *([1] * (x.ndim - 2))) for v in ins[1:5]]
            out = ((x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * sc + bi).astype(np.float32)
        elif op == "Relu":
            out = np.maximum(x, 0)
        elif op == "Clip":
            lo = ins[1] if len(ins) > 1 and ins[1] is not None else -np.inf
            hi = ins[2] if len(ins) > 2 and ins[2] is not None else np.inf
            out = np.clip(x, lo, hi)
        elif op == "MaxPool":
            out = _maxpool(x, a)
        elif op == "GlobalAveragePool":
            out = x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            out = x.reshape(int(np.prod(x.shape[:ax])), -1)
        elif op == "Gemm":
            out = _gemm(x, ins[1], ins[2] if len(ins) > 2 else None, a)
        elif op == "MatMul":
            out = np.matmul(x, ins[1])
        elif op in ("Add", "Sub", "Mul", "Div", "Pow", "Equal", "Where"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                 "Pow": np.power, "Equal": np.equal}.get(op)
            if op == "Where":
                out = np.where(x, ins[1], ins[2])
            elif op == "Div" and np.issubdtype(x.dtype, np.integer):
                out = (x // ins[1]).astype(x.dtype)
            else:
                out = f(x, ins[1])
                if op != "Equal":
                    out = out.astype(x.dtype)
        elif op in ("Sqrt", "Exp", "Tanh", "Neg", "Reciprocal", "Sigmoid", "Erf"):
            out = {"Sqrt": np.sqrt, "Exp": np.exp, "Tanh": np.tanh, "Neg": np.negative,
                   "Reciprocal": np.reciprocal, "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                   "Erf": _erf}[op](x).astype(x.dtype)
        elif op == "ReduceMean":
            out = x.mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1))).astype(x.dtype)
        elif op == "Softmax":
            out = _softmax(x, a.get("axis", -1))
        elif op == "Transpose":
            out = np.transpose(x, a.get("perm"))
        elif op == "Reshape":
            out = _reshape(x, ins[1])
        elif op == "Shape":
            out = np.array(x.shape, dtype=np.int64)
        elif op == "Gather":
            out = np.take(x, ins[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            out = x
            for ax in sorted(int(v) % (x.ndim + len(ins[1])) for v in ins[1]):
                out = np.expand_dims(out, ax)
        elif op == "Squeeze":
            out = np.squeeze(x, axis=tuple(int(v) for v in ins[1])) if len(ins) > 1 else np.squeeze(x)
        elif op == "Concat":
            out = np.concatenate(ins, axis=a["axis"])
        elif op == "Slice":
            out = _slice(x, *ins[1:])
        elif op == "Split":
            outs = _split(x, ins[1] if len(ins) > 1 else None, a, len(node.output))
            for n_, v in zip(node.output, outs):
                env[n_] = v
            continue
        elif op == "Constant":
            out = onnx.numpy_helper.to_array(a["value"])
        elif op == "ConstantOfShape":
            val = onnx.numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
            out = np.full(tuple(int(v) for v in x), val.reshape(-1)[0], dtype=val.dtype)
        elif op == "Cast":
            out = x.astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])
        elif op in ("Identity", "Dropout"):
            out = x
        elif op == "Expand":
            out = x * np.ones(tuple(int(v) for v in ins[1]), dtype=x.dtype)
        else:
            raise NotImplementedError(f"numpy interpreter: op {op}")
        env[node.output[0]] = out
    return [env[o.name] for o in model.graph.output]


def verify(path, x, y_ref):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)  # full_check: also strict shape inference
    y = run_onnx(model, {"input": x})[0]
    assert y.shape == y_ref.shape, (y.shape, y_ref.shape)
    err = float(np.abs(y - y_ref).max())
    rel = err / max(float(np.abs(y_ref).max()), 1e-12)
    return err, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", default="build/zoo")
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET)
    ap.add_argument("--no-verify", action="store_true", help="skip numpy verification")
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,transformer")
    args = ap.parse_args()

    # Every core by default: `make test` runs nothing beside it, and one thread took 100 s for
    # resnet50's BatchNorm calibration where two take 16 s. ZOO_THREADS=1 beside a build.
    torch.set_num_threads(int(os.environ.get("ZOO_THREADS", str(os.cpu_count() or 1))))
    os.makedirs(args.outdir, exist_ok=True)
    names = args.models.split(",")

    t_all = time.time()
    for name in names:
        export_model(name, args.outdir, args.opset)
    print(f"export total {time.time() - t_all:.1f}s")

    ok = True
    files = []
    for name in names:
        files += [(f"{name}.onnx", name, ""), (f"{name}_unfolded.onnx", name, "")]
        if name == "resnet18":
            files += [("resnet18_dynbatch.onnx", "resnet18_dynbatch", ""),
                      ("resnet18_dynbatch.onnx", "resnet18_dynbatch", ".b8")]
    for fname, ref, suffix in files:
        path = os.path.join(args.outdir, fname)
        model = onnx.load(path)
        ops = sorted({n.op_type for n in model.graph.node})
        line = f"{fname}{suffix}: opset {model.opset_import[0].version}, {len(model.graph.node)} nodes, ops {ops}"
        if not args.no_verify:
            t0 = time.time()
            x = np.load(os.path.join(args.outdir, f"{ref}{suffix}.input.npy"))
            y = np.load(os.path.join(args.outdir, f"{ref}{suffix}.output.npy"))
            try:
                err, rel = verify(path, x, y)
                good = rel < 1e-4
                ok &= good
                line += f"\n    numpy check {'OK' if good else 'FAIL'}: max|diff|={err:.2e} rel={rel:.2e} ({time.time() - t0:.1f}s)"
            except Exception as e:  # report and keep going so all models are covered
                ok = False
                line += f"\n    numpy check ERROR: {type(e).__name__}: {e}"
        print(line)
    print(f"total {time.time() - t_all:.1f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
