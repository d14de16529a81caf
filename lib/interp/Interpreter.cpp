// The interpreter driver: input checking and symbol binding, op-by-op evaluation through a
// dispatch table filled by the kernel families, freeing of dead intermediates, and a check of
// every result against its op's static type (which catches type-inference bugs).
#include "strata/interp/Interpreter.h"
#include "strata/graph/ControlFlow.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"

#include "Kernels.h"

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>

namespace strata {
namespace interp {

Shape broadcastShapes(const Shape &a, const Shape &b) {
  std::optional<Shape> out = shape::broadcastShapes(a, b);
  if (!out)
    throw InterpError("cannot broadcast shapes [" + shapeToString(a) + "] and [" +
                      shapeToString(b) + "]");
  return std::move(*out);
}

} // namespace interp

namespace {

using interp::InterpError;

// The symbol bindings of the graphs being interpreted, innermost last (a kernel's region or an
// if/loop body sees the symbols its enclosing graphs bound).
using SymbolLookup = std::function<std::optional<int64_t>(const std::string &)>;
thread_local std::vector<const SymbolLookup *> activeBindings;

struct ActiveBindings {
  explicit ActiveBindings(const SymbolLookup &l) { activeBindings.push_back(&l); }
  ~ActiveBindings() { activeBindings.pop_back(); }
  ActiveBindings(const ActiveBindings &) = delete;
  ActiveBindings &operator=(const ActiveBindings &) = delete;
};

} // namespace

namespace interp {

int64_t boundSize(const Dim &d) {
  if (d.isStatic())
    return d.size;
  std::optional<int64_t> v = d.expr.evaluate([](const std::string &s) -> std::optional<int64_t> {
    for (auto it = activeBindings.rbegin(); it != activeBindings.rend(); ++it)
      if (std::optional<int64_t> size = (**it)(s))
        return size;
    return std::nullopt;
  });
  if (!v)
    throw InterpError("symbolic dim " + d.str() + " has no size here (a symbol no input bound)");
  return *v;
}

std::vector<int64_t> boundSizes(const std::vector<Dim> &dims) {
  std::vector<int64_t> sizes;
  for (const Dim &d : dims)
    sizes.push_back(boundSize(d));
  return sizes;
}

} // namespace interp

namespace {
using interp::KernelFn;
using interp::Tensors;

const std::array<KernelFn, static_cast<size_t>(OpKind::NumKinds)> &kernelTable() {
  static const auto table = [] {
    std::array<KernelFn, static_cast<size_t>(OpKind::NumKinds)> t{};
    interp::registerElementwiseKernels(t.data());
    interp::registerDataMovementKernels(t.data());
    interp::registerStructuredKernels(t.data());
    interp::registerLayoutKernels(t.data());
    return t;
  }();
  return table;
}

// An error of the interpreter not tied to one op.
llvm::Error interpError(std::string message) {
  return makeError(Diagnostic::error(std::move(message)).inPhase("interp"));
}

// Runs region `r` of `op` on `inputs`; throws InterpError naming the region on failure.
Tensors runRegion(const Op &op, unsigned r, const Tensors &inputs) {
  auto results = interpret(op.region(r), inputs);
  if (!results)
    throw InterpError("in region " + std::to_string(r) + ": " +
                      llvm::toString(results.takeError()));
  return std::move(*results);
}

bool truthOf(const Tensor &t, const char *what) {
  if (t.numElements() != 1)
    throw InterpError(std::string(what) + " has " + std::to_string(t.numElements()) +
                      " elements; expected one");
  return t.getDouble(0) != 0;
}

// if: the region its condition picks; loop: the body until the trip count or its condition
// ends it, carried values fed back, scan outputs stacked (graph/ControlFlow.h).
Tensors runControlFlow(const Op &op, const Tensors &operands) {
  if (op.kind() == OpKind::If) {
    if (op.numRegions() != 2)
      throw InterpError("an if needs two regions");
    Tensors captures(operands.begin() + 1, operands.end());
    return runRegion(op, truthOf(operands[0], "the condition") ? 0 : 1, captures);
  }
  auto layout = loopLayout(op);
  if (!layout)
    throw InterpError(llvm::toString(layout.takeError()));
  const int64_t trips = operands[0].numElements() == 1
                            ? operands[0].getInt(0)
                            : throw InterpError("the trip count must have one element");
  bool running = truthOf(operands[1], "the condition");
  const unsigned nc = layout->numCarried;
  Tensors carried(operands.begin() + 2, operands.begin() + 2 + nc);
  Tensors captures(operands.begin() + 2 + nc, operands.end());
  std::vector<Tensors> scans(layout->numScans);
  // Each scan result's elements so far: a loop its condition never ends stops at the tensor
  // limit, as the compiled engines' growing storage does (unless its entries are empty).
  std::vector<int64_t> scanElements(layout->numScans, 0);
  const int64_t maxElements = processLimits().maxTensorElements;
  int64_t iter = 0;
  for (; running && iter < trips; ++iter) {
    Tensors in{Tensor::scalar(DType::I64, static_cast<double>(iter)),
               Tensor::scalar(DType::Bool, 1.0)};
    in.insert(in.end(), carried.begin(), carried.end());
    in.insert(in.end(), captures.begin(), captures.end());
    Tensors out = runRegion(op, 0, in);
    running = truthOf(out[0], "the body's condition");
    for (unsigned k = 0; k < nc; ++k) {
      if (out[1 + k].shape() != carried[k].shape())
        throw InterpError("loop-carried value " + std::to_string(k) + " changed shape");
      carried[k] = out[1 + k];
    }
    for (unsigned k = 0; k < layout->numScans; ++k) {
      scanElements[k] += out[1 + nc + k].numElements();
      if (scanElements[k] > maxElements)
        throw InterpError("after " + std::to_string(iter + 1) + " iterations scan output " +
                          std::to_string(k) + " " + tooManyElements(scanElements[k], maxElements));
      scans[k].push_back(out[1 + nc + k]);
    }
  }
  Tensors results = carried;
  for (unsigned k = 0; k < layout->numScans; ++k) {
    const TensorType &type = op.result(nc + k)->type();
    const Dim &length = type.dims.at(0);
    if (length.isStatic() && length.size != iter)
      throw InterpError("the loop ran " + std::to_string(iter) + " iterations but its scan output " +
                        std::to_string(k) + " has " + std::to_string(length.size) +
                        " entries (a loop with scan outputs must run all of them)");
    Shape item;
    if (!scans[k].empty()) {
      item = scans[k][0].shape();
    } else {
      // No entry: its dims as the enclosing sizes give them; one the body would have decided
      // (the result's own symbol, bound by nothing yet) is 0, as the compiled engines give it.
      for (size_t d = 1; d < type.dims.size(); ++d) {
        int64_t size = 0;
        try {
          size = interp::boundSize(type.dims[d]);
        } catch (const InterpError &) {
        }
        item.push_back(size);
      }
    }
    Shape shape{iter};
    shape.insert(shape.end(), item.begin(), item.end());
    Tensor stacked(type.dtype, shape);
    size_t at = 0;
    for (const Tensor &t : scans[k]) {
      if (t.shape() != item)
        throw InterpError("scan output " + std::to_string(k) + " changed shape across iterations");
      if (t.byteSize())
        std::memcpy(static_cast<uint8_t *>(stacked.rawData()) + at, t.rawData(), t.byteSize());
      at += t.byteSize();
    }
    results.push_back(std::move(stacked));
  }
  return results;
}

// Runs the kernel of `op`; throws InterpError or whatever the kernel throws.
Tensors runKernel(const Op &op, const Tensors &operands) {
  const OpInfo &info = op.info();
  const int count = static_cast<int>(operands.size());
  if (count < info.minOperands || (info.maxOperands >= 0 && count > info.maxOperands))
    throw InterpError("got " + std::to_string(count) + " operands, expected " +
                      (info.minOperands == info.maxOperands
                           ? std::to_string(info.minOperands)
                           : std::to_string(info.minOperands) + ".." +
                                 (info.maxOperands < 0 ? std::string("")
                                                       : std::to_string(info.maxOperands))));
  for (size_t i = 0; i < operands.size(); ++i)
    if (!operands[i].valid())
      throw InterpError("operand " + std::to_string(i) + " has no data");
  // A fused kernel means its region: interpret it on the operands (a kernel is closed, so the
  // operands are all it reads).
  if (op.kind() == OpKind::Kernel) {
    if (op.numRegions() != 1)
      throw InterpError("a kernel needs exactly one region, has " +
                        std::to_string(op.numRegions()));
    auto results = interpret(op.region(0), operands);
    if (!results)
      throw InterpError("in its region: " + llvm::toString(results.takeError()));
    if (results->size() != op.numResults())
      throw InterpError("region produced " + std::to_string(results->size()) +
                        " results, expected " + std::to_string(op.numResults()));
    return std::move(*results);
  }
  if (isControlFlow(op))
    return runControlFlow(op, operands);
  KernelFn fn = kernelTable()[static_cast<size_t>(op.kind())];
  if (!fn)
    throw InterpError("no interpreter kernel for this op");
  Tensors results = fn(op, operands);
  if (static_cast<int>(results.size()) != info.numResults)
    throw InterpError("kernel produced " + std::to_string(results.size()) + " results, expected " +
                      std::to_string(info.numResults));
  return results;
}

// Runs one op, turning any exception into an error naming the op.
llvm::Expected<Tensors> runOp(const Op &op, const Tensors &operands) {
  try {
    return runKernel(op, operands);
  } catch (const std::exception &e) {
    return makeError(diagnose(op, e.what()).inPhase("interp"));
  }
}

// Symbol bindings: each symbol gets one size, fixed by the first plain `?name` dim it appears as;
// a dim that is a formula (`?(fdiv(h+1,2))`) is checked against its value once its symbols are
// bound, and kept for later while some are not.
class SymbolBindings {
public:
  // Returns an empty string when `size` agrees with `dim` (binding a new symbol), otherwise a
  // description of the conflict.
  std::string bind(const Dim &dim, int64_t size, const std::string &where) {
    if (dim.isStatic())
      return dim.size == size ? "" : "expected " + std::to_string(dim.size);
    if (const std::string *name = dim.symbolName()) {
      auto [it, inserted] = sizes_.try_emplace(*name, Binding{size, where});
      if (inserted || it->second.size == size)
        return "";
      return "expected " + dim.str() + " = " + std::to_string(it->second.size) + " (bound by " +
             it->second.where + ")";
    }
    std::optional<int64_t> value = valueOf(dim.expr);
    if (!value) {
      deferred_.push_back({dim, size, where});
      return "";
    }
    return *value == size ? "" : "expected " + dim.str() + " = " + std::to_string(*value);
  }

  // Checks the formulas `bind` could not evaluate when it saw them; the first conflict or one
  // still unbound is described (empty when all agree).
  std::string checkDeferred() {
    std::vector<Deferred> pending;
    pending.swap(deferred_);
    for (const Deferred &d : pending) {
      std::optional<int64_t> value = valueOf(d.dim.expr);
      if (!value)
        return d.where + ": dim " + d.dim.str() + " uses a symbol no input dim binds";
      if (*value != d.size)
        return d.where + ": expected " + d.dim.str() + " = " + std::to_string(*value) + ", got " +
               std::to_string(d.size);
    }
    return "";
  }

  // The bound size of a plain symbol, if bound.
  std::optional<int64_t> sizeOf(const std::string &name) const {
    auto it = sizes_.find(name);
    return it == sizes_.end() ? std::nullopt : std::optional<int64_t>(it->second.size);
  }

private:
  // Under this graph's bindings, then those of the graphs enclosing it (a region's input dims
  // may be formulas of sizes its enclosing graph bound, data-dependent ones included).
  std::optional<int64_t> valueOf(const SymExpr &e) const {
    return e.evaluate([&](const std::string &n) -> std::optional<int64_t> {
      if (auto it = sizes_.find(n); it != sizes_.end())
        return it->second.size;
      for (auto it = activeBindings.rbegin(); it != activeBindings.rend(); ++it)
        if (std::optional<int64_t> size = (**it)(n))
          return size;
      return std::nullopt;
    });
  }
  struct Binding {
    int64_t size;
    std::string where;
  };
  struct Deferred {
    Dim dim;
    int64_t size;
    std::string where;
  };
  std::map<std::string, Binding> sizes_;
  std::vector<Deferred> deferred_;
};

std::string inputLabel(const Value *v, unsigned index) {
  return "input '" + (v->name().empty() ? "#" + std::to_string(index) : v->name()) + "'";
}

llvm::Error checkInput(const Value *v, unsigned index, const Tensor &t, SymbolBindings &symbols) {
  const TensorType &type = v->type();
  const std::string label = inputLabel(v, index);
  if (!t.valid())
    return interpError(label + " has no data");
  if (t.dtype() != type.dtype)
    return interpError(label + ": expected dtype " + std::string(dtypeName(type.dtype)) + ", got " +
                       std::string(dtypeName(t.dtype())));
  if (t.rank() != type.rank())
    return interpError(label + ": expected rank " + std::to_string(type.rank()) + ", got " +
                       std::to_string(t.rank()) + " (shape [" + shapeToString(t.shape()) + "])");
  for (int64_t d = 0; d < t.rank(); ++d) {
    std::string conflict = symbols.bind(type.dims[d], t.shape()[d], label);
    if (!conflict.empty())
      return interpError(label + ": " +
                         (type.dims[d].isStatic() ? "expected dim " + std::to_string(d) + " = " +
                                                        std::to_string(type.dims[d].size)
                                                  : "dim " + std::to_string(d) + " " + conflict) +
                         ", got " + std::to_string(t.shape()[d]));
  }
  return llvm::Error::success();
}

// The result of an op must match its static type: dtype, rank, static dims, and symbolic dims
// consistently bound.
llvm::Error checkResult(const Op &op, unsigned index, const Tensor &t, SymbolBindings &symbols) {
  const TensorType &type = op.result(index)->type();
  auto mismatch = [&](const std::string &what) {
    return makeError(diagnose(op, "result " + std::to_string(index) + " " + what + " [" +
                                      shapeToString(t.shape()) + "] " +
                                      std::string(dtypeName(t.dtype())) +
                                      " disagrees with its type " + type.str())
                         .inPhase("interp"));
  };
  if (t.dtype() != type.dtype || t.rank() != type.rank())
    return mismatch("of");
  for (int64_t d = 0; d < t.rank(); ++d) {
    std::string conflict = symbols.bind(type.dims[d], t.shape()[d],
                                        diagnose(op, "result " + std::to_string(index)).str());
    if (!conflict.empty())
      return mismatch("dim " + std::to_string(d) + " (" + conflict + ") in");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<Tensor>> evaluateOp(const Op &op, const std::vector<Tensor> &operands) {
  return runOp(op, operands);
}

llvm::Expected<std::vector<Tensor>> interpret(const Graph &g, const std::vector<Tensor> &inputs) {
  if (inputs.size() != g.numInputs())
    return interpError("graph '" + g.name() + "' expects " + std::to_string(g.numInputs()) +
                       " inputs, got " + std::to_string(inputs.size()));
  SymbolBindings symbols;
  const SymbolLookup lookup = [&](const std::string &s) { return symbols.sizeOf(s); };
  ActiveBindings active(lookup);
  std::unordered_map<const Value *, Tensor> values;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    if (llvm::Error err = checkInput(g.input(i), i, inputs[i], symbols))
      return err;
    values[g.input(i)] = inputs[i];
  }
  if (std::string conflict = symbols.checkDeferred(); !conflict.empty())
    return interpError(conflict);

  // Remaining uses of each value by ops of this graph; graph outputs are never freed.
  std::unordered_map<const Value *, size_t> remainingUses;
  for (const Op &op : g.ops())
    for (const Value *v : op.operands())
      ++remainingUses[v];
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    remainingUses[g.output(i)] += 1;

  Tensors operands;
  for (const Op &op : g.ops()) {
    operands.clear();
    for (const Value *v : op.operands()) {
      auto it = values.find(v);
      if (it == values.end())
        return makeError(diagnose(op, "operand '" + v->name() + "' used before it is defined")
                             .inPhase("interp"));
      operands.push_back(it->second);
    }
    auto results = runOp(op, operands);
    if (!results)
      return results.takeError();
    for (unsigned r = 0; r < op.numResults() && r < results->size(); ++r) {
      if (llvm::Error err = checkResult(op, r, (*results)[r], symbols))
        return err;
      if (remainingUses[op.result(r)] > 0) // an unused result is dropped at once
        values[op.result(r)] = std::move((*results)[r]);
    }
    operands.clear(); // drop our references before freeing
    for (const Value *v : op.operands())
      if (--remainingUses[v] == 0)
        values.erase(v);
  }

  std::vector<Tensor> outputs;
  outputs.reserve(g.numOutputs());
  for (unsigned i = 0; i < g.numOutputs(); ++i) {
    auto it = values.find(g.output(i));
    if (it == values.end())
      return interpError("output '" + g.outputName(i) + "' is not computed by the graph");
    outputs.push_back(it->second);
  }
  return outputs;
}

} // namespace strata
