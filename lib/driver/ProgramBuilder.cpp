// Graph -> Program: passes, lowering and scheduling of every top-level op, argument placement
// (inputs, outputs, constants in the weights blob, intermediates as plan buffers with live ranges).
#include "strata/driver/Program.h"
#include "strata/support/CrashContext.h"
#include "strata/support/Error.h"

#include "strata/graph/ControlFlow.h"
#include "strata/graph/Einsum.h"
#include "strata/graph/Ops.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Verifier.h"
#include "strata/loop/Visitor.h"
#include "strata/lower/Capabilities.h"
#include "strata/lower/Lower.h"

#include "llvm/Support/xxhash.h"

#include <cstring>
#include <functional>
#include <fmt/format.h>
#include <map>
#include <set>
#include <unordered_map>

namespace strata::driver {

using namespace strata::runtime;

namespace {

constexpr int64_t kAlign = 64;

int64_t alignUp(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

std::string nodeName(const Op &op) {
  if (!op.location().empty())
    return op.location();
  if (op.numResults() && !op.result(0)->name().empty())
    return op.result(0)->name();
  return "<unnamed>";
}

// Kernel temporaries (`allocate ... global` around the body, or around the body of a lifted
// kernel's loop over its batch) whose dims are constants or the function's scalar parameters (its
// symbols and formula dims) become buffer parameters, so the plan places them in the arena: a run
// allocates nothing inside kernels (a fused kernel's temporary over run-time sizes was a malloc
// and a memset of megabytes per run). Every lowering writes its temporaries fully before reading
// them, so losing the allocation's zero fill changes nothing.
std::vector<loop::Buffer> peelScratch(loop::LoopFunction &f) {
  std::set<std::string> scalars;
  for (const loop::Param &p : f.params)
    if (!p.isBuffer())
      scalars.insert(p.scalar->name);
  auto plannable = [&](const loop::Expr &d) {
    return d.asInt().has_value() ||
           (d.kind() == loop::ExprKind::Var && scalars.count(d->var->name) != 0);
  };
  std::vector<loop::Buffer> scratch;
  std::function<loop::Stmt(const loop::Stmt &)> peel = [&](const loop::Stmt &s) -> loop::Stmt {
    if (s && s->kind == loop::StmtKind::Allocate && s->buffer->scope == loop::MemoryScope::Global) {
      // (Sized as the product of its dims: a contiguous buffer.)
      if (std::all_of(s->buffer->shape.begin(), s->buffer->shape.end(), plannable) &&
          loop::hasContiguousStrides(*s->buffer)) {
        scratch.push_back(s->buffer);
        return peel(s->body);
      }
    }
    return s;
  };
  loop::Stmt body = peel(f.body);
  if (body && body->kind == loop::StmtKind::For && body->forKind == loop::ForKind::Serial)
    body = loop::forLoop(body->var, body->min, body->extent, body->forKind, peel(body->body));
  f.body = body;
  for (const loop::Buffer &b : scratch)
    f.addBuffer(b, loop::ParamRole::InOut);
  return scratch;
}

class ProgramBuilder {
public:
  ProgramBuilder(Graph &g, const ProgramOptions &opts)
      : g_(g), opts_(opts), root_(this), plan_(&prog_.plan), pipeline_(opts.pipeline) {}
  // A control-flow op's region, compiled into `plan` with its kernels and constants in the
  // root's program (one kernel table and weights blob for the whole model).
  ProgramBuilder(Graph &region, const ProgramOptions &opts, ProgramBuilder &root, Plan &plan,
                 std::string pipeline, bool loopBody = false)
      : g_(region), opts_(opts), root_(&root), plan_(&plan), pipeline_(std::move(pipeline)),
        loopBody_(loopBody) {}

  llvm::Expected<Program> build(const std::vector<ShapeVariant> &variants = {}) {
    if (auto err = buildPlan())
      return std::move(err);
    for (const ShapeVariant &v : variants) {
      Plan region;
      ProgramBuilder sub(*v.graph, opts_, *this, region, opts_.pipeline); // optimized as `g`
      sub.variant_ = true;
      if (auto err = sub.buildPlan())
        return withContext(std::move(err), inPhase("compiling the variant for the given shapes"));
      prog_.plan.variants.push_back({v.shapes, static_cast<int64_t>(prog_.plan.regions.size())});
      prog_.plan.regions.push_back(std::move(region));
    }
    if (auto err = packWeights())
      return std::move(err);
    prog_.plan.numKernels = static_cast<int64_t>(prog_.kernels.size());
    shareTables(prog_.plan);
    return std::move(prog_);
  }

private:
  // The kernel count, weights size and constants of the whole model in every region plan.
  void shareTables(Plan &p) {
    for (Plan &r : p.regions) {
      r.numKernels = prog_.plan.numKernels;
      r.weightsBytes = prog_.plan.weightsBytes;
      r.constants = prog_.plan.constants;
      shareTables(r);
    }
  }

  bool isRegion() const { return root_ != this; }
  Program &prog() { return root_->prog_; }

  // Optimizes the graph and builds its plan (the root's or a region's).
  llvm::Error buildPlan() {
    if (!pipeline_.empty()) {
      PassManagerOptions pmo;
      if (opts_.fault.rung == FaultInjection::Rung::GraphPass)
        pmo.afterPass = [this](std::string_view pass, bool changed, double, Graph &g) {
          if (changed && pass == opts_.fault.name)
            perturbLargestConstant(g);
          return llvm::Error::success();
        };
      PassManager pm(pmo);
      PassContext ctx;
      ctx.options = passOptionsFor(opts_.scheduleTarget);
      ctx.options.winogradTile = opts_.winogradTile;
      llvm::Error err = pm.parsePipeline(pipeline_);
      if (!err)
        err = pm.run(g_, ctx);
      if (err)
        return withContext(std::move(err), inPhase("optimizing"));
    }
    // Which intermediates share a buffer (in place): the graph memory planner's first step.
    sharing_ = planBufferSharing(g_);
    if (auto err = collectInterface())
      return err;
    if (auto err = collectChecks())
      return err;
    for (Op &op : g_.ops()) {
      ++prog().graphOps;
      if (auto err = compileTopLevel(op))
        return err;
    }
    return resolveOutputs();
  }

  Plan &plan() { return *plan_; }
  const Plan &plan() const { return *plan_; }

  // The input symbol `s` (added when new).
  int symbolIndex(const std::string &s) {
    auto &syms = plan().symbols;
    for (size_t i = 0; i < syms.size(); ++i)
      if (syms[i] == s && !plan().isDerived(i))
        return static_cast<int>(i);
    syms.push_back(s);
    plan().formulas.push_back("");
    return static_cast<int>(syms.size() - 1);
  }

  bool isInputSymbol(const std::string &s) const {
    const auto &syms = plan().symbols;
    for (size_t i = 0; i < syms.size(); ++i)
      if (syms[i] == s && !plan().isDerived(i))
        return true;
    return false;
  }

  // The symbol standing for symbolic dim `d` of `what` in plan sizes: an input symbol, or a
  // derived one computing the formula from input symbols when they are bound (one per formula).
  llvm::Expected<int> dimSymbol(const Dim &d, const std::string &what) {
    std::set<std::string> used;
    d.expr.collectSymbols(used);
    for (const std::string &u : used)
      if (!isInputSymbol(u))
        return makeError(what + " has symbolic dim " + d.str() + ": '" + u +
                         "' is bound by no input");
    if (const std::string *sym = d.symbolName())
      return symbolIndex(*sym);
    const std::string formula = d.expr.str();
    auto &syms = plan().symbols;
    for (size_t i = 0; i < syms.size(); ++i)
      if (plan().isDerived(i) && plan().formulas[i] == formula)
        return static_cast<int>(i);
    syms.push_back(formula);
    plan().formulas.push_back(formula);
    return static_cast<int>(syms.size() - 1);
  }

  llvm::Expected<PlanTensor> interfaceTensor(const Value &v, const std::string &name, bool input) {
    PlanTensor t{name, v.type().dtype, {}};
    for (const Dim &d : v.type().dims) {
      if (d.isStatic()) {
        t.dims.push_back({d.size, -1});
        continue;
      }
      const std::string *sym = d.symbolName();
      if (input && !sym && isRegion()) { // a formula of the enclosing plan's symbols
        auto index = dimSymbol(d, "region input '" + name + "'");
        if (!index)
          return index.takeError();
        t.dims.push_back({0, *index});
        continue;
      }
      if (input && !sym)
        return makeError("input '" + name + "' has symbolic dim " + d.str() +
                         ", a formula; the compiled engines bind inputs' dims to plain symbols");
      if (input) {
        t.dims.push_back({0, symbolIndex(*sym)});
        continue;
      }
      auto index = dimSymbol(d, "output '" + name + "'");
      if (!index)
        return index.takeError();
      t.dims.push_back({0, *index});
    }
    return t;
  }

  // The data-dependent sizes (Plan::bounds, graph/ValueSymbols.h): such an op's result dim is
  // a symbol no input binds; its count operand's value binds it before the op's step runs (an
  // if's: the branch taken, after it). Until then it stands at its bound (over the symbols
  // declared before it).
  llvm::Error collectValueSymbols() {
    for (const Op &op : g_.ops()) {
      // A count operand's op, or control flow whose results' dims its run decides.
      for (const ValueBoundDim &vb : dataDependentDims(op))
        if (auto err = addValueSymbol(op, vb))
          return err;
    }
    return llvm::Error::success();
  }

  llvm::Error addValueSymbol(const Op &op, const ValueBoundDim &vb) {
    const std::string *sym = dataDependentSymbol(op, vb);
    if (!sym)
      return llvm::Error::success(); // a static count (a specialized graph): nothing to bind
    if (isInputSymbol(*sym))
      return makeError(diagnose(op, "the result's data-dependent dim '" + *sym +
                                        "' is also another tensor's symbol"));
    // A control step's results are written by its regions into space placed before it runs,
    // except a loop's scan results, allocated once the first entry's size is known (and grown
    // as it runs where their length has no bound: early_exit).
    if (!vb.bound && isControlFlow(op) && op.kind() != OpKind::Loop)
      return makeError(diagnose(op, "result " + std::to_string(vb.result) + " dim " +
                                        std::to_string(vb.dim) + " ('" + *sym +
                                        "') depends on a size read from data inside a region, "
                                        "which nothing bounds before the step runs: "
                                        "unsupported"));
    if (vb.bound) {
      std::set<std::string> used;
      vb.bound->collectSymbols(used);
      const std::vector<bool> readsUnbounded = runtime::symbolsReadingUnbounded(plan());
      for (const std::string &u : used) {
        if (!isInputSymbol(u))
          return makeError(diagnose(op, "the operand's dim '" + u + "' is bound by no input"));
        // A control step's result bound must be known when the step starts: a size read from
        // data before it does for a loop's scan length (its results allocated at that bound
        // when the step starts), not for other results placed before it runs.
        const bool scanLength = op.kind() == OpKind::Loop && vb.dim == 0;
        for (size_t i = 0; i < plan().symbols.size(); ++i)
          if (isControlFlow(op) && !scanLength && plan().symbols[i] == u && readsUnbounded[i])
            return makeError(diagnose(op, "result " + std::to_string(vb.result) + " dim " +
                                              std::to_string(vb.dim) + " ('" + *sym +
                                              "') is bounded by '" + u +
                                              "', a size read from data: unsupported"));
      }
    }
    plan().symbols.push_back(*sym);
    plan().formulas.push_back("");
    plan().bounds.resize(plan().symbols.size());
    plan().bounds.back() = vb.bound ? vb.bound->str() : kUnboundedSize;
    if (op.kind() == OpKind::Arange && !ops::ArangeOp(op).invalid().empty()) {
      plan().invalid.resize(plan().symbols.size());
      plan().invalid.back() = ops::ArangeOp(op).invalid();
    }
    return llvm::Error::success();
  }

  // The value-bound symbol named `name`, or -1.
  int valueSymbol(const std::string &name) const {
    for (size_t i = 0; i < plan().symbols.size(); ++i)
      if (plan().isValueBound(i) && plan().symbols[i] == name)
        return static_cast<int>(i);
    return -1;
  }

  llvm::Error collectInterface() {
    // A region's inputs bind the enclosing plan's symbols by name, those of formulas included.
    if (isRegion())
      for (unsigned i = 0; i < g_.numInputs(); ++i)
        for (const Dim &d : g_.input(i)->type().dims) {
          std::set<std::string> used;
          if (!d.isStatic())
            d.expr.collectSymbols(used);
          for (const std::string &u : used)
            symbolIndex(u);
        }
    for (unsigned i = 0; i < g_.numInputs(); ++i) {
      Value *in = g_.input(i);
      auto t = interfaceTensor(*in, in->name(), true);
      if (!t)
        return t.takeError();
      plan().inputs.push_back(std::move(*t));
      slots_[in] = {PlanArg::Input, i};
    }
    for (unsigned i : sizeDecidingInputs(g_)) // the library's callers must give these
      plan().sizeInputs.push_back(i);
    if (auto err = collectValueSymbols())
      return err;
    // Kernels receive each symbol as a parameter named after it: the names must differ.
    const auto &syms = plan().symbols; // input and value-bound symbols so far
    for (size_t a = 0; a < syms.size(); ++a)
      for (size_t b = a + 1; b < syms.size(); ++b)
        if (lower::symbolParamName(syms[a]) == lower::symbolParamName(syms[b]))
          return makeError("symbolic dims '" + syms[a] + "' and '" + syms[b] +
                           "' are too alike to tell apart in generated code");
    for (unsigned i = 0; i < g_.numOutputs(); ++i) {
      Value *out = g_.output(i);
      auto t = interfaceTensor(*out, g_.outputName(i), false);
      if (!t)
        return t.takeError();
      plan().outputs.push_back(std::move(*t));
      // The first output naming a kernel-written value receives it directly.
      if (!out->isGraphInput() && out->definingOp()->kind() != OpKind::Constant &&
          !slots_.count(out))
        slots_[out] = {PlanArg::Output, i};
    }
    return llvm::Error::success();
  }

  // The equalities of symbolic dims that ops' shape functions assumed (an operand's symbolic dim
  // broadcast against another size, a matmul's contracted dims, concat's other dims): checked
  // when the inputs are bound, since the kernels index by the result's extents.
  llvm::Error collectChecks() {
    std::set<std::pair<std::string, std::string>> seen;
    llvm::Error err = llvm::Error::success();
    // got == want (or got >= want with `atLeast`) when bound, unless it holds as formulas;
    // `why` follows the op's name in the message.
    auto require = [&](const Op &op, const Dim &got, const Dim &want, const std::string &what,
                       bool atLeast = false, const std::string &why = "") {
      // (A static dim against a symbolic bound: a dim at least a run-time amount.)
      if (err || (got.isStatic() && !(atLeast && !want.isStatic())) || (!atLeast && got == want))
        return;
      std::set<std::string> used;
      got.asExpr().collectSymbols(used);
      want.asExpr().collectSymbols(used);
      for (const std::string &u : used)
        if (!isInputSymbol(u)) {
          err = makeError(diagnose(op, what + " is " + got.str() + ": '" + u +
                                           "' is bound by no input"));
          return;
        }
      std::string lhs = got.asExpr().str(), rhs = want.asExpr().str();
      if (seen.insert({lhs, (atLeast ? ">=" : "") + rhs}).second)
        plan().checks.push_back(
            {lhs, rhs,
             what + " of op '" + std::string(op.opName()) + "' (node \"" + nodeName(op) + "\")" +
                 why,
             atLeast});
    };
    // `dims` right-aligned against `out` (numpy broadcasting): a dim that is not 1 must equal.
    auto broadcastInto = [&](const Op &op, unsigned i, const std::vector<Dim> &dims,
                             const std::vector<Dim> &out) {
      for (size_t d = 0; d < dims.size() && d < out.size(); ++d) {
        const Dim &got = dims[dims.size() - 1 - d], &want = out[out.size() - 1 - d];
        if (!(got.isStatic() && got.size == 1))
          require(op, got, want,
                  "operand " + std::to_string(i) + " dim " + std::to_string(dims.size() - 1 - d));
      }
    };
    // This plan's ops and its kernels' (an if's or loop's regions are plans of their own, with
    // checks of their own over the sizes they decide).
    std::function<void(const Graph &, const std::function<void(const Op &)> &)> walk =
        [&](const Graph &graph, const std::function<void(const Op &)> &fn) {
          for (const Op &op : graph.ops()) {
            fn(op);
            if (!isControlFlow(op))
              for (unsigned r = 0; r < op.numRegions(); ++r)
                walk(op.region(r), fn);
          }
        };
    walk(g_, [&](const Op &op) {
      if (op.numResults() == 0)
        return;
      const std::vector<Dim> &out = op.result(0)->type().dims;
      if (op.hasTrait(T_ELEMENTWISE) || op.kind() == OpKind::Expand) {
        for (unsigned i = 0; i < op.numOperands(); ++i)
          broadcastInto(op, i, op.operand(i)->type().dims, out);
      } else if (op.kind() == OpKind::MatMul && op.numOperands() == 2) {
        const auto &a = op.operand(0)->type().dims, &b = op.operand(1)->type().dims;
        if (a.size() >= 2 && b.size() >= 2) {
          require(op, a.back(), b[b.size() - 2], "operand 0's contracted dim");
          require(op, b[b.size() - 2], a.back(), "operand 1's contracted dim");
          broadcastInto(op, 0, std::vector<Dim>(a.begin(), a.end() - 2),
                        std::vector<Dim>(out.begin(), out.end() - 2));
          broadcastInto(op, 1, std::vector<Dim>(b.begin(), b.end() - 2),
                        std::vector<Dim>(out.begin(), out.end() - 2));
        }
      } else if (op.kind() == OpKind::Conv || op.kind() == OpKind::Pool) {
        // A window must fit its padded input once: each symbolic spatial output size >= 1.
        const bool blocked = op.kind() == OpKind::Conv ? ops::ConvOp(op).layout() != 0
                                                       : ops::PoolOp(op).layout() != 0;
        for (size_t d = 2; d + (blocked ? 1 : 0) < out.size(); ++d)
          require(op, out[d], Dim(1), "the output size in spatial dim " + std::to_string(d - 2),
                  true, ", whose window must fit its padded input,");
      } else if (op.kind() == OpKind::WinogradOutput) {
        // The conv it replaced: its window must fit its padded input (each size >= 1).
        const std::vector<Dim> size = ops::WinogradOutputOp(op).output_size();
        for (size_t d = 0; d < size.size(); ++d)
          require(op, size[d], Dim(1), "the output size in spatial dim " + std::to_string(d),
                  true, ", whose window must fit its padded input,");
      } else if (op.kind() == OpKind::WinogradInput && op.operand(0)->type().rank() >= 4) {
        // Border tiles read the input at a clamped address: at least one row and column.
        const auto &x = op.operand(0)->type().dims;
        for (size_t d = 2; d < 4; ++d)
          require(op, x[d], Dim(1), "the input size in spatial dim " + std::to_string(d - 2),
                  true, ", which its tiles read,");
      } else if (op.kind() == OpKind::ArgReduce && op.numOperands() == 1) {
        // An arg along an empty axis has no answer: a symbolic axis length must be >= 1.
        const auto &dims = op.operand(0)->type().dims;
        const size_t axis = static_cast<size_t>(ops::ArgReduceOp(op).axis());
        if (axis < dims.size())
          require(op, dims[axis], Dim(1), "the length of axis " + std::to_string(axis), true);
      } else if (op.kind() == OpKind::Einsum) {
        // Every dim of a label that is not a static 1 has the label's extent (the first such
        // dim), which the kernel loops over.
        std::string why;
        std::vector<int64_t> ranks;
        for (const Value *v : op.operands())
          ranks.push_back(v->type().rank());
        std::optional<EinsumLabels> labels = labelEinsum(ops::EinsumOp(op).equation(), ranks, why);
        if (!labels) {
          if (!err)
            err = makeError(diagnose(op, why));
          return;
        }
        std::map<int, Dim> extent;
        for (unsigned i = 0; i < op.numOperands(); ++i) {
          const auto &dims = op.operand(i)->type().dims;
          for (size_t a = 0; a < dims.size(); ++a) {
            if (dims[a].isStatic() && dims[a].size == 1)
              continue;
            auto [it, fresh] = extent.emplace(labels->operands[i][a], dims[a]);
            if (!fresh) {
              require(op, dims[a], it->second,
                      "operand " + std::to_string(i) + " dim " + std::to_string(a));
              require(op, it->second, dims[a],
                      "operand " + std::to_string(i) + " dim " + std::to_string(a));
            }
          }
        }
      } else if (op.kind() == OpKind::TopK && op.numOperands() == 1) {
        // The k picks read k elements of each row: a symbolic axis must hold them.
        const auto &dims = op.operand(0)->type().dims;
        const ops::TopKOp topK(op);
        const size_t axis = static_cast<size_t>(topK.axis());
        const Dim k = topK.k();
        if (axis < dims.size() && !(k.isStatic() && k.size == 0) && dims[axis] != k)
          require(op, dims[axis], k, "the length of axis " + std::to_string(axis), true);
      } else if ((op.kind() == OpKind::Nms || op.kind() == OpKind::NmsCount) &&
                 op.numOperands() >= 2 && op.operand(1)->type().rank() == 3 &&
                 !op.operand(1)->type().dims[2].isStatic()) {
        // Its kernel keeps each class's candidates' indices (and kept boxes) for the run.
        require(op, Dim(lower::kMaxNmsBoxes), op.operand(1)->type().dims[2],
                "the number of boxes per class allowed", true);
      } else if (op.kind() == OpKind::RoiAlign && op.numOperands() == 3 &&
                 op.operand(0)->type().rank() == 4 && op.operand(1)->type().rank() == 2) {
        // Regions sample x: with any region, x must hold an image of at least one pixel (the
        // kernel's loops take sizes of 0 for impossible).
        const auto &x = op.operand(0)->type().dims;
        const Dim any = Dim::of(SymExpr::min(op.operand(1)->type().dims[0].asExpr(), SymExpr(1)));
        const char *names[] = {"the image count (dim 0) of x", "", "the height (dim 2) of x",
                               "the width (dim 3) of x"};
        for (size_t d : {size_t{0}, size_t{2}, size_t{3}})
          require(op, x[d], any, names[d], true);
      } else if (op.kind() == OpKind::Pad) {
        // A symbolic entry may crop (a negative formula or size read from data): what the
        // crops leave of each axis, in + min(begin, 0) + min(end, 0), must be >= 0, and >= 1
        // for reflect, edge and wrap, which read it (the kernel indexes the input by it).
        const ops::PadOp pad(op);
        const std::vector<Dim> pads = pad.pads();
        const auto &in = op.operand(0)->type().dims;
        const bool reads = pad.mode() != PadMode::Constant;
        if (pads.size() == 2 * in.size())
          for (size_t d = 0; d < in.size(); ++d) {
            const Dim &begin = pads[d], &end = pads[d + in.size()];
            if (in[d].isStatic() && begin.isStatic() && end.isStatic())
              continue; // type inference checked it
            SymExpr kept = in[d].asExpr();
            for (const Dim *p : {&begin, &end})
              if (p->isStatic() ? p->size < 0 : !p->expr.provablyNonNegative())
                kept = kept + SymExpr::min(p->asExpr(), SymExpr(0));
            const Dim left = Dim::of(kept);
            if (left.isStatic() ? left.size >= (reads ? 1 : 0)
                                : !reads && left.expr.provablyNonNegative())
              continue;
            if (left.isStatic()) { // too short whatever the run: no check could pass
              if (!err)
                err = makeError(diagnose(
                    op, "the pads' crops leave " + std::to_string(left.size) +
                            " elements of axis " + std::to_string(d) +
                            (reads ? ", which reflect, edge and wrap need at least 1 of" : "")));
              continue;
            }
            require(op, left, Dim(reads ? 1 : 0),
                    "the length of axis " + std::to_string(d) + " the pads' crops leave", true);
          }
      } else if (op.kind() == OpKind::Resize && ops::ResizeOp(op).scales().empty()) {
        // Sizes without scales (or scales read from data): the scale is out / in at run time,
        // and an empty axis has nothing to interpolate from: at least 1 unless the output is
        // empty there too.
        const auto &in = op.operand(0)->type().dims;
        for (size_t d = 0; d < in.size() && d < out.size(); ++d)
          if (!in[d].isStatic() && in[d] != out[d])
            require(op, in[d], Dim::of(SymExpr::min(SymExpr(1), out[d].asExpr())),
                    "input dim " + std::to_string(d) + ", resized,", true);
      } else if ((op.kind() == OpKind::Gather || op.kind() == OpKind::GatherElements ||
                  op.kind() == OpKind::ScatterElements || op.kind() == OpKind::GatherND ||
                  op.kind() == OpKind::ScatterND) &&
                 op.numOperands() >= 2) {
        // Indices into axes that may be empty when the model runs (a split part of size 0 read
        // from data): at least 1 long where any index is read (a failed index check goes on
        // with index 0, which an empty axis does not have). The indices read: gather's and
        // gather_elements' all, the scatters' per update, gather_nd's per result element.
        const auto &data = op.operand(0)->type().dims;
        const bool scatter =
            op.kind() == OpKind::ScatterElements || op.kind() == OpKind::ScatterND;
        const std::vector<Dim> &reads =
            op.kind() == OpKind::GatherND ? out
            : scatter && op.numOperands() >= 3 ? op.operand(2)->type().dims
                                               : op.operand(1)->type().dims;
        std::vector<int64_t> axes;
        if (op.kind() == OpKind::Gather)
          axes = {ops::GatherOp(op).axis()};
        else if (op.kind() == OpKind::GatherElements)
          axes = {ops::GatherElementsOp(op).axis()};
        else if (op.kind() == OpKind::ScatterElements)
          axes = {ops::ScatterElementsOp(op).axis()};
        else if (const auto &ind = op.operand(1)->type().dims;
                 !ind.empty() && ind.back().isStatic()) { // the nd forms: tuples of k
          const int64_t first = op.kind() == OpKind::GatherND ? ops::GatherNDOp(op).batch_dims() : 0;
          for (int64_t j = 0; j < ind.back().size && j < 64; ++j)
            axes.push_back(first + j);
        }
        for (int64_t axis : axes) {
          if (axis < 0 || static_cast<size_t>(axis) >= data.size() ||
              (data[axis].isStatic() && data[axis].size >= 1))
            continue;
          try {
            SymExpr count(1);
            for (const Dim &d : reads)
              count = count * d.asExpr();
            if (!(count.constant() && *count.constant() == 0))
              require(op, data[axis], Dim::of(SymExpr::min(SymExpr(1), count)),
                      "the length of axis " + std::to_string(axis), true, ", indexed by data,");
          } catch (const SymExprError &) {
            // a count past what formulas keep: the kernel's index check stands alone
          }
        }
      } else if (op.kind() == OpKind::Reshape) {
        // A target of formulas, a static target for symbolic input dims, or a -1 whose quotient
        // is whole only at some sizes: the element counts must agree when bound.
        try {
          SymExpr in(1), result(1);
          for (const Dim &d : op.operand(0)->type().dims)
            in = in * d.asExpr();
          for (const Dim &d : out)
            result = result * d.asExpr();
          if (!(in == result))
            require(op, Dim::of(result.isConstant() ? in : result),
                    Dim::of(result.isConstant() ? result : in), "the element count");
        } catch (const SymExprError &) {
          if (!err)
            err = makeError(diagnose(op, "the element counts are too large a formula to check"));
        }
      } else if (op.kind() == OpKind::Concat) {
        size_t axis = static_cast<size_t>(ops::ConcatOp(op).axis());
        for (unsigned i = 0; i < op.numOperands(); ++i) {
          const auto &dims = op.operand(i)->type().dims;
          for (size_t d = 0; d < dims.size() && d < out.size(); ++d)
            if (d != axis)
              require(op, dims[d], out[d], "operand " + std::to_string(i) + " dim " + std::to_string(d));
        }
      }
    });
    return err;
  }

  // A constant's data stays shared until packWeights copies it into the blob.
  llvm::Error addConstant(const Op &op) {
    const Tensor &t = op.attr("value").getTensor();
    if (!t.valid())
      return makeError(diagnose(op, "no data (elided blob)"));
    const void *key = t.rawData();
    auto [it, fresh] = root_->constantIndex_.emplace(key, root_->constantData_.size());
    if (fresh) {
      // Equal bytes share one place in the blob (a shape variant's weights are the general
      // graph's, imported again).
      const uint64_t hash = llvm::xxh3_64bits(
          llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(t.rawData()), t.byteSize()));
      auto [first, last] = root_->constantsByHash_.equal_range(hash);
      for (auto c = first; c != last && fresh; ++c) {
        const Tensor &other = root_->constantData_[c->second];
        if (other.byteSize() == t.byteSize() &&
            std::memcmp(other.rawData(), t.rawData(), t.byteSize()) == 0) {
          it->second = c->second;
          fresh = false;
        }
      }
      if (fresh) {
        root_->constantsByHash_.emplace(hash, root_->constantData_.size());
        root_->constantData_.push_back(t);
        prog().plan.constants.push_back({0, static_cast<int64_t>(t.byteSize())});
      }
    }
    slots_[op.result()] = {PlanArg::Constant, static_cast<int64_t>(it->second)};
    return llvm::Error::success();
  }

  llvm::Error packWeights() {
    int64_t total = 0;
    for (PlanConstant &c : plan().constants) {
      c.offset = total;
      total = alignUp(total + c.bytes, kAlign);
    }
    plan().weightsBytes = total;
    auto *mem = static_cast<uint8_t *>(std::aligned_alloc(kAlign, std::max<int64_t>(total, kAlign)));
    if (!mem)
      return makeError("cannot allocate " + std::to_string(total) + " bytes of weights");
    std::memset(mem, 0, std::max<int64_t>(total, kAlign));
    prog_.weights.reset(mem);
    for (size_t i = 0; i < constantData_.size(); ++i)
      if (size_t n = constantData_[i].byteSize())
        std::memcpy(mem + plan().constants[i].offset, constantData_[i].rawData(), n);
    return llvm::Error::success();
  }

  // The plan buffer of intermediate `v`: its sharing group's (an in-place chain, all of one size),
  // or a fresh one sized in bytes per unit of its symbolic dims.
  llvm::Error addBuffer(const Value *v) {
    const SharedBuffer *shared = sharing_.find(v);
    if (shared)
      if (auto it = groupBuffer_.find(shared->group); it != groupBuffer_.end()) {
        slots_[v] = {PlanArg::Buffer, it->second};
        return llvm::Error::success();
      }
    PlanBuffer b;
    b.size.bytes = static_cast<int64_t>(dtypeSize(v->type().dtype));
    for (const Dim &d : v->type().dims) {
      if (d.isStatic()) {
        b.size.bytes *= d.size;
        continue;
      }
      auto index = dimSymbol(d, "value '" + v->name() + "'");
      if (!index)
        return index.takeError();
      b.size.symbols.push_back(*index);
    }
    int64_t step = static_cast<int64_t>(plan().steps.size());
    b.first = b.last = step;
    plan().buffers.push_back(std::move(b));
    slots_[v] = {PlanArg::Buffer, static_cast<int64_t>(plan().buffers.size() - 1)};
    if (shared)
      groupBuffer_[shared->group] = slots_[v].index;
    return llvm::Error::success();
  }

  // A step whose result overwrites an operand in place passes one buffer for both: the kernel's
  // parameters for it become one `inout` parameter (the others' loads and stores redirected to
  // it), so no two parameters of a kernel ever alias and codegen keeps `noalias`.
  static void mergeSharedParams(loop::LoopFunction &f, std::vector<PlanArg> &args) {
    std::map<const loop::BufferNode *, loop::Buffer> to;
    std::vector<bool> drop(f.params.size(), false);
    for (size_t j = 0; j < f.params.size(); ++j) {
      if (!f.params[j].isBuffer() || args[j].kind != PlanArg::Buffer ||
          f.params[j].role == loop::ParamRole::In || drop[j])
        continue;
      for (size_t i = 0; i < f.params.size(); ++i)
        if (i != j && !drop[i] && f.params[i].isBuffer() && args[i].kind == PlanArg::Buffer &&
            args[i].index == args[j].index) {
          to[f.params[i].buffer.get()] = f.params[j].buffer;
          drop[i] = true;
          f.params[j].role = loop::ParamRole::InOut;
        }
    }
    if (to.empty())
      return;
    f.body = loop::substituteBuffers(f.body, to);
    std::vector<loop::Param> params;
    std::vector<PlanArg> kept;
    for (size_t i = 0; i < f.params.size(); ++i)
      if (!drop[i]) {
        params.push_back(f.params[i]);
        kept.push_back(args[i]);
      }
    f.params = std::move(params);
    args = std::move(kept);
  }

  llvm::Error compileTopLevel(Op &op) {
    if (op.kind() == OpKind::Constant)
      return addConstant(op);
    if (isControlFlow(op))
      return addControlStep(op);
    // The default schedule runs on the op's own nests: for a lifted op, before the loop over the
    // symbol wraps them (see lower::lowerSymbolic).
    auto schedule = [&](loop::LoopFunction &f) -> llvm::Error {
      if (!opts_.schedule)
        return llvm::Error::success();
      // Invalid loop IR from lowering or the schedule is a compiler bug (phase "internal").
      if (auto err = loop::verifyFunction(f))
        return makeError(
            Diagnostic::error("lowered loop IR is invalid: " + llvm::toString(std::move(err)))
                .inPhase("internal"));
      if (opts_.keepUnscheduled)
        pendingUnscheduled_ = f;
      KernelSchedule &ks = pendingSchedule_;
      ks.why.clear();
      loop::LoopFunction scheduled;
      ks.steps = loop::defaultSchedule(f, opts_.scheduleTarget, &ks.why, &scheduled);
      llvm::Error err = llvm::Error::success();
      if (opts_.scheduleStepLimit >= 0 &&
          ks.steps.size() > static_cast<size_t>(opts_.scheduleStepLimit)) {
        ks.steps.resize(opts_.scheduleStepLimit);
        err = loop::applySchedule(f, ks.steps);
      } else {
        f = std::move(scheduled); // the steps were applied (and verified) while chosen
      }
      // The split loops' bounds fold index arithmetic again: a vectorized lane of a split dim
      // (i = o * 16 + l) under floordiv/floormod by the split factor becomes o and l, so a copy
      // out of NCHW16c to channels-last loads whole vectors instead of gathering lane by lane.
      if (!err)
        f = loop::simplify(f);
      if (!err)
        if (int64_t bad = faultyStep(opts_.fault, ks.steps); bad >= 0) {
          // The faulty step miscompiles inside the loop it names (its first loop argument that
          // is still a loop), once the schedule is applied.
          std::string loopName;
          for (const std::string &a : ks.steps[bad].args)
            if (loopName.empty() && loop::findStmt(f.body, [&](const loop::Stmt &s) {
                  return s->kind == loop::StmtKind::For && s->var->name == a;
                }))
              loopName = a;
          perturbLastResultStore(f, loopName);
        }
      if (!err)
        err = loop::verifyFunction(f);
      if (err)
        return makeError(Diagnostic::error("default schedule: " + llvm::toString(std::move(err)))
                             .inPhase("internal"));
      return llvm::Error::success();
    };
    setCrashContext(fmt::format("lowering op '{}' (node {})", op.opName(), nodeName(op)));
    lower::LowerOptions lo;
    lo.vectorLanesF32 = f32Lanes(opts_.scheduleTarget);
    lo.vectorRegisters = opts_.scheduleTarget.vectorRegisters;
    const bool symbolic = lower::hasSymbolicDims(op);
    // A symbolic op is lifted over its batch when it can be (the kernels of its static shape),
    // otherwise lowered with symbolic extents.
    auto f = symbolic ? lower::lowerSymbolic(op, schedule, lo) : lower::lowerOp(op, lo);
    bool scheduled = symbolic && f;
    if (symbolic && !f) {
      llvm::consumeError(f.takeError());
      f = lower::lowerWithSymbolicExtents(op, lo);
    }
    if (f && !scheduled)
      if (llvm::Error err = schedule(*f))
        return withContext(std::move(err), diagnose(op, ""));
    if (!f) // fusion asked the lowering first (PassOptions::fusesIntoKernel): no kernel is undone
      return withContext(f.takeError(), diagnose(op, ""));
    return addStep(op, std::move(*f));
  }

  PlanArg slotOf(const Value *v) const {
    auto it = slots_.find(v);
    return it == slots_.end() ? PlanArg{PlanArg::Buffer, -1} : it->second;
  }

  // The op's operands, then its results, as the arguments of `step`, the next step of the plan:
  // results not yet placed (intermediates) get a buffer written by it, and every buffer's live
  // range covers it.
  llvm::Error addOperandsAndResults(const Op &op, PlanStep &step) {
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (!slots_.count(op.result(i)))
        if (auto err = addBuffer(op.result(i)))
          return err;
    const int64_t at = static_cast<int64_t>(plan().steps.size());
    for (unsigned i = 0; i < op.numOperands() + op.numResults(); ++i) {
      const Value *v = i < op.numOperands() ? op.operand(i) : op.result(i - op.numOperands());
      PlanArg a = slotOf(v);
      if (a.kind == PlanArg::Buffer) {
        if (a.index < 0) // lowering's output disagrees with the graph: a compiler bug
          return makeError(diagnose(op, "an argument has no buffer").inPhase("internal"));
        PlanBuffer &b = plan().buffers[a.index];
        b.first = std::min(b.first, at);
        b.last = std::max(b.last, at);
      }
      step.args.push_back(a);
    }
    return llvm::Error::success();
  }

  llvm::Error addStep(const Op &op, loop::LoopFunction f) {
    std::string where = fmt::format("op '{}' (node {})", op.opName(), nodeName(op));
    // Everything refused here is an inconsistency of lowering's output: a compiler bug.
    auto fail = [&](const std::string &msg) {
      Diagnostic d = diagnose(op, msg);
      d.phase = "internal";
      return makeError(std::move(d));
    };
    size_t numBuffers = op.numOperands() + op.numResults();
    if (f.params.size() < numBuffers)
      return fail("lowered function has an unexpected parameter list");
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i].isBuffer() != (i < numBuffers))
        return fail("lowered function has an unexpected parameter list");
    peelScratch(f);
    if (auto err = loop::verifyFunction(f))
      return fail("loop IR is invalid: " + llvm::toString(std::move(err)));
    // Kernel names are symbols of one module: make them unique.
    f.name = fmt::format("k{}_{}", prog().kernels.size(), f.name);
    if (opts_.fault.rung == FaultInjection::Rung::Kernel && f.name == opts_.fault.name)
      perturbLastResultStore(f);

    PlanStep step;
    step.name = where;
    step.kernel = static_cast<int64_t>(prog().kernels.size());
    const int64_t at = static_cast<int64_t>(plan().steps.size());
    if (auto err = addOperandsAndResults(op, step))
      return err;
    // The plan symbol a scalar parameter carries: an input's symbol, or the derived symbol of a
    // formula dim (added when no buffer had it yet).
    auto paramSymbol = [&](const std::string &name) -> llvm::Expected<int> {
      for (size_t s = 0; s < plan().symbols.size(); ++s)
        if (!plan().isDerived(s) && lower::symbolParamName(plan().symbols[s]) == name)
          return static_cast<int>(s);
      if (std::optional<std::string> formula = lower::formulaOfParamName(name)) {
        std::string why;
        std::optional<SymExpr> e = SymExpr::parse(*formula, why);
        if (!e)
          return fail("scalar parameter %" + name + " names no formula: " + why);
        return dimSymbol(Dim::of(*e), "a dim of " + where);
      }
      return fail("scalar parameter %" + name + " is no input's symbol");
    };
    for (size_t i = numBuffers; i < f.params.size(); ++i) {
      if (f.params[i].isBuffer()) { // a peeled temporary: a plan buffer live for this step only
        const loop::BufferNode &b = *f.params[i].buffer;
        PlanBuffer pb;
        pb.size.bytes = static_cast<int64_t>(dtypeSize(b.dtype));
        for (const loop::Expr &d : b.shape) {
          if (std::optional<int64_t> n = d.asInt()) {
            pb.size.bytes *= *n;
            continue;
          }
          auto symbol = paramSymbol(d->var->name); // (peelScratch took only these)
          if (!symbol)
            return symbol.takeError();
          pb.size.symbols.push_back(*symbol);
        }
        pb.first = pb.last = at;
        plan().buffers.push_back(std::move(pb));
        step.args.push_back({PlanArg::Buffer, static_cast<int64_t>(plan().buffers.size() - 1)});
        continue;
      }
      auto symbol = paramSymbol(f.params[i].scalar->name);
      if (!symbol)
        return symbol.takeError();
      step.args.push_back({PlanArg::Symbol, *symbol});
    }
    // A count binds its op's data-dependent result dim before the op's kernel runs.
    if (std::optional<ValueBoundDim> vb = valueBoundDim(op))
      if (const std::string *sym = dataDependentSymbol(op, *vb)) {
        PlanArg count = slotOf(op.operand(vb->countOperand));
        int symbol = valueSymbol(*sym);
        if (symbol < 0 || (count.kind == PlanArg::Buffer && count.index < 0))
          return fail("the data-dependent dim '" + *sym + "' has no symbol or count");
        plan().binds.push_back({at, symbol, count});
      }
    mergeSharedParams(f, step.args);
    if (auto err = loop::verifyFunction(f))
      return fail("loop IR is invalid after merging in-place parameters: " +
                  llvm::toString(std::move(err)));
    plan().steps.push_back(std::move(step));
    prog().kernels.push_back(std::move(f));
    prog().schedules.push_back(std::move(pendingSchedule_));
    pendingSchedule_ = {};
    prog().kernelOps.push_back(&op);
    if (!isRegion())
      prog().stepOps.push_back(&op);
    if (opts_.keepUnscheduled) {
      pendingUnscheduled_.name = prog().kernels.back().name;
      prog().unscheduled.push_back(std::move(pendingUnscheduled_));
      pendingUnscheduled_ = {};
    }
    return llvm::Error::success();
  }

  // An if or loop: each region compiled into a plan of its own, run by the step on its operands
  // (Plan.h's PlanStep::If/Loop).
  llvm::Error addControlStep(Op &op) {
    PlanStep step;
    step.kind = op.kind() == OpKind::If ? PlanStep::If : PlanStep::Loop;
    step.name = fmt::format("op '{}' (node {})", op.opName(), nodeName(op));
    if (op.kind() == OpKind::Loop) {
      auto layout = loopLayout(op);
      if (!layout)
        return withContext(layout.takeError(), diagnose(op, ""));
      step.numCarried = layout->numCarried;
    }
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      Plan region;
      ProgramBuilder sub(op.region(r), opts_, *root_, region,
                         opts_.regionPipeline.empty() ? opts_.pipeline : opts_.regionPipeline,
                         op.kind() == OpKind::Loop || loopBody_);
      if (auto err = sub.buildPlan())
        return withContext(std::move(err), diagnose(op, "in region " + std::to_string(r)));
      step.regions.push_back(static_cast<int64_t>(plan().regions.size()));
      plan().regions.push_back(std::move(region));
    }
    if (auto err = addOperandsAndResults(op, step))
      return err;
    step.numInputs = op.numOperands();
    // Dims the step's run decides (an if's branch taken, a loop's iterations), bound after it.
    for (const ValueBoundDim &vb : controlFlowResultDims(op)) {
      const std::string *sym = dataDependentSymbol(op, vb);
      int symbol = sym ? valueSymbol(*sym) : -1;
      if (symbol < 0)
        return makeError(diagnose(op, "the data-dependent dim of result " +
                                          std::to_string(vb.result) + " has no symbol"));
      plan().resultBinds.push_back({static_cast<int64_t>(plan().steps.size()), symbol,
                                    static_cast<int64_t>(vb.result),
                                    static_cast<int64_t>(vb.dim)});
    }
    plan().steps.push_back(std::move(step));
    if (!isRegion())
      prog().stepOps.push_back(&op);
    return llvm::Error::success();
  }

  llvm::Error resolveOutputs() {
    // A buffer that is also read after the last step (an output copied from it) lives to the end.
    int64_t end = static_cast<int64_t>(plan().steps.size());
    for (unsigned i = 0; i < g_.numOutputs(); ++i) {
      PlanArg s = slotOf(g_.output(i));
      if (s.kind == PlanArg::Buffer && s.index < 0)
        return makeError("output '" + g_.outputName(i) + "' is not computed by any step");
      if (s.kind == PlanArg::Buffer)
        plan().buffers[s.index].last = end;
      plan().outputSources.push_back(s);
    }
    return llvm::Error::success();
  }

  Graph &g_;
  const ProgramOptions &opts_;
  ProgramBuilder *root_; // this builder, or the one of the graph holding the region
  Plan *plan_;           // the plan being built: prog_.plan, or a region's
  std::string pipeline_; // run on g_ before it is compiled
  bool variant_ = false; // a region that is a shape variant of the whole model
  bool loopBody_ = false; // a loop's body (run once per iteration at the same sizes)
  Program prog_;         // the root's: kernels and constants of every plan
  KernelSchedule pendingSchedule_; // the schedule of the kernel being built
  loop::LoopFunction pendingUnscheduled_; // and its loop IR before it (keepUnscheduled)
  std::unordered_map<const Value *, PlanArg> slots_;
  BufferSharing sharing_;
  std::unordered_map<int64_t, int64_t> groupBuffer_; // sharing group -> plan buffer
  std::unordered_map<const void *, size_t> constantIndex_;
  std::unordered_multimap<uint64_t, size_t> constantsByHash_; // content hash -> constantData_
  std::vector<Tensor> constantData_;
};

} // namespace

llvm::Expected<Program> buildProgram(Graph &g, const ProgramOptions &opts) {
  return ProgramBuilder(g, opts).build();
}

llvm::Expected<Program> buildProgram(Graph &g, const ProgramOptions &opts,
                                     const std::vector<ShapeVariant> &variants) {
  return ProgramBuilder(g, opts).build(variants);
}

int64_t f32Lanes(const loop::ScheduleTarget &t) { return std::max<int64_t>(8, t.vectorBytes / 4); }

PassOptions passOptionsFor(const loop::ScheduleTarget &t) {
  PassOptions o;
  o.vectorWidth = f32Lanes(t); // layout-nchwc's block
  o.vectorRegisters = t.vectorRegisters;
  o.fusesIntoKernel = [](const Op &op) { return lower::lowersInKernel(op); };
  return o;
}

loop::ScheduleTarget scheduleTargetFor(const std::string &cpu, const std::string &feats) {
  // SIMD width: 64 bytes with AVX-512, 32 with AVX2, else SSE's 16. The portable levels imply
  // their features through the CPU name.
  auto has = [&](const char *f) { return feats.find(f) != std::string::npos; };
  loop::ScheduleTarget st;
  st.vectorBytes = has("+avx512f")                         ? 64
                   : has("+avx2") || cpu == "x86-64-v3"    ? 32
                   : cpu == "x86-64-v4"                    ? 64
                                                           : 16;
  st.vectorRegisters = st.vectorBytes == 64 ? 32 : 16;
  return st;
}

} // namespace strata::driver
