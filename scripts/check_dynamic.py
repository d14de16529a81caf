#!/usr/bin/python3
"""Models exported with dynamic dims, run by strata at several shapes against torch.

Usage: /usr/bin/python3 scripts/check_dynamic.py --bin build/bin --work build/dynamic-check

Exports (with Debian's torch, seeded) and checks:
  convnet_dyn   a conv net (strided convs, BatchNorm folded by the exporter, max pool, residual
                block, nearest upsample to its skip's size read with Shape, concatenated with the
                skip, global average pool, linear) with batch, height and width all dynamic: run
                at 3 image sizes, per shape and from one library;
  segnet_dyn    a segmentation-style net (channel shuffle by view/transpose, a ConvTranspose
                added to its skip connection, logits resized bilinearly to the input's size), at
                3 image sizes, per shape and from one library;
  window_dyn    Swin-style windows (pads computed from the size, torch.roll, a mask built by
                slice assignment, window partition and merge, a crop back), at 3 sizes (two of
                them padded), per shape and from one library;
  gpt2_dyn      a GPT-2-style decoder on token ids [batch, seq] with batch and seq dynamic: token and
                position embeddings (positions from arange(seq)), a causal mask sliced from a
                max-length buffer, 2 pre-norm blocks (4 heads, tanh GELU), tied LM head: run at
                (1, 128) and (2, 37); its export reads its own shape (Shape -> Gather -> Reshape,
                Range, Slice with computed ends);
  lstm_dyn      a 2-layer bidirectional LSTM (batch first) and a linear head, batch and seq dynamic;
  gru_dyn       a 2-layer GRU and a linear head, batch and seq dynamic: each at (1, 7) and (3, 20),
                per shape and from one library each (the recurrence a run-time loop);
  restore_dyn   an image-restoration net (PixelUnshuffle in, reflection pads, InstanceNorm and
                GroupNorm over H x W, PixelShuffle out to twice the size plus a bilinear
                upsample of the input), at 2 sizes, per shape and from one library;
  audio_dyn     a Whisper-style audio encoder (conv1d stem, strided; a positional table sliced
                to the length; MultiheadAttention, whose heads merge by a -1 reshape), batch and
                frames dynamic, at (1, 16, 100) and (2, 16, 37), per shape and from one library;
  control_flow_dyn  a scripted module: a Loop whose trip count is the input's dim 1 and an If on
                its dim 0 (resolved at each input shape by the jit; run-time `loop` and `if` ops
                in one library compiled once), at [3, 4, 8] and [1, 6, 8];
and for each: `strata run` with the jit engine (one process per shape, so each compiles its shape)
and with the interpreter, outputs within 1e-4 of torch's relative to max |reference|; `strata
bench` on the conv net at two sizes; a 4-channel image refused as an input error. (Several shapes
in one process: unittests/driver/ShapeSpecializedTest.cpp.) Exits 1 naming each failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TOL = 1e-4


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU(), nn.Conv2d(16, 16, 3, 1, 1))
        self.down = nn.Conv2d(16, 32, 3, 2, 1)
        self.fuse = nn.Conv2d(48, 32, 1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = F.relu(x + self.block(x))
        d = self.down(x)
        up = F.interpolate(d, size=x.shape[2:], mode="nearest")
        y = F.relu(self.fuse(torch.cat([x, up], dim=1)))
        return self.fc(y.mean(dim=(2, 3)))


class ConvNetAnySize(ConvNet):
    """ConvNet's layers without reading its own shape: compiled once, its kernels take batch,
    height and width as run-time extents (the strided branch is concatenated with a 1x1 side
    path instead of an upsampled one, then average pooling, a global mean and a classifier)."""

    def __init__(self):
        super().__init__()
        self.side = nn.Conv2d(16, 16, 1, 2)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = F.relu(x + self.block(x))
        y = F.relu(self.fuse(torch.cat([self.down(x), self.side(x)], dim=1)))
        return self.fc(F.avg_pool2d(y, 2, 1).mean(dim=(2, 3)))


VOCAB, HIDDEN, HEADS, LAYERS, MAXLEN = 256, 64, 4, 2, 256


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * HIDDEN, HIDDEN))

    def forward(self, x, mask):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(HIDDEN, dim=-1)
        heads = lambda t: t.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-1, -2) * (HIDDEN // HEADS) ** -0.5 + mask
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, HIDDEN)
        x = x + self.proj(y)
        return x + self.ffn(self.norm2(x))


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(MAXLEN, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(HIDDEN)
        self.register_buffer("causal", torch.triu(torch.full((MAXLEN, MAXLEN), -1e4), diagonal=1))

    def forward(self, ids):
        s = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(s, device=ids.device))
        mask = self.causal[:s, :s]
        for block in self.blocks:
            x = block(x, mask)
        return self.norm(x) @ self.wte.weight.t()


class Recurrent(nn.Module):
    """A 2-layer bidirectional LSTM (batch first) or GRU feeding a linear head, on [batch, seq, 16]."""

    def __init__(self, kind):
        super().__init__()
        cls = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = cls(16, 32, num_layers=2, batch_first=True, bidirectional=kind == "lstm")
        self.head = nn.Linear(64 if kind == "lstm" else 32, 8)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class ControlFlow(nn.Module):
    """Scripted: a Loop whose trip count is the input's dim 1, then an If on its dim 0."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = x
        for _ in range(x.shape[1]):
            h = torch.tanh(self.lin(h)) + h * 0.5
        if x.shape[0] > 2:
            h = h * 2.0
        else:
            h = h - 1.0
        return h


class SegNet(nn.Module):
    """A segmentation-style net whose shapes follow its input: a stride-2 stem, a channel shuffle
    (view to [n, 2, c / 2, h, w], transpose, view back: a reshape moving h and w), a stride-2
    conv and a ConvTranspose back up added to its skip connection (sizes equal when the stem's
    output is even), and the logits resized bilinearly to the input's own size."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.down = nn.Conv2d(16, 32, 3, 2, 1)
        self.up = nn.ConvTranspose2d(32, 16, 2, 2)
        self.head = nn.Conv2d(16, 5, 1)

    def forward(self, x):
        y = self.stem(x)
        n, c, h, w = y.shape
        y = y.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        y = F.relu(self.up(F.relu(self.down(y)))) + y
        return F.interpolate(self.head(y), size=x.shape[2:], mode="bilinear", align_corners=False)


class WindowNet(nn.Module):
    """Swin-style windows over a feature map of any size: padded to a multiple of the window
    (pads (W - h % W) % W computed from the size: Mod, and torch's F.pad reorders them), shifted
    with torch.roll (slices of part of a symbolic dim), a mask built by slice assignment on a
    tensor of the padded size (the exporter writes ScatterND over Range indices), windows split
    by view/permute with counts hp // W, mixed per window, merged back, unshifted and cropped to
    the unpadded size."""

    W = 4

    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 2, 2)
        self.mix = nn.Linear(8, 8)

    def forward(self, x):
        x = self.embed(x).permute(0, 2, 3, 1)
        n, h, w, c = x.shape
        W = self.W
        x = F.pad(x, (0, 0, 0, (W - w % W) % W, 0, (W - h % W) % W))
        hp, wp = x.shape[1], x.shape[2]
        x = torch.roll(x, shifts=(-1, -1), dims=(1, 2))
        mask = x.new_zeros((hp, wp))
        mask[-W:, :] = 1.0
        mask[:, -W:] += 2.0
        nw = (hp // W) * (wp // W)
        win = x.view(n, hp // W, W, wp // W, W, c).permute(0, 1, 3, 2, 4, 5).reshape(n, nw, W * W, c)
        mwin = mask.view(hp // W, W, wp // W, W).permute(0, 2, 1, 3).reshape(1, nw, W * W, 1)
        win = torch.softmax(self.mix(win) + mwin, dim=2) * win
        x = win.view(n, hp // W, wp // W, W, W, c).permute(0, 1, 3, 2, 4, 5).reshape(n, hp, wp, c)
        x = torch.roll(x, shifts=(1, 1), dims=(1, 2))
        return x[:, :h, :w, :].permute(0, 3, 1, 2)


class RestoreNet(nn.Module):
    """An image-restoration net of the kinds users run at any size (super-resolution, style
    transfer, denoising): PixelUnshuffle in (SpaceToDepth: H and W must be even), reflection
    pads, InstanceNorm and GroupNorm over the image's H x W, PixelShuffle out (DepthToSpace) to
    twice the input's size, plus the input bilinearly upsampled, clamped."""

    def __init__(self):
        super().__init__()
        self.down = nn.PixelUnshuffle(2)
        self.a = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(12, 16, 3), nn.InstanceNorm2d(16, affine=True), nn.ReLU())
        self.b = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(16, 16, 3), nn.GroupNorm(4, 16), nn.SiLU())
        self.up = nn.Sequential(nn.Conv2d(16, 48, 3, 1, 1), nn.PixelShuffle(4))

    def forward(self, x):
        f = self.a(self.down(x))
        f = f + self.b(f)
        base = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.clamp(self.up(f) + base, 0, 1)


class AudioEncoder(nn.Module):
    """A Whisper-style audio encoder over any number of frames: a conv1d stem (the second conv
    strided), a positional table sliced to the sequence's length, nn.MultiheadAttention (its
    export splits 4 heads as [t, 4 * b, 8] and merges them back with a reshape to [-1, 32]),
    pre-norm blocks, a final LayerNorm."""

    def __init__(self, d=32):
        super().__init__()
        self.c1, self.c2 = nn.Conv1d(16, d, 3, 1, 1), nn.Conv1d(d, d, 3, 2, 1)
        self.pos = nn.Parameter(torch.randn(256, d))
        layer = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.c2(F.gelu(self.c1(mel)))).permute(0, 2, 1)
        return self.ln(self.enc(x + self.pos[: x.shape[1]]))


def calibrate(net, example):
    """BatchNorm statistics from random data, so activations keep a sane scale."""
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(example)
    return net.eval()


def export(work):
    torch.manual_seed(0)
    models = {}
    conv = calibrate(ConvNet(), torch.randn(4, 3, 64, 64))
    path = os.path.join(work, "convnet_dyn.onnx")
    torch.onnx.export(conv, torch.randn(1, 3, 64, 64), path, input_names=["input"],
                      output_names=["output"], opset_version=17,
                      dynamic_axes={"input": {0: "batch", 2: "height", 3: "width"},
                                    "output": {0: "batch"}})
    cases = []
    for shape in [(1, 3, 64, 64), (2, 3, 45, 77), (1, 3, 120, 33)]:
        x = torch.randn(*shape)
        cases.append((x.numpy(), conv(x).detach().numpy()))
    models["convnet_dyn"] = (path, cases)

    seg = calibrate(SegNet(), torch.randn(4, 3, 64, 64))
    path = os.path.join(work, "segnet_dyn.onnx")
    torch.onnx.export(seg, torch.randn(1, 3, 64, 64), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n", 2: "h", 3: "w"}})
    cases = []
    for shape in [(1, 3, 64, 64), (2, 3, 96, 124), (1, 3, 60, 160)]:
        x = torch.randn(*shape)
        cases.append((x.numpy(), seg(x).detach().numpy()))
    models["segnet_dyn"] = (path, cases)

    win = WindowNet().eval()
    path = os.path.join(work, "window_dyn.onnx")
    torch.onnx.export(win, torch.randn(1, 3, 32, 32), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n", 2: "h", 3: "w"}})
    cases = []
    for shape in [(1, 3, 32, 32), (2, 3, 26, 42), (1, 3, 18, 60)]:  # unpadded, padded both ways
        x = torch.randn(*shape)
        cases.append((x.numpy(), win(x).detach().numpy()))
    models["window_dyn"] = (path, cases)

    gpt = Gpt2().eval()
    path = os.path.join(work, "gpt2_dyn.onnx")
    torch.onnx.export(gpt, torch.randint(0, VOCAB, (1, 16)), path, input_names=["ids"],
                      output_names=["logits"], opset_version=17,
                      dynamic_axes={"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    cases = []
    for shape in [(1, 128), (2, 37)]:
        ids = torch.randint(0, VOCAB, shape)
        cases.append((ids.numpy(), gpt(ids).detach().numpy()))
    models["gpt2_dyn"] = (path, cases)

    for kind in ["lstm", "gru"]:
        net = Recurrent(kind).eval()
        path = os.path.join(work, f"{kind}_dyn.onnx")
        torch.onnx.export(net, torch.randn(2, 10, 16), path, input_names=["x"],
                          output_names=["y"], opset_version=17,
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
        cases = []
        for shape in [(1, 7, 16), (3, 20, 16)]:
            x = torch.randn(*shape)
            cases.append((x.numpy(), net(x).detach().numpy()))
        models[f"{kind}_dyn"] = (path, cases)

    net = RestoreNet().eval()
    path = os.path.join(work, "restore_dyn.onnx")
    torch.onnx.export(net, torch.rand(1, 3, 32, 48), path, input_names=["x"], output_names=["y"],
                      opset_version=17,
                      dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n", 2: "h", 3: "w"}})
    cases = []
    for shape in [(1, 3, 32, 48), (2, 3, 18, 10)]:
        x = torch.rand(*shape)
        cases.append((x.numpy(), net(x).detach().numpy()))
    models["restore_dyn"] = (path, cases)

    net = AudioEncoder().eval()
    path = os.path.join(work, "audio_dyn.onnx")
    with torch.enable_grad():  # torch's transformer fast path (not exportable) stays off
        torch.onnx.export(net, torch.randn(1, 16, 100), path, input_names=["mel"],
                          output_names=["y"], opset_version=17,
                          dynamic_axes={"mel": {0: "b", 2: "t"}, "y": {0: "b", 1: "t2"}})
    cases = []
    for shape in [(1, 16, 100), (2, 16, 37)]:
        x = torch.randn(*shape)
        cases.append((x.numpy(), net(x).detach().numpy()))
    models["audio_dyn"] = (path, cases)

    net = torch.jit.script(ControlFlow().eval())
    path = os.path.join(work, "control_flow_dyn.onnx")
    torch.onnx.export(net, torch.randn(3, 4, 8), path, input_names=["x"], output_names=["y"],
                      opset_version=17,
                      dynamic_axes={"x": {0: "n", 1: "steps"}, "y": {0: "n", 1: "steps"}})
    cases = []
    for shape in [(3, 4, 8), (1, 6, 8)]:  # both branches of the If, two trip counts
        x = torch.randn(*shape)
        cases.append((x.numpy(), net(x).detach().numpy()))
    models["control_flow_dyn"] = (path, cases)
    return models


def rel_error(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def compile_once(strata, env, failures, work, name, path, extra=()):
    """`strata compile PATH -o WORK/NAME.so EXTRA`: the library's path, or None (a failure noted)."""
    lib = os.path.join(work, name + ".so")
    r = subprocess.run([strata, "compile", path, "-o", lib, *extra], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        failures.append(f"compile {name} once: exit {r.returncode}: {r.stderr.strip()}")
        return None
    print(r.stdout.strip())
    return lib


def run_against(strata, env, failures, label, model, extra, inp, out, output_name, want):
    """`strata run MODEL EXTRA --input INP`, its output OUTPUT_NAME compared with `want`."""
    r = subprocess.run([strata, "run", model, *extra, "--input", inp, "--output-dir", out],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        failures.append(f"{label}: exit {r.returncode}: {r.stderr.strip()}")
        return
    err = rel_error(np.load(os.path.join(out, output_name + ".npy")), want)
    print(f"{label}: max rel error {err:.2e}")
    if not err <= TOL:
        failures.append(f"{label}: max rel error {err:.2e} > {TOL}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    strata = os.path.join(args.bin, "strata")
    env = dict(os.environ, STRATA_CACHE="0")
    failures = []
    with torch.no_grad():
        models = export(args.work)
    for name, (path, cases) in models.items():
        for i, (x, want) in enumerate(cases):
            inp = os.path.join(args.work, f"{name}.{i}.input.npy")
            np.save(inp, x)
            for engine in ["jit", "interp"]:
                out = os.path.join(args.work, f"{name}.{i}.{engine}")
                r = subprocess.run([strata, "run", path, "--engine", engine, "--input", inp,
                                    "--output-dir", out], capture_output=True, text=True, env=env)
                label = f"{name} {list(x.shape)} {engine}"
                if r.returncode != 0:
                    failures.append(f"{label}: exit {r.returncode}: {r.stderr.strip()}")
                    continue
                got = np.load(os.path.join(out, os.listdir(out)[0]))
                if got.shape != want.shape:
                    failures.append(f"{label}: shape {got.shape}, torch {want.shape}")
                    continue
                err = rel_error(got, want)
                print(f"{label}: max rel error {err:.2e}")
                if not err <= TOL:
                    failures.append(f"{label}: max rel error {err:.2e} > {TOL}")
    # strata bench at two sizes: the per-shape compilation counts as compile time, runs succeed.
    path, cases = models["convnet_dyn"]
    for i in [1, 0]:
        r = subprocess.run([strata, "bench", path, "--iters", "2", "--input",
                            os.path.join(args.work, f"convnet_dyn.{i}.input.npy")],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            failures.append(f"bench convnet_dyn case {i}: exit {r.returncode}: {r.stderr.strip()}")
        else:
            lines = [l for l in r.stdout.splitlines() if l.startswith(("compile", "latency"))]
            print(f"bench convnet_dyn case {i}: " + "; ".join(lines))
    # One library for every size: compiled once, run at three image sizes against torch, and
    # through the jit compiled once (--any-shape); a too small image is an input error.
    net = calibrate(ConvNetAnySize(), torch.randn(4, 3, 64, 64))
    path = os.path.join(args.work, "convnet_any.onnx")
    with torch.no_grad():
        torch.onnx.export(net, torch.randn(1, 3, 64, 64), path, input_names=["input"],
                          output_names=["output"], opset_version=17,
                          dynamic_axes={"input": {0: "batch", 2: "height", 3: "width"},
                                        "output": {0: "batch"}})
    lib = compile_once(strata, env, failures, args.work, "convnet_any", path)
    if lib:
        for i, shape in enumerate([(1, 3, 64, 64), (2, 3, 45, 77), (1, 3, 224, 160)]):
            x = torch.randn(*shape)
            with torch.no_grad():
                want = net(x).numpy()
            inp = os.path.join(args.work, f"convnet_any.{i}.input.npy")
            np.save(inp, x.numpy())
            for model, extra in [(lib, []), (path, ["--any-shape"])]:
                out = os.path.join(args.work, f"convnet_any.{i}.{'aot' if model == lib else 'jit'}")
                label = f"convnet_any {list(shape)} {'one .so' if model == lib else 'jit --any-shape'}"
                run_against(strata, env, failures, label, model, extra, inp, out, "output", want)
            if i == 1:  # the AVX2 build of the same library (8-lane blocks and tiles)
                v3 = compile_once(strata, env, failures, args.work, "convnet_any_v3", path,
                                  ["--target", "x86-64-v3"])
                if v3:
                    run_against(strata, env, failures, f"convnet_any {list(shape)} x86-64-v3 .so",
                                v3, [], inp, os.path.join(args.work, "convnet_any.v3"), "output",
                                want)
        tiny = os.path.join(args.work, "tiny.npy")
        np.save(tiny, np.zeros((1, 3, 4, 4), np.float32))
        r = subprocess.run([strata, "run", lib, "--input", tiny], capture_output=True, text=True,
                           env=env)
        if r.returncode != 4 or "too small" not in r.stderr and "must be at least" not in r.stderr:
            failures.append(f"4x4 image through the library: expected exit 4 naming the size, got "
                            f"exit {r.returncode}: {r.stderr.strip()}")
        else:
            print(f"4x4 image refused by the library (exit 4): {r.stderr.strip()}")
    # The GPT-2-style decoder compiled once (its Shape/Range/Slice arithmetic kept as formulas
    # over batch and seq), run from the library at both cases against torch.
    path, cases = models["gpt2_dyn"]
    lib = compile_once(strata, env, failures, args.work, "gpt2_dyn", path)
    if lib:
        for i, (x, want) in enumerate(cases):
            run_against(strata, env, failures, f"gpt2_dyn {list(x.shape)} one .so", lib, [],
                        os.path.join(args.work, f"gpt2_dyn.{i}.input.npy"),
                        os.path.join(args.work, f"gpt2_dyn.{i}.aot"), "logits", want)
    # Compiled once: the scripted Loop/If model (its trip count, a dim, and its If's condition, a
    # test on a dim, decided when it runs by the library's loop and if steps) and the LSTM and
    # GRU (their recurrence a loop over the sequence; torch's zero initial states sized by the
    # batch at run time).
    # And the conv net that reads its own size (upsampled to x.shape[2:]), the segmentation
    # net (a channel shuffle, a ConvTranspose skip connection, logits resized to the input's
    # size), the restoration net (pixel (un)shuffles, instance and group norms over H x W) and
    # the audio encoder (heads merged by a -1 reshape): the shapes they compute from their dims
    # are formulas in one library.
    for name, output in [("control_flow_dyn", "y"), ("lstm_dyn", "y"), ("gru_dyn", "y"),
                         ("convnet_dyn", "output"), ("segnet_dyn", "y"), ("window_dyn", "y"),
                         ("restore_dyn", "y"), ("audio_dyn", "y")]:
        path, cases = models[name]
        lib = compile_once(strata, env, failures, args.work, name, path)
        if lib:
            for i, (x, want) in enumerate(cases):
                run_against(strata, env, failures, f"{name} {list(x.shape)} one .so", lib, [],
                            os.path.join(args.work, f"{name}.{i}.input.npy"),
                            os.path.join(args.work, f"{name}.{i}.aot"), output, want)
    # A shape that breaks the model's own constraints is an input error, not a crash.
    bad = os.path.join(args.work, "bad.npy")
    np.save(bad, np.zeros((1, 4, 32, 32), np.float32))
    r = subprocess.run([strata, "run", models["convnet_dyn"][0], "--input", bad],
                       capture_output=True, text=True, env=env)
    if r.returncode == 0 or "input" not in r.stderr:
        failures.append(f"4-channel image: expected an input error, got exit {r.returncode}: "
                        f"{r.stderr.strip()}")
    else:
        print(f"4-channel image refused (exit {r.returncode}): {r.stderr.strip()}")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print(f"check_dynamic: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
