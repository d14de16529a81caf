#!/usr/bin/python3
"""`make_nms.py OUT [--center]`: an ONNX model of NonMaxSuppression on boxes [2, 40, 4] and
scores [2, 3, 40] (at most 5 per class, IoU threshold 0.4, score threshold 0.3), corner boxes or
with --center [xc, yc, w, h]; the selected indices feed a GatherND of the scores (a computation
over the data-dependent count).
`make_nms.py --check DIR BOXES.npy SCORES.npy [--center]`: compares DIR's outputs with a numpy
reference of the greedy selection.
`make_nms.py OUT --dynamic`: the corner-box model with boxes [b, n, 4] and scores [b, 3, n] (batch
and box count symbolic: one library for every number of boxes).
`--max K` (model and check): at most K boxes per class instead of 5."""
import sys

import numpy as np

MAX, IOU, SCORE = 5, 0.4, 0.3
if "--max" in sys.argv:
    MAX = int(sys.argv[sys.argv.index("--max") + 1])
center = "--center" in sys.argv
dynamic = "--dynamic" in sys.argv


def reference(boxes, scores):
    def spans(b):
        if center:
            return (b[0] - b[2] / 2, b[0] + b[2] / 2), (b[1] - b[3] / 2, b[1] + b[3] / 2)
        return (min(b[1], b[3]), max(b[1], b[3])), (min(b[0], b[2]), max(b[0], b[2]))

    def overlap(a, b):
        (ax0, ax1), (ay0, ay1) = spans(a)
        (bx0, bx1), (by0, by1) = spans(b)
        ix, iy = min(ax1, bx1) - max(ax0, bx0), min(ay1, by1) - max(ay0, by0)
        if ix <= 0 or iy <= 0:
            return False
        inter = ix * iy
        union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
        return union > 0 and inter / union > np.float32(IOU)

    out = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = [i for i in sorted(range(len(s)), key=lambda i: (-s[i], i)) if s[i] > np.float32(SCORE)]
            picked = []
            for i in order:
                if len(picked) < MAX and not any(overlap(boxes[b, p], boxes[b, i]) for p in picked):
                    picked.append(i)
            out += [[b, c, i] for i in picked]
    return np.array(out, np.int64).reshape(-1, 3)


if sys.argv[1] == "--check":
    boxes, scores = np.load(sys.argv[3]), np.load(sys.argv[4])
    want = reference(boxes, scores)
    got = np.load(sys.argv[2] + "/selected.npy")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.load(sys.argv[2] + "/picked.npy"),
                                  scores[want[:, 0], want[:, 1], want[:, 2]])
    sys.exit(0)

import onnx
from onnx import TensorProto, helper, numpy_helper

inits = [numpy_helper.from_array(np.array([MAX], np.int64), "max"),
         numpy_helper.from_array(np.array([IOU], np.float32), "iou"),
         numpy_helper.from_array(np.array([SCORE], np.float32), "score")]
nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                          ["selected"], center_point_box=1 if center else 0),
         helper.make_node("GatherND", ["scores", "selected"], ["picked"])]
g = helper.make_graph(nodes, "nms",
                      [helper.make_tensor_value_info("boxes", TensorProto.FLOAT,
                                                     ["b", "n", 4] if dynamic else [2, 40, 4]),
                       helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                                     ["b", 3, "n"] if dynamic else [2, 3, 40])],
                      [helper.make_tensor_value_info("selected", TensorProto.INT64, None),
                       helper.make_tensor_value_info("picked", TensorProto.FLOAT, None)],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
