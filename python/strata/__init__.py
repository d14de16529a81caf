"""strata: compile ONNX models and torch modules to native code and run them on numpy arrays.

    import strata
    model = strata.compile("model.onnx")           # or an onnx.ModelProto, or a torch.nn.Module
    (y,) = model.run(None, {"input": x})          # ONNX Runtime's calling convention
    y = model(x)                                   # or positionally
    model.save("model.so")                         # the AOT library and its C header
    again = strata.load("model.so")

The reference is docs/python.md.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _strata
from ._strata import CompileError, Error, InputError, RunError

__all__ = [
    "compile", "load", "bench", "CompiledModel", "InferenceSession", "TensorInfo",
    "Error", "CompileError", "InputError", "RunError", "default_passes",
]
__version__ = "0.2.0"

default_passes: str = _strata.default_passes

# ONNX Runtime's type strings, for TensorInfo.type.
_ORT_TYPES = {
    "float32": "tensor(float)", "float16": "tensor(float16)", "float64": "tensor(double)",
    "int8": "tensor(int8)", "int16": "tensor(int16)", "int32": "tensor(int32)",
    "int64": "tensor(int64)", "uint8": "tensor(uint8)", "uint16": "tensor(uint16)",
    "uint32": "tensor(uint32)", "uint64": "tensor(uint64)", "bool": "tensor(bool)",
}


class TensorInfo:
    """An input or output: its name, shape (ints; the symbol's name, or None when unnamed, for a
    dim bound at run time) and numpy dtype. `type` is ONNX Runtime's string ("tensor(float)")."""

    def __init__(self, info: Dict[str, Any]):
        self.name: str = info["name"]
        self.shape: List[Union[int, str, None]] = [d if d != "" else None for d in info["shape"]]
        self.dtype: np.dtype = np.dtype(info["dtype"])
        self.strata_dtype: str = info["strata_dtype"]
        self.type: str = ("tensor(bfloat16)" if self.strata_dtype == "bf16"
                          else _ORT_TYPES.get(info["dtype"], "tensor(" + info["dtype"] + ")"))

    def __repr__(self) -> str:
        return f"TensorInfo(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name})"


def _as_array(value: Any, info: TensorInfo, index: int) -> np.ndarray:
    """`value` as a C-contiguous array of the input's dtype: passed through untouched when it is
    one already (zero-copy), else converted once; refused when no safe conversion exists."""
    if type(value) is not np.ndarray:
        if type(value).__module__.startswith("torch"):
            import torch
            if isinstance(value, torch.Tensor):
                value = value.detach().cpu().numpy()  # shares the tensor's memory
        if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
            value = np.from_dlpack(value)
    array = np.asarray(value)

    def refuse(why: str) -> InputError:  # only built on the error path
        return InputError(f"input {index} ('{info.name}'): {why}")

    if array.dtype != info.dtype:
        if not np.can_cast(array.dtype, info.dtype, casting="same_kind"):
            raise refuse(f"expected {info.dtype.name} of shape {info.shape}, got "
                         f"{array.dtype.name}; convert it explicitly")
        array = array.astype(info.dtype)
    if array.ndim != len(info.shape):
        raise refuse(f"expected rank {len(info.shape)} (shape {info.shape}), got shape "
                     f"{list(array.shape)}")
    for axis, (want, got) in enumerate(zip(info.shape, array.shape)):
        if want != got and isinstance(want, int):
            raise refuse(f"dim {axis} must be {want} (shape {info.shape}), got shape "
                         f"{list(array.shape)}")
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def _check_symbols(arrays: Sequence[np.ndarray], infos: Sequence[TensorInfo]) -> None:
    """Every named symbol takes one value across the inputs."""
    bound: Dict[str, tuple] = {}
    for array, info in zip(arrays, infos):
        for axis, dim in enumerate(info.shape):
            if isinstance(dim, str):
                size = array.shape[axis]
                if dim in bound and bound[dim][0] != size:
                    raise InputError(
                        f"input '{info.name}': dim {axis} ('{dim}') is {size}, but input "
                        f"'{bound[dim][1]}' has {dim} = {bound[dim][0]}")
                bound.setdefault(dim, (size, info.name))


class CompiledModel:
    """A model ready to run: compiled in this process by strata.compile, or an AOT library
    opened by strata.load. Calls may come from several threads at once."""

    def __init__(self, native, source: Optional[str], options: Dict[str, Any],
                 tmpdir: Optional[tempfile.TemporaryDirectory] = None):
        self._native = native
        self._source = source      # the ONNX file it was compiled from (None for a library)
        self._options = options
        self._tmpdir = tmpdir      # holds an exported or serialized model for save()
        self.inputs: List[TensorInfo] = [TensorInfo(i) for i in native.inputs]
        self.outputs: List[TensorInfo] = [TensorInfo(o) for o in native.outputs]
        self._input_index = {info.name: i for i, info in enumerate(self.inputs)}
        # compile(cache=True): "hit" or "miss" (then written); None otherwise.
        self.cache: Optional[str] = None

    def _arrays(self, values: Sequence[Any]) -> List[np.ndarray]:
        if len(values) != len(self.inputs):
            names = ", ".join(i.name for i in self.inputs)
            raise InputError(f"the model takes {len(self.inputs)} inputs ({names}), got "
                             f"{len(values)}")
        arrays = [_as_array(v, info, i) for i, (v, info) in enumerate(zip(values, self.inputs))]
        _check_symbols(arrays, self.inputs)
        return arrays

    def __call__(self, *values: Any):
        """Runs on the inputs in order; returns the output array, or a tuple of them."""
        outputs = self._native.run(self._arrays(values))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, output_names: Optional[Sequence[str]], feed: Dict[str, Any],
            run_options: Any = None) -> List[np.ndarray]:
        """ONNX Runtime's convention: inputs by name, the outputs named (None: all) as a list."""
        del run_options  # accepted for ONNX Runtime compatibility
        unknown = [name for name in feed if name not in self._input_index]
        if unknown:
            raise InputError(f"the model has no input named '{unknown[0]}' (inputs: "
                             f"{', '.join(i.name for i in self.inputs)})")
        missing = [i.name for i in self.inputs if i.name not in feed]
        if missing:
            raise InputError(f"missing input '{missing[0]}'")
        outputs = self._native.run(self._arrays([feed[i.name] for i in self.inputs]))
        if output_names is None:
            return list(outputs)
        index = {o.name: i for i, o in enumerate(self.outputs)}
        for name in output_names:
            if name not in index:
                raise InputError(f"the model has no output named '{name}' (outputs: "
                                 f"{', '.join(o.name for o in self.outputs)})")
        return [outputs[index[name]] for name in output_names]

    def save(self, path: Union[str, os.PathLike]) -> str:
        """Writes the model as an AOT shared library (and its C header next to it, model.h),
        which strata.load, `strata run` and C programs use. Returns the library's path."""
        path = os.fspath(path)
        if self._source is None:
            raise Error("this model was loaded from a library; copy that file instead")
        if not path.endswith(".so"):
            raise Error(f"{path}: a library's name must end in .so")
        _strata.compile_library(self._source, path, target=self._options["target"],
                                passes=self._options["passes"],
                                opt_level=self._options["opt_level"])
        return path

    @property
    def kernels(self) -> Optional[int]:
        """Kernels in the plan (None for a loaded library)."""
        return getattr(self._native, "kernels", None)

    @property
    def threads(self) -> Optional[int]:
        return getattr(self._native, "threads", None)

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.dtype.name}{i.shape}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.dtype.name}{o.shape}" for o in self.outputs)
        return f"<strata.CompiledModel ({ins}) -> ({outs})>"


def _export_torch(module, example_inputs, path: str, dynamic_axes, opset: int,
                  input_names, output_names) -> None:
    import torch
    if example_inputs is None:
        raise CompileError("compiling a torch.nn.Module needs example_inputs (a tuple of "
                           "tensors) to export it")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    args = tuple(torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in example_inputs)
    if input_names is None:
        input_names = [f"input{i}" if len(args) > 1 else "input" for i in range(len(args))]
    was_training = module.training
    module.eval()
    try:
        # Under the caller's grad mode: with grad enabled, modules such as
        # TransformerEncoderLayer keep off fused fast paths that have no ONNX export.
        torch.onnx.export(module, args, path, input_names=list(input_names),
                          output_names=list(output_names) if output_names else None,
                          dynamic_axes=dynamic_axes, opset_version=opset,
                          do_constant_folding=True)
    except Exception as e:  # torch's exporter raises many types
        raise CompileError(f"torch.onnx.export failed: {e}") from e
    finally:
        module.train(was_training)


def _model_file(model, example_inputs, dynamic_axes, opset, input_names, output_names):
    """The ONNX file to compile `model` from, and the temporary folder holding it, if any."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise CompileError(f"{path}: no such file")
        return path, None
    tmpdir = tempfile.TemporaryDirectory(prefix="strata-")
    path = os.path.join(tmpdir.name, "model.onnx")
    if isinstance(model, (bytes, bytearray, memoryview)):
        with open(path, "wb") as f:
            f.write(bytes(model))
        return path, tmpdir
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return path, tmpdir
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(model, torch.nn.Module):
        _export_torch(model, example_inputs, path, dynamic_axes, opset, input_names, output_names)
        return path, tmpdir
    tmpdir.cleanup()
    raise CompileError(f"cannot compile a {type(model).__name__}: expected a path to an .onnx "
                       "file, an onnx.ModelProto, bytes of one, or a torch.nn.Module")


def compile(model, *, example_inputs=None, threads: int = 0, target: str = "host",
            passes: str = "default", shapes=None, dynamic_axes=None, opset: int = 13,
            input_names=None, output_names=None, opt_level: int = 2,
            cache: bool = False) -> CompiledModel:
    """Compiles `model` (a path to .onnx, an onnx.ModelProto, its bytes, or a torch.nn.Module
    exported with torch.onnx.export on `example_inputs`, `dynamic_axes` passed through) for
    `target` ("host", "x86-64-v3", "x86-64-v2"). threads: for parallel loops, 0 = one per core.
    passes: "default", "none" or a pipeline (`strata-opt --list-passes`). shapes: shape hints, a
    dict {input name: shape} or a list of them; each is checked against the model's inputs, and a
    model compiled per input shape (symbolic dims beyond a batch) is compiled for each now instead
    of on its first call at those shapes; any other shape still works. cache: keep the compiled model
    in the compile cache `strata run` uses ($XDG_CACHE_HOME/strata) and load it from there when
    the same model, target and options come again; such a model runs one call at a time."""
    hints = [] if shapes is None else [shapes] if isinstance(shapes, dict) else list(shapes)
    for hint in hints:
        if not isinstance(hint, dict):
            raise CompileError(f"shapes= takes a dict {{input name: shape}} or a list of them, "
                               f"got {type(hint).__name__}")
    if threads < 0:
        raise CompileError(f"threads must be >= 0, got {threads}")
    path, tmpdir = _model_file(model, example_inputs, dynamic_axes, opset, input_names,
                               output_names)
    options = {"target": target, "passes": passes, "opt_level": opt_level}
    cached = _strata.cache_path(path, **options) if cache else ""
    if cached:
        hit = os.path.exists(cached)
        try:
            if not hit:
                os.makedirs(os.path.dirname(cached), exist_ok=True)
                _strata.compile_library(path, cached, **options)  # staged, renamed into place
        except CompileError:
            # No library for it (symbolic dims beyond a batch: compiled per input shape below,
            # or a model that fails, which the in-memory compile reports the same way).
            cached = ""
        if cached:
            library = _strata.LibraryModel(cached, threads=threads)
            for hint in hints:  # a library takes what its dims say: check the hints against them
                for info in map(TensorInfo, library.inputs):
                    want = hint.get(info.name)
                    ok = want is not None and len(want) == len(info.shape) and all(
                        not isinstance(d, int) or d == int(w) for d, w in zip(info.shape, want))
                    if not ok:
                        raise InputError(f"shapes= {hint}: input '{info.name}' is {info.shape}")
            compiled = CompiledModel(library, path, options, tmpdir)
            compiled.cache = "hit" if hit else "miss"
            return compiled
    native = _strata.JitModel(path, threads=threads, **options)
    for hint in hints:
        names = [i["name"] for i in native.inputs]
        unknown = sorted(set(hint) - set(names))
        missing = [n for n in names if n not in hint]
        if unknown or missing:
            raise CompileError(f"shapes= {hint}: " + (f"no input named {unknown}; " if unknown
                                                      else "") +
                               (f"no shape for {missing}; " if missing else "") +
                               f"the inputs are {names}")
        native.prepare([list(map(int, hint[n])) for n in names])
    return CompiledModel(native, path, options, tmpdir)


def load(path: Union[str, os.PathLike], *, threads: int = 0) -> CompiledModel:
    """Opens an AOT library written by CompiledModel.save or `strata compile -o m.so`."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CompileError(f"{path}: no such file")
    return CompiledModel(_strata.LibraryModel(os.path.abspath(path), threads=threads), None, {})


class InferenceSession:
    """ONNX Runtime's InferenceSession over strata, so ORT code switches with one import:
    get_inputs(), get_outputs(), run(output_names, input_feed). sess_options and providers are
    accepted and ignored (strata runs on the CPU it compiles for); threads= sets the threads."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 *, threads: int = 0, **kwargs):
        del sess_options, providers, provider_options
        self._model = compile(path_or_bytes, threads=threads, **kwargs)

    def get_inputs(self) -> List[TensorInfo]:
        return list(self._model.inputs)

    def get_outputs(self) -> List[TensorInfo]:
        return list(self._model.outputs)

    def get_providers(self) -> List[str]:
        return ["StrataExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None) -> List[np.ndarray]:
        return self._model.run(output_names, input_feed, run_options)


def bench(model: CompiledModel, *inputs, iters: int = 20, warmup: int = 3) -> Dict[str, float]:
    """Times model(*inputs) from Python (the per-call overhead included): median, min and mean
    milliseconds over `iters` calls after `warmup` untimed ones. Inputs default to seeded
    random values of each input's dtype, symbolic dims 1."""
    if not inputs:
        rng = np.random.default_rng(0)
        inputs = tuple(
            (rng.uniform(-1, 1, [d if isinstance(d, int) else 1 for d in i.shape])
             if i.dtype.kind == "f" else
             rng.integers(0, 4, [d if isinstance(d, int) else 1 for d in i.shape])).astype(i.dtype)
            for i in model.inputs)
    for _ in range(warmup):
        model(*inputs)
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        model(*inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times),
            "mean_ms": statistics.fmean(times), "iters": iters}
