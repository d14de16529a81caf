#!/usr/bin/python3
"""`make_roi_align.py DIR`: DIR/r2.onnx and DIR/r0.onnx, torchvision.ops.roi_align of
x [N, 4, ?h, ?w] at regions rois [?r, 5] (batch index, x1, y1, x2, y2), output 3 x 4, spatial
scale 0.25, aligned (half_pixel), sampling ratio 2 and 0 (adaptive), exported to ONNX RoiAlign;
DIR/max.onnx, an ONNX RoiAlign in mode max (opset 10: output_half_pixel).
`make_roi_align.py --check RATIO OUTDIR:X.npy,ROIS.npy ...`: compares each OUTDIR/y.npy with torch
(aligned, that sampling ratio)."""
import sys

import numpy as np
import torch
import torchvision


class RoiAlign(torch.nn.Module):
    def __init__(self, ratio, aligned):
        super().__init__()
        self.ratio, self.aligned = ratio, aligned

    def forward(self, x, rois):
        return torchvision.ops.roi_align(x, rois, (3, 4), 0.25, self.ratio, self.aligned)


if sys.argv[1] == "--check":
    model = RoiAlign(int(sys.argv[2]), True)
    for case in sys.argv[3:]:
        out, inputs = case.split(":")
        x, rois = (torch.from_numpy(np.load(f)) for f in inputs.split(","))
        with torch.no_grad():
            want = model(x, rois).numpy()
        got = np.load(out + "/y.npy")
        assert got.shape == want.shape, (out, got.shape, want.shape)
        err = np.abs(got - want).max() if want.size else 0.0
        assert err <= 1e-5 * max(np.abs(want).max(), 1), (out, err)
        print("matches torch", "x".join(map(str, got.shape)))
    sys.exit(0)

import onnx
from onnx import TensorProto, helper

for ratio in (2, 0):
    torch.onnx.export(RoiAlign(ratio, True), (torch.rand(2, 4, 20, 24), torch.tensor([[0, 1.0, 2, 30, 40]])),
                      f"{sys.argv[1]}/r{ratio}.onnx", input_names=["x", "rois"], output_names=["y"],
                      dynamic_axes={"x": {2: "h", 3: "w"}, "rois": {0: "r"}}, opset_version=16)
node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode="max", output_height=2,
                        output_width=3, sampling_ratio=0, spatial_scale=0.5)
g = helper.make_graph([node], "roi_max", [
    helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"]),
    helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["r", 4]),
    helper.make_tensor_value_info("batch", TensorProto.INT64, ["r"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)]), f"{sys.argv[1]}/max.onnx")
