"""The package's API on the digits MLP and small torch modules: calling conventions, zero-copy,
errors, threads, save/load and the ONNX Runtime-style session."""
import os
import subprocess
import sys
import threading

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
import torch

import strata
from conftest import BUILD, DIGITS, SOURCE, assert_close


def digits_reference(x):
    """The digits model evaluated with numpy (its ops: Constant, Mul, Gemm, Relu)."""
    model = onnx.load(DIGITS)
    env = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    env["input"] = x.astype(np.float64)
    for node in model.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        ins = [env[n] for n in node.input]
        if node.op_type == "Constant":
            out = onnx.numpy_helper.to_array(attrs["value"])
        elif node.op_type == "Mul":
            out = ins[0] * ins[1]
        elif node.op_type == "Relu":
            out = np.maximum(ins[0], 0)
        elif node.op_type == "Gemm":
            a = ins[0].T if attrs.get("transA") else ins[0]
            b = ins[1].T if attrs.get("transB") else ins[1]
            out = attrs.get("alpha", 1.0) * (a @ b)
            if len(ins) > 2:
                out = out + attrs.get("beta", 1.0) * ins[2]
        else:
            raise NotImplementedError(node.op_type)
        env[node.output[0]] = out
    return env[model.graph.output[0].name]


def test_interface(digits_model):
    (i,) = digits_model.inputs
    (o,) = digits_model.outputs
    assert (i.name, i.shape, i.dtype, i.type) == ("input", ["batch", 64], np.float32,
                                                   "tensor(float)")
    assert o.name == "logits" and o.shape[1] == 10 and o.dtype == np.float32
    assert digits_model.kernels >= 1 and digits_model.threads == 1
    assert "input" in repr(digits_model)


def test_call_and_run_agree_with_numpy(digits_model, digits_x):
    want = digits_reference(digits_x)
    y = digits_model(digits_x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (359, 10)
    assert_close(y, want)
    (z,) = digits_model.run(None, {"input": digits_x})
    assert_close(z, want)
    assert digits_model.run(["logits"], {"input": digits_x[:3]})[0].shape == (3, 10)
    labels = np.load(os.path.join(SOURCE, "models", "digits", "digits_test_y.npy"))
    assert (y.argmax(1) == labels).mean() > 0.9


def test_symbolic_batch_any_size(digits_model, digits_x):
    for n in (1, 7, 359):
        assert digits_model(digits_x[:n]).shape == (n, 10)


def test_zero_copy_in_and_out(digits_model, digits_x):
    x = np.ascontiguousarray(digits_x[:5])
    outs, seen_in, seen_out = digits_model._native.run_traced([x])
    assert seen_in == [x.ctypes.data]          # the executor got the array's own memory
    (y,) = outs
    assert seen_out == [y.ctypes.data]         # the kernels wrote into the returned array
    assert y.flags.owndata and y.flags.writeable and y.base is None


def test_conversions(digits_model, digits_x):
    want = digits_model(digits_x[:4])
    # float64 and a Fortran-ordered array are converted once; torch tensors pass through.
    assert_close(digits_model(digits_x[:4].astype(np.float64)), want)
    assert_close(digits_model(np.asfortranarray(digits_x[:4])), want)
    assert_close(digits_model(torch.from_numpy(digits_x[:4]).requires_grad_(True)), want)
    assert_close(digits_model(digits_x[:4].tolist()), want)
    # DLPack out: torch reads the output without a copy.
    y = digits_model(digits_x[:4])
    t = torch.from_dlpack(y)
    assert t.data_ptr() == y.ctypes.data


def test_input_errors(digits_model, digits_x):
    with pytest.raises(strata.InputError, match=r"input 0 \('input'\): dim 1 must be 64"):
        digits_model(digits_x[:, :10])
    with pytest.raises(strata.InputError, match="expected rank 2"):
        digits_model(digits_x[0])
    with pytest.raises(strata.InputError, match="expected float32"):
        digits_model(np.array([["a"] * 64]))
    with pytest.raises(strata.InputError, match="takes 1 inputs"):
        digits_model(digits_x, digits_x)
    with pytest.raises(strata.InputError, match="no input named 'x'"):
        digits_model.run(None, {"x": digits_x})
    with pytest.raises(strata.InputError, match="no output named 'y'"):
        digits_model.run(["y"], {"input": digits_x})
    # The native layer refuses what the Python layer would have converted.
    with pytest.raises(strata.InputError, match="expected dtype float32"):
        digits_model._native.run([digits_x.astype(np.float64)])
    with pytest.raises(strata.InputError, match="not C-contiguous"):
        digits_model._native.run([np.asfortranarray(digits_x)])
    assert issubclass(strata.InputError, strata.Error)
    assert issubclass(strata.Error, RuntimeError)


def test_compile_errors(tmp_path):
    with pytest.raises(strata.CompileError, match="no such file"):
        strata.compile(tmp_path / "missing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    with pytest.raises(strata.CompileError, match="bad.onnx"):
        strata.compile(bad)
    with pytest.raises(strata.CompileError, match="cannot compile a int"):
        strata.compile(3)
    with pytest.raises(strata.CompileError, match="example_inputs"):
        strata.compile(torch.nn.Linear(2, 2))
    with pytest.raises(strata.CompileError, match="unknown pass"):
        strata.compile(DIGITS, passes="no-such-pass")
    # A node the importer cannot take names its op and node.
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    node = onnx.helper.make_node("NoSuchOp", ["x"], ["y"], name="weird")
    model = onnx.helper.make_model(onnx.helper.make_graph([node], "g", [x], [y]))
    with pytest.raises(strata.CompileError, match="NoSuchOp"):
        strata.compile(model)


def test_model_proto_and_bytes(digits_x):
    proto = onnx.load(DIGITS)
    want = strata.compile(DIGITS)(digits_x)
    assert_close(strata.compile(proto)(digits_x), want)
    assert_close(strata.compile(proto.SerializeToString())(digits_x), want)


def test_threads_and_concurrent_calls(digits_x):
    one = strata.compile(DIGITS, threads=1)
    two = strata.compile(DIGITS, threads=2)
    assert two.threads == 2
    want = one(digits_x)
    assert_close(two(digits_x), want)
    results, errors = {}, []

    def worker(k):
        try:
            for _ in range(20):
                n = 1 + (k * 37) % 300
                results[k] = (n, two(digits_x[:n]))
                assert_close(results[k][1], want[:n])
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x, scale):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean((2, 3))) * scale, h.amax((1, 2, 3))


def test_torch_module_two_inputs_two_outputs():
    torch.manual_seed(0)
    net = SmallNet().eval()
    x, s = torch.randn(2, 3, 16, 16), torch.randn(2, 5)
    model = strata.compile(net, example_inputs=(x, s), input_names=["x", "scale"],
                           output_names=["logits", "peak"])
    assert [i.name for i in model.inputs] == ["x", "scale"]
    logits, peak = model(x, s)
    with torch.no_grad():
        want_logits, want_peak = net(x, s)
    assert_close(logits, want_logits.numpy())
    assert_close(peak, want_peak.numpy())
    got = model.run(["peak"], {"x": x.numpy(), "scale": s.numpy()})
    assert_close(got[0], want_peak.numpy())


def test_torch_dynamic_axes():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh())
    model = strata.compile(net, example_inputs=(torch.randn(3, 6),),
                           dynamic_axes={"input": {0: "n"}})
    assert model.inputs[0].shape == ["n", 6]
    for n in (1, 5):
        x = torch.randn(n, 6)
        with torch.no_grad():
            assert_close(model(x), net(x).numpy())


class ResizeToInput(torch.nn.Module):
    """A strided conv, then an upsample back to the input's own size: its export reads the input
    shape (Shape -> Resize sizes), formulas of the symbolic dims."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 4, 3, 2, 1)

    def forward(self, x):
        y = torch.relu(self.down(x))
        return torch.nn.functional.interpolate(y, size=x.shape[2:], mode="nearest")


@pytest.mark.parametrize("net_kind", ["conv", "resize"])
def test_torch_dynamic_height_and_width(net_kind):
    # Batch, height and width all dynamic: compiled once per input shape, right at each.
    torch.manual_seed(0)
    if net_kind == "conv":
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.ReLU(),
                                  torch.nn.MaxPool2d(3, 2, 1), torch.nn.AdaptiveAvgPool2d(1),
                                  torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
    else:
        net = ResizeToInput().eval()
    model = strata.compile(net, example_inputs=(torch.randn(1, 3, 32, 32),),
                           dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}})
    assert model.inputs[0].shape == ["n", 3, "h", "w"]
    for shape in [(1, 3, 32, 32), (2, 3, 41, 23), (1, 3, 32, 32)]:
        x = torch.randn(*shape)
        with torch.no_grad():
            assert_close(model(x), net(x).numpy())
    with pytest.raises(strata.InputError, match="dim 1 must be 3"):
        model(np.zeros((1, 4, 32, 32), np.float32))
    # Shape hints compile ahead of the first call; a contradicting one is an input error.
    hinted = strata.compile(net, example_inputs=(torch.randn(1, 3, 32, 32),),
                            dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}},
                            shapes=[{"input": (1, 3, 32, 32)}, {"input": (2, 3, 41, 23)}])
    assert hinted.kernels > 0
    x = torch.randn(2, 3, 41, 23)
    with torch.no_grad():
        assert_close(hinted(x), net(x).numpy())
    with pytest.raises(strata.InputError, match="expected dim 1 = 3"):
        strata.compile(net, example_inputs=(torch.randn(1, 3, 32, 32),),
                       dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}},
                       shapes={"input": (1, 4, 32, 32)})
    with pytest.raises(strata.CompileError, match="no input named"):
        strata.compile(net, example_inputs=(torch.randn(1, 3, 32, 32),),
                       dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}}, shapes={"x": (1, 3, 8, 8)})


class UniqueValues(torch.nn.Module):
    """The distinct values of a tensor of symbolic height and width: unique takes no run-time
    extents yet, so no library holds it."""

    def forward(self, x):
        return torch.unique(torch.round(x * 2))


def test_dynamic_width_with_cache(tmp_path, monkeypatch):
    # No library can hold it: cache=True compiles it in memory, per input shape.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STRATA_CACHE", raising=False)
    net = UniqueValues().eval()
    model = strata.compile(net, example_inputs=(torch.randn(1, 2, 8, 16),), cache=True,
                           dynamic_axes={"input": {2: "h", 3: "w"}})
    assert model.cache is None
    x = torch.randn(1, 2, 5, 26)
    with torch.no_grad():
        assert_close(model(x), net(x).numpy())


def test_resize_to_input_size_one_cached_library(tmp_path, monkeypatch):
    # Its export reads the input's shape (Shape -> Resize sizes): the sizes are formulas of h and
    # w, so one cached library serves every size.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STRATA_CACHE", raising=False)
    torch.manual_seed(0)
    net = ResizeToInput().eval()
    options = dict(example_inputs=(torch.randn(1, 3, 16, 16),), cache=True,
                   dynamic_axes={"input": {2: "h", 3: "w"}})
    model = strata.compile(net, **options)
    assert model.cache == "miss"
    for shape in [(1, 3, 19, 26), (1, 3, 8, 40)]:
        x = torch.randn(*shape)
        with torch.no_grad():
            assert_close(model(x), net(x).numpy())
    assert strata.compile(net, **options).cache == "hit"


def test_dynamic_height_and_width_one_cached_library(tmp_path, monkeypatch):
    # A conv net that never reads its own shape: cache=True compiles one library whose kernels
    # take batch, height and width at run time; it serves every size, and the next compile loads it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STRATA_CACHE", raising=False)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.ReLU(),
                              torch.nn.MaxPool2d(3, 2, 1), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
    options = dict(example_inputs=(torch.randn(1, 3, 32, 32),), cache=True,
                   dynamic_axes={"input": {0: "n", 2: "h", 3: "w"}})
    model = strata.compile(net, **options)
    assert model.cache == "miss"
    assert model.inputs[0].shape == ["n", 3, "h", "w"]
    for shape in [(1, 3, 32, 32), (2, 3, 41, 23), (3, 3, 7, 90)]:
        x = torch.randn(*shape)
        with torch.no_grad():
            assert_close(model(x), net(x).numpy())
    assert strata.compile(net, **options).cache == "hit"


def test_data_dependent_sizes(tmp_path):
    # torch's boolean-mask indexing exports NonZero: its count is bound during each run, so the
    # jit and a library compiled once return as many values as the mask selects, every run.
    class Positive(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x[x > 0]) * 2, torch.nonzero(x < 0)

    net = Positive().eval()
    example = torch.randn(4, 6)
    path = str(tmp_path / "mask.onnx")
    torch.onnx.export(net, (example,), path, input_names=["x"], output_names=["y", "neg"],
                      opset_version=13)
    library = str(tmp_path / "mask.so")
    subprocess.run([os.path.join(BUILD, "bin", "strata"), "compile", path, "-o", library],
                   check=True, capture_output=True)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((4, 6)).astype(np.float32),
              -np.ones((4, 6), np.float32), np.ones((4, 6), np.float32)]
    for model in (strata.compile(path), strata.load(library)):
        for x in inputs + inputs[:1]:
            y, neg = model.run(None, {"x": x})
            np.testing.assert_allclose(y, np.maximum(x[x > 0], 0) * 2, rtol=1e-6)
            np.testing.assert_array_equal(neg, np.argwhere(x < 0))


def test_control_flow_decided_by_data(tmp_path):
    # A scripted module with an If on its data and a loop over its rows exports ONNX If/Loop that
    # run as run-time control flow: the jit and a library compiled once follow the data.
    class Branchy(torch.nn.Module):
        def forward(self, x):
            if bool(x.sum() > 0):
                y = x * 2
            else:
                y = -x
            acc = torch.zeros(x.shape[1])
            for i in range(x.shape[0]):
                acc = acc + y[i] * 0.5
            return y, acc

    net = torch.jit.script(Branchy().eval())
    path = str(tmp_path / "branchy.onnx")
    torch.onnx.export(net, (torch.randn(3, 4),), path, input_names=["x"],
                      output_names=["y", "acc"], opset_version=13,
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    library = str(tmp_path / "branchy.so")
    subprocess.run([os.path.join(BUILD, "bin", "strata"), "compile", path, "-o", library],
                   check=True, capture_output=True)
    rng = np.random.default_rng(2)
    inputs = [np.abs(rng.standard_normal((3, 4))).astype(np.float32),
              -np.abs(rng.standard_normal((5, 4))).astype(np.float32)]
    for model in (strata.compile(path), strata.load(library)):
        for x in inputs:
            y, acc = model.run(None, {"x": x})
            want_y, want_acc = (t.numpy() for t in net(torch.from_numpy(x)))
            np.testing.assert_allclose(y, want_y, rtol=1e-6)
            np.testing.assert_allclose(acc, want_acc, rtol=1e-5, atol=1e-6)


def test_inputs_whose_values_decide_shapes(tmp_path):
    # A Reshape's shape and TopK's k given as inputs: compiled once, the sizes read from their
    # values when it runs; the library saved from it serves every value too.
    path = str(tmp_path / "v.onnx")
    subprocess.run([sys.executable, os.path.join(SOURCE, "test", "tools", "inputs",
                                                 "make_value_inputs.py"), path], check=True)
    model = strata.compile(path)
    x = np.random.default_rng(0).standard_normal((2, 12)).astype(np.float32)
    for shape, k in (((2, 3, 4), 2), ((4, 3, 2), 1), ((2, 3, 4), 2)):
        (y,) = model.run(None, {"x": x, "shape": np.array(shape), "k": np.array([k])})
        assert_close(y, -np.sort(-x.reshape(shape), -1)[..., :k])
    with pytest.raises(strata.InputError, match="element count of op 'reshape' .* is 25 but "
                                                "must equal 24"):
        model.run(None, {"x": x, "shape": np.array([5, 5, 1]), "k": np.array([1])})
    lib = strata.load(model.save(tmp_path / "v.so"))
    for shape, k in (((4, 3, 2), 1), ((2, 3, 4), 2)):
        (y,) = lib.run(None, {"x": x, "shape": np.array(shape), "k": np.array([k])})
        assert_close(y, -np.sort(-x.reshape(shape), -1)[..., :k])


def test_save_and_load(tmp_path, digits_model, digits_x):
    path = digits_model.save(tmp_path / "digits.so")
    assert os.path.exists(path) and os.path.exists(tmp_path / "digits.h")
    lib = strata.load(path, threads=1)
    assert [(i.name, i.shape) for i in lib.inputs] == [("input", ["batch", 64])]
    (y,), seen_out = lib._native.run_traced([digits_x])
    assert seen_out == [y.ctypes.data] and y.flags.owndata  # written by the library, no copy
    assert lib.kernels is None
    assert_close(lib(digits_x), digits_model(digits_x))
    (y,) = lib.run(None, {"input": digits_x[:2]})
    assert y.shape == (2, 10)
    with pytest.raises(strata.InputError, match="dim 1 must be 64"):
        lib(digits_x[:, :3])
    with pytest.raises(strata.Error, match="end in .so"):
        digits_model.save(tmp_path / "digits.bin")
    with pytest.raises(strata.Error, match="loaded from a library"):
        lib.save(tmp_path / "again.so")
    with pytest.raises(strata.CompileError, match="no such file"):
        strata.load(tmp_path / "none.so")
    not_a_library = tmp_path / "fake.so"
    not_a_library.write_bytes(b"not an ELF file")
    with pytest.raises(strata.CompileError):
        strata.load(not_a_library)


ORT_STYLE_SCRIPT = '''
import numpy as np
import strata as ort   # the one line changed from an ONNX Runtime script

sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
inp = sess.get_inputs()[0]
out = sess.get_outputs()[0]
print(inp.name, inp.shape, inp.type, out.name)
x = np.load(X)[:8]
result = sess.run([out.name], {inp.name: x})[0]
print(result.shape, int(result.argmax(1)[0]))
'''


def test_ort_style_script(digits_x):
    script = ORT_STYLE_SCRIPT.replace("MODEL", repr(DIGITS)).replace(
        "X", repr(os.path.join(SOURCE, "models", "digits", "digits_test_x.npy")))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "input ['batch', 64] tensor(float) logits"
    want = int(digits_reference(digits_x[:8]).argmax(1)[0])
    assert lines[1] == f"(8, 10) {want}"


def test_bench(digits_model):
    r = strata.bench(digits_model, iters=5, warmup=1)
    assert r["iters"] == 5 and 0 < r["min_ms"] <= r["median_ms"]


def test_compile_cache(tmp_path, monkeypatch, digits_x):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STRATA_CACHE", raising=False)
    want = strata.compile(DIGITS)(digits_x)
    first = strata.compile(DIGITS, cache=True)
    second = strata.compile(DIGITS, cache=True)
    assert (first.cache, second.cache) == ("miss", "hit")
    assert len(list((tmp_path / "cache" / "strata").glob("*.so"))) == 1
    assert_close(second(digits_x), want)
    assert strata.compile(DIGITS, cache=True, target="x86-64-v3").cache == "miss"
    assert strata.compile(DIGITS).cache is None
    monkeypatch.setenv("STRATA_CACHE", "0")
    assert strata.compile(DIGITS, cache=True).cache is None
