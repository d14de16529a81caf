"""Every zoo model through the package: from its ONNX file and from the torch module itself,
against torch's outputs; the AOT round trip; ONNX Runtime's outputs where onnxruntime-node is
installed (build/node, `make bench` or `make test` installs it)."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch

import strata
from conftest import BUILD, SOURCE, TOLERANCE, assert_close, zoo_file

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "transformer"]


@pytest.mark.parametrize("name", MODELS)
def test_zoo_from_onnx(name):
    model = strata.compile(zoo_file(f"{name}.onnx"))
    x = np.load(zoo_file(f"{name}.input.npy"))
    assert_close(model(x), np.load(zoo_file(f"{name}.output.npy")))


def torch_zoo_model(name):
    """A zoo architecture (export_zoo.py's) with seeded weights, its BatchNorm statistics taken
    from two small random batches (the zoo's full calibration costs minutes on resnet50; default
    statistics make activations explode through 50 layers), an input and torch's output."""
    import export_zoo
    torch.manual_seed(0)
    module, shape = export_zoo.build(name)
    gen = torch.Generator().manual_seed(1234)
    bns = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the batches below
        module.train()
        with torch.no_grad():
            for _ in range(2):
                module(torch.randn((4,) + shape[1:2] + (64, 64), generator=gen))
    module.eval()
    x = torch.randn(shape, generator=gen)
    return module, x, export_zoo.torch_reference(module, x)


@pytest.mark.parametrize("name", MODELS)
def test_zoo_from_torch_module(name):
    module, x, want = torch_zoo_model(name)
    model = strata.compile(module, example_inputs=(x,))
    assert_close(model(x), want)


def test_resnet18_save_load_and_dynamic_batch(tmp_path):
    module, x, want = torch_zoo_model("resnet18")
    model = strata.compile(module, example_inputs=(x,), dynamic_axes={"input": {0: "batch"}})
    assert model.inputs[0].shape == ["batch", 3, 224, 224]
    assert_close(model(x.numpy()), want)
    x3 = torch.randn(3, 3, 224, 224)
    with torch.no_grad():
        assert_close(model(x3), module(x3).numpy())
    lib = strata.load(model.save(tmp_path / "resnet18.so"))
    assert_close(lib(x.numpy()), want)
    assert_close(lib(x3), module(x3).detach().numpy())


def ort_outputs(model_path, feeds, tmp_path):
    node_dir = os.environ.get("STRATA_NODE_DIR", os.path.join(BUILD, "node"))
    if not shutil.which("node") or not os.path.isdir(
            os.path.join(node_dir, "node_modules", "onnxruntime-node")):
        pytest.skip("onnxruntime-node is not installed (make bench installs it in build/node)")
    specs = []
    for name, array in feeds.items():
        np.save(tmp_path / f"in-{name}.npy", array)
        specs.append(f"{name}={tmp_path / f'in-{name}.npy'}")
    out = tmp_path / "ort"
    run = subprocess.run(["node", os.path.join(SOURCE, "scripts", "ort_run.js"), model_path,
                          str(out)] + specs, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, STRATA_NODE_DIR=node_dir))
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "transformer"])
def test_run_against_onnxruntime(name, tmp_path):
    path = zoo_file(f"{name}.onnx")
    session = strata.InferenceSession(path)
    x = np.load(zoo_file(f"{name}.input.npy"))
    feed = {session.get_inputs()[0].name: x}
    out = ort_outputs(path, feed, tmp_path)
    got = session.run(None, feed)
    for info, array in zip(session.get_outputs(), got):
        assert_close(array, np.load(out / f"{info.name}.npy"), TOLERANCE)
