// Fused kernels, lowered as the fusion decision recorded on the kernel op says (graph/Kernel.h).
// Elementwise ops, scalar constants and index maps (reshape, transpose, expand, slice, relayout)
// are inlined as expressions at the index they are read at; every other op of the region (the
// anchor of an epilogue kernel, the reductions of a reduction kernel) is lowered by its own
// lowering into a buffer: the kernel result it produces directly when it is one, otherwise a
// temporary allocated around the kernel. Operands of such an op that are computed in the region
// (the prologue) are first materialized by a nest of their own. Then one nest per result shape
// computes the remaining results (the epilogue reading the anchor's buffer).
#include "LowerImpl.h"
#include "strata/loop/Visitor.h"

#include "strata/graph/Kernel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace strata::lower {
namespace {

// An inlined value whose expression, counted as a tree, exceeds this many nodes is bound to a
// per-iteration local instead of being inlined again at every use. Expressions share their
// operands by pointer, so an op that reads its operand k times (relu reads it five times through
// its NaN-exact select) makes a chain of n such ops a DAG of n nodes but a tree of k^n: every walk
// of the loop IR (printer, simplifier, code generation) would take that many steps. Real
// epilogues stay far below the bound, so their loop IR is unchanged.
constexpr uint64_t kMaxInlinedTreeNodes = 256;
// An operand that an op reads more than once is bound when its tree has more nodes than this:
// small ones (a load, a bias add) cost less recomputed than stored and reloaded.
constexpr uint64_t kMaxDuplicatedTreeNodes = 16;
// A row op (layer_norm, softmax) recomputes an operand of at most this many arithmetic ops in
// each of its passes instead of reading a temporary (KernelLowering::cheapToRecompute).
constexpr int kMaxRecomputedOps = 3;

struct KernelLowering {
  LowerCtx &c;
  const Graph &region;
  std::map<const Value *, loop::Buffer> buffers; // values that live in memory
  std::map<const Value *, std::vector<std::pair<Exprs, Expr>>> cache; // (index, expression)
  std::vector<bool> written;    // kernel result j is already stored by an anchor
  std::vector<Stmt> stmts;      // in execution order
  std::vector<loop::Buffer> temps;
  // Locals bound in the loop body being built (their stores, in order): see bindLarge.
  std::vector<std::pair<loop::Buffer, Stmt>> bindings;
  std::unordered_map<const loop::ExprNode *, uint64_t> treeSizes;
  std::vector<const Value *> cacheLog; // values cached into, in order (see forgetBoundExprs)

  // The node count of `e` as a tree (saturating), memoized per node.
  uint64_t treeSize(const Expr &e) {
    if (auto it = treeSizes.find(e.get()); it != treeSizes.end())
      return it->second;
    uint64_t n = 1;
    for (const Expr &o : e->operands)
      n = std::min<uint64_t>(n + treeSize(o), uint64_t(1) << 40);
    return treeSizes[e.get()] = n;
  }

  // How many times `part` occurs in `e` counted as a tree (saturating).
  static uint64_t occurrences(const Expr &e, const Expr &part) {
    std::unordered_map<const loop::ExprNode *, uint64_t> memo;
    std::function<uint64_t(const Expr &)> count = [&](const Expr &x) -> uint64_t {
      if (x.same(part))
        return 1;
      if (auto it = memo.find(x.get()); it != memo.end())
        return it->second;
      uint64_t n = 0;
      for (const Expr &o : x->operands)
        n = std::min<uint64_t>(n + count(o), 2);
      return memo[x.get()] = n;
    };
    return count(e);
  }

  // `e` itself, or, when its tree is large, a load of a local it is stored to first (in the
  // body being built, see withBindings).
  Expr bindLarge(const Expr &value) {
    if (treeSize(value) <= kMaxInlinedTreeNodes)
      return value;
    return bind(value);
  }

  // A load of a new local that `value` is stored to first. The store runs ahead of the statement
  // being built, outside any select in it: safe because every expression here is the value of an
  // op at an index it is defined at (elementwise ops and total index maps — reshape, transpose,
  // expand, slice — never guard their operands; guarded loads stay inside the bound value).
  Expr bind(const Expr &value) {
    const Expr e = widenLanes(value); // its type then has its lanes (micro-kernel epilogues)
    const int lanes = e.type().lanes;
    loop::Buffer b = localArray(c, "bound", e.type().dtype, lanes);
    Exprs at{lanes > 1 ? loop::ramp(imm(0), imm(1), lanes) : imm(0)};
    bindings.push_back({b, loop::store(b, at, e)});
    return loop::load(b, at);
  }

  // The statement `body()` builds for one iteration, preceded by the locals bound while building
  // it and enclosed by their allocations.
  Stmt withBindings(const std::function<Stmt()> &body) {
    std::vector<std::pair<loop::Buffer, Stmt>> outer;
    outer.swap(bindings);
    size_t cachedBefore = cacheLog.size();
    Stmt s = body();
    forgetBoundExprs(cachedBefore);
    std::vector<Stmt> seq;
    for (auto &[b, store] : bindings)
      seq.push_back(store);
    seq.push_back(s);
    Stmt r = loop::seq(seq);
    for (size_t i = bindings.size(); i-- > 0;)
      r = loop::allocate(bindings[i].first, r);
    bindings.swap(outer);
    return r;
  }

  // Drops the expressions cached since cacheLog[from] that load a local bound in the current
  // body: those locals live only in it, and a value indexed the same way in a later nest (a
  // rank-0 value read by every nest) must be computed again there. (Entries kept may load locals
  // of an enclosing body: its own exit checks them, so the log is never cut.)
  void forgetBoundExprs(size_t from) {
    if (bindings.empty())
      return;
    std::set<const loop::BufferNode *> bound;
    for (auto &[b, store] : bindings)
      bound.insert(b.get());
    std::unordered_map<const loop::ExprNode *, bool> memo;
    std::function<bool(const Expr &)> loadsBound = [&](const Expr &e) -> bool {
      if (auto it = memo.find(e.get()); it != memo.end())
        return it->second;
      bool r = e->kind == loop::ExprKind::Load && bound.count(e->buffer.get());
      for (size_t i = 0; !r && i < e->operands.size(); ++i)
        r = loadsBound(e->operands[i]);
      return memo[e.get()] = r;
    };
    for (size_t i = from; i < cacheLog.size(); ++i) {
      auto &entries = cache[cacheLog[i]];
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const auto &entry) { return loadsBound(entry.second); }),
                    entries.end());
    }
  }

  // A static value's shape (constants, micro-kernel checks).
  Shape shapeOf(const Value *v) {
    const TensorType &type = v->type();
    if (!type.isStatic())
      notLowered(c.op, "symbolic dims");
    requireSupportedDType(c.op, type.dtype);
    return type.staticShape();
  }
  // Any value's extents.
  Exprs dimsOf(const Value *v) {
    requireSupportedDType(c.op, v->type().dtype);
    return c.dimsOf(v->type());
  }
  static bool sameDims(const Exprs &a, const Exprs &b) { return sameIndex(a, b); }

  loop::Buffer newTemp(const Value *v, const std::string &hint) {
    loop::Buffer b = loop::makeBuffer(c.newName(hint), v->type().dtype, dimsOf(v));
    temps.push_back(b);
    return b;
  }

  static bool sameIndex(const Exprs &a, const Exprs &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!loop::equal(a[i], b[i]))
        return false;
    return true;
  }

  Expr scalarConstant(const Tensor &t) {
    DType dt = t.dtype();
    return isFloat(dt) ? loop::floatImm(t.getDouble(0), dt) : loop::intImm(t.getInt(0), dt);
  }

  // A non-scalar constant: a temporary filled element by element.
  loop::Buffer constantBuffer(const Value *v, const Tensor &t) {
    if (t.numElements() > kMaxKernelConstantElements) // fusion never clones one this large
      throw LowerError("kernel: constant of " + std::to_string(t.numElements()) +
                       " elements in the region (at most " +
                       std::to_string(kMaxKernelConstantElements) + ")");
    loop::Buffer b = newTemp(v, "cst");
    Shape shape = shapeOf(v);
    std::vector<Stmt> fill;
    for (int64_t e = 0; e < t.numElements(); ++e) {
      Exprs idx;
      for (size_t d = shape.size(), rest = static_cast<size_t>(e); d-- > 0;) {
        idx.insert(idx.begin(), imm(static_cast<int64_t>(rest % static_cast<size_t>(shape[d]))));
        rest /= static_cast<size_t>(shape[d]);
      }
      fill.push_back(loop::store(b, idx, isFloat(t.dtype()) ? loop::floatImm(t.getDouble(e), t.dtype())
                                                            : loop::intImm(t.getInt(e), t.dtype())));
    }
    stmts.push_back(loop::seq(fill));
    buffers[v] = b;
    return b;
  }

  // The buffer holding `v`, computing it first when needed.
  loop::Buffer materialize(const Value *v) {
    if (auto it = buffers.find(v); it != buffers.end())
      return it->second;
    if (v->isGraphInput()) {
      for (unsigned i = 0; i < region.numInputs(); ++i)
        if (region.input(i) == v)
          return buffers[v] = c.ins[i];
      throw LowerError("kernel: value is not defined in the region");
    }
    const Op &op = *v->definingOp();
    if (isAnchor(op)) {
      lowerAnchor(op);
      return buffers.at(v);
    }
    if (op.kind() == OpKind::Constant && ops::ConstantOp(op).value().numElements() != 1)
      return constantBuffer(v, ops::ConstantOp(op).value());
    loop::Buffer b = newTemp(v, "t");
    stmts.push_back(loopNest(c, dimsOf(v), LoopRole::Parallel, [&](const Exprs &idx) {
      return withBindings([&] { return loop::store(b, idx, valueExpr(v, idx)); });
    }));
    return buffers[v] = b;
  }

  static bool isAnchor(const Op &op) {
    OpKind k = op.kind();
    return k != OpKind::Constant && !hasTrait(k, T_ELEMENTWISE) && !hasTrait(k, T_INDEX_MAP);
  }

  // Whether computing `v` inline goes through an index map (down to buffers and inputs).
  bool readsIndexMap(const Value *v) const {
    if (!computedInline(v))
      return false;
    const Op &op = *v->definingOp();
    if (op.hasTrait(T_INDEX_MAP))
      return true;
    for (const Value *operand : op.operands())
      if (readsIndexMap(operand))
        return true;
    return false;
  }

  // Whether `v` is computed in the region by elementwise ops and index maps: a reduction can
  // read it through its expression instead of a temporary (inlineable operands, below).
  bool computedInline(const Value *v) const {
    if (v->isGraphInput() || buffers.count(v))
      return false;
    const Op &op = *v->definingOp();
    return !isAnchor(op) && op.kind() != OpKind::Constant;
  }

  // Lowers an anchor op by its family into buffers: kernel results where it produces one. A
  // reduce reads each element of its operand once, so an operand computed in the region by
  // elementwise ops and index maps is inlined into its loads instead of being materialized into
  // a temporary of the operand's full size first (a detector's count of scores above a
  // threshold wrote a cast of 13M elements to a 104 MB temporary, then summed it); when an
  // inlined expression would need a bound local (kMaxInlinedTreeNodes), it is materialized.
  // Attention reads q, k and v by scalar loads as it packs them (LowerAttention.cpp): the
  // slices, reshapes and transposes cutting them out of one projection inline there too. The
  // row ops (layer_norm, softmax, log_softmax) read their operand in two or three passes: a
  // few additions or multiplications (a transformer's residual add before its layer_norm) are
  // recomputed in each pass rather than written to a temporary and read back.
  void lowerAnchor(const Op &op) {
    std::vector<unsigned> inlineable;
    const OpKind k = op.kind();
    const bool rowOp = k == OpKind::LayerNorm || k == OpKind::Softmax || k == OpKind::LogSoftmax;
    int budget = kMaxRecomputedOps;
    const unsigned candidates = k == OpKind::Reduce      ? 1
                                : k == OpKind::Attention && attentionUsesTiledKernel(op) ? 3
                                : rowOp && op.numOperands() > 0 && cheapToRecompute(op.operand(0), budget)
                                    ? 1
                                    : 0;
    for (unsigned i = 0; i < candidates && i < op.numOperands(); ++i)
      if (computedInline(op.operand(i)))
        inlineable.push_back(i);
    if (!inlineable.empty() && lowerAnchorInlined(op, inlineable))
      return;
    lowerAnchorWith(op, {});
  }

  // Whether `v` is computed in the region by at most `budget` adds, subtracts, multiplies,
  // divides and negations of values read from buffers or constants (no index maps, no
  // transcendentals): cheaper recomputed by each pass of a row op than stored and reloaded.
  bool cheapToRecompute(const Value *v, int &budget) const {
    if (!computedInline(v))
      return true; // read from a buffer or a constant
    const Op &op = *v->definingOp();
    const OpKind k = op.kind();
    if ((k != OpKind::Add && k != OpKind::Sub && k != OpKind::Mul && k != OpKind::Div &&
         k != OpKind::Neg) ||
        --budget < 0)
      return false;
    for (const Value *operand : op.operands())
      if (!cheapToRecompute(operand, budget))
        return false;
    return true;
  }

  // Operands read through placeholder buffers whose loads become the operand's expression.
  using Placeholders = std::vector<std::pair<unsigned, loop::Buffer>>;

  // lowerAnchor with the operands in `inlined` read through their placeholders.
  bool lowerAnchorWith(const Op &op, const Placeholders &inlined) {
    LowerCtx sub(op, c.varCounter);
    c.shareWith(sub);
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Value *operand = op.operand(i);
      requireSupportedDType(c.op, operand->type().dtype);
      auto it = std::find_if(inlined.begin(), inlined.end(),
                             [i](const auto &entry) { return entry.first == i; });
      sub.addIn(it != inlined.end() ? it->second : materialize(operand), operand->type());
    }
    for (unsigned r = 0; r < op.numResults(); ++r) {
      const Value *v = op.result(r);
      loop::Buffer b;
      for (unsigned j = 0; j < region.numOutputs() && !b; ++j)
        if (region.output(j) == v && !written[j] && sameDims(c.outDims[j], dimsOf(v)) &&
            c.outTypes[j] == v->type().dtype) {
          b = c.outs[j];
          written[j] = true;
        }
      if (!b)
        b = newTemp(v, "t");
      buffers[v] = b;
      sub.addOut(b, v->type());
    }
    sub.varCounter = std::max(sub.varCounter, c.varCounter);
    Stmt body = lowerBody(sub);
    c.varCounter = sub.varCounter;
    if (!inlined.empty()) {
      InlineLoads rewrite(*this);
      for (const auto &[i, placeholder] : inlined)
        rewrite.values[placeholder.get()] = op.operand(i);
      body = rewrite.mutate(body);
      if (rewrite.failed)
        return false;
    }
    stmts.push_back(body);
    return true;
  }

  bool lowerAnchorInlined(const Op &op, const std::vector<unsigned> &operands) {
    Placeholders placeholders;
    for (unsigned i : operands) {
      const Value *x = op.operand(i);
      placeholders.push_back(
          {i, loop::makeBuffer(c.newName("inlined"), x->type().dtype, dimsOf(x))});
    }
    const std::vector<bool> writtenBefore = written;
    const auto cacheBefore = cache;
    const auto treeSizesBefore = treeSizes; // keyed by node address: freed nodes must not alias
    const size_t logBefore = cacheLog.size();
    if (lowerAnchorWith(op, placeholders))
      return true;
    // Undo: the anchor's results get their buffers again when it is lowered with temporaries,
    // and no expression built for the attempt (some load locals it could not bind) is reused
    // (an anchor the expression materialized keeps its statements: they come first either way).
    written = writtenBefore;
    for (unsigned r = 0; r < op.numResults(); ++r) {
      // A temporary made for the result is made again by the next attempt.
      auto it = buffers.find(op.result(r));
      if (it != buffers.end())
        temps.erase(std::remove_if(temps.begin(), temps.end(),
                                   [&](const loop::Buffer &t) { return t.get() == it->second.get(); }),
                    temps.end());
      buffers.erase(op.result(r));
    }
    cache = cacheBefore;
    treeSizes = treeSizesBefore;
    cacheLog.resize(logBefore);
    return false;
  }

  // Replaces the loads of placeholder buffers by their values' expressions at their indices;
  // `failed` when an expression needed a bound local (there is no body to put its store in).
  struct InlineLoads : loop::IRMutator {
    KernelLowering &k;
    std::map<const loop::BufferNode *, const Value *> values;
    bool failed = false;
    explicit InlineLoads(KernelLowering &k) : k(k) {}
    using loop::IRMutator::mutate;
    Expr visitLoad(const Expr &e) override {
      auto it = values.find(e->buffer.get());
      if (it == values.end())
        return loop::IRMutator::visitLoad(e);
      const Value *value = it->second;
      Exprs idx;
      bool vector = false;
      for (const Expr &i : e->operands) {
        idx.push_back(mutate(i));
        vector |= idx.back().type().lanes > 1;
      }
      // Index maps do scalar arithmetic on the index (a reshape's linear index, a slice's
      // start + i * step): a vector index (lowerReduceLanes) keeps the temporary instead.
      if (vector && k.readsIndexMap(value)) {
        failed = true;
        return e;
      }
      const size_t before = k.bindings.size();
      Expr r = widenLanes(k.valueExpr(value, idx));
      if (k.bindings.size() != before) {
        failed = true;
        k.bindings.resize(before);
      }
      return r;
    }
  };

  // The value of `v` at `idx` (an index into v's own shape).
  Expr valueExpr(const Value *v, const Exprs &idx) {
    if (auto it = buffers.find(v); it != buffers.end())
      return loop::load(it->second, idx);
    auto &seen = cache[v];
    for (const auto &[index, e] : seen)
      if (sameIndex(index, idx))
        return e;
    const Exprs shape = dimsOf(v);
    Expr e;
    const Op *op = v->isGraphInput() ? nullptr : v->definingOp();
    if (!op || isAnchor(*op)) {
      e = loop::load(materialize(v), idx);
    } else if (op->kind() == OpKind::Constant) {
      const Tensor &t = ops::ConstantOp(*op).value();
      if (!t.valid())
        throw LowerError("kernel: constant without a value");
      e = t.numElements() == 1 ? scalarConstant(t) : loop::load(materialize(v), idx);
    } else if (op->hasTrait(T_ELEMENTWISE)) {
      Exprs args;
      std::vector<DType> types;
      for (const Value *operand : op->operands()) {
        args.push_back(valueExpr(operand, broadcastIndex(idx, shape, dimsOf(operand))));
        types.push_back(operand->type().dtype);
      }
      e = elementwiseExpr(*op, args, types);
      // An operand the op reads more than once (relu reads it five times) is bound once
      // rather than copied into every read: a chain of such ops stays linear in size.
      bool rebuilt = false;
      for (Expr &a : args)
        if (treeSize(a) > kMaxDuplicatedTreeNodes && occurrences(e, a) > 1) {
          a = bind(a);
          rebuilt = true;
        }
      if (rebuilt)
        e = elementwiseExpr(*op, args, types);
      e = bindLarge(e);
    } else { // index map
      const Value *src = op->operand(0);
      e = valueExpr(src, indexMapSource(*op, dimsOf(src), shape, idx));
    }
    cache[v].push_back({idx, e});
    cacheLog.push_back(v);
    return e;
  }
};

// The register epilogue of an epilogue kernel: when its anchor is a conv or matmul taking a
// register-tiled micro-kernel, or a winograd_output (whose tile vectors are stored the same
// way), it has no prologue, and its epilogue is elementwise on results of
// the anchor's shape (bias, residual add, relu, clip, ...), the micro-kernel stores each
// accumulator vector through the epilogue straight into the kernel's results: no temporary, no
// second pass over memory. Otherwise the kernel takes the general path (anchor into a buffer,
// epilogue nests reading it).
bool fuseEpilogue(KernelLowering &k, const KernelPlan &plan) {
  const Graph &region = k.region;
  const Op *anchor = plan.anchor;
  if (plan.kind != KernelKind::Epilogue || !anchor || !plan.prologue.empty() ||
      anchor->numResults() != 1 ||
      (anchor->kind() != OpKind::Conv && anchor->kind() != OpKind::MatMul &&
       anchor->kind() != OpKind::WinogradOutput))
    return false;
  for (const Op *op : plan.epilogue)
    if (!op->hasTrait(T_ELEMENTWISE))
      return false;
  const Value *a = anchor->result(0);
  const Exprs shape = k.dimsOf(a);
  // The epilogue keeps the anchor's shape, so it reads the anchor only at the index the
  // micro-kernel stores.
  std::set<const Value *> fromAnchor{a};
  for (const Op *op : plan.epilogue) {
    for (const Value *v : op->operands())
      if (fromAnchor.count(v) && !KernelLowering::sameDims(k.dimsOf(v), shape))
        return false;
    if (!KernelLowering::sameDims(k.dimsOf(op->result(0)), shape))
      return false;
    fromAnchor.insert(op->result(0));
  }
  for (unsigned j = 0; j < region.numOutputs(); ++j)
    if (!fromAnchor.count(region.output(j)) || !KernelLowering::sameDims(k.c.outDims[j], shape))
      return false;

  LowerCtx sub(*anchor, k.c.varCounter);
  k.c.shareWith(sub);
  for (const Value *operand : anchor->operands()) // the micro-kernel checks below need the
    sub.addIn(nullptr, operand->type());            // types only; buffers are set after them
  sub.addOut(nullptr, a->type());
  sub.outs.clear();
  bool micro = anchor->kind() == OpKind::Conv     ? canLowerBlockedConv(sub)
               : anchor->kind() == OpKind::MatMul ? canLowerTiledMatMul(sub)
                                                  : true; // winograd_output: always storeOut
  if (!micro)
    return false;
  for (size_t i = 0; i < anchor->numOperands(); ++i)
    sub.ins[i] = k.materialize(anchor->operand(static_cast<unsigned>(i)));
  sub.outs.push_back(nullptr); // never stored directly: storeResult writes the results
  sub.storeResult = [&k, a, &region](const Exprs &idx, const Expr &value) {
    k.cache[a] = {{idx, value}};
    return k.withBindings([&] {
      std::vector<Stmt> stores;
      for (unsigned j = 0; j < region.numOutputs(); ++j)
        stores.push_back(
            loop::store(k.c.outs[j], idx, widenLanes(k.valueExpr(region.output(j), idx))));
      return loop::seq(stores);
    });
  };
  sub.varCounter = std::max(sub.varCounter, k.c.varCounter);
  k.stmts.push_back(lowerBody(sub));
  k.c.varCounter = sub.varCounter;
  std::fill(k.written.begin(), k.written.end(), true);
  return true;
}

} // namespace

namespace {
// Broadcasts the scalar operands of each operation that has vector ones, bottom-up. Loads keep
// their indices (they may mix scalars and vectors); ramps and broadcasts make vectors of scalars.
class WidenLanes : public loop::IRMutator {
protected:
  Expr visitLoad(const Expr &e) override { return e; }
  Expr visitRamp(const Expr &e) override { return e; }
  Expr visitBroadcast(const Expr &e) override { return e; }
  Expr visitBinary(const Expr &e) override { return widen(IRMutator::visitBinary(e)); }
  Expr visitNot(const Expr &e) override { return widen(IRMutator::visitNot(e)); }
  Expr visitSelect(const Expr &e) override { return widen(IRMutator::visitSelect(e)); }
  Expr visitCast(const Expr &e) override { return widen(IRMutator::visitCast(e)); }
  Expr visitCall(const Expr &e) override { return widen(IRMutator::visitCall(e)); }

private:
  static Expr widen(const Expr &e) {
    int lanes = 1;
    for (const Expr &o : e->operands)
      lanes = std::max(lanes, o.type().lanes);
    if (lanes == 1)
      return e;
    std::vector<Expr> ops = e->operands;
    for (Expr &o : ops)
      if (o.type().lanes == 1)
        o = loop::broadcast(o, lanes);
    return loop::withOperands(e, ops);
  }
};
} // namespace

Expr widenLanes(const Expr &e) { return WidenLanes().mutate(e); }

Stmt lowerKernelBody(LowerCtx &c) {
  if (c.op.numRegions() != 1)
    throw LowerError("kernel: expected one region");
  const Graph &region = c.op.region(0);
  if (region.numInputs() != c.ins.size() || region.numOutputs() != c.outs.size())
    throw LowerError("kernel: region signature does not match the operands and results");
  auto plan = kernelPlan(c.op);
  if (!plan)
    throw LowerError("kernel: " + llvm::toString(plan.takeError()));
  KernelLowering k{c, region, {}, {}, std::vector<bool>(c.outs.size(), false), {}, {}, {}, {}, {}};
  if (fuseEpilogue(k, *plan)) {
    Stmt body = loop::seq(k.stmts);
    for (size_t t = k.temps.size(); t-- > 0;)
      body = loop::allocate(k.temps[t], body);
    return body;
  }
  // Anchors first, in region order, so that results they produce are written in place.
  for (const Op &op : region.ops())
    if (KernelLowering::isAnchor(op))
      k.materialize(op.result(0));
  // The remaining results, one nest per distinct shape.
  for (unsigned j = 0; j < c.outs.size(); ++j) {
    if (k.written[j])
      continue;
    const Exprs shape = c.outDims[j];
    std::vector<unsigned> group;
    for (unsigned i = j; i < c.outs.size(); ++i)
      if (!k.written[i] && KernelLowering::sameDims(c.outDims[i], shape))
        group.push_back(i);
    Stmt nest = loopNest(c, shape, LoopRole::Parallel, [&](const Exprs &idx) {
      return k.withBindings([&] {
        std::vector<Stmt> stores;
        for (unsigned i : group)
          stores.push_back(loop::store(c.outs[i], idx, k.valueExpr(region.output(i), idx)));
        return loop::seq(stores);
      });
    });
    for (unsigned i : group)
      k.written[i] = true;
    k.stmts.push_back(nest);
  }
  Stmt body = loop::seq(k.stmts);
  for (size_t t = k.temps.size(); t-- > 0;)
    body = loop::allocate(k.temps[t], body);
  return body;
}

} // namespace strata::lower
