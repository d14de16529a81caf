#!/usr/bin/python3
"""Train strata's bundled default model: an MLP on sklearn's 8x8 digits.

Usage: /usr/bin/python3 scripts/train_digits.py [OUTDIR] [--force]
       (OUTDIR defaults to models/digits)

Writes
  digits.onnx         input "input" float32 [batch, 64] (raw pixel values 0..16,
                      row-major 8x8; the /16 scaling is inside the model),
                      output "logits" float32 [batch, 10]
  digits_test_x.npy   float32 [359, 64] held-out samples (same raw scale)
  digits_test_y.npy   int64   [359] held-out labels

load_digits() ships inside python3-sklearn, so no download is needed.  The split is
fixed: a seeded permutation (RandomState(0)) of the 1797 samples, last 20% held out.
(An unshuffled "last 20%" split holds out only the final writers; an MLP then reaches
only ~90-92%, so we shuffle once, deterministically.)  Training is seeded and
single-threaded, so reruns reproduce the same weights.  Existing outputs are kept
unless --force.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

SEED = 0
HIDDEN = 128
EPOCHS = 60
BATCH = 64


class DigitsMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, 10)

    def forward(self, x):
        # Scale inside the graph so callers can feed raw 0..16 pixel intensities.
        x = x * (1.0 / 16.0)
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", default="models/digits")
    ap.add_argument("--force", action="store_true", help="retrain even if outputs exist")
    args = ap.parse_args()

    out = {k: os.path.join(args.outdir, f) for k, f in
           (("onnx", "digits.onnx"), ("x", "digits_test_x.npy"), ("y", "digits_test_y.npy"))}
    if not args.force and all(os.path.exists(p) for p in out.values()):
        print(f"{args.outdir}: digits model up to date (use --force to retrain)")
        return 0
    os.makedirs(args.outdir, exist_ok=True)

    t0 = time.time()
    torch.set_num_threads(1)  # determinism, and leave the CPUs to concurrent builds
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    X = digits.data.astype(np.float32)  # (1797, 64), values 0..16
    y = digits.target.astype(np.int64)
    perm = np.random.RandomState(SEED).permutation(len(X))
    X, y = X[perm], y[perm]
    n_test = int(round(len(X) * 0.2))
    X_tr, y_tr = torch.from_numpy(X[:-n_test]), torch.from_numpy(y[:-n_test])
    X_te, y_te = X[-n_test:], y[-n_test:]

    model = DigitsMLP()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        perm = torch.randperm(len(X_tr), generator=gen)
        for i in range(0, len(perm), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss_fn(model(X_tr[idx]), y_tr[idx]).backward()
            opt.step()
    model.eval()

    with torch.no_grad():
        logits = model(torch.from_numpy(X_te)).numpy()
        train_acc = (model(X_tr).argmax(1) == y_tr).float().mean().item()
    acc = float((logits.argmax(1) == y_te).mean())
    print(f"trained in {time.time() - t0:.1f}s: train acc {train_acc:.4f}, "
          f"held-out acc {acc:.4f} ({n_test} samples)")
    if acc < 0.95:
        print("held-out accuracy below 95%", file=sys.stderr)
        return 1

    torch.onnx.export(model, (torch.from_numpy(X_te[:1]),), out["onnx"],
                      input_names=["input"], output_names=["logits"], opset_version=13,
                      do_constant_folding=True,
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    np.save(out["x"], X_te)
    np.save(out["y"], y_te)

    # Check the ONNX file independently of torch: checker + a plain numpy evaluation.
    m = onnx.load(out["onnx"])
    onnx.checker.check_model(m, full_check=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from export_zoo import run_onnx  # numpy-only ONNX interpreter
    np_logits = run_onnx(m, {"input": X_te})[0]
    np_acc = float((np_logits.argmax(1) == y_te).mean())
    print(f"onnx ops {sorted({n.op_type for n in m.graph.node})}; numpy-run held-out acc "
          f"{np_acc:.4f}, max|logit diff| vs torch {np.abs(np_logits - logits).max():.2e}")
    sizes = {os.path.basename(p): os.path.getsize(p) for p in out.values()}
    print(f"wrote {sizes} (total {sum(sizes.values())} bytes) in {time.time() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
