// _strata: the native half of the Python package (docs/python.md). It compiles ONNX files with
// the JIT (driver/CompiledModel.h), loads AOT libraries (driver/SharedModel.h) and runs both on
// numpy arrays: inputs are passed by pointer, JIT outputs are numpy arrays the kernels write into
// directly. The pure-Python layer (strata/__init__.py) converts arguments and exports torch.
#include "strata/driver/Aot.h"
#include "strata/driver/CompileCache.h"
#include "strata/driver/CompiledModel.h"
#include "strata/driver/ShapeSpecializedModel.h"
#include "strata/driver/SharedModel.h"
#include "strata/graph/Specialize.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/import/OnnxImporter.h"
#include "strata/runtime/Executor.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;
using namespace strata;

namespace {

// The exception types (strata.Error and its subclasses), created at import.
PyObject *errorType = nullptr, *compileErrorType = nullptr, *inputErrorType = nullptr,
         *runErrorType = nullptr;

[[noreturn]] void raise(PyObject *type, const std::string &message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// numpy's name for a dtype. bf16 has none: its raw bits travel as uint16.
const char *numpyName(DType t) {
  switch (t) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "uint16";
  case DType::F64:
    return "float64";
  case DType::I8:
    return "int8";
  case DType::I16:
    return "int16";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::U8:
    return "uint8";
  case DType::U16:
    return "uint16";
  case DType::U32:
    return "uint32";
  case DType::U64:
    return "uint64";
  case DType::Bool:
    return "bool";
  }
  return "void";
}

// The driver's options for the Python API's (passes "none": no pipeline).
driver::CompileOptions compileOptions(const std::string &target, const std::string &passes,
                                      int optLevel) {
  driver::CompileOptions co;
  co.target = target;
  co.optLevel = optLevel;
  co.pipeline = passes == "none" ? "" : passes;
  return co;
}

// One input or output as Python sees it: dims are ints, or the symbol's name for symbolic dims.
struct IOInfo {
  std::string name;
  std::vector<std::variant<int64_t, std::string>> shape;
  std::string dtype;       // numpy's name
  std::string strataDType; // strata's ("f32", "bf16", ...)
};

IOInfo describe(const std::string &name, const TensorType &type) {
  IOInfo info{name, {}, numpyName(type.dtype), std::string(dtypeName(type.dtype))};
  for (const Dim &d : type.dims) {
    if (d.isStatic())
      info.shape.emplace_back(d.size);
    else
      info.shape.emplace_back(d.symbolName() ? *d.symbolName() : d.expr.str());
  }
  return info;
}

// The array of `arg` as input `index` of `expected`: C-contiguous and of exactly the expected
// dtype (bf16: uint16 bits), else InputError. The Python layer converts what it may beforehand.
py::array checkedArray(const py::handle &arg, size_t index, const IOInfo &expected) {
  if (!py::isinstance<py::array>(arg))
    raise(inputErrorType, "input " + std::to_string(index) + " ('" + expected.name +
                              "'): expected a numpy array, got " +
                              std::string(py::str(py::type::of(arg).attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(arg);
  if (!a.dtype().equal(py::dtype(expected.dtype)))
    raise(inputErrorType, "input " + std::to_string(index) + " ('" + expected.name +
                              "'): expected dtype " + expected.dtype + ", got " +
                              std::string(py::str(a.dtype())));
  if (!(a.flags() & py::array::c_style))
    raise(inputErrorType, "input " + std::to_string(index) + " ('" + expected.name +
                              "'): the array is not C-contiguous");
  return a;
}

Shape shapeOf(const py::array &a) { return Shape(a.shape(), a.shape() + a.ndim()); }

// The output arrays of one run, allocated when the engine asks (from a thread without the GIL,
// which each allocation takes), so the kernels write into them directly.
struct NumpyOutputs {
  NumpyOutputs(const std::vector<IOInfo> &infos, std::vector<uintptr_t> *seen)
      : infos(infos), seen(seen) {}
  const std::vector<IOInfo> &infos;
  std::vector<uintptr_t> *seen; // the pointers handed out, for tests (or null)
  std::vector<py::array> arrays;
  bool asked = false; // the engine got past checking the inputs

  llvm::Expected<void *> allocate(size_t i, DType dtype, const std::vector<int64_t> &shape) {
    asked = true;
    py::gil_scoped_acquire acquire;
    try {
      arrays.emplace_back(py::dtype(numpyName(dtype)), shape);
    } catch (const std::exception &e) {
      return llvm::createStringError("output " + std::to_string(i) + " ('" + infos[i].name +
                                     "'): " + e.what());
    }
    void *at = arrays.back().mutable_data();
    if (seen)
      seen->push_back(reinterpret_cast<uintptr_t>(at));
    return at;
  }
  auto allocator() {
    return [this](size_t i, DType dtype, const std::vector<int64_t> &shape) {
      return allocate(i, dtype, shape);
    };
  }
  py::list take() {
    py::list result;
    for (py::array &a : arrays)
      result.append(std::move(a));
    return result;
  }
};

// A model compiled in this process. Runs from several Python threads at once each take a run
// context of their own from a pool, so concurrent calls neither race nor serialize; the GIL is
// released while kernels run.
class JitModel {
public:
  JitModel(const std::string &path, unsigned threads, const std::string &target,
           const std::string &passes, int optLevel) {
    driver::CompileOptions co = compileOptions(target, passes, optLevel);
    co.threads = threads;
    threads_ = threads;
    auto imported = importOnnxFile(path);
    if (!imported) {
      // Shape arithmetic that folds only at known sizes: imported again per set of input shapes
      // (docs/runtime.md, "Dynamic shapes: one compilation per input shape").
      std::optional<OnnxInterface> interface = perShapeInterface(path);
      if (!interface)
        raise(compileErrorType, llvm::toString(imported.takeError()));
      llvm::consumeError(imported.takeError());
      std::vector<std::string> names;
      interface_ = interface->inputs;
      for (const auto &[name, type] : interface->inputs) {
        inputs_.push_back(describe(name, type));
        inputDTypes_.push_back(type.dtype);
        names.push_back(name);
      }
      for (const auto &[name, type] : interface->outputs)
        outputs_.push_back(describe(name, type));
      specialized_ = std::make_unique<driver::ShapeSpecializedModel>(
          interface->inputs,
          [path, names](const driver::InputBinding &binding,
                        const std::map<std::string, int64_t> &) {
            return importOnnxFileAtShapes(path, names, binding.shapes, binding.valueMap());
          },
          co, driver::inputIndices(interface->inputs, interface->valueInputs));
      return;
    }
    Graph &g = *imported->graph;
    std::vector<std::pair<std::string, TensorType>> interface;
    for (unsigned i = 0; i < g.numInputs(); ++i) {
      inputs_.push_back(describe(g.input(i)->name(), g.input(i)->type()));
      inputDTypes_.push_back(g.input(i)->type().dtype);
      interface.emplace_back(g.input(i)->name(), g.input(i)->type());
    }
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      outputs_.push_back(describe(g.outputName(i), g.output(i)->type()));
    interface_ = interface;
    if (needsShapeSpecialization(g)) {
      std::shared_ptr<const Graph> shared(std::move(imported->graph));
      specialized_ = std::make_unique<driver::ShapeSpecializedModel>(
          std::move(interface), driver::specializingSource(shared), co);
      return;
    }
    std::string error;
    {
      py::gil_scoped_release release;
      auto m = driver::compileModel(g, co);
      if (m)
        model_ = std::move(*m);
      else
        error = path + ": " + llvm::toString(m.takeError());
    }
    if (!model_)
      raise(compileErrorType, error);
  }

  const std::vector<IOInfo> &inputs() const { return inputs_; }
  const std::vector<IOInfo> &outputs() const { return outputs_; }
  // A model compiled per input shape reports its last compilation's (0 kernels before a run).
  size_t kernels() const {
    if (specialized_)
      return specialized_->lastModel() ? specialized_->lastModel()->numKernels() : 0;
    return model_->numKernels();
  }
  unsigned threads() const {
    if (specialized_)
      return threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
    return model_->threads();
  }
  int64_t arenaBytes() const { return lastArenaBytes_; }

  // Runs on `args` (a sequence of arrays, one per input) and returns the outputs as new arrays.
  // `seenIn`/`seenOut`, when given, receive the data pointers the executor was handed.
  py::list run(const py::sequence &args, std::vector<uintptr_t> *seenIn = nullptr,
               std::vector<uintptr_t> *seenOut = nullptr) {
    if (args.size() != inputs_.size())
      raise(inputErrorType, "the model has " + std::to_string(inputs_.size()) + " inputs, got " +
                                std::to_string(args.size()));
    std::vector<py::array> arrays;
    std::vector<driver::CompiledModel::InputRef> refs;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      arrays.push_back(checkedArray(args[i], i, inputs_[i]));
      refs.push_back({arrays.back().data(), inputDTypes_[i], shapeOf(arrays.back())});
      if (seenIn)
        seenIn->push_back(reinterpret_cast<uintptr_t>(arrays.back().data()));
    }
    if (specialized_)
      return runSpecialized(refs, seenOut);
    std::unique_ptr<runtime::RunContext> ctx = takeContext();
    NumpyOutputs outs{outputs_, seenOut};
    std::string error;
    {
      py::gil_scoped_release release;
      if (llvm::Error err = model_->runInto(*ctx, refs, outs.allocator()))
        error = llvm::toString(std::move(err));
    }
    lastArenaBytes_ = ctx->arenaBytes();
    giveBack(std::move(ctx));
    if (!error.empty())
      raise(outs.asked ? runErrorType : inputErrorType, error);
    return outs.take();
  }

  // Shape hints: checks one set of input shapes against the interface and, for a model compiled
  // per input shape, compiles it for them now. Errors raise CompileError (InputError when the
  // shapes contradict the model's own dims).
  void prepare(const std::vector<Shape> &shapes) {
    std::string error;
    bool inputError = false;
    {
      py::gil_scoped_release release;
      if (specialized_ && specialized_->valueInputs().empty()) {
        std::lock_guard<std::mutex> lock(specializedMutex_);
        compiledFor({shapes, {}}, error, inputError);
      } else { // (inputs whose values decide shapes: compiled when their values are known)
        auto sizes = bindInputSymbols(interface_, shapes);
        if (!sizes) {
          inputError = true;
          error = llvm::toString(sizes.takeError());
        }
      }
    }
    if (!error.empty())
      raise(inputError ? inputErrorType : compileErrorType, error);
  }

  // run(), plus the input and output pointers the executor was handed (for tests of zero-copy).
  py::tuple runTraced(const py::sequence &args) {
    std::vector<uintptr_t> in, out;
    py::list outs = run(args, &in, &out);
    return py::make_tuple(outs, in, out);
  }

private:
  // A model compiled per input shape: one run at a time (a run may compile, and a later shape may
  // drop an older compilation), each in a context of its own.
  py::list runSpecialized(const std::vector<driver::CompiledModel::InputRef> &refs,
                          std::vector<uintptr_t> *seenOut) {
    driver::InputBinding binding;
    for (const auto &r : refs)
      binding.shapes.push_back(r.shape);
    std::vector<driver::CompiledModel::InputRef> runtimeRefs;
    const std::vector<size_t> &valueInputs = specialized_->valueInputs();
    for (size_t i = 0; i < refs.size(); ++i) {
      if (std::find(valueInputs.begin(), valueInputs.end(), i) == valueInputs.end()) {
        runtimeRefs.push_back(refs[i]);
        continue;
      }
      Tensor value(refs[i].dtype, refs[i].shape);
      if (llvm::Error err =
              driver::checkValueInputSize(interface_[i].first, value.numElements()))
        raise(inputErrorType, llvm::toString(std::move(err)));
      if (value.byteSize())
        std::memcpy(value.rawData(), refs[i].data, value.byteSize());
      binding.values.emplace_back(interface_[i].first, std::move(value));
    }
    NumpyOutputs outs{outputs_, seenOut};
    std::string error;
    bool inputError = false;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(specializedMutex_);
      if (driver::CompiledModel *model = compiledFor(std::move(binding), error, inputError)) {
        std::unique_ptr<runtime::RunContext> ctx = model->createContext();
        if (llvm::Error err = model->runInto(*ctx, runtimeRefs, outs.allocator()))
          error = llvm::toString(std::move(err));
        lastArenaBytes_ = ctx->arenaBytes();
      }
    }
    if (!error.empty())
      raise(inputError || !outs.asked ? inputErrorType : runErrorType, error);
    return outs.take();
  }

  // The model for `binding` (compiled on first sight), or null with the error and whether the
  // inputs themselves were at fault. Call with specializedMutex_ held.
  driver::CompiledModel *compiledFor(driver::InputBinding binding, std::string &error,
                                     bool &inputError) {
    auto model = specialized_->forBinding(std::move(binding));
    if (model)
      return *model;
    inputError = specialized_->lastErrorWasBinding();
    error = llvm::toString(model.takeError());
    return nullptr;
  }

  std::unique_ptr<runtime::RunContext> takeContext() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.empty())
      return model_->createContext();
    auto ctx = std::move(idle_.back());
    idle_.pop_back();
    return ctx;
  }
  void giveBack(std::unique_ptr<runtime::RunContext> ctx) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(ctx));
  }

  std::vector<IOInfo> inputs_, outputs_;
  std::vector<DType> inputDTypes_;
  std::vector<std::pair<std::string, TensorType>> interface_; // the inputs as declared
  std::unique_ptr<driver::CompiledModel> model_;
  std::unique_ptr<driver::ShapeSpecializedModel> specialized_;
  std::mutex specializedMutex_;
  unsigned threads_ = 0;
  std::mutex mutex_;
  // Declared after the model: contexts are destroyed first.
  std::vector<std::unique_ptr<runtime::RunContext>> idle_;
  int64_t lastArenaBytes_ = 0;
};

// An AOT library (`strata compile -o m.so`, or CompiledModel.save) driven through its C API. The
// library keeps one run state, so runs take a lock; its kernels write the outputs straight into
// the returned arrays (strata_model_run_into; libraries before ABI 4 copy them there once).
class LibraryModel {
public:
  LibraryModel(const std::string &path, unsigned threads) {
    auto m = driver::SharedModel::open(path, threads);
    if (!m)
      raise(compileErrorType, llvm::toString(m.takeError()));
    model_ = std::move(*m);
    for (const driver::IOSpec &s : model_->inputs())
      inputs_.push_back(describe(s.name, s.type));
    for (const driver::IOSpec &s : model_->outputs())
      outputs_.push_back(describe(s.name, s.type));
  }

  const std::vector<IOInfo> &inputs() const { return inputs_; }
  const std::vector<IOInfo> &outputs() const { return outputs_; }

  py::list run(const py::sequence &args) {
    if (args.size() != inputs_.size())
      raise(inputErrorType, "the model has " + std::to_string(inputs_.size()) + " inputs, got " +
                                std::to_string(args.size()));
    std::vector<py::array> arrays;
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      arrays.push_back(checkedArray(args[i], i, inputs_[i]));
      const py::array &a = arrays.back();
      DType dtype = model_->inputs()[i].type.dtype;
      size_t bytes = static_cast<size_t>(a.nbytes());
      // A view of the array's memory, alive for the call (the arrays above hold it).
      tensors.emplace_back(dtype, shapeOf(a), std::make_shared<Buffer>(a.data(), bytes, nullptr));
    }
    NumpyOutputs outs{outputs_, seenOut_};
    std::string error;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (llvm::Error err = model_->runInto(tensors, outs.allocator()))
        error = llvm::toString(std::move(err));
    }
    if (!error.empty())
      raise(runErrorType, error);
    return outs.take();
  }

  // run(), plus the output pointers the library was handed (for tests of zero-copy).
  py::tuple runTraced(const py::sequence &args) {
    std::vector<uintptr_t> out;
    seenOut_ = &out;
    py::list outs;
    try {
      outs = run(args);
    } catch (...) {
      seenOut_ = nullptr;
      throw;
    }
    seenOut_ = nullptr;
    return py::make_tuple(outs, out);
  }

private:
  std::unique_ptr<driver::SharedModel> model_;
  std::vector<IOInfo> inputs_, outputs_;
  std::mutex mutex_;
  std::vector<uintptr_t> *seenOut_ = nullptr;
};

// `strata compile MODEL.onnx -o LIBRARY.so` with these options: the library and its header.
void compileLibrary(const std::string &path, const std::string &output, const std::string &target,
                    const std::string &passes, int optLevel) {
  auto imported = importOnnxFile(path);
  if (!imported)
    raise(compileErrorType, llvm::toString(imported.takeError()));
  std::string error;
  {
    py::gil_scoped_release release;
    if (llvm::Error err = driver::compileLibrary(*imported->graph,
                                                 compileOptions(target, passes, optLevel), output,
                                                 /*withHeader=*/true))
      error = path + ": " + llvm::toString(std::move(err));
  }
  if (!error.empty())
    raise(compileErrorType, error);
}

py::dict infoDict(const IOInfo &info) {
  py::dict d;
  d["name"] = info.name;
  py::list shape;
  for (const auto &dim : info.shape) {
    if (std::holds_alternative<int64_t>(dim))
      shape.append(std::get<int64_t>(dim));
    else
      shape.append(std::get<std::string>(dim));
  }
  d["shape"] = shape;
  d["dtype"] = info.dtype;
  d["strata_dtype"] = info.strataDType;
  return d;
}

py::list infoList(const std::vector<IOInfo> &infos) {
  py::list l;
  for (const IOInfo &i : infos)
    l.append(infoDict(i));
  return l;
}

} // namespace

PYBIND11_MODULE(_strata, m) {
  m.doc() = "strata's native module; use the `strata` package";
  errorType = PyErr_NewExceptionWithDoc("strata.Error", "Base class of strata's errors.",
                                        PyExc_RuntimeError, nullptr);
  compileErrorType = PyErr_NewExceptionWithDoc(
      "strata.CompileError", "A model could not be read, compiled or loaded.", errorType, nullptr);
  inputErrorType = PyErr_NewExceptionWithDoc(
      "strata.InputError", "Inputs that do not fit the model (count, dtype, shape).", errorType,
      nullptr);
  runErrorType = PyErr_NewExceptionWithDoc(
      "strata.RunError", "A run failed after its inputs were accepted.", errorType, nullptr);
  m.attr("Error") = py::handle(errorType);
  m.attr("CompileError") = py::handle(compileErrorType);
  m.attr("InputError") = py::handle(inputErrorType);
  m.attr("RunError") = py::handle(runErrorType);
  m.attr("default_passes") = std::string(PassManager::defaultPipeline());

  py::class_<JitModel>(m, "JitModel")
      .def(py::init<const std::string &, unsigned, const std::string &, const std::string &, int>(),
           py::arg("path"), py::arg("threads") = 0, py::arg("target") = "host",
           py::arg("passes") = "default", py::arg("opt_level") = 2)
      .def_property_readonly("inputs", [](const JitModel &j) { return infoList(j.inputs()); })
      .def_property_readonly("outputs", [](const JitModel &j) { return infoList(j.outputs()); })
      .def_property_readonly("kernels", &JitModel::kernels)
      .def_property_readonly("threads", &JitModel::threads)
      .def_property_readonly("arena_bytes", &JitModel::arenaBytes)
      .def("run", [](JitModel &j, const py::sequence &args) { return j.run(args); })
      .def("prepare", &JitModel::prepare, py::arg("shapes"),
           "check one set of input shapes and compile for them when compiled per shape")
      .def("run_traced", &JitModel::runTraced,
           "run(), returning (outputs, input pointers, output pointers) the executor was handed");

  py::class_<LibraryModel>(m, "LibraryModel")
      .def(py::init<const std::string &, unsigned>(), py::arg("path"), py::arg("threads") = 0)
      .def_property_readonly("inputs", [](const LibraryModel &l) { return infoList(l.inputs()); })
      .def_property_readonly("outputs", [](const LibraryModel &l) { return infoList(l.outputs()); })
      .def("run", &LibraryModel::run)
      .def("run_traced", &LibraryModel::runTraced,
           "run(), returning (outputs, output pointers) the library was handed");

  m.def("compile_library", &compileLibrary, py::arg("path"), py::arg("output"),
        py::arg("target") = "host", py::arg("passes") = "default", py::arg("opt_level") = 2);
  m.def(
      "cache_path",
      [](const std::string &path, const std::string &target, const std::string &passes,
         int optLevel) -> std::string {
        auto entry = driver::compileCachePath(path, compileOptions(target, passes, optLevel));
        if (!entry)
          raise(compileErrorType, llvm::toString(entry.takeError()));
        return *entry;
      },
      py::arg("path"), py::arg("target") = "host", py::arg("passes") = "default",
      py::arg("opt_level") = 2,
      "The compile cache's library for this model and these options ('' when off)");
  m.def("hardware_threads", [] { return std::max(1u, std::thread::hardware_concurrency()); });
}
