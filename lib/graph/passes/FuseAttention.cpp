// fuse-attention: scaled dot-product attention as exporters spell it,
//
//   s = matmul(q, kt)                       kt = k^T ([.., D, N])
//   s = mul(s, c) | mul(c, s) | div(s, c)    (any number; c one-element constants)
//   s = add(s, bias) | add(bias, s)          (optional: a mask or relative-position bias)
//   y = matmul(softmax(s, last axis), v)
//                                     -> y = attention(q, transpose(kt), v[, bias]) {scale}
//
// with the constants' product as scale (scalar factors on q or kt join it too: exporters scale
// q by 1/sqrt(D), or both q and k by D^-1/4). The transpose swaps kt's last two dims back, so a
// kt written as transpose(k) cancels against it in canonicalize. Every value between the first
// matmul and the softmax feeds only the pattern (no other user, not a graph output), so nothing
// is computed twice. The attention kernel (lower/LowerAttention.cpp) computes a few query rows'
// scores at a time into a local buffer, takes their softmax there and multiplies by v, never
// writing the scores tensor (ViT-B/16: 12 x 197 x 197 per layer, written and read three times).
// Formed for f32 with v's last dim a static multiple of 8, where that kernel applies, and not
// for fewer than 16 static queries over keys whose packing leaves the stack (a decoder step: k
// and v would be packed for one row); the scale is multiplied out in f64 (a power of two, as
// 1/sqrt(64), is exact; others round once).
//
// The decoder step's own scores, one query row against transposed keys, become a row product:
//   matmul(a [.., 1, D], transpose(k [.., N, D]))
//                         -> transpose(reduce_sum(mul(a, k), last axis, keepdims))  [.., 1, N]
// one pass over k in its own layout (the reduce inlines the mul and runs on vectors of each
// row) instead of a transpose copy of all the keys followed by a matmul.
#include "CanonicalizePatterns.h"

#include "strata/graph/TypeInference.h"
#include "strata/graph/passes/Passes.h"

#include <algorithm>
#include <optional>

namespace strata {
namespace {

using canonicalize::addPattern;

// Fewer static query rows than this keep the unfused chain unless k and v pack into this many
// bytes each (the code generator's stack locals; larger ones are heap-allocated per item).
constexpr int64_t kMinQueries = 16, kStackPackBytes = 64 * 1024;

// The op defining `v` if it is of `kind` and `v` feeds one operand and no graph output.
Op *soleProducer(const Value *v, OpKind kind) {
  Op *op = v->definingOp();
  if (!op || op->kind() != kind || v->uses().size() != 1 || v->isGraphOutput())
    return nullptr;
  return op;
}

std::optional<double> scalarFactor(const Value *v) {
  const Tensor *t = constantValue(v);
  if (!t || t->numElements() != 1 || !isFloat(t->dtype()))
    return std::nullopt;
  return t->getDouble(0);
}

// `v` with multiplications and divisions by one-element constants peeled off (each keeping the
// type), their factor multiplied into `scale`. `soleUse`: each peeled value must feed only the
// next (the scores chain, whose values the fused op replaces); on q and kt a scaled value may
// have other users, which keep computing it.
Value *peelScale(Value *v, double &scale, bool soleUse) {
  for (;;) {
    Op *op = v->definingOp();
    if (!op || (soleUse && (v->uses().size() != 1 || v->isGraphOutput())))
      return v;
    Value *inner = nullptr;
    if (op->kind() == OpKind::Mul) {
      for (unsigned i = 0; i < 2 && !inner; ++i)
        if (std::optional<double> f = scalarFactor(op->operand(1 - i));
            f && op->operand(i)->type() == v->type()) {
          scale *= *f;
          inner = op->operand(i);
        }
    } else if (op->kind() == OpKind::Div) {
      if (std::optional<double> f = scalarFactor(op->operand(1));
          f && *f != 0 && op->operand(0)->type() == v->type()) {
        scale /= *f;
        inner = op->operand(0);
      }
    }
    if (!inner)
      return v;
    v = inner;
  }
}

// The matmul(q, kt) computing the scores `s` under scale factors, or null.
Op *scoresProduct(Value *s, double &scale) {
  Value *product = peelScale(s, scale, /*soleUse=*/true);
  Op *mm = soleProducer(product, OpKind::MatMul);
  if (!mm || mm->numOperands() != 2 || ops::MatMulOp(*mm).b_panel() != 0)
    return nullptr;
  return mm;
}

// The result type `kind` would infer for these operands and attributes, or nullopt.
std::optional<TensorType> inferred(OpKind kind, const std::vector<TensorType> &operands,
                                   const AttrMap &attrs) {
  auto types = inferResultTypes(kind, operands, attrs);
  if (!types) {
    llvm::consumeError(types.takeError());
    return std::nullopt;
  }
  return (*types)[0];
}

bool fuseAttention(Op &pv, PatternRewriter &r) {
  if (pv.numOperands() != 2 || ops::MatMulOp(pv).b_panel() != 0)
    return false;
  Op *softmax = soleProducer(pv.operand(0), OpKind::Softmax);
  if (!softmax)
    return false;
  Value *s = softmax->operand(0), *v = pv.operand(1);
  const TensorType &scores = s->type();
  if (scores.dtype != DType::F32 || scores.rank() < 2 ||
      ops::SoftmaxOp(*softmax).axis() != scores.rank() - 1)
    return false;
  // The kernel's result vectors span v's last dim.
  const TensorType &vt = v->type();
  if (vt.rank() < 2 || !vt.dims.back().isStatic() || vt.dims.back().size % 8 != 0 ||
      vt.dims.back().size == 0)
    return false;
  double scale = 1;
  Value *bias = nullptr;
  Op *mm = scoresProduct(s, scale);
  if (Op *add = mm ? nullptr : soleProducer(s, OpKind::Add))
    for (unsigned i = 0; i < 2 && !mm; ++i) {
      scale = 1;
      if (add->operand(i)->type() == scores && (mm = scoresProduct(add->operand(i), scale)))
        bias = add->operand(1 - i);
    }
  if (!mm)
    return false;
  Value *q = peelScale(mm->operand(0), scale, false), *kt = peelScale(mm->operand(1), scale, false);
  if (q->type().rank() < 2 || kt->type().rank() < 2 || vt.rank() < 2)
    return false;
  // A few queries against many keys (a decoder's step against its cache: one query, thousands
  // of keys) would pack k and v, past the stack into fresh heap pages, for each few rows: the
  // kernel pays where rows share the packing or it stays on the stack.
  const Dim &queries = q->type().dims[q->type().rank() - 2];
  const Dim &keys = vt.dims[vt.rank() - 2], &headDim = q->type().dims.back();
  std::optional<int64_t> packBytes =
      keys.isStatic() && headDim.isStatic()
          ? shape::checkedMul(keys.size, std::max(headDim.size, vt.dims.back().size) * 4)
          : std::nullopt;
  const bool packedOnStack = packBytes && *packBytes <= kStackPackBytes;
  if (queries.isStatic() && queries.size < kMinQueries && !packedOnStack)
    return false;
  std::vector<int64_t> perm(static_cast<size_t>(kt->type().rank()));
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 2], perm.back());
  // Types first: nothing is created unless the fused op types exactly as the matmul it replaces.
  AttrMap transposeAttrs{{"perm", perm}}, attrs{{"scale", scale}};
  std::optional<TensorType> kType = inferred(OpKind::Transpose, {kt->type()}, transposeAttrs);
  if (!kType)
    return false;
  std::vector<TensorType> operandTypes{q->type(), *kType, vt};
  if (bias)
    operandTypes.push_back(bias->type());
  std::optional<TensorType> type = inferred(OpKind::Attention, operandTypes, attrs);
  if (!type || *type != pv.result(0)->type())
    return false;
  Value *k = r.builder().create(OpKind::Transpose, {kt}, transposeAttrs)->result(0);
  std::vector<Value *> operands{q, k, v};
  if (bias)
    operands.push_back(bias);
  Op *attention = r.builder().create(OpKind::Attention, operands, attrs);
  r.replaceOp(pv, {attention->result(0)});
  return true;
}

// matmul(a, transpose(k)) with a single static row in a: see the file comment.
bool rowTimesTransposed(Op &mm, PatternRewriter &r) {
  if (mm.numOperands() != 2 || ops::MatMulOp(mm).b_panel() != 0)
    return false;
  Value *a = mm.operand(0);
  Op *t = mm.operand(1)->definingOp();
  const TensorType &at = a->type();
  if (!t || t->kind() != OpKind::Transpose || at.dtype != DType::F32 || at.rank() < 2 ||
      !(at.dims[at.rank() - 2] == Dim(1)) || !at.dims.back().isStatic() || at.dims.back().size < 8)
    return false;
  Value *k = t->operand(0);
  const int64_t rank = k->type().rank();
  const std::vector<int64_t> &perm = ops::TransposeOp(*t).perm();
  if (rank < 2 || static_cast<int64_t>(perm.size()) != rank || perm[rank - 1] != rank - 2 ||
      perm[rank - 2] != rank - 1)
    return false;
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return false;
  // Types first: the rewrite must type exactly as the matmul.
  std::optional<TensorType> product = inferred(OpKind::Mul, {at, k->type()}, {});
  if (!product)
    return false;
  const int64_t pr = product->rank();
  AttrMap sumAttrs{{"kind", "sum"}, {"axes", std::vector<int64_t>{pr - 1}}, {"keepdims", int64_t{1}}};
  std::optional<TensorType> sum = inferred(OpKind::Reduce, {*product}, sumAttrs);
  if (!sum)
    return false;
  std::vector<int64_t> swap(static_cast<size_t>(pr));
  for (int64_t i = 0; i < pr; ++i)
    swap[static_cast<size_t>(i)] = i;
  std::swap(swap[static_cast<size_t>(pr - 2)], swap[static_cast<size_t>(pr - 1)]);
  AttrMap swapAttrs{{"perm", swap}};
  std::optional<TensorType> rows = inferred(OpKind::Transpose, {*sum}, swapAttrs);
  if (!rows || *rows != mm.result(0)->type())
    return false;
  Value *m = r.builder().create(OpKind::Mul, {a, k})->result(0);
  Value *s = r.builder().create(OpKind::Reduce, {m}, sumAttrs)->result(0);
  r.replaceOp(mm, {r.builder().create(OpKind::Transpose, {s}, swapAttrs)->result(0)});
  return true;
}

class FuseAttentionPass final : public Pass {
public:
  std::string_view name() const override { return "fuse-attention"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    // Attention first: a row product of its scores would hide the chain it matches.
    PatternSet attention, rows;
    addPattern(attention, OpKind::MatMul, "attention", fuseAttention);
    addPattern(rows, OpKind::MatMul, "row-product", rowTimesTransposed);
    llvm::Expected<bool> fused = applyPatternsGreedily(g, attention, ctx, "fuse-attention");
    if (!fused)
      return fused.takeError();
    llvm::Expected<bool> products = applyPatternsGreedily(g, rows, ctx, "fuse-attention");
    if (!products)
      return products.takeError();
    return *fused || *products;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttentionPass() { return std::make_unique<FuseAttentionPass>(); }

} // namespace strata
