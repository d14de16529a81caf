"""Writes models that index an axis whose length is symbolic, and inputs where it is empty at run
time while indices are given: gather, gather_elements, gather_nd and scatter_nd.

  make_empty_axis.py DIR    writes DIR/<case>/model.onnx, data.npy, indices.npy (and updates.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h


def save(d, nodes, ins, arrays):
    os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, "empty_axis", ins, [h.make_tensor_value_info("y", T.FLOAT, None)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), os.path.join(d, "model.onnx"))
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)


def main(out):
    f = lambda name, dims: h.make_tensor_value_info(name, T.FLOAT, dims)
    i = lambda name, dims: h.make_tensor_value_info(name, T.INT64, dims)
    empty = np.zeros((0, 3), np.float32)
    save(os.path.join(out, "gather"), [h.make_node("Gather", ["data", "indices"], ["y"], axis=0)],
         [f("data", ["n", 3]), i("indices", ["k"])],
         dict(data=empty, indices=np.array([0, 0], np.int64)))
    save(os.path.join(out, "gather-elements"),
         [h.make_node("GatherElements", ["data", "indices"], ["y"], axis=0)],
         [f("data", ["n", 3]), i("indices", ["k", 3])],
         dict(data=empty, indices=np.zeros((2, 3), np.int64)))
    save(os.path.join(out, "gather-nd"), [h.make_node("GatherND", ["data", "indices"], ["y"])],
         [f("data", ["n", 3]), i("indices", ["k", 1])],
         dict(data=empty, indices=np.zeros((2, 1), np.int64)))
    save(os.path.join(out, "scatter-nd"),
         [h.make_node("ScatterND", ["data", "indices", "updates"], ["y"])],
         [f("data", ["n", 3]), i("indices", ["k", 1]), f("updates", ["k", 3])],
         dict(data=empty, indices=np.zeros((2, 1), np.int64),
              updates=np.ones((2, 3), np.float32)))


if __name__ == "__main__":
    main(sys.argv[1])
