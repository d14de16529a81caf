#!/usr/bin/python3
"""`make_detector_transform.py DIR`: DIR/t.onnx, torchvision's GeneralizedRCNNTransform
(normalize, resize so the short side is 64 unless the long side would pass 100, pad to a
multiple of 32) exported with a symbolic height and width: its sizes are f32 arithmetic on the
image's shape; and DIR/slices.onnx, x [2, ?n] sliced at run-time offsets, x[:, a*b : a*b + a]
for y [?a, ?b] (a start computed from sizes).
`make_detector_transform.py --check MODEL.onnx OUTDIR:X.npy[,Y.npy] ...`: compares the output in
each OUTDIR (y.npy, or z.npy for a model named *slices*) with torch's result on X (and Y)."""
import sys

import numpy as np
import torch
from torchvision.models.detection.transform import GeneralizedRCNNTransform


class Transform(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.t = GeneralizedRCNNTransform(64, 100, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])

    def forward(self, x):
        return self.t([x])[0].tensors


class Slices(torch.nn.Module):
    def forward(self, x, y):
        a = y.shape[0] * y.shape[1]
        return x[:, a:a + y.shape[0]]


if sys.argv[1] == "--check":
    model = Slices() if "slices" in sys.argv[2] else Transform()
    for case in sys.argv[3:]:
        out, inputs = case.split(":")
        args = [torch.from_numpy(np.load(f)) for f in inputs.split(",")]
        with torch.no_grad():
            want = model.eval()(*args).numpy()
        got = np.load(out + ("/z.npy" if "slices" in sys.argv[2] else "/y.npy"))
        assert got.shape == want.shape, (out, got.shape, want.shape)
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-9) if want.size else 0
        assert err <= 1e-5, (out, err)
        print("matches torch", "x".join(map(str, got.shape)))
    sys.exit(0)

torch.onnx.export(Slices(), (torch.rand(2, 30), torch.rand(3, 4)), sys.argv[1] + "/slices.onnx",
                  input_names=["x", "y"], output_names=["z"],
                  dynamic_axes={"x": {1: "n"}, "y": {0: "a", 1: "b"}}, opset_version=17)
torch.onnx.export(Transform().eval(), (torch.rand(3, 48, 80),), sys.argv[1] + "/t.onnx",
                  input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {1: "h", 2: "w"}}, opset_version=17)
