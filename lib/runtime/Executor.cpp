// The plan executor: input checking, symbol binding, arena placement and the kernel loop.
#include "strata/runtime/Executor.h"

#include "strata/runtime/Arena.h"
#include "strata/support/CrashContext.h"
#include "strata/support/KernelStatus.h"
#include "strata/support/Limits.h"
#include "strata/support/Tensor.h"
#include "strata/support/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <new>
#include <set>

namespace strata::runtime {

namespace {

std::string shapeText(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// a * b, or -1 on overflow past int64 (sizes are non-negative).
int64_t checkedMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return -1;
  return a * b;
}

// Bytes of `t` at the symbol values `values` (-1 past int64).
int64_t tensorBytesAt(const PlanTensor &t, const std::vector<int64_t> &values) {
  int64_t bytes = static_cast<int64_t>(dtypeSize(t.dtype));
  for (const PlanDim &d : t.dims)
    bytes = bytes < 0 ? -1 : checkedMul(bytes, d.isStatic() ? d.size : values[d.symbol]);
  return bytes;
}

// The region whose plan runs the variant `variant` of `p`.
size_t variantRegion(const Plan &p, int variant) {
  return static_cast<size_t>(p.variants[static_cast<size_t>(variant)].region);
}

} // namespace

RunContext::RunContext(const Executor &ex) : exec_(ex) {
  const Plan &plan = ex.plan();
  symbolValues_.assign(plan.symbols.size(), 0);
  argPointers_.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s)
    argPointers_[s].resize(plan.steps[s].args.size() + 1); // + the run's KernelStatus
  for (const auto &region : ex.regions_)
    regionContexts_.push_back(std::make_unique<RunContext>(*region));
  dynamicBuffers_.resize(plan.buffers.size());
  dynamicOutputs_.resize(plan.outputs.size());
  carriedSpare_.resize(plan.steps.size());
  carriedSpareBytes_.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    carriedSpare_[s].resize(static_cast<size_t>(plan.steps[s].numCarried));
    carriedSpareBytes_[s].assign(static_cast<size_t>(plan.steps[s].numCarried), 0);
  }
}

int64_t RunContext::arenaBytes() const {
  if (variant_ >= 0)
    return regionContexts_[variantRegion(exec_.plan(), variant_)]->arenaBytes();
  return arenaBytes_;
}

void RunContext::setProfiling(bool on) {
  profiling_ = on;
  stepMillis_.assign(on ? exec_.plan().steps.size() : 0, 0.0);
}

Executor::Executor(Plan plan, std::vector<KernelFn> kernels, const uint8_t *weights,
                   unsigned threads)
    : Executor(std::move(plan), std::move(kernels), weights, nullptr) {
  ownPool_ = std::make_unique<ThreadPool>(threads);
  sharePool(ownPool_.get());
}

void Executor::sharePool(ThreadPool *pool) {
  pool_ = pool;
  for (auto &r : regions_)
    r->sharePool(pool);
}

Executor::Executor(Plan plan, std::vector<KernelFn> kernels, const uint8_t *weights,
                   ThreadPool *pool)
    : plan_(std::move(plan)), kernels_(std::move(kernels)), weights_(weights), pool_(pool) {
  for (const Plan &region : plan_.regions)
    regions_.push_back(std::unique_ptr<Executor>(new Executor(region, kernels_, weights_, pool)));
  own_ = std::make_unique<RunContext>(*this);
  for (const PlanStep &step : plan_.steps)
    runLabels_.push_back("running " + step.name);
  for (size_t i = 0; i < plan_.symbols.size(); ++i) {
    std::string why;
    formulas_.push_back(plan_.isDerived(i) ? SymExpr::parse(plan_.formulas[i], why) : std::nullopt);
    if (!plan_.isDerived(i))
      baseSymbolIndex_.emplace(plan_.symbols[i], i); // the first of a name, as before
    bounds_.push_back(plan_.isValueBound(i) ? SymExpr::parse(plan_.bounds[i], why) : std::nullopt);
  }
  for (const PlanCheck &c : plan_.checks) {
    std::string why;
    checks_.push_back({SymExpr::parse(c.lhs, why), SymExpr::parse(c.rhs, why)});
    // Whether the check reads a value-bound symbol (then it waits for the run's binds).
    std::set<std::string> used;
    for (const auto &e : {checks_.back().first, checks_.back().second})
      if (e)
        e->collectSymbols(used);
    std::vector<size_t> valueSymbols;
    for (size_t i = 0; i < plan_.symbols.size(); ++i)
      if (plan_.isValueBound(i) && used.count(plan_.symbols[i]))
        valueSymbols.push_back(i);
    checkValueSymbols_.push_back(std::move(valueSymbols));
  }
  // Sizes read from data at run time (unbounded): what they size is allocated when bound.
  dynamicSymbol_ = symbolsReadingUnbounded(plan_);
  auto dynamicSym = [&](int sym) {
    return sym >= 0 && static_cast<size_t>(sym) < dynamicSymbol_.size() &&
           dynamicSymbol_[static_cast<size_t>(sym)];
  };
  for (const PlanBuffer &b : plan_.buffers)
    dynamicBuffer_.push_back(std::any_of(b.size.symbols.begin(), b.size.symbols.end(), dynamicSym));
  for (const PlanTensor &o : plan_.outputs)
    dynamicOutput_.push_back(std::any_of(o.dims.begin(), o.dims.end(),
                                         [&](const PlanDim &d) { return dynamicSym(d.symbol); }));
  derivedDynamicReads_.resize(plan_.symbols.size());
  for (size_t i = 0; i < plan_.symbols.size(); ++i) {
    if (!dynamicSymbol_[i] || !plan_.isDerived(i) || !formulas_[i])
      continue;
    std::set<std::string> used;
    formulas_[i]->collectSymbols(used);
    for (size_t j = 0; j < plan_.symbols.size(); ++j)
      if (dynamicSymbol_[j] && plan_.isValueBound(j) && used.count(plan_.symbols[j]))
        derivedDynamicReads_[i].push_back(j);
  }
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep &step = plan_.steps[s];
    // Sizes this step sets when it runs (a loop's scan entry dims): results sized by them are
    // allocated by the step itself.
    std::set<size_t> setHere;
    std::vector<size_t> atBound;
    for (const PlanResultBind &b : plan_.resultBinds) {
      if (b.step != static_cast<int64_t>(s))
        continue;
      const size_t sym = static_cast<size_t>(b.symbol);
      if (plan_.isUnbounded(sym))
        setHere.insert(sym);
      else if (dynamicSymbol_[sym] && step.kind == PlanStep::Loop &&
               std::find(atBound.begin(), atBound.end(), sym) == atBound.end())
        atBound.push_back(sym);
    }
    atBoundSymbols_.push_back(std::move(atBound));
    std::vector<size_t> dyn, deferred;
    for (size_t a = 0; a < step.args.size(); ++a) {
      const PlanArg &arg = step.args[a];
      const size_t i = static_cast<size_t>(arg.index);
      std::vector<int> symbols;
      if (arg.kind == PlanArg::Buffer && i < dynamicBuffer_.size() && dynamicBuffer_[i])
        symbols = plan_.buffers[i].size.symbols;
      else if (arg.kind == PlanArg::Output && i < dynamicOutput_.size() && dynamicOutput_[i])
        for (const PlanDim &d : plan_.outputs[i].dims)
          symbols.push_back(d.symbol);
      else
        continue;
      bool setByStep = false;
      for (int sym : symbols) {
        if (sym < 0 || static_cast<size_t>(sym) >= plan_.symbols.size())
          continue;
        const size_t u = static_cast<size_t>(sym);
        setByStep |= setHere.count(u) != 0;
        for (size_t v : derivedDynamicReads_[u])
          setByStep |= setHere.count(v) != 0;
      }
      (setByStep && static_cast<int64_t>(a) >= step.numInputs ? deferred : dyn).push_back(a);
    }
    dynamicArgs_.push_back(std::move(dyn));
    stepAllocatedArgs_.push_back(std::move(deferred));
  }
}

Executor::~Executor() = default;

bool Executor::setLimit(int64_t Limits::*field, int64_t value) {
  if (value < 0)
    return false;
  if (field == &Limits::maxArenaBytes)
    maxArenaBytes_.store(value, std::memory_order_relaxed);
  else if (field == &Limits::maxTensorElements)
    maxTensorElements_.store(value, std::memory_order_relaxed);
  else
    return false;
  for (auto &r : regions_)
    r->setLimit(field, value);
  return true;
}

unsigned Executor::threads() const { return pool_->threads(); }

Status Executor::bind(RunContext &ctx, const std::vector<DType> &dtypes,
                      const std::vector<std::vector<int64_t>> &shapes) const {
  if (&ctx.exec_ != this)
    return Status::error("the run context belongs to another model");
  // Shapes a variant was compiled for run it (its kernels specialized for them).
  for (size_t v = 0; v < plan_.variants.size(); ++v) {
    const PlanVariant &variant = plan_.variants[v];
    if (variant.shapes != shapes)
      continue;
    const size_t r = static_cast<size_t>(variant.region);
    RunContext &rc = *ctx.regionContexts_[r];
    if (Status st = regions_[r]->bind(rc, dtypes, shapes))
      return st;
    ctx.variant_ = static_cast<int>(v);
    ctx.outputShapes_ = rc.outputShapes_;
    ctx.bound_ = true;
    return Status();
  }
  const auto &ins = plan_.inputs;
  if (dtypes.size() != ins.size() || shapes.size() != ins.size())
    return Status::error("expected " + std::to_string(ins.size()) + " inputs, got " +
                         std::to_string(shapes.size()));
  std::vector<int64_t> values(plan_.symbols.size(), -1);
  for (size_t i = 0; i < ins.size(); ++i) {
    const PlanTensor &want = ins[i];
    std::string what = "input " + std::to_string(i) + " ('" + want.name + "')";
    if (dtypes[i] != want.dtype)
      return Status::error(what + ": expected dtype " + std::string(dtypeName(want.dtype)) +
                           ", got " + std::string(dtypeName(dtypes[i])));
    if (shapes[i].size() != want.dims.size())
      return Status::error(what + ": expected rank " + std::to_string(want.dims.size()) + ", got " +
                           std::to_string(shapes[i].size()) + " (shape " + shapeText(shapes[i]) +
                           ")");
    for (size_t d = 0; d < want.dims.size(); ++d) {
      int64_t got = shapes[i][d];
      const PlanDim &dim = want.dims[d];
      if (got < 0)
        return Status::error(what + ": dim " + std::to_string(d) + " is negative");
      if (dim.isStatic()) {
        if (got != dim.size)
          return Status::error(what + ": dim " + std::to_string(d) + " is " + std::to_string(got) +
                               " but the model expects " + std::to_string(dim.size));
        continue;
      }
      if (plan_.isValueBound(static_cast<size_t>(dim.symbol)))
        return Status::error(what + ": dim " + std::to_string(d) +
                             " is a data-dependent size in the plan, not an input's");
      int64_t &v = values[dim.symbol];
      const std::string &sym = plan_.symbols[dim.symbol];
      if (v >= 0 && v != got)
        return Status::error(what + ": dim " + std::to_string(d) + " ('" + sym + "') is " +
                             std::to_string(got) + " but an earlier input bound '" + sym + "' to " +
                             std::to_string(v));
      v = got;
    }
    if (int64_t n = numElements(shapes[i]); n > maxTensorElements()) // dims checked >= 0
      return Status::error(what + " of shape " + shapeText(shapes[i]) + " " +
                           tooManyElements(n, maxTensorElements()));
  }
  return bindValues(ctx, std::move(values));
}

Status Executor::bindFromEnclosing(RunContext &ctx, const RunContext &outer) const {
  const Plan &enclosing = outer.exec_.plan();
  std::vector<int64_t> values(plan_.symbols.size(), -1);
  for (size_t s = 0; s < values.size(); ++s) {
    if (plan_.isDerived(s) || plan_.isValueBound(s))
      continue;
    for (size_t o = 0; o < enclosing.symbols.size(); ++o)
      if (!enclosing.isDerived(o) && enclosing.symbols[o] == plan_.symbols[s])
        values[s] = outer.symbolValues_[o];
  }
  return bindValues(ctx, std::move(values));
}

Status Executor::bindValues(RunContext &ctx, std::vector<int64_t> values) const {
  for (size_t s = 0; s < values.size(); ++s)
    if (values[s] < 0 && !plan_.isDerived(s) && !plan_.isValueBound(s))
      return Status::error("symbol '" + plan_.symbols[s] + "' is not bound by any input");
  // Data-dependent sizes start at their bounds (over the symbols declared before each).
  for (size_t s = 0; s < values.size(); ++s) {
    if (!plan_.isValueBound(s))
      continue;
    if (dynamicSymbol_[s]) { // known only during the run: 0 until its bind
      values[s] = 0;
      continue;
    }
    auto declared = [&](const std::string &name) -> std::optional<int64_t> {
      for (size_t i = 0; i < s; ++i)
        if (!plan_.isDerived(i) && plan_.symbols[i] == name && values[i] >= 0)
          return values[i];
      return std::nullopt;
    };
    std::optional<int64_t> v = bounds_[s] ? bounds_[s]->evaluate(declared) : std::nullopt;
    if (!v || *v < 0)
      return Status::error("the bound " + plan_.bounds[s] + " of the data-dependent size '" +
                           plan_.symbols[s] + "' cannot be computed at these input sizes");
    values[s] = *v;
  }
  if (ctx.shapeCached_ && ctx.shapeKey_ == values) {
    values = ctx.shapeResult_;
  } else {
    std::vector<int64_t> key = values;
    if (Status st = shapeProgram(values, nullptr))
      return st;
    ctx.shapeKey_ = std::move(key);
    ctx.shapeResult_ = values;
    ctx.shapeCached_ = true;
  }

  std::vector<std::vector<int64_t>> outShapes;
  for (const PlanTensor &o : plan_.outputs) {
    std::vector<int64_t> s;
    int64_t bytes = static_cast<int64_t>(dtypeSize(o.dtype));
    for (const PlanDim &d : o.dims) {
      s.push_back(d.isStatic() ? d.size : values[d.symbol]);
      bytes = bytes < 0 ? -1 : checkedMul(bytes, s.back());
    }
    // Callers allocate outputs from these shapes: refuse sizes beyond the limit.
    if (int64_t n = numElements(s); n > maxTensorElements())
      return Status::error("output '" + o.name + "' of shape " + shapeText(s) + " " +
                           tooManyElements(n, maxTensorElements()));
    if (bytes < 0 || bytes > kMaxBytes)
      return Status::error("output '" + o.name + "' of shape " + shapeText(s) + " is too large");
    outShapes.push_back(std::move(s));
  }
  ctx.variant_ = -1;
  ctx.boundValues_ = values;
  ctx.symbolValues_ = std::move(values);
  ctx.boundOutputShapes_ = outShapes;
  ctx.outputShapes_ = std::move(outShapes);
  ctx.bound_ = true;
  return Status();
}

Status Executor::shapeProgram(std::vector<int64_t> &values,
                              const std::vector<bool> *boundNow) const {
  const bool afterBind = boundNow != nullptr;
  auto boundText = [&] {
    std::string r;
    for (size_t i = 0; i < values.size(); ++i)
      if (!plan_.isDerived(i) && !(dynamicSymbol_[i] && !(afterBind && (*boundNow)[i])))
        r += (r.empty() ? "" : ", ") + plan_.symbols[i] + " = " + std::to_string(values[i]);
    return r;
  };
  const std::string at = afterBind ? "at the sizes " : "at the input sizes ";
  auto base = [&](const std::string &name) -> std::optional<int64_t> {
    auto it = baseSymbolIndex_.find(name);
    if (it == baseSymbolIndex_.end() || it->second >= values.size())
      return std::nullopt;
    return values[it->second];
  };
  for (size_t s = 0; s < values.size(); ++s) {
    if (!plan_.isDerived(s))
      continue;
    // A size reading unbounded ones: computed once the run has bound them all (0 until then).
    if (dynamicSymbol_[s] &&
        (!afterBind || !std::all_of(derivedDynamicReads_[s].begin(), derivedDynamicReads_[s].end(),
                                    [&](size_t v) { return (*boundNow)[v]; }))) {
      values[s] = 0;
      continue;
    }
    if (!formulas_[s])
      return Status::error("the plan's formula for dim '" + plan_.symbols[s] + "' is malformed");
    std::optional<int64_t> v = formulas_[s]->evaluate(base);
    if (!v)
      return Status::error(at + boundText() + ", dim " + plan_.formulas[s] +
                           " cannot be computed (it overflows int64 or divides by 0)");
    if (*v < 0)
      return Status::error(at + boundText() + ", dim " + plan_.formulas[s] + " is " +
                           std::to_string(*v) +
                           ": the inputs are too small for the model (a window larger than "
                           "its padded input, or a crop larger than its axis)");
    values[s] = *v;
  }
  for (size_t i = 0; i < checks_.size(); ++i) {
    const PlanCheck &c = plan_.checks[i];
    const std::vector<size_t> &reads = checkValueSymbols_[i];
    if (reads.empty() == afterBind)
      continue; // bind() checks the others; the run those reading data-dependent sizes
    if (afterBind &&
        !std::all_of(reads.begin(), reads.end(), [&](size_t s) { return (*boundNow)[s]; }))
      continue; // some size it reads still stands at its bound: a later bind checks it
    if (!checks_[i].first || !checks_[i].second)
      return Status::error("the plan's check of " + c.where + " is malformed");
    std::optional<int64_t> a = checks_[i].first->evaluate(base);
    std::optional<int64_t> b = checks_[i].second->evaluate(base);
    if (!a || !b || (c.atLeast ? *a < *b : *a != *b))
      return Status::error(at + boundText() + ", " + c.where + " is " +
                           (a ? std::to_string(*a) : c.lhs) +
                           (c.atLeast ? " but must be at least " : " but must equal ") + c.rhs +
                           (b && c.rhs != std::to_string(*b) ? " = " + std::to_string(*b) : ""));
  }
  return Status();
}

Status Executor::placeBuffers(RunContext &ctx) const {
  ArenaLayout layout;
  if (Status s = layoutArena(plan_, ctx.symbolValues_, layout, maxArenaBytes()))
    return s;
  const int64_t peak = layout.bytes;
  if (peak > ctx.arenaCapacity_ || !ctx.arena_) {
    size_t bytes = static_cast<size_t>(std::max<int64_t>(peak, kArenaAlign));
    auto *mem = static_cast<uint8_t *>(std::aligned_alloc(kArenaAlign, bytes));
    if (!mem) // the previous placement and arena stay as they were
      return Status::error("cannot allocate a " + std::to_string(peak) + "-byte arena");
    ctx.arena_.reset(mem);
    ctx.arenaCapacity_ = peak;
    ++ctx.arenaAllocations_;
  }
  ctx.bufferOffsets_ = std::move(layout.offsets);
  ctx.arenaBytes_ = peak;
  ctx.placedFor_ = ctx.symbolValues_;
  ctx.placed_ = true;
  return Status();
}

std::optional<int64_t> Executor::boundNow(const RunContext &ctx, size_t sym) const {
  auto now = [&](const std::string &name) -> std::optional<int64_t> {
    for (size_t i = 0; i < sym; ++i)
      if (!plan_.isDerived(i) && plan_.symbols[i] == name &&
          (!dynamicSymbol_[i] || ctx.valueBound_[i]))
        return ctx.symbolValues_[i];
    return std::nullopt;
  };
  return bounds_[sym] ? bounds_[sym]->evaluate(now) : std::nullopt;
}

Status Executor::allocateDynamic(RunContext &ctx, const PlanArg &arg, const std::string &before,
                                 int64_t keepBytes) const {
  const bool output = arg.kind == PlanArg::Output;
  const size_t i = static_cast<size_t>(arg.index);
  std::vector<int> symbols;
  if (output)
    for (const PlanDim &d : plan_.outputs[i].dims)
      symbols.push_back(d.symbol);
  else
    symbols = plan_.buffers[i].size.symbols;
  for (int sym : symbols) {
    if (sym < 0 || !dynamicSymbol_[static_cast<size_t>(sym)])
      continue;
    const size_t u = static_cast<size_t>(sym);
    const auto &reads = plan_.isDerived(u) ? derivedDynamicReads_[u] : std::vector<size_t>{u};
    for (size_t v : reads)
      if (!ctx.valueBound_[v])
        return Status::error("before " + before + ": a tensor is sized by '" + plan_.symbols[v] +
                             "', a size read from data that no earlier step has bound (the "
                             "plan's step order is wrong)");
  }
  int64_t bytes = 0;
  if (output) {
    bytes = tensorBytesAt(plan_.outputs[i], ctx.symbolValues_);
    std::vector<int64_t> shape;
    for (const PlanDim &d : plan_.outputs[i].dims)
      shape.push_back(d.isStatic() ? d.size : ctx.symbolValues_[static_cast<size_t>(d.symbol)]);
    if (int64_t n = numElements(shape); n > maxTensorElements())
      return Status::error("before " + before + ": output '" + plan_.outputs[i].name +
                           "' of shape " + shapeText(shape) + " " +
                           tooManyElements(n, maxTensorElements()));
  } else {
    bytes = plan_.buffers[i].size.bytes;
    for (int sym : symbols)
      bytes = bytes < 0 ? -1 : checkedMul(bytes, ctx.symbolValues_[static_cast<size_t>(sym)]);
    if (bytes > maxArenaBytes())
      return Status::error("before " + before + ": an intermediate buffer needs " +
                           std::to_string(bytes) + " bytes, " +
                           overLimit(&Limits::maxArenaBytes, maxArenaBytes()));
  }
  if (bytes < 0 || bytes > kMaxBytes)
    return Status::error("before " + before + ": a tensor sized by data is too large");
  RunContext::DynamicStorage &st = output ? ctx.dynamicOutputs_[i] : ctx.dynamicBuffers_[i];
  if (st.data && st.capacity >= bytes)
    return Status();
  const int64_t rounded = (std::max<int64_t>(bytes, 1) + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  auto *mem = static_cast<uint8_t *>(std::aligned_alloc(kArenaAlign, static_cast<size_t>(rounded)));
  if (!mem)
    return Status::error("before " + before + ": cannot allocate " + std::to_string(bytes) +
                         " bytes for a tensor sized by data");
  if (st.data && keepBytes > 0)
    std::memcpy(mem, st.data.get(), static_cast<size_t>(std::min(keepBytes, st.capacity)));
  st.data.reset(mem);
  st.capacity = rounded;
  return Status();
}

const void *Executor::outputData(const RunContext &ctx, size_t i, void *const *outputs) const {
  return dynamicOutput_[i] ? ctx.dynamicOutputs_[i].data.get() : outputs[i];
}

Status Executor::run(RunContext &ctx, const void *const *inputs, void *const *outputs) const {
  if (&ctx.exec_ != this)
    return Status::error("the run context belongs to another model");
  if (!ctx.bound_)
    return Status::error("run before a successful bind");
  if (ctx.variant_ >= 0) {
    const size_t r = variantRegion(plan_, ctx.variant_);
    RunContext &rc = *ctx.regionContexts_[r];
    Status st = regions_[r]->run(rc, inputs, outputs);
    ctx.outputShapes_ = rc.outputShapes_;
    return st;
  }
  // A run starts from the bound sizes (data-dependent ones at their bounds): the previous run's
  // binds are undone, and the placement is made for them.
  ctx.symbolValues_ = ctx.boundValues_;
  ctx.valueBound_.assign(plan_.symbols.size(), false);
  ctx.outputShapes_ = ctx.boundOutputShapes_;
  if (!ctx.placed_ || ctx.placedFor_ != ctx.boundValues_)
    if (Status s = placeBuffers(ctx))
      return s;
  if (ctx.arenaBytes_ > maxArenaBytes()) // the limit was lowered since the placement
    return Status::error("the intermediate buffers need a " + std::to_string(ctx.arenaBytes_) +
                         "-byte arena, " + overLimit(&Limits::maxArenaBytes, maxArenaBytes()));

  auto pointer = [&](const PlanArg &a) -> void * {
    switch (a.kind) {
    case PlanArg::Buffer:
      if (dynamicBuffer_[static_cast<size_t>(a.index)])
        return ctx.dynamicBuffers_[static_cast<size_t>(a.index)].data.get();
      return ctx.arena_.get() + ctx.bufferOffsets_[a.index];
    case PlanArg::Input:
      return const_cast<void *>(inputs[a.index]);
    case PlanArg::Output:
      if (dynamicOutput_[static_cast<size_t>(a.index)])
        return ctx.dynamicOutputs_[static_cast<size_t>(a.index)].data.get();
      return outputs[a.index];
    case PlanArg::Constant:
      return const_cast<uint8_t *>(weights_ + plan_.constants[a.index].offset);
    case PlanArg::Symbol:
      return &ctx.symbolValues_[a.index];
    }
    return nullptr;
  };

  // Bytes of a tensor or buffer at some symbol values (-1 past int64).
  auto tensorBytes = [&](const PlanTensor &t) { return tensorBytesAt(t, ctx.symbolValues_); };
  auto bufferBytesAt = [&](const PlanSize &size, const std::vector<int64_t> &values) {
    int64_t bytes = size.bytes;
    for (int sym : size.symbols)
      bytes = bytes < 0 ? -1 : checkedMul(bytes, values[sym]);
    return bytes;
  };
  auto sourceBytes = [&](const PlanArg &a) -> int64_t {
    switch (a.kind) {
    case PlanArg::Input:
      return tensorBytes(plan_.inputs[a.index]);
    case PlanArg::Output:
      if (dynamicOutput_[static_cast<size_t>(a.index)]) // what its storage holds
        return std::min(tensorBytes(plan_.outputs[a.index]),
                        ctx.dynamicOutputs_[static_cast<size_t>(a.index)].capacity);
      return tensorBytes(plan_.outputs[a.index]);
    case PlanArg::Constant:
      return plan_.constants[a.index].bytes;
    case PlanArg::Buffer:
      if (dynamicBuffer_[static_cast<size_t>(a.index)])
        return std::min(bufferBytesAt(plan_.buffers[a.index].size, ctx.symbolValues_),
                        ctx.dynamicBuffers_[static_cast<size_t>(a.index)].capacity);
      return bufferBytesAt(plan_.buffers[a.index].size, ctx.symbolValues_);
    case PlanArg::Symbol:
      return 0;
    }
    return 0;
  };
  // After data-dependent sizes changed: derived sizes, deferred checks, and every buffer and
  // output against the size it was placed or allocated for, so no kernel writes past one.
  auto recheck = [&](size_t step) -> Status {
    if (Status st = shapeProgram(ctx.symbolValues_, &ctx.valueBound_))
      return st;
    for (size_t i = 0; i < plan_.buffers.size(); ++i) {
      const PlanBuffer &b = plan_.buffers[i];
      if (dynamicBuffer_[i])
        continue; // allocated at its size before each step using it
      int64_t now = bufferBytesAt(b.size, ctx.symbolValues_);
      if (now < 0 || now > bufferBytesAt(b.size, ctx.boundValues_))
        return Status::error("before " + plan_.steps[step].name +
                             ": a data-dependent size grew a buffer past the size it was placed "
                             "for (the plan's bounds are wrong)");
    }
    for (size_t i = 0; i < plan_.outputs.size(); ++i) {
      const PlanTensor &o = plan_.outputs[i];
      if (dynamicOutput_[i])
        continue;
      int64_t now = tensorBytesAt(o, ctx.symbolValues_);
      if (now < 0 || now > tensorBytesAt(o, ctx.boundValues_))
        return Status::error("before " + plan_.steps[step].name + ": output '" + o.name +
                             "' grew past the size it was allocated for (the plan's bounds are "
                             "wrong)");
    }
    return Status();
  };
  // A step's binds: each data-dependent size read from the tensor holding it and checked
  // against its bound, then rechecked. (Binds are sorted by step and each names a step, as
  // parsePlan checked.)
  size_t nextBind = 0, nextResultBind = 0;
  auto applyBinds = [&](size_t step) -> Status {
    const size_t first = nextBind;
    for (; nextBind < plan_.binds.size() && plan_.binds[nextBind].step == static_cast<int64_t>(step);
         ++nextBind) {
      const PlanBind &b = plan_.binds[nextBind];
      if (sourceBytes(b.value) < static_cast<int64_t>(sizeof(int64_t)))
        return Status::error("the data-dependent size '" + plan_.symbols[b.symbol] +
                             "' is read from a tensor smaller than an int64");
      int64_t v = 0;
      std::memcpy(&v, pointer(b.value), sizeof v);
      const size_t sym = static_cast<size_t>(b.symbol);
      if (plan_.isUnbounded(sym)) {
        if (v < 0 && sym < plan_.invalid.size() && !plan_.invalid[sym].empty())
          return Status::error("before " + plan_.steps[step].name + ": " + plan_.invalid[sym] +
                               " (the size '" + plan_.symbols[sym] + "' read from data is " +
                               std::to_string(v) + ")");
        if (v < 0)
          return Status::error("before " + plan_.steps[step].name + ": the size '" +
                               plan_.symbols[sym] + "' read from data is " + std::to_string(v) +
                               ", a negative size");
      } else {
        // A bound reading sizes known only during the run is computed now.
        int64_t bound = ctx.boundValues_[sym];
        if (dynamicSymbol_[sym]) {
          std::optional<int64_t> b2 = boundNow(ctx, sym);
          if (!b2)
            return Status::error("before " + plan_.steps[step].name + ": the bound " +
                                 plan_.bounds[sym] + " of the data-dependent size '" +
                                 plan_.symbols[sym] + "' cannot be computed yet");
          bound = *b2;
        }
        if (v < 0 || v > bound)
          return Status::error("before " + plan_.steps[step].name + ": the data-dependent size '" +
                               plan_.symbols[b.symbol] + "' is " + std::to_string(v) +
                               ", outside its bounds [0, " + std::to_string(bound) + "]");
      }
      ctx.symbolValues_[b.symbol] = v;
      ctx.valueBound_[static_cast<size_t>(b.symbol)] = true;
    }
    if (nextBind == first)
      return Status();
    return recheck(step);
  };

  // Kernels' parallel loops (strata_parallel_for) run on this executor's pool; their failed
  // index checks land in `status`, and the run stops after the kernel that failed one.
  ThreadPool::ScopedPool scope(pool_);
  KernelStatus status;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep &step = plan_.steps[s];
    if (Status st = applyBinds(s))
      return st;
    // Sizes the step sets, bounded by sizes read from data: at their bound until it runs (this
    // run's state only; checks and formulas reading them wait for the step's result binds).
    for (size_t sym : atBoundSymbols_[s]) {
      std::optional<int64_t> bound = boundNow(ctx, sym);
      if (!bound)
        return Status::error("before " + step.name + ": the bound " + plan_.bounds[sym] +
                             " of the data-dependent size '" + plan_.symbols[sym] +
                             "' cannot be computed yet");
      if (*bound < 0)
        return Status::error("before " + step.name + ": the bound " + plan_.bounds[sym] +
                             " of the data-dependent size '" + plan_.symbols[sym] + "' is " +
                             std::to_string(*bound) + ", negative");
      ctx.symbolValues_[sym] = *bound;
      ctx.valueBound_[sym] = true;
    }
    for (size_t a : dynamicArgs_[s])
      if (Status st = allocateDynamic(ctx, step.args[a], step.name))
        return st;
    std::vector<void *> &args = ctx.argPointers_[s];
    for (size_t a = 0; a < step.args.size(); ++a)
      args[a] = pointer(step.args[a]);
    args.back() = &status;
    if (step.kind != PlanStep::Kernel) {
      auto start = std::chrono::steady_clock::now();
      if (Status st = runControl(ctx, s, args, sourceBytes))
        return st;
      // Result dims the step's run decided (runControl set them): recheck the sizes.
      const size_t firstResultBind = nextResultBind;
      while (nextResultBind < plan_.resultBinds.size() &&
             plan_.resultBinds[nextResultBind].step == static_cast<int64_t>(s))
        ++nextResultBind;
      if (nextResultBind != firstResultBind)
        if (Status st = recheck(s))
          return st;
      if (ctx.profiling_)
        ctx.stepMillis_[s] +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      continue;
    }
    setCrashContext(runLabels_[s]);
    if (!ctx.profiling_) {
      kernels_[step.kernel](args.data());
    } else {
      auto start = std::chrono::steady_clock::now();
      kernels_[step.kernel](args.data());
      ctx.stepMillis_[s] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
    }
    if (!status.ok())
      return Status::error(status.message()); // the site names the op and node
  }

  // Outputs no kernel writes: copies of inputs, constants, buffers or other outputs, each at
  // most as large as its source (a plan whose sizes disagree is refused, not over-read).
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const PlanArg &src = plan_.outputSources[i];
    if (src.kind == PlanArg::Output && src.index == static_cast<int64_t>(i))
      continue;
    int64_t bytes = tensorBytes(plan_.outputs[i]);
    if (bytes < 0 || bytes > sourceBytes(src))
      return Status::error("output '" + plan_.outputs[i].name +
                           "' is larger than the tensor the plan copies it from");
    if (dynamicOutput_[i])
      if (Status st = allocateDynamic(ctx, {PlanArg::Output, static_cast<int64_t>(i)},
                                      "the end of the run"))
        return st;
    if (bytes > 0)
      std::memcpy(pointer({PlanArg::Output, static_cast<int64_t>(i)}), pointer(src),
                  static_cast<size_t>(bytes));
  }
  // Data-dependent output dims: the sizes this run bound (each output's data is the row-major
  // prefix of the space allocated for its bound shape).
  if (!plan_.binds.empty() || !plan_.resultBinds.empty())
    for (size_t i = 0; i < plan_.outputs.size(); ++i)
      for (size_t d = 0; d < plan_.outputs[i].dims.size(); ++d)
        if (!plan_.outputs[i].dims[d].isStatic())
          ctx.outputShapes_[i][d] = ctx.symbolValues_[plan_.outputs[i].dims[d].symbol];
  return Status();
}

Status Executor::runControl(RunContext &ctx, size_t s, const std::vector<void *> &args,
                            const std::function<int64_t(const PlanArg &)> &bytes) const {
  const PlanStep &step = plan_.steps[s];
  const size_t numIn = static_cast<size_t>(step.numInputs);
  const size_t numResults = step.args.size() - numIn;
  auto fail = [&](const std::string &why) { return Status::error("in " + step.name + ": " + why); };
  // Binds region `r` at the enclosing sizes; its inputs and outputs must fit the arguments.
  auto enter = [&](int64_t r, const std::vector<size_t> &inArgs,
                   const std::vector<size_t> &outArgs) -> Status {
    const Executor &region = *regions_[static_cast<size_t>(r)];
    RunContext &rc = *ctx.regionContexts_[static_cast<size_t>(r)];
    if (Status st = region.bindFromEnclosing(rc, ctx))
      return fail(st.message());
    const Plan &rp = region.plan();
    for (size_t i = 0; i < rp.inputs.size(); ++i) {
      int64_t want = tensorBytesAt(rp.inputs[i], rc.symbolValues_);
      if (inArgs[i] != SIZE_MAX && (want < 0 || want > bytes(step.args[inArgs[i]])))
        return fail("region input '" + rp.inputs[i].name + "' is larger than its argument");
    }
    for (size_t i = 0; i < rp.outputs.size(); ++i) {
      int64_t want = tensorBytesAt(rp.outputs[i], rc.symbolValues_);
      if (outArgs[i] != SIZE_MAX && (want < 0 || want > bytes(step.args[outArgs[i]])))
        return fail("region output '" + rp.outputs[i].name + "' is larger than its result");
    }
    return Status();
  };

  // The condition (a bool) and trip count (an i64) must be there to read.
  if (bytes(step.args[0]) < (step.kind == PlanStep::If ? 1 : 8) ||
      (step.kind == PlanStep::Loop && bytes(step.args[1]) < 1))
    return fail("its condition or trip count is read from a tensor too small to hold it");
  // A bool tensor's byte: any nonzero value is true (read as a byte: a damaged plan's buffer may
  // hold a value no bool has).
  auto truth = [](const void *p) {
    uint8_t byte = 0;
    std::memcpy(&byte, p, 1);
    return byte != 0;
  };
  if (step.kind == PlanStep::If) {
    const int64_t r = step.regions[truth(args[0]) ? 0 : 1];
    std::vector<size_t> inArgs, outArgs;
    for (size_t i = 1; i < numIn; ++i)
      inArgs.push_back(i);
    for (size_t i = 0; i < numResults; ++i)
      outArgs.push_back(numIn + i);
    if (Status st = enter(r, inArgs, outArgs))
      return st;
    const Executor &region = *regions_[static_cast<size_t>(r)];
    RunContext &rc = *ctx.regionContexts_[static_cast<size_t>(r)];
    std::vector<void *> ins(args.begin() + 1, args.begin() + numIn);
    std::vector<void *> outs(args.begin() + numIn, args.begin() + numIn + numResults);
    if (Status st = region.run(rc, ins.data(), outs.data()))
      return fail(st.message());
    // Dims the branches give differently: the one taken sets them (within their bounds, which
    // sized the results it wrote).
    for (const PlanResultBind &b : plan_.resultBinds) {
      if (b.step != static_cast<int64_t>(s))
        continue;
      const int64_t v = rc.outputShapes_[static_cast<size_t>(b.result)][static_cast<size_t>(b.dim)];
      const int64_t bound = ctx.boundValues_[static_cast<size_t>(b.symbol)];
      if (v < 0 || v > bound)
        return fail("the branch gave result " + std::to_string(b.result) + " dim " +
                    std::to_string(b.dim) + " = " + std::to_string(v) + ", outside its bounds [0, " +
                    std::to_string(bound) + "]");
      ctx.symbolValues_[static_cast<size_t>(b.symbol)] = v;
      ctx.valueBound_[static_cast<size_t>(b.symbol)] = true;
    }
    return Status();
  }

  // Loop: the body runs while iteration < trip count and its condition holds. Each carried
  // value alternates between its result buffer and a spare one; scan entries are written in
  // place at their offsets in the results.
  const size_t nc = static_cast<size_t>(step.numCarried);
  const size_t numScans = numResults - nc;
  int64_t trips = 0;
  std::memcpy(&trips, args[0], sizeof trips);
  bool cond = truth(args[1]);
  const int64_t r = step.regions[0];
  const Executor &body = *regions_[static_cast<size_t>(r)];
  RunContext &rc = *ctx.regionContexts_[static_cast<size_t>(r)];
  std::vector<size_t> inArgs{SIZE_MAX, SIZE_MAX}, outArgs{SIZE_MAX};
  for (size_t i = 2; i < numIn; ++i)
    inArgs.push_back(i);
  for (size_t k = 0; k < nc; ++k)
    outArgs.push_back(numIn + k);
  for (size_t k = 0; k < numScans; ++k)
    outArgs.push_back(SIZE_MAX); // an entry: checked against the result below
  if (Status st = enter(r, inArgs, outArgs))
    return st;
  std::vector<int64_t> carriedBytes(nc), scanBytes(numScans), scanCapacity(numScans);
  for (size_t k = 0; k < nc; ++k) {
    carriedBytes[k] = bytes(step.args[numIn + k]);
    if (carriedBytes[k] < 0 || carriedBytes[k] > bytes(step.args[2 + k]))
      return fail("loop-carried value " + std::to_string(k) + " does not fit its initial value");
    if (ctx.carriedSpareBytes_[s][k] < carriedBytes[k]) {
      ctx.carriedSpare_[s][k].reset(
          new (std::nothrow) uint8_t[static_cast<size_t>(std::max<int64_t>(carriedBytes[k], 1))]);
      if (!ctx.carriedSpare_[s][k])
        return fail("cannot allocate a loop-carried value's buffer");
      ctx.carriedSpareBytes_[s][k] = carriedBytes[k];
    }
  }
  // Scan results sized by their entries' dims that the body decides: allocated by this step
  // once the first entry is known (every later entry must have its shape); until then each
  // entry is written to the body's own storage or, for a body output placed by its bound, to
  // scratch of that size.
  std::vector<bool> deferred(numScans, false);
  for (size_t a : stepAllocatedArgs_[s])
    if (a >= numIn + nc && a < numIn + numResults)
      deferred[a - numIn - nc] = true;
  // Scan results whose length has no bound before the loop runs (early_exit without
  // max_trips): allocated for a few entries, then doubled as the loop runs (at most `trips`).
  // Their length symbol holds the capacity meanwhile, bound only while storage is allocated
  // (checks and formulas reading it wait for the iterations run).
  std::vector<int> grownSymbol(numScans, -1);
  std::vector<int64_t> grownEntries(numScans, 0); // the entries a grown result has room for
  for (const PlanResultBind &b : plan_.resultBinds)
    if (b.step == static_cast<int64_t>(s) && b.dim == 0 && b.result >= static_cast<int64_t>(nc) &&
        b.result < static_cast<int64_t>(numResults) &&
        plan_.isUnbounded(static_cast<size_t>(b.symbol))) {
      const size_t k = static_cast<size_t>(b.result) - nc;
      const PlanArg &result = step.args[numIn + nc + k];
      // (The symbol must be the result's length: what its storage is allocated by.)
      const bool sizesIt =
          result.kind == PlanArg::Output
              ? !plan_.outputs[static_cast<size_t>(result.index)].dims.empty() &&
                    plan_.outputs[static_cast<size_t>(result.index)].dims[0].symbol == b.symbol
              : result.kind == PlanArg::Buffer &&
                    std::count(plan_.buffers[static_cast<size_t>(result.index)].size.symbols.begin(),
                               plan_.buffers[static_cast<size_t>(result.index)].size.symbols.end(),
                               b.symbol) == 1;
      if (!deferred[k] || grownSymbol[k] >= 0 || !sizesIt)
        return fail("scan output " + std::to_string(k) + "'s length has no bound but its result "
                    "is not allocated by the loop at that length");
      grownSymbol[k] = static_cast<int>(b.symbol);
    }
  constexpr int64_t kFirstEntries = 16;
  std::vector<std::unique_ptr<uint8_t[]>> entryScratch(numScans);
  std::vector<std::vector<int64_t>> firstEntry(numScans);
  std::vector<uint8_t *> scanBase(numScans, nullptr);
  for (size_t k = 0; k < numScans; ++k) {
    const size_t out = 1 + nc + k;
    scanBytes[k] = tensorBytesAt(body.plan().outputs[out], rc.symbolValues_);
    if (scanBytes[k] < 0)
      return fail("a scan output's entry is too large");
    if (!deferred[k] && body.dynamicOutput_[out])
      return fail("scan output " + std::to_string(k) + "'s entries are sized by data inside "
                  "the body but its result is not");
    if (deferred[k]) {
      if (!body.dynamicOutput_[out]) {
        entryScratch[k].reset(new (std::nothrow)
                                  uint8_t[static_cast<size_t>(std::max<int64_t>(scanBytes[k], 1))]);
        if (!entryScratch[k])
          return fail("cannot allocate a scan entry's scratch");
      }
      scanBytes[k] = scanCapacity[k] = 0; // known after the first entry
      continue;
    }
    scanCapacity[k] = bytes(step.args[numIn + nc + k]);
    scanBase[k] = static_cast<uint8_t *>(args[numIn + nc + k]);
  }
  // Grown result k's storage for `entries` entries, keeping the first `kept`: at most what the
  // tensor or arena limit allows (the limits hold the entries written, not the room; capped, so
  // growth near a limit does not reallocate entry by entry), and where even that fails, for
  // exactly `kept + 1`.
  auto growScan = [&](size_t k, int64_t entries, int64_t kept) -> Status {
    const size_t sym = static_cast<size_t>(grownSymbol[k]);
    const PlanArg &result = step.args[numIn + nc + k];
    if (scanBytes[k] > 0) {
      const int64_t fit =
          result.kind == PlanArg::Output
              ? maxTensorElements() /
                    std::max<int64_t>(1, scanBytes[k] / static_cast<int64_t>(dtypeSize(
                                             plan_.outputs[static_cast<size_t>(result.index)].dtype)))
              : maxArenaBytes() / scanBytes[k];
      entries = std::max(std::min(entries, fit), std::min(entries, kept + 1));
    }
    auto allocateFor = [&](int64_t want) {
      ctx.symbolValues_[sym] = want;
      ctx.valueBound_[sym] = true;
      Status st = allocateDynamic(ctx, result, step.name, checkedMul(kept, scanBytes[k]));
      if (!st) {
        grownEntries[k] = want;
        // (What the storage holds at this length, never more than the entries' bytes.)
        scanCapacity[k] = std::min(checkedMul(want, scanBytes[k]), bytes(result));
      }
      ctx.valueBound_[sym] = false;
      return st;
    };
    Status st = allocateFor(entries);
    if (st && entries > kept + 1)
      st = allocateFor(kept + 1);
    if (st)
      return st;
    auto &storage = result.kind == PlanArg::Output
                        ? ctx.dynamicOutputs_[static_cast<size_t>(result.index)]
                        : ctx.dynamicBuffers_[static_cast<size_t>(result.index)];
    scanBase[k] = storage.data.get();
    return Status();
  };
  // Sets result k's entry dims from `shape` and allocates it (its dim 0 already known, or a
  // grown one's first entries).
  auto allocateScan = [&](size_t k, const std::vector<int64_t> &shape,
                          int64_t firstEntries) -> Status {
    if (grownSymbol[k] >= 0) {
      ctx.symbolValues_[static_cast<size_t>(grownSymbol[k])] = firstEntries;
      ctx.valueBound_[static_cast<size_t>(grownSymbol[k])] = false;
    }
    for (const PlanResultBind &b : plan_.resultBinds)
      if (b.step == static_cast<int64_t>(s) && b.result == static_cast<int64_t>(nc + k) &&
          b.dim >= 1) {
        if (static_cast<size_t>(b.dim) > shape.size())
          return fail("scan output " + std::to_string(k) + " has no dim " + std::to_string(b.dim));
        ctx.symbolValues_[static_cast<size_t>(b.symbol)] = shape[static_cast<size_t>(b.dim) - 1];
        ctx.valueBound_[static_cast<size_t>(b.symbol)] = true;
      }
    if (Status st = shapeProgram(ctx.symbolValues_, &ctx.valueBound_))
      return fail(st.message());
    if (grownSymbol[k] >= 0)
      return growScan(k, firstEntries, 0);
    const PlanArg &result = step.args[numIn + nc + k];
    if (Status st = allocateDynamic(ctx, result, step.name))
      return st;
    auto &storage = result.kind == PlanArg::Output
                        ? ctx.dynamicOutputs_[static_cast<size_t>(result.index)]
                        : ctx.dynamicBuffers_[static_cast<size_t>(result.index)];
    scanBase[k] = storage.data.get();
    scanCapacity[k] = bytes(result);
    return Status();
  };
  std::vector<void *> current(nc), next(nc);
  for (size_t k = 0; k < nc; ++k) {
    current[k] = args[2 + k]; // read only
    next[k] = args[numIn + k];
  }
  // The body's iteration, its condition (true while it runs) and the captures stay put.
  int64_t iteration = 0;
  bool again = true;
  uint8_t condOut = 0; // the body's bool output, read as a byte
  std::vector<void *> ins(args.begin(), args.begin() + numIn), outs(1 + numResults);
  ins[0] = &iteration;
  ins[1] = &again;
  outs[0] = &condOut;
  for (; cond && iteration < trips; ++iteration) {
    for (size_t k = 0; k < nc; ++k)
      ins[2 + k] = current[k];
    for (size_t k = 0; k < nc; ++k)
      outs[1 + k] = next[k];
    for (size_t k = 0; k < numScans; ++k) {
      if (deferred[k]) {
        outs[1 + nc + k] = entryScratch[k].get(); // (null: the body's own storage)
        continue;
      }
      int64_t at = checkedMul(iteration + 1, scanBytes[k]);
      if (at < 0 || at > scanCapacity[k])
        return fail("iteration " + std::to_string(iteration) + " runs past the length of scan "
                    "output " + std::to_string(k));
      outs[1 + nc + k] = scanBase[k] + iteration * scanBytes[k];
    }
    if (Status st = body.run(rc, ins.data(), outs.data()))
      return fail("iteration " + std::to_string(iteration) + ": " + st.message());
    for (size_t k = 0; k < numScans; ++k) {
      if (!deferred[k])
        continue;
      const size_t out = 1 + nc + k;
      const std::vector<int64_t> &shape = rc.outputShapes_[out];
      if (iteration == 0) {
        firstEntry[k] = shape;
        scanBytes[k] = tensorBytesAt(body.plan().outputs[out], rc.symbolValues_);
        if (Status st = allocateScan(
                k, shape, std::min<int64_t>(std::max<int64_t>(trips, 0), kFirstEntries)))
          return st;
      } else if (shape != firstEntry[k]) {
        return fail("iteration " + std::to_string(iteration) + " gives scan output " +
                    std::to_string(k) + " an entry of shape " + shapeText(shape) + " but " +
                    "iteration 0 one of shape " + shapeText(firstEntry[k]));
      }
      int64_t at = checkedMul(iteration + 1, scanBytes[k]);
      if (grownSymbol[k] >= 0 && iteration + 1 > grownEntries[k]) {
        const int64_t entries = std::min(std::max<int64_t>(trips, 0),
                                         std::max(checkedMul(iteration, 2), iteration + 1));
        if (Status st = growScan(k, entries, iteration))
          return st;
      }
      if (scanBytes[k] < 0 || at < 0 || at > scanCapacity[k])
        return fail("iteration " + std::to_string(iteration) + " runs past the length of scan "
                    "output " + std::to_string(k));
      // What the body wrote the entry to: its own storage, or scratch of the bound size.
      const int64_t held = body.dynamicOutput_[out]
                               ? rc.dynamicOutputs_[out].capacity
                               : tensorBytesAt(body.plan().outputs[out], rc.boundValues_);
      if (scanBytes[k] > held)
        return fail("scan output " + std::to_string(k) + "'s entry is larger than the space "
                    "the body wrote it to");
      if (scanBytes[k] > 0)
        std::memcpy(scanBase[k] + iteration * scanBytes[k],
                    body.outputData(rc, out, outs.data()), static_cast<size_t>(scanBytes[k]));
    }
    cond = condOut != 0;
    for (size_t k = 0; k < nc; ++k) {
      // The next iteration reads what this one wrote and writes the other buffer.
      void *result = args[numIn + k], *spare = ctx.carriedSpare_[s][k].get();
      current[k] = next[k];
      next[k] = next[k] == result ? spare : result;
    }
  }
  for (size_t k = 0; k < nc; ++k)
    if (current[k] != args[numIn + k] && carriedBytes[k] > 0)
      std::memcpy(args[numIn + k], current[k], static_cast<size_t>(carriedBytes[k]));
  for (size_t k = 0; k < numScans; ++k) // no entry: entry dims of 0
    if (deferred[k] && iteration == 0)
      if (Status st = allocateScan(
              k, std::vector<int64_t>(body.plan().outputs[1 + nc + k].dims.size(), 0), 0))
        return st;
  // Scan results whose length is a data-dependent size (max_trips) take the iterations run;
  // the others must be filled exactly.
  std::vector<bool> counted(numScans, false);
  for (const PlanResultBind &b : plan_.resultBinds)
    if (b.step == static_cast<int64_t>(s) && b.result >= static_cast<int64_t>(nc) &&
        b.result < static_cast<int64_t>(numResults) && b.dim == 0) {
      counted[static_cast<size_t>(b.result) - nc] = true;
      // (A bound reading sizes read from data: set at it when the step started; a grown
      // result's: the entries it has room for.)
      const size_t sym = static_cast<size_t>(b.symbol);
      const int64_t bound = plan_.isUnbounded(sym) ? grownEntries[static_cast<size_t>(b.result) - nc]
                            : dynamicSymbol_[sym] ? ctx.symbolValues_[sym]
                                                  : ctx.boundValues_[sym];
      if (iteration > bound)
        return fail("the loop ran " + std::to_string(iteration) + " iterations, more than its "
                    "bound " + std::to_string(bound));
      ctx.symbolValues_[static_cast<size_t>(b.symbol)] = iteration;
      ctx.valueBound_[static_cast<size_t>(b.symbol)] = true;
    }
  for (size_t k = 0; k < numScans; ++k)
    if (!counted[k] && checkedMul(iteration, scanBytes[k]) != scanCapacity[k])
      return fail("the loop ended after " + std::to_string(iteration) +
                  " iterations but its scan outputs hold " +
                  std::to_string(scanBytes[k] ? scanCapacity[k] / scanBytes[k] : 0) +
                  " entries (an early exit of a loop with scan outputs needs their length "
                  "bounded: max_trips)");
  return Status();
}

Status Executor::run(RunContext &ctx, const void *const *inputs,
                     const OutputAllocator &allocate) const {
  const size_t n = plan_.outputs.size();
  auto bytesOf = [&](size_t i) { // the output's current shape: checked by bind()
    size_t bytes = dtypeSize(plan_.outputs[i].dtype);
    for (int64_t d : ctx.outputShape(i))
      bytes *= static_cast<size_t>(d);
    return bytes;
  };
  std::vector<void *> out(n);
  auto give = [&](size_t i) { // (an empty output may get no memory)
    out[i] = allocate(i, ctx.outputShape(i));
    return out[i] || bytesOf(i) == 0 ? Status()
                  : Status::error("output " + std::to_string(i) + " ('" + plan_.outputs[i].name +
                                  "'): the allocator returned no memory");
  };
  const Plan &runs = ctx.variant_ >= 0 ? plan_.regions[variantRegion(plan_, ctx.variant_)] : plan_;
  if (runs.binds.empty() && runs.resultBinds.empty()) { // every output's shape is known now: written in place
    for (size_t i = 0; i < n; ++i)
      if (Status s = give(i))
        return s;
    return run(ctx, inputs, out.data());
  }
  std::vector<std::unique_ptr<uint8_t[]>> bounded(n);
  std::vector<void *> space(n);
  for (size_t i = 0; i < n; ++i) {
    bounded[i].reset(new (std::nothrow) uint8_t[std::max<size_t>(bytesOf(i), 1)]);
    if (!bounded[i])
      return Status::error("output '" + plan_.outputs[i].name + "': cannot allocate its space");
    space[i] = bounded[i].get();
  }
  if (Status s = run(ctx, inputs, space.data()))
    return s;
  // (A variant's run is its region's: outputs sized by data are in that context's storage.)
  const bool variant = ctx.variant_ >= 0;
  const size_t vr = variant ? variantRegion(plan_, ctx.variant_) : 0;
  const Executor &ran = variant ? *regions_[vr] : *this;
  const RunContext &ranIn = variant ? *ctx.regionContexts_[vr] : ctx;
  for (size_t i = 0; i < n; ++i) {
    if (Status s = give(i))
      return s;
    if (size_t bytes = bytesOf(i))
      std::memcpy(out[i], ran.outputData(ranIn, i, space.data()), bytes);
  }
  return Status();
}

} // namespace strata::runtime
