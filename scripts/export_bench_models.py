#!/usr/bin/python3
"""Export the models `make bench` adds to the zoo, with torch's reference output.

Usage: /usr/bin/python3 scripts/export_bench_models.py [OUTDIR [NAME...]]   (default build/zoo,
every model)

  shufflenet_v2_x1_0, regnet_y_400mf, efficientnet_b0, mobilenet_v3_small   torchvision,
      random seeded weights (weights=None), BatchNorm statistics calibrated on random data
      (as scripts/export_zoo.py does), input [1, 3, 224, 224]
  bert_encoder   4 BERT-base layers (hidden 768, 12 heads, FFN 3072, erf GELU, post-norm), inputs
      "input" [1, 128, 768] and "mask" [1, 128] (1 keeps a token, 0 masks it, added as -10000)
  gpt2_decoder   4 GPT-2 blocks (hidden 768, 12 heads, FFN 3072, tanh GELU, pre-norm, causal
      mask), input [1, 128, 768]

Each NAME gets NAME.onnx (opset 13, constant folding on), NAME.input.npy (and
bert_encoder.mask.npy) and NAME.output.npy (torch's answer). They are benchmarks; `make
test-data` also exports shufflenet_v2_x1_0 and regnet_y_400mf, whose padded channel blocks,
regrouped convs and channel shuffles the zoo test then checks. Idempotent: existing files are
kept.
"""
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_zoo import calibrate_bn, save_npy  # noqa: E402

SEQ, HIDDEN, HEADS, FFN, LAYERS = 128, 768, 12, 3072, 4
VISION = ["shufflenet_v2_x1_0", "regnet_y_400mf", "efficientnet_b0", "mobilenet_v3_small"]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, bias):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).split(HIDDEN, dim=-1)
        heads = lambda t: t.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HIDDEN // HEADS) + bias
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, s, HIDDEN))


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(), nn.Linear(FFN, HIDDEN))

    def forward(self, x, bias):
        x = self.norm1(x + self.attn(x, bias))
        return self.norm2(x + self.ffn(x))


class BertEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer() for _ in range(LAYERS))

    def forward(self, x, mask):
        bias = (1.0 - mask)[:, None, None, :] * -10000.0  # [b, 1, 1, s]
        for layer in self.layers:
            x = layer(x, bias)
        return x


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(approximate="tanh"),
                                 nn.Linear(FFN, HIDDEN))

    def forward(self, x, bias):
        x = x + self.attn(self.norm1(x), bias)
        return x + self.ffn(self.norm2(x))


class Gpt2Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Gpt2Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(HIDDEN)
        causal = torch.triu(torch.full((SEQ, SEQ), -10000.0), diagonal=1)
        self.register_buffer("causal", causal)

    def forward(self, x):
        for block in self.blocks:
            x = block(x, self.causal)
        return self.norm(x)


def export(name, outdir):
    p = lambda f: os.path.join(outdir, f)
    if os.path.exists(p(name + ".onnx")) and os.path.exists(p(name + ".output.npy")):
        print(f"[{name}] up to date")
        return
    t0 = time.time()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    if name in VISION:
        model = getattr(torchvision.models, name)(weights=None)
        shape = (1, 3, 224, 224)
        calibrate_bn(model, shape, gen)
        inputs = (torch.randn(shape, generator=gen),)
        names = ["input"]
    elif name == "bert_encoder":
        model = BertEncoder()
        mask = torch.ones(1, SEQ)
        mask[:, SEQ - 16:] = 0  # the last 16 tokens are padding
        inputs = (torch.randn(1, SEQ, HIDDEN, generator=gen), mask)
        names = ["input", "mask"]
    else:
        model = Gpt2Decoder()
        inputs = (torch.randn(1, SEQ, HIDDEN, generator=gen),)
        names = ["input"]
    model.eval()
    with torch.no_grad():
        y = model(*inputs).numpy().astype(np.float32)
    tmp = p(name + ".onnx.tmp")
    torch.onnx.export(model, inputs, tmp, input_names=names, output_names=["output"],
                      opset_version=13, do_constant_folding=True)
    os.replace(tmp, p(name + ".onnx"))
    save_npy(p(name + ".input.npy"), inputs[0].numpy())
    if name == "bert_encoder":
        save_npy(p(name + ".mask.npy"), inputs[1].numpy())
    save_npy(p(name + ".output.npy"), y)
    print(f"[{name}] exported in {time.time() - t0:.1f} s, output {tuple(y.shape)}")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "build/zoo"
    every = VISION + ["bert_encoder", "gpt2_decoder"]
    names = sys.argv[2:] or every
    unknown = [n for n in names if n not in every]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(every)}")
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        export(name, outdir)


if __name__ == "__main__":
    main()
