// canonicalize, data-movement family: transposes, reshapes, expands, slices, concats and casts
// that do nothing or compose into one. All of these are exact: they move or convert the same
// values. (ONNX Identity and inference-mode Dropout never reach the IR: the importer drops
// them; Squeeze, Unsqueeze and Flatten import as reshapes.)
#include "CanonicalizePatterns.h"

#include <limits>
#include <numeric>

namespace strata::canonicalize {
namespace {

Op *definingOpOfKind(const Value *v, OpKind kind) {
  Op *def = v->definingOp();
  return def && def->kind() == kind ? def : nullptr;
}

// transpose(x, identity) -> x
bool foldTransposeIdentity(Op &op, PatternRewriter &r) {
  return isIdentityPermutation(ops::TransposeOp(op).perm()) &&
         replaceIfSameType(op, op.operand(0), r);
}

// transpose(transpose(x, p), q) -> transpose(x, p∘q), which vanishes when it is the identity:
// result dim i is inner dim q[i], which is x's dim p[q[i]].
bool foldTransposeTranspose(Op &op, PatternRewriter &r) {
  Op *inner = definingOpOfKind(op.operand(0), OpKind::Transpose);
  if (!inner)
    return false;
  std::vector<int64_t> p = ops::TransposeOp(*inner).perm(), q = ops::TransposeOp(op).perm();
  if (p.size() != q.size())
    return false;
  std::vector<int64_t> composed(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] < 0 || q[i] >= static_cast<int64_t>(p.size()))
      return false;
    composed[i] = p[q[i]];
  }
  Value *x = inner->operand(0);
  if (isIdentityPermutation(composed))
    return replaceIfSameType(op, x, r);
  return replaceWithNew(op, OpKind::Transpose, {x}, r, {{"perm", composed}});
}

// A transpose that only moves size-1 dims is a reshape: with the unit dims left out, the
// remaining dims keep their order, so the row-major element order is unchanged. A reshape is
// free (no copy) and merges with neighbouring reshapes.
bool movesOnlyUnitDims(const TensorType &x, const std::vector<int64_t> &perm) {
  int64_t previous = -1;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank())
      return false;
    const Dim &d = x.dims[p];
    if (d.isStatic() && d.size == 1)
      continue;
    if (p < previous)
      return false;
    previous = p;
  }
  return true;
}

// reshape(x) whose result type is x's type -> x (row-major order is unchanged, so same dims
// mean the same tensor). Covers squeeze/unsqueeze/flatten that change nothing.
bool foldReshapeNoop(Op &op, PatternRewriter &r) {
  return replaceIfSameType(op, op.operand(0), r);
}

// A reshape target that reproduces `target` from `x`: static dims are spelled out, a symbolic
// dim at a position where x has the same symbol is copied with 0, and at most one other
// symbolic dim is inferred with -1; past that, the symbolic dims themselves (a dims attribute).
// Zero-size dims need allowzero (0 must mean 0, not "copy"), which ONNX only allows without -1
// or copies, so then the target must be fully static.
std::optional<AttrMap> reshapeIntsFor(const TensorType &x, const TensorType &target);

std::optional<AttrMap> reshapeAttrsFor(const TensorType &x, const TensorType &target) {
  bool zero = false;
  for (const Dim &d : target.dims)
    zero |= d.isStatic() && d.size == 0;
  if (auto ints = reshapeIntsFor(x, target); ints || zero)
    return ints;
  return AttrMap{{"shape", Attribute::dims(target.dims)}};
}

std::optional<AttrMap> reshapeIntsFor(const TensorType &x, const TensorType &target) {
  std::vector<int64_t> shape;
  bool inferred = false, copied = false, zeroSize = false;
  for (size_t i = 0; i < target.dims.size(); ++i) {
    const Dim &d = target.dims[i];
    if (d.isStatic()) {
      shape.push_back(d.size);
      zeroSize |= d.size == 0;
    } else if (static_cast<int64_t>(i) < x.rank() && x.dims[i] == d) {
      shape.push_back(0);
      copied = true;
    } else if (!inferred) {
      shape.push_back(-1);
      inferred = true;
    } else {
      return std::nullopt;
    }
  }
  AttrMap attrs{{"shape", shape}};
  if (zeroSize) {
    if (inferred || copied)
      return std::nullopt;
    attrs["allowzero"] = int64_t{1};
  }
  return attrs;
}

// reshape(reshape(x)) -> reshape(x) with the outer result type. The outer `shape` attribute is
// not reused (its 0 entries would refer to the inner result's dims); the new target is rebuilt
// from the outer result type, and replaceWithNew checks that inference gives that exact type.
bool foldReshapeReshape(Op &op, PatternRewriter &r) {
  Op *inner = definingOpOfKind(op.operand(0), OpKind::Reshape);
  if (!inner)
    return false;
  Value *x = inner->operand(0);
  const TensorType &target = op.result(0)->type();
  if (x->type() == target)
    return replaceIfSameType(op, x, r);
  std::optional<AttrMap> attrs = reshapeAttrsFor(x->type(), target);
  return attrs && replaceWithNew(op, OpKind::Reshape, {x}, r, std::move(*attrs));
}

// transpose(x) that only moves size-1 dims -> reshape(x) to the same result type.
bool foldTransposeToReshape(Op &op, PatternRewriter &r) {
  const TensorType &x = op.operand(0)->type();
  if (!movesOnlyUnitDims(x, ops::TransposeOp(op).perm()))
    return false;
  std::optional<AttrMap> attrs = reshapeAttrsFor(x, op.result(0)->type());
  return attrs && replaceWithNew(op, OpKind::Reshape, {op.operand(0)}, r, std::move(*attrs));
}

// expand(x) whose result type is x's type -> x (broadcasting to its own shape copies nothing).
bool foldExpandNoop(Op &op, PatternRewriter &r) {
  return replaceIfSameType(op, op.operand(0), r);
}

// slice(x) that takes every element of every listed axis in order -> x: step 1, a start that
// clamps to 0 and an end that clamps to the dim (symbolic dims only admit that form).
bool foldSliceFull(Op &op, PatternRewriter &r) {
  const TensorType &x = op.operand(0)->type();
  const ops::SliceOp slice(op);
  const std::vector<int64_t> &starts = slice.starts(), &ends = slice.ends(), &steps = slice.steps();
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (steps[d] != 1)
      return false;
    const Dim &dim = x.dims[d];
    if (!dim.isStatic()) {
      if (!shape::isFullSlice(starts[d], ends[d], steps[d]))
        return false;
      continue;
    }
    shape::SliceRange range = shape::sliceRange(dim.size, starts[d], ends[d], 1);
    if (range.start != 0 || range.length != dim.size)
      return false;
  }
  return replaceIfSameType(op, op.operand(0), r);
}

// concat(x) -> x
bool foldConcatSingle(Op &op, PatternRewriter &r) {
  return op.numOperands() == 1 && replaceIfSameType(op, op.operand(0), r);
}

// pad(x) by zero on every side -> x, in any mode (torch exports densenet's transition pools
// after such a pad, which would otherwise keep them out of the blocked layout).
bool foldPadNoop(Op &op, PatternRewriter &r) {
  for (const Dim &p : ops::PadOp(op).pads())
    if (p != Dim(0))
      return false;
  return replaceIfSameType(op, op.operand(0), r);
}

// avg_pool(pad(x, 0) on the spatial dims) with no pads of its own -> avg_pool(x) with those
// pads counted in the divisor: the same sums over the same window sizes (torch exports
// inception's avg_pool2d(padding=1) so; the fused pool reads no padded copy and can run in the
// blocked layout). Not with ceil_mode, whose last windows may reach past the pads.
bool foldPadIntoAvgPool(Op &op, PatternRewriter &r) {
  const ops::PoolOp pool(op);
  Op *pad = definingOpOfKind(op.operand(0), OpKind::Pad);
  if (!pad || pool.kind() != PoolKind::Avg || pool.layout() != 0 || pool.ceil_mode() ||
      ops::PadOp(*pad).mode() != PadMode::Constant)
    return false;
  for (int64_t p : pool.pads())
    if (p != 0)
      return false;
  const Tensor *value = constantValue(pad->operand(1));
  if (!value || !value->valid() || value->numElements() != 1 || value->getDouble(0) != 0)
    return false;
  const std::vector<Dim> pads = ops::PadOp(*pad).pads();
  const size_t rank = pads.size() / 2, spatial = pool.kernel().size();
  if (rank != spatial + 2)
    return false;
  std::vector<int64_t> poolPads(2 * spatial);
  for (size_t d = 0; d < rank; ++d)
    for (size_t side = 0; side < 2; ++side) {
      const Dim &p = pads[d + side * rank];
      if (!p.isStatic() || p.size < 0 || (d < 2 && p.size != 0))
        return false;
      if (d >= 2)
        poolPads[d - 2 + side * spatial] = p.size;
    }
  AttrMap attrs = op.attrs();
  attrs["pads"] = Attribute(poolPads);
  attrs["count_include_pad"] = Attribute(int64_t{1});
  return replaceWithNew(op, OpKind::Pool, {pad->operand(0)}, r, std::move(attrs));
}

// cast(x) to x's own dtype -> x
bool foldCastNoop(Op &op, PatternRewriter &r) {
  return ops::CastOp(op).to() == op.operand(0)->type().dtype &&
         replaceIfSameType(op, op.operand(0), r);
}

// Significant bits of an integer dtype (sign excluded) and whether it is signed.
int integerBits(DType t) { return static_cast<int>(dtypeSize(t)) * 8 - (isSigned(t) ? 1 : 0); }

// Largest n such that every integer of magnitude <= 2^n is exact in float dtype t.
int mantissaBits(DType t) {
  switch (t) {
  case DType::F16: return 11;
  case DType::BF16: return 8;
  case DType::F32: return 24;
  case DType::F64: return 53;
  default: return 0;
  }
}

// Every value of integer dtype `from` is a value of integer dtype `to`.
bool integerRangeContains(DType to, DType from) {
  if (isSigned(from) && !isSigned(to))
    return false;
  return integerBits(to) >= integerBits(from);
}

// Casting from `from` to `to` keeps every value exactly (so a later cast sees the same number).
bool isLosslessCast(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true;
  if (to == DType::Bool)
    return false;
  if (isInteger(from) && isInteger(to))
    return integerRangeContains(to, from);
  if (isInteger(from) && isFloat(to))
    return integerBits(from) <= mantissaBits(to);
  if (isFloat(from) && isFloat(to)) {
    if (to == DType::F64)
      return true;
    return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
  }
  return false; // float -> integer truncates
}

// cast(cast(x: A, B), C) -> cast(x, C) when A -> B is lossless and B -> C treats that value as
// A -> C would. Value-preserving is not quite enough: int -> int wraps but float -> int
// saturates, so i32 -> f64 -> i16 differs from i32 -> i16 on 70000. The conversion kind agrees
// when A and B are both integers, both floats, A is bool (0 and 1 convert alike), C is a float
// or bool (both round or test the same real number), or C's range holds all of A.
bool foldCastCast(Op &op, PatternRewriter &r) {
  Op *inner = definingOpOfKind(op.operand(0), OpKind::Cast);
  if (!inner)
    return false;
  Value *x = inner->operand(0);
  DType a = x->type().dtype, b = ops::CastOp(*inner).to(), c = ops::CastOp(op).to();
  if (!isLosslessCast(a, b))
    return false;
  bool sameConversion = a == DType::Bool || (isInteger(a) && isInteger(b)) ||
                        (isFloat(a) && isFloat(b)) || !isInteger(c) ||
                        (isInteger(a) && integerRangeContains(c, a));
  if (!sameConversion)
    return false;
  if (a == c)
    return replaceIfSameType(op, x, r);
  return replaceWithNew(op, OpKind::Cast, {x}, r, {{"to", c}});
}

} // namespace

void addDataMovementPatterns(PatternSet &patterns, const PassOptions &) {
  addPattern(patterns, OpKind::Transpose, "transpose-identity", foldTransposeIdentity);
  addPattern(patterns, OpKind::Transpose, "transpose-transpose", foldTransposeTranspose);
  addPattern(patterns, OpKind::Transpose, "transpose-to-reshape", foldTransposeToReshape);
  addPattern(patterns, OpKind::Reshape, "reshape-noop", foldReshapeNoop);
  addPattern(patterns, OpKind::Reshape, "reshape-reshape", foldReshapeReshape);
  addPattern(patterns, OpKind::Expand, "expand-noop", foldExpandNoop);
  addPattern(patterns, OpKind::Slice, "slice-full", foldSliceFull);
  addPattern(patterns, OpKind::Concat, "concat-single", foldConcatSingle);
  addPattern(patterns, OpKind::Pad, "pad-noop", foldPadNoop);
  addPattern(patterns, OpKind::Pool, "pad-into-avg-pool", foldPadIntoAvgPool);
  addPattern(patterns, OpKind::Cast, "cast-noop", foldCastNoop);
  addPattern(patterns, OpKind::Cast, "cast-cast", foldCastCast);
}

} // namespace strata::canonicalize
