// Lowering of ops with a symbolic leading dim (a dynamic batch) by lifting: when every value that
// mentions the symbol has it as dim 0 and the op computes each dim-0 slice from the same slice of
// its operands, the op is lowered with the symbol bound to 1 and the resulting function is wrapped
// in a loop over the symbol, each lifted buffer indexed at `idx0 + b * d0`. One compiled kernel
// then serves every batch size. Ops whose semantics mix slices (a reduction over dim 0, a
// transpose moving it, a matmul contracting it) are refused with the reason (lowerOp then gives
// them symbolic extents). Also the names of the scalar parameters symbols and formula dims take.
#include "LowerImpl.h"

#include "strata/loop/Simplify.h"
#include "strata/loop/Visitor.h"
#include "strata/lower/Lower.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace strata::lower {

std::string symbolParamName(const std::string &symbol) {
  std::string r = "sym_";
  for (char c : symbol)
    r += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return r;
}

// The escapes of a formula's punctuation in a parameter name: '_' followed by a letter ('_'
// itself doubles, so the encoding is injective); any other character is _<decimal code>_.
constexpr std::pair<char, char> kFormulaEscapes[] = {
    {'_', '_'}, {'+', 'P'}, {'-', 'M'}, {'*', 'X'}, {'(', 'L'}, {')', 'R'}, {',', 'C'}};

std::string formulaParamName(const std::string &formula) {
  std::string r = "dim_";
  for (char c : formula) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      r += c;
      continue;
    }
    auto it = std::find_if(std::begin(kFormulaEscapes), std::end(kFormulaEscapes),
                           [c](const auto &e) { return e.first == c; });
    r += it != std::end(kFormulaEscapes)
             ? std::string{'_', it->second}
             : "_" + std::to_string(static_cast<unsigned char>(c)) + "_";
  }
  return r;
}

std::optional<std::string> formulaOfParamName(const std::string &param) {
  if (param.rfind("dim_", 0) != 0)
    return std::nullopt;
  std::string r;
  for (size_t i = 4; i < param.size(); ++i) {
    if (param[i] != '_') {
      r += param[i];
      continue;
    }
    if (++i >= param.size())
      return std::nullopt;
    auto it = std::find_if(std::begin(kFormulaEscapes), std::end(kFormulaEscapes),
                           [&](const auto &e) { return e.second == param[i]; });
    if (it != std::end(kFormulaEscapes)) {
      r += it->first;
      continue;
    }
    // _<decimal code>_
    size_t end = param.find('_', i);
    if (end == std::string::npos || end == i || end - i > 3)
      return std::nullopt;
    int code = 0;
    for (size_t k = i; k < end; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(param[k])))
        return std::nullopt;
      code = code * 10 + (param[k] - '0');
    }
    if (code > 255)
      return std::nullopt;
    r += static_cast<char>(code);
    i = end;
  }
  return r;
}

namespace {

void collectSymbols(const Value &v, std::set<std::string> &out) {
  for (const Dim &d : v.type().dims)
    if (!d.isStatic())
      d.expr.collectSymbols(out);
}

void collectSymbols(const Op &op, std::set<std::string> &out) {
  for (const Value *v : op.operands())
    collectSymbols(*v, out);
  for (unsigned i = 0; i < op.numResults(); ++i)
    collectSymbols(*op.result(i), out);
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    for (const Value *v : op.region(r).inputs())
      collectSymbols(*v, out);
    for (const Op &inner : op.region(r).ops())
      collectSymbols(inner, out);
  }
}

bool lifted(const Value &v) { return v.type().rank() > 0 && !v.type().dims[0].isStatic(); }

// Whether every lifted value of `op` (operands, results, and its regions' inputs and values) has
// exactly `symbol` as dim 0.
bool dimZeroIsSymbol(const Op &op, const Dim &symbol) {
  auto plain = [&](const Value &v) { return !lifted(v) || v.type().dims[0] == symbol; };
  for (const Value *v : op.operands())
    if (!plain(*v))
      return false;
  for (unsigned i = 0; i < op.numResults(); ++i)
    if (!plain(*op.result(i)))
      return false;
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    for (const Value *v : op.region(r).inputs())
      if (!plain(*v))
        return false;
    for (const Op &inner : op.region(r).ops())
      if (!dimZeroIsSymbol(inner, symbol))
        return false;
  }
  return true;
}

// Why `op` (whose lifted values have the symbol at dim 0 only) does not compute each dim-0 slice
// from the matching operand slices; empty when it does.
std::string notSeparable(const Op &op) {
  for (const Value *v : op.operands())
    for (size_t d = 1; d < v->type().dims.size(); ++d)
      if (!v->type().dims[d].isStatic())
        return "a symbolic dim other than dim 0";
  bool anyResultLifted = false, allResultsLifted = true;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    const Value &r = *op.result(i);
    for (size_t d = 1; d < r.type().dims.size(); ++d)
      if (!r.type().dims[d].isStatic())
        return "a symbolic dim other than dim 0";
    anyResultLifted |= lifted(r);
    allResultsLifted &= lifted(r);
  }
  bool anyOperandLifted = false;
  for (const Value *v : op.operands())
    anyOperandLifted |= lifted(*v);
  if (!anyOperandLifted && !anyResultLifted)
    return ""; // batch-independent: recomputed per slice, same values
  if (!allResultsLifted)
    return "the result does not keep the symbolic dim as dim 0";

  const int64_t rank = op.result(0)->type().rank();
  auto liftedOperandsHaveResultRank = [&] {
    for (const Value *v : op.operands())
      if (lifted(*v) && v->type().rank() != rank)
        return false;
    return true;
  };
  // Every A_AXIS attribute is named `axis` and is never negative (its normal form).
  auto axisIsNotZero = [&] { return op.attr("axis").getInt() != 0; };
  const int64_t inRank = op.numOperands() ? op.operand(0)->type().rank() : 0;

  if (op.hasTrait(T_ELEMENTWISE))
    return liftedOperandsHaveResultRank() ? "" : "a lifted operand broadcasts across dim 0";
  switch (op.kind()) {
  case OpKind::Reshape:
  case OpKind::Relayout:
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::Pool:
  case OpKind::Resize:
  case OpKind::WinogradInput:
  case OpKind::WinogradOutput:
    // Operand 0 carries the batch; weights and biases must not.
    for (unsigned i = 1; i < op.numOperands(); ++i)
      if (lifted(*op.operand(i)))
        return "a weight operand has the symbolic dim";
    return lifted(*op.operand(0)) ? "" : "operand 0 lacks the symbolic dim";
  case OpKind::Transpose: {
    const std::vector<int64_t> &perm = ops::TransposeOp(op).perm();
    return !perm.empty() && perm[0] == 0 ? "" : "the transpose moves dim 0";
  }
  case OpKind::Expand:
    return liftedOperandsHaveResultRank() ? "" : "a lifted operand broadcasts across dim 0";
  case OpKind::Slice: {
    const ops::SliceOp slice(op);
    bool whole = !slice.starts().empty() && slice.starts()[0] == 0 &&
                 slice.ends()[0] >= (int64_t(1) << 31) - 1 && slice.steps()[0] == 1;
    return whole ? "" : "the slice cuts dim 0";
  }
  case OpKind::Concat:
    return axisIsNotZero() && liftedOperandsHaveResultRank() ? "" : "concat along dim 0";
  case OpKind::Pad: {
    const std::vector<Dim> pads = ops::PadOp(op).pads();
    if (pads.size() == 2 * static_cast<size_t>(inRank) && pads[0] == Dim(0) &&
        pads[inRank] == Dim(0) &&
        !lifted(*op.operand(1)))
      return "";
    return "the pad widens dim 0";
  }
  case OpKind::Gather:
    if (lifted(*op.operand(0)) && !lifted(*op.operand(1)) && axisIsNotZero())
      return "";
    if (!lifted(*op.operand(0)) && lifted(*op.operand(1)) && !axisIsNotZero())
      return ""; // an embedding lookup: row b reads the table at indices[b]
    return "the gather mixes dim 0";
  case OpKind::GatherChannels: // copies channels within each image
    for (const Value *v : op.operands())
      if (!lifted(*v))
        return "an operand lacks the symbolic dim";
    return "";
  case OpKind::GatherElements:
  case OpKind::ScatterElements:
    for (const Value *v : op.operands())
      if (!lifted(*v))
        return "an operand lacks the symbolic dim";
    return axisIsNotZero() ? "" : "the op indexes along dim 0";
  case OpKind::GatherND:
    return ops::GatherNDOp(op).batch_dims() >= 1 && lifted(*op.operand(0)) && lifted(*op.operand(1))
               ? ""
               : "gather_nd without a batch dim";
  case OpKind::MatMul: {
    // [S, ..., K] x [K, N]: rows are independent; a lifted right operand must be batched too.
    const Value &a = *op.operand(0), &b = *op.operand(1);
    if (lifted(a) && a.type().rank() != rank)
      return "the left operand's dim 0 is not the result's";
    if (lifted(b) && (b.type().rank() < 3 || b.type().rank() != rank))
      return "the matmul contracts over the symbolic dim";
    if (op.numOperands() > 2 && lifted(*op.operand(2)) && op.operand(2)->type().rank() != rank)
      return "the bias broadcasts across dim 0";
    return "";
  }
  case OpKind::Attention:
    // Batches are independent; the symbol must be a batch dim of every lifted operand (k and v
    // are contracted over their rows; lifting q's rows would run the kernel one row at a time,
    // packing k and v again for each: the symbolic-extents path tiles them instead).
    if (rank < 3)
      return "the attention's symbolic dim is its rows, not a batch";
    for (const Value *v : op.operands())
      if (lifted(*v) && v->type().rank() != rank)
        return "a lifted operand broadcasts across dim 0";
    return "";
  case OpKind::Reduce: {
    const std::vector<int64_t> &axes = ops::ReduceOp(op).axes(); // sorted, non-negative
    return !axes.empty() && axes[0] == 0 ? "the reduction covers dim 0" : "";
  }
  case OpKind::ArgReduce:
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::CumSum:
  case OpKind::TopK:
  case OpKind::LayerNorm:
    for (unsigned i = 1; i < op.numOperands(); ++i)
      if (lifted(*op.operand(i)))
        return "a parameter operand has the symbolic dim";
    return axisIsNotZero() ? "" : "the op works along dim 0";
  case OpKind::Kernel:
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (const Op &inner : op.region(r).ops())
        if (std::string why = notSeparable(inner); !why.empty())
          return "region op '" + std::string(inner.opName()) + "': " + why;
    return "";
  default:
    return "no rule says its dim-0 slices are independent";
  }
}

// Sets dim 0 of every value mentioning the symbol to 1, and restores the types when destroyed.
class BindSymbolToOne {
public:
  explicit BindSymbolToOne(const Op &op) { visit(op); }
  ~BindSymbolToOne() {
    for (auto &[v, t] : saved_)
      v->setType(t);
  }
  bool wasLifted(const Value *v) const { return saved_.count(const_cast<Value *>(v)) != 0; }

private:
  void bind(Value *v) {
    if (!lifted(*v) || saved_.count(v))
      return;
    saved_.emplace(v, v->type());
    TensorType t = v->type();
    t.dims[0] = Dim(1);
    v->setType(t);
  }
  void visit(const Op &op) {
    for (Value *v : op.operands())
      bind(v);
    for (unsigned i = 0; i < op.numResults(); ++i)
      bind(op.result(i));
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      for (Value *v : op.region(r).inputs())
        bind(v);
      for (const Op &inner : op.region(r).ops())
        visit(inner);
    }
  }
  std::map<Value *, TensorType> saved_;
};

// Rewrites accesses to the lifted buffers: buffer `from` becomes `to`, index 0 gains `offset`.
class Lift : public loop::IRMutator {
public:
  std::map<const loop::BufferNode *, std::pair<loop::Buffer, Expr>> map;

protected:
  Expr visitLoad(const Expr &e) override {
    Expr m = IRMutator::visitLoad(e);
    auto lifted = lift(e->buffer, m->operands);
    return lifted ? loop::load(lifted->first, lifted->second) : m;
  }
  Stmt visitStore(const Stmt &s) override {
    Stmt m = IRMutator::visitStore(s);
    auto lifted = lift(s->buffer, m->indices);
    return lifted ? loop::store(lifted->first, lifted->second, m->value) : m;
  }

private:
  // The buffer and indices an access to `b` at `idx` becomes, if b is lifted.
  std::optional<std::pair<loop::Buffer, Exprs>> lift(const loop::Buffer &b, Exprs idx) const {
    auto it = map.find(b.get());
    if (it == map.end())
      return std::nullopt;
    const Expr &offset = it->second.second;
    int lanes = idx[0].type().lanes;
    idx[0] = idx[0] + (lanes > 1 ? loop::broadcast(offset, lanes) : offset);
    return std::pair{it->second.first, std::move(idx)};
  }
};

} // namespace

bool hasSymbolicDims(const Op &op) {
  std::set<std::string> syms;
  collectSymbols(op, syms);
  return !syms.empty();
}

llvm::Expected<loop::LoopFunction>
lowerSymbolic(const Op &op, const std::function<llvm::Error(loop::LoopFunction &)> &beforeLift,
              const LowerOptions &opts) {
  auto refuse = [&](const std::string &why) {
    return makeError("lowering of op '" + std::string(op.opName()) +
                     "' with symbolic dims is not supported: " + why);
  };
  std::set<std::string> syms;
  collectSymbols(op, syms);
  if (syms.size() != 1)
    return refuse("more than one symbol (" + std::to_string(syms.size()) + ")");
  const std::string symbol = *syms.begin();
  // The lifted loop runs over the symbol's value: a dim 0 that is a formula of it (2*n after a
  // concat, min(300,k) after a topk) has another extent.
  if (!dimZeroIsSymbol(op, Dim::sym(symbol)))
    return refuse("a dim 0 that is a formula of '" + symbol + "', not the symbol itself");
  if (std::string why = notSeparable(op); !why.empty())
    return refuse(why);

  std::vector<bool> liftedParam;
  for (const Value *v : op.operands())
    liftedParam.push_back(lifted(*v));
  for (unsigned i = 0; i < op.numResults(); ++i)
    liftedParam.push_back(lifted(*op.result(i)));

  llvm::Expected<loop::LoopFunction> f = [&] {
    BindSymbolToOne bound(op);
    return lowerOp(op, opts);
  }();
  if (!f)
    return f.takeError();
  if (beforeLift)
    if (llvm::Error err = beforeLift(*f))
      return err;

  loop::Var n = loop::makeVar(symbolParamName(symbol), DType::I64);
  loop::Var b = loop::makeVar("b_" + symbolParamName(symbol).substr(4), DType::I64);
  Lift lift;
  for (size_t i = 0; i < f->params.size() && i < liftedParam.size(); ++i) {
    loop::Param &p = f->params[i];
    if (!p.isBuffer() || !liftedParam[i])
      continue;
    const loop::BufferNode &old = *p.buffer;
    std::optional<int64_t> d0 = old.shape[0].asInt();
    if (!loop::hasContiguousStrides(old))
      return refuse("lowered buffer %" + old.name + " is not contiguous");
    if (!d0)
      return refuse("lowered buffer %" + old.name + " has a symbolic dim 0");
    std::vector<Expr> shape = old.shape;
    shape[0] = *d0 == 1 ? loop::var(n) : loop::var(n) * imm(*d0);
    loop::Buffer nb = loop::makeBuffer(old.name, old.dtype, shape);
    Expr offset = *d0 == 1 ? loop::var(b) : loop::var(b) * imm(*d0);
    lift.map[p.buffer.get()] = {nb, offset};
    p.buffer = nb;
  }
  f->body = loop::forLoop(b, imm(0), loop::var(n), loop::ForKind::Serial, lift.mutate(f->body));
  f->notes.roles[b->name] = loop::LoopRole::Parallel; // items of the batch are independent
  f->addScalar(n);
  return loop::simplify(*f);
}

} // namespace strata::lower
