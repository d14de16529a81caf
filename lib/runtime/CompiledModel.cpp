// The JIT engine: graph -> passes -> per-op lowering -> LLVM JIT, run over one planned arena.
#include "strata/runtime/CompiledModel.h"

#include "strata/codegen/Jit.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Verifier.h"
#include "strata/lower/Lower.h"
#include "strata/support/ThreadPool.h"

#include <cstring>
#include <fmt/format.h>
#include <unordered_map>

namespace strata::runtime {

namespace {

llvm::Error makeError(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

constexpr int64_t kArenaAlign = 64;

int64_t alignUp(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

std::string nodeName(const Op &op) {
  if (!op.location().empty())
    return op.location();
  if (op.numResults() && !op.result(0)->name().empty())
    return op.result(0)->name();
  return "<unnamed>";
}

} // namespace

std::string CompileOptions::defaultJitPipeline() {
  // The standard pipeline minus `layout-nchwc`: lowering has no `relayout` or blocked conv yet.
  std::string p(PassManager::defaultPipeline());
  const std::string drop = "layout-nchwc,";
  if (size_t at = p.find(drop); at != std::string::npos)
    p.erase(at, drop.size());
  return p;
}

CompiledModel::~CompiledModel() = default;

unsigned CompiledModel::threads() const { return pool_ ? pool_->threads() : 1; }

// Builds a CompiledModel: owns the value -> argument-slot map while the plan is put together.
class ModelCompiler {
public:
  ModelCompiler(Graph &g, const CompileOptions &opts) : g_(g), opts_(opts) {}

  llvm::Expected<std::unique_ptr<CompiledModel>> compile() {
    model_.reset(new CompiledModel());
    if (!opts_.pipeline.empty()) {
      PassManager pm;
      PassContext ctx;
      llvm::Error err = pm.parsePipeline(opts_.pipeline);
      if (!err)
        err = pm.run(g_, ctx);
      if (err)
        return makeError("jit: optimizing: " + llvm::toString(std::move(err)));
    }
    if (auto err = collectInterface())
      return err;

    // Intermediates get arena offsets from the memory plan. In-place reuse is off: kernels are
    // compiled with noalias buffers, so a result may never share memory with an operand.
    MemoryPlanOptions mpo;
    mpo.alignment = kArenaAlign;
    mpo.inPlace = false;
    auto plan = planMemory(g_, mpo);
    if (!plan)
      return makeError("jit: memory plan: " + llvm::toString(plan.takeError()));
    for (const BufferAssignment &b : plan->buffers)
      slots_[b.value] = {ArgSlot::Arena, b.offset, nullptr};
    arenaEnd_ = alignUp(plan->arenaPeakBytes, kArenaAlign);

    auto jit = codegen::LoopJit::create(opts_.target, opts_.optLevel);
    if (!jit)
      return makeError("jit: " + llvm::toString(jit.takeError()));
    model_->jit_ = std::move(*jit);
    model_->pool_ = std::make_unique<ThreadPool>(opts_.threads);

    for (Op &op : g_.ops())
      if (auto err = compileTopLevel(op))
        return err;
    if (auto err = resolveOutputs())
      return err;
    model_->arenaBytes_ = arenaEnd_;
    return std::move(model_);
  }

private:
  llvm::Error collectInterface() {
    auto staticShape = [](const Value &v, const std::string &what) -> llvm::Expected<Shape> {
      Shape s;
      for (const Dim &d : v.type().dims) {
        if (!d.isStatic())
          return makeError("jit: " + what + " '" + v.name() + "' has symbolic dim '" + d.symbol +
                           "': dynamic shapes not supported by the jit engine yet");
        s.push_back(d.size);
      }
      return s;
    };
    for (unsigned i = 0; i < g_.numInputs(); ++i) {
      Value *in = g_.input(i);
      auto s = staticShape(*in, "input");
      if (!s)
        return s.takeError();
      model_->inputs_.push_back({in->name(), in->type().dtype, *s});
      slots_[in] = {ArgSlot::Input, i, nullptr};
    }
    for (unsigned i = 0; i < g_.numOutputs(); ++i) {
      Value *out = g_.output(i);
      auto s = staticShape(*out, "output");
      if (!s)
        return s.takeError();
      model_->outputs_.push_back({g_.outputName(i), out->type().dtype, *s});
      // The first output naming a kernel-written value receives it directly.
      if (!out->isGraphInput() && out->definingOp()->kind() != OpKind::Constant &&
          !slots_.count(out))
        slots_[out] = {ArgSlot::Output, i, nullptr};
    }
    return llvm::Error::success();
  }

  // Constants stay as shared buffers referenced by the plan (never copied into the arena).
  llvm::Error addConstant(const Op &op) {
    const Tensor &t = op.attr("value").getTensor();
    if (!t.valid())
      return makeError("jit: constant (node " + nodeName(op) + ") has no data (elided blob)");
    model_->constants_.push_back(t.buffer());
    slots_[op.result()] = {ArgSlot::Constant, 0, t.rawData()};
    return llvm::Error::success();
  }

  llvm::Error compileTopLevel(Op &op) {
    if (op.kind() == OpKind::Constant)
      return addConstant(op);
    auto f = op.kind() == OpKind::Kernel ? lower::lowerKernel(op) : lower::lowerOp(op);
    if (f)
      return addStep(op, std::move(*f));
    std::string msg = llvm::toString(f.takeError());
    // A fused kernel whose region lowering cannot inline yet runs unfused: each region op
    // becomes its own native kernel, region temporaries living past the planned arena.
    if (op.kind() == OpKind::Kernel && op.numRegions() == 1)
      return compileRegion(op);
    return makeError(fmt::format("jit: op '{}' (node {}): {}", op.opName(), nodeName(op), msg));
  }

  llvm::Error compileRegion(Op &kernel) {
    Graph &region = kernel.region(0);
    if (region.numInputs() != kernel.numOperands() || region.numOutputs() != kernel.numResults())
      return makeError("jit: kernel (node " + nodeName(kernel) + "): region interface mismatch");
    for (unsigned i = 0; i < region.numInputs(); ++i)
      slots_[region.input(i)] = slotOf(kernel.operand(i));
    std::unordered_map<const Value *, unsigned> regionOutput;
    for (unsigned i = 0; i < region.numOutputs(); ++i)
      regionOutput.emplace(region.output(i), i);
    for (Op &op : region.ops()) {
      if (op.kind() == OpKind::Constant) {
        if (auto err = addConstant(op))
          return err;
        continue;
      }
      for (unsigned r = 0; r < op.numResults(); ++r) {
        Value *v = op.result(r);
        if (auto it = regionOutput.find(v); it != regionOutput.end()) {
          slots_[v] = slotOf(kernel.result(it->second));
          continue;
        }
        // Region temporaries: a private, never-reused stretch past the planned arena.
        Shape s;
        for (const Dim &d : v->type().dims) {
          if (!d.isStatic())
            return makeError("jit: dynamic shapes not supported by the jit engine yet");
          s.push_back(d.size);
        }
        int64_t bytes = numElements(s) * static_cast<int64_t>(dtypeSize(v->type().dtype));
        slots_[v] = {ArgSlot::Arena, arenaEnd_, nullptr};
        arenaEnd_ = alignUp(arenaEnd_ + bytes, kArenaAlign);
      }
      if (auto err = compileTopLevel(op))
        return err;
    }
    // A region output that is a region input or constant needs a copy; not produced by `fuse`.
    for (unsigned i = 0; i < region.numOutputs(); ++i) {
      const Value *out = region.output(i);
      if (out->isGraphInput() || out->definingOp()->kind() == OpKind::Constant)
        return makeError("jit: kernel (node " + nodeName(kernel) +
                         "): region output passes through an input; not supported yet");
    }
    return llvm::Error::success();
  }

  ArgSlot slotOf(const Value *v) const {
    auto it = slots_.find(v);
    return it == slots_.end() ? ArgSlot{ArgSlot::Arena, -1, nullptr} : it->second;
  }

  llvm::Error addStep(const Op &op, loop::LoopFunction f) {
    std::string where = fmt::format("op '{}' (node {})", op.opName(), nodeName(op));
    if (f.params.size() != op.numOperands() + op.numResults())
      return makeError("jit: " + where + ": lowered function has an unexpected parameter list");
    for (const loop::Param &p : f.params)
      if (!p.isBuffer())
        return makeError("jit: " + where +
                         ": dynamic shapes not supported by the jit engine yet");
    if (auto err = loop::verifyFunction(f))
      return makeError("jit: " + where + ": lowered loop IR is invalid: " +
                       llvm::toString(std::move(err)));
    if (opts_.schedule) {
      // SIMD width from the target: 64 bytes with AVX-512, 32 with AVX2, else SSE's 16.
      loop::ScheduleTarget st;
      const std::string &feats = model_->jit_->target().features;
      st.vectorBytes = feats.find("+avx512f") != std::string::npos ? 64
                       : feats.find("+avx2") != std::string::npos  ? 32
                                                                   : 16;
      llvm::Error err = loop::applyDefaultSchedule(f, st);
      if (!err)
        err = loop::verifyFunction(f);
      if (err)
        return makeError("jit: " + where + ": default schedule: " + llvm::toString(std::move(err)));
    }
    // Kernel names must be unique symbols; LoopJit gives each compile its own dylib anyway.
    f.name = fmt::format("k{}_{}", model_->steps_.size(), f.name);
    codegen::CodegenOptions co;
    co.noalias = true;
    auto k = model_->jit_->compile(f, co);
    if (!k)
      return makeError("jit: " + where + ": codegen: " + llvm::toString(k.takeError()));

    PlanStep step;
    step.name = where;
    step.packed = k->packed;
    for (unsigned i = 0; i < op.numOperands(); ++i)
      step.args.push_back(slotOf(op.operand(i)));
    for (unsigned i = 0; i < op.numResults(); ++i)
      step.args.push_back(slotOf(op.result(i)));
    for (const ArgSlot &s : step.args)
      if (s.kind == ArgSlot::Arena && s.index < 0)
        return makeError("jit: " + where + ": an argument has no buffer");
    step.argPointers.resize(step.args.size());
    model_->steps_.push_back(std::move(step));
    return llvm::Error::success();
  }

  llvm::Error resolveOutputs() {
    for (unsigned i = 0; i < g_.numOutputs(); ++i) {
      ArgSlot s = slotOf(g_.output(i));
      CompiledModel::OutputSource src;
      src.kind = s.kind;
      src.index = s.kind == ArgSlot::Output && s.index == i ? i : s.index;
      src.constant = s.constant;
      model_->outputSources_.push_back(src);
    }
    return llvm::Error::success();
  }

  Graph &g_;
  const CompileOptions &opts_;
  std::unique_ptr<CompiledModel> model_;
  std::unordered_map<const Value *, ArgSlot> slots_;
  int64_t arenaEnd_ = 0;
};

llvm::Expected<std::unique_ptr<CompiledModel>> compileModel(Graph &g, const CompileOptions &opts) {
  return ModelCompiler(g, opts).compile();
}

llvm::Expected<std::vector<Tensor>> CompiledModel::run(const std::vector<Tensor> &inputs) {
  // Every check happens before the first kernel, so a bad call leaves no partial state.
  if (inputs.size() != inputs_.size())
    return makeError(fmt::format("jit: expected {} inputs, got {}", inputs_.size(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const IOType &want = inputs_[i];
    const Tensor &t = inputs[i];
    std::string what = fmt::format("input {} ('{}')", i, want.name);
    if (t.dtype() != want.dtype)
      return makeError(fmt::format("jit: {}: expected dtype {}, got {}", what,
                                   dtypeName(want.dtype), dtypeName(t.dtype())));
    if (t.rank() != static_cast<int64_t>(want.shape.size()))
      return makeError(fmt::format("jit: {}: expected rank {}, got {} (shape [{}])", what,
                                   want.shape.size(), t.rank(), shapeToString(t.shape())));
    for (size_t d = 0; d < want.shape.size(); ++d)
      if (t.shape()[d] != want.shape[d])
        return makeError(fmt::format("jit: {}: dim {} is {} but the model expects {}", what, d,
                                     t.shape()[d], want.shape[d]));
    if (!t.valid() && t.byteSize() != 0)
      return makeError(fmt::format("jit: {}: tensor has no data", what));
  }

  if (!arena_) {
    auto *mem = static_cast<uint8_t *>(
        std::aligned_alloc(kArenaAlign, static_cast<size_t>(std::max<int64_t>(arenaBytes_, kArenaAlign))));
    if (!mem)
      return makeError(fmt::format("jit: cannot allocate a {}-byte arena", arenaBytes_));
    arena_.reset(mem);
    ++arenaAllocations_;
  }

  std::vector<Tensor> outputs;
  outputs.reserve(outputs_.size());
  for (const IOType &o : outputs_)
    outputs.emplace_back(o.dtype, o.shape);

  // Kernels' parallel loops (strata_parallel_for) run on this model's pool.
  ThreadPool::ScopedPool scope(pool_.get());
  for (PlanStep &step : steps_) {
    for (size_t a = 0; a < step.args.size(); ++a) {
      const ArgSlot &s = step.args[a];
      switch (s.kind) {
      case ArgSlot::Arena:
        step.argPointers[a] = arena_.get() + s.index;
        break;
      case ArgSlot::Input:
        step.argPointers[a] = const_cast<void *>(inputs[s.index].rawData());
        break;
      case ArgSlot::Output:
        step.argPointers[a] = outputs[s.index].rawData();
        break;
      case ArgSlot::Constant:
        step.argPointers[a] = const_cast<void *>(s.constant);
        break;
      }
    }
    step.packed(step.argPointers.data());
  }

  // Outputs not written by a kernel: copies of inputs, constants or another output's value.
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputSource &src = outputSources_[i];
    const void *from = nullptr;
    if (src.kind == ArgSlot::Output && src.index == static_cast<int64_t>(i))
      continue;
    if (src.kind == ArgSlot::Output)
      from = outputs[src.index].rawData();
    else if (src.kind == ArgSlot::Input)
      from = inputs[src.index].rawData();
    else if (src.kind == ArgSlot::Constant)
      from = src.constant;
    else
      from = arena_.get() + src.index;
    if (size_t n = outputs[i].byteSize())
      std::memcpy(outputs[i].rawData(), from, n);
  }
  return outputs;
}

} // namespace strata::runtime
