// Shape functions of the data-movement ops: reshape, transpose, expand, slice, concat, pad, the
// gather family and the scatter family.
#include "TypeInferenceImpl.h"

#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace strata::infer {

namespace {

// A target with symbolic entries (formulas of the symbols, each that dim exactly); its static
// entries as in ONNX (0 copies unless allowzero, one -1 infers). The element counts of operand
// and result must agree at run time: the plan checks it when the formulas differ.
TensorType symbolicReshapeType(const InferContext &c, const std::vector<Dim> &target,
                               bool allowZero) {
  const TensorType &x = c.operand(0);
  const std::string text = dimsToString(target);
  std::vector<Dim> out(target.size());
  int64_t inferredAt = -1;
  SymExpr known(1);
  try {
    for (size_t i = 0; i < target.size(); ++i) {
      const Dim &d = target[i];
      if (!d.isStatic()) { // >= 0 when bound: every dim is checked then (a window count
        out[i] = d;       // fdiv(w + mod(-w, 7), 7) is, though no sign rule proves it)
      } else if (d.size == -1) {
        if (inferredAt >= 0)
          fail("attribute 'shape' " + text + " has more than one -1");
        inferredAt = static_cast<int64_t>(i);
        continue;
      } else if (d.size < -1) {
        fail("attribute 'shape' " + text + " has invalid size " + std::to_string(d.size));
      } else if (d.size == 0 && !allowZero) {
        if (static_cast<int64_t>(i) >= x.rank())
          fail("attribute 'shape' " + text + " copies dim " + std::to_string(i) +
               " (a 0) but the operand has rank " + std::to_string(x.rank()));
        out[i] = x.dims[i];
      } else {
        out[i] = d;
      }
      known = known * out[i].asExpr();
    }
    if (inferredAt >= 0) {
      SymExpr total(1);
      for (const Dim &d : x.dims)
        total = total * d.asExpr();
      // Whole only at some sizes where it does not divide as formulas: the plan and the
      // interpreter check the element counts agree when bound.
      out[inferredAt] = Dim::of(SymExpr::floorDiv(total, known));
    }
  } catch (const SymExprError &e) {
    fail("attribute 'shape' " + text + ": " + e.what());
  }
  return x.withDims(std::move(out));
}

// ONNX Reshape with a static target shape. Symbolic input dims survive when copied by a 0 or
// absorbed by -1 (a formula: the absorbed dims' product over the target's static sizes).
TensorType reshapeType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::ReshapeOp>();
  const std::vector<Dim> target = attrs.shape();
  bool allowZero = attrs.allowzero();
  std::vector<int64_t> shape;
  for (const Dim &d : target) {
    if (!d.isStatic())
      return symbolicReshapeType(c, target, allowZero);
    shape.push_back(d.size);
  }
  int64_t inferredAt = -1;
  std::vector<bool> copied(x.dims.size(), false);
  std::vector<Dim> out(shape.size());
  bool hasZero = false;
  int64_t knownOut = 1; // product of the static output dims that are not copied and not -1
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[i];
    if (s == -1) {
      if (inferredAt >= 0)
        fail("attribute 'shape' " + intsToString(shape) + " has more than one -1");
      inferredAt = static_cast<int64_t>(i);
    } else if (s < -1) {
      fail("attribute 'shape' " + intsToString(shape) + " has invalid size " + std::to_string(s));
    } else if (s == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= x.rank())
        fail("attribute 'shape' " + intsToString(shape) + " copies dim " + std::to_string(i) +
             " (a 0) but the operand has rank " + std::to_string(x.rank()));
      out[i] = x.dims[i];
      copied[i] = true;
    } else {
      hasZero |= s == 0;
      out[i] = Dim(s);
      // (`shape` is the attribute here, so the namespace is spelled out.)
      std::optional<int64_t> product = strata::shape::checkedMul(knownOut, s);
      if (!product)
        fail("attribute 'shape' " + intsToString(shape) +
             " has dims whose product overflows int64");
      knownOut = *product;
    }
  }
  if (allowZero && hasZero && inferredAt >= 0)
    fail("attribute 'shape' " + intsToString(shape) + " has both 0 and -1 with allowzero=1");

  // What of the input is left after removing the copied dims.
  int64_t staticIn = 1;
  std::vector<std::string> symbolsIn;
  SymExpr symbolicIn(1); // the symbolic dims' product
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (copied[i])
      continue;
    if (x.dims[i].isStatic()) {
      std::optional<int64_t> product = strata::shape::checkedMul(staticIn, x.dims[i].size);
      if (!product)
        fail("input " + dimsToString(x.dims) + " has dims whose product overflows int64");
      staticIn = *product;
    } else {
      symbolsIn.push_back(x.dims[i].str());
      symbolicIn = symbolicIn * x.dims[i].expr;
    }
  }

  std::string inShape = dimsToString(x.dims);
  if (inferredAt < 0) {
    // A static target for symbolic input dims (an exporter traced at one size: maxvit's window
    // grid) holds at the sizes whose element count matches; the plan checks that at bind time
    // and the interpreter when it runs, as ONNX Runtime does.
    if (!symbolsIn.empty())
      return x.withDims(std::move(out));
    if (staticIn != knownOut)
      fail("attribute 'shape' " + intsToString(shape) + " has " + std::to_string(knownOut) +
           " elements but input " + inShape + " has " + std::to_string(staticIn));
    return x.withDims(std::move(out));
  }

  if (symbolsIn.empty()) {
    if (knownOut == 0 || staticIn % knownOut != 0)
      fail("attribute 'shape' " + intsToString(shape) + ": cannot infer -1 for input " + inShape);
    out[inferredAt] = Dim(staticIn / knownOut);
    return x.withDims(std::move(out));
  }
  bool divides = knownOut != 0 && staticIn != 0 &&
                 (staticIn % knownOut == 0 || knownOut % staticIn == 0);
  if (!divides)
    fail("attribute 'shape' " + intsToString(shape) + ": cannot infer -1 for input " + inShape +
         " (static sizes do not divide)");
  if (staticIn % knownOut == 0) { // exact: the static part divides, the symbols stay whole
    out[inferredAt] = Dim::of(symbolicIn * (staticIn / knownOut));
    return x.withDims(std::move(out));
  }
  // Whole only for some sizes (e.g. [?n, 3] -> [6, -1], or a symbolic dim's own factor completing
  // the division: attention heads merged back, [?t, ?(4*b), 8] -> [-1, 32] is t*b): the quotient
  // as a formula; the plan and the interpreter check the element counts agree when bound.
  try {
    out[inferredAt] =
        Dim::of(SymExpr::floorDiv(symbolicIn * SymExpr(staticIn), SymExpr(knownOut)));
  } catch (const SymExprError &e) {
    fail("attribute 'shape' " + intsToString(shape) + ": " + e.what());
  }
  return x.withDims(std::move(out));
}

TensorType transposeType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const std::vector<int64_t> &perm = c.view<ops::TransposeOp>().perm();
  if (static_cast<int64_t>(perm.size()) != x.rank())
    fail("attribute 'perm' " + intsToString(perm) + " has " + std::to_string(perm.size()) +
         " entries but the operand has rank " + std::to_string(x.rank()));
  std::vector<bool> seen(perm.size(), false);
  std::vector<Dim> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank() || seen[p])
      fail("attribute 'perm' " + intsToString(perm) + " is not a permutation of [0, " +
           std::to_string(x.rank()) + ")");
    seen[p] = true;
    out.push_back(x.dims[p]);
  }
  return x.withDims(std::move(out));
}

TensorType expandType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const std::vector<Dim> target = c.view<ops::ExpandOp>().shape();
  for (const Dim &s : target)
    if (s.isStatic() && s.size < 0)
      fail("attribute 'shape' " + dimsToString(target) + " has a negative size");
  std::string why;
  auto dims = shape::broadcastShapes(x.dims, target, &why);
  if (!dims)
    fail("operand 0 shape " + dimsToString(x.dims) + " cannot expand to attribute 'shape' " +
         dimsToString(target) + ": " + why);
  return x.withDims(std::move(*dims));
}

// The length of a slice of symbolic dim `d` (ONNX's clamping: negative indices count from the
// end; starts and ends clamp to [0, d] for positive steps, to [-1, d - 1] for negative ones).
Dim symbolicSliceLength(const Dim &dim, int64_t start, int64_t end, int64_t step, size_t axis) {
  // Ends this far out mean "to the end" (exporters write INT64_MAX / INT64_MIN): the dim itself.
  constexpr int64_t kFar = int64_t(1) << 60;
  try {
    const SymExpr d = dim.expr;
    auto clampIndex = [&](int64_t i, bool forward) -> SymExpr {
      if (forward) {
        if (i >= kFar)
          return d;
        if (i <= -kFar)
          return SymExpr(0);
        return i < 0 ? SymExpr::max(d + i, 0) : SymExpr::min(SymExpr(i), d);
      }
      if (i >= kFar)
        return d - 1;
      if (i <= -kFar)
        return SymExpr(-1);
      return i < 0 ? SymExpr::max(d + i, -1) : SymExpr::min(SymExpr(i), d - 1);
    };
    const bool forward = step > 0;
    SymExpr s = clampIndex(start, forward), e = clampIndex(end, forward);
    SymExpr span = forward ? e - s : s - e;
    if (step == std::numeric_limits<int64_t>::min())
      fail("attribute 'steps' has INT64_MIN on symbolic axis " + std::to_string(axis));
    int64_t stride = forward ? step : -step;
    return Dim::of(SymExpr::max(SymExpr::ceilDiv(span, stride), 0));
  } catch (const SymExprError &e) {
    fail(std::string(e.what()) + " in the slice of axis " + std::to_string(axis));
  }
}

// One entry per dim (the normal form).
TensorType sliceType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::SliceOp>();
  const std::vector<int64_t> &starts = attrs.starts(), &ends = attrs.ends(), &steps = attrs.steps();
  const size_t rank = x.dims.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    fail("attributes 'starts', 'ends' and 'steps' must have one entry per dim (rank " +
         std::to_string(rank) + "; got " + std::to_string(starts.size()) + ", " +
         std::to_string(ends.size()) + ", " + std::to_string(steps.size()) + ")");
  std::vector<Dim> out = x.dims;
  for (size_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      fail("attribute 'steps' " + intsToString(steps) + " has a zero step");
    const Dim &dim = x.dims[d];
    if (!dim.isStatic()) {
      if (shape::isFullSlice(starts[d], ends[d], steps[d]))
        continue; // keeps its symbol
      out[d] = symbolicSliceLength(dim, starts[d], ends[d], steps[d], d);
      continue;
    }
    out[d] = Dim(shape::sliceRange(dim.size, starts[d], ends[d], steps[d]).length);
  }
  return x.withDims(std::move(out));
}

TensorType concatType(const InferContext &c) {
  const TensorType &first = c.operand(0);
  if (first.rank() == 0)
    fail("operand 0 is a scalar; concat needs rank >= 1");
  int64_t axis = c.view<ops::ConcatOp>().axis();
  std::vector<Dim> out = first.dims;
  int64_t total = 0;
  bool symbolic = false;
  for (unsigned i = 0; i < c.numOperands(); ++i) {
    const TensorType &t = c.operand(i);
    requireSameDType(c, i, 0);
    if (t.rank() != first.rank())
      fail("operand " + std::to_string(i) + " has rank " + std::to_string(t.rank()) +
           " but operand 0 has rank " + std::to_string(first.rank()));
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (d == axis || t.dims[d] == first.dims[d])
        continue;
      // Two different formulas (h and 2*fdiv(h+1,2) after a stride-2 conv and a 2x upsample)
      // may be equal at run time: the result takes a static one if any, else operand 0's, and
      // the sizes are checked when bound (the interpreter's concat, the plan's checks).
      if (t.dims[d].isStatic() && first.dims[d].isStatic())
        fail("operand " + std::to_string(i) + " dim " + std::to_string(d) + " is " +
             t.dims[d].str() + " but operand 0 has " + first.dims[d].str() +
             " (only the concat axis may differ)");
      if (t.dims[d].isStatic())
        out[d] = t.dims[d];
    }
    symbolic |= !t.dims[axis].isStatic();
    std::optional<int64_t> sum =
        shape::checkedAdd(total, t.dims[axis].isStatic() ? t.dims[axis].size : 0);
    if (!sum)
      fail("concat along axis " + std::to_string(axis) + " makes a dim past int64");
    total = *sum;
  }
  if (!symbolic) {
    out[axis] = Dim(total);
  } else {
    SymExpr sum(total);
    try {
      for (unsigned i = 0; i < c.numOperands(); ++i)
        if (!c.operand(i).dims[axis].isStatic())
          sum = sum + c.operand(i).dims[axis].expr;
    } catch (const SymExprError &e) {
      fail(std::string(e.what()) + " in the concat along axis " + std::to_string(axis));
    }
    out[axis] = Dim::of(sum);
  }
  return first.withDims(std::move(out));
}

TensorType padType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const TensorType &value = c.operand(1);
  if (value.rank() != 0)
    fail("operand 1 (pad value) must be a rank-0 tensor, got rank " + std::to_string(value.rank()));
  requireSameDType(c, 1, 0);
  const std::vector<Dim> padDims = c.view<ops::PadOp>().pads();
  int64_t r = x.rank();
  if (static_cast<int64_t>(padDims.size()) != 2 * r)
    fail("attribute 'pads' " + dimsToString(padDims) + " must have 2 * rank = " +
         std::to_string(2 * r) + " entries");
  std::vector<Dim> out = x.dims;
  std::vector<int64_t> pads; // the static entries (a symbolic one: 0 here, handled below)
  for (const Dim &p : padDims)
    pads.push_back(p.isStatic() ? p.size : 0);
  for (int64_t d = 0; d < r; ++d) {
    int64_t begin = pads[d], end = pads[d + r];
    const Dim &pb = padDims[d], &pe = padDims[d + r];
    if (!pb.isStatic() || !pe.isStatic() || !x.dims[d].isStatic()) {
      // A symbolic entry or axis: any sign (a negative pad crops, a size read from data may be
      // one); the plan and the interpreter check when bound that the crops leave the axis >= 0.
      // A static crop of a static axis is checked here already; a static entry beside symbols
      // stays within 2^62 (sizes do: its negation and sums stay in int64).
      for (const Dim *p : {&pb, &pe})
        if (p->isStatic() && (p->size < -(int64_t(1) << 62) || p->size > (int64_t(1) << 62)))
          fail("attribute 'pads' " + dimsToString(padDims) + " has entry " + p->str() +
               " on axis " + std::to_string(d) + ", beyond 2^62 beside symbolic sizes");
      if (x.dims[d].isStatic())
        for (const Dim *p : {&pb, &pe})
          if (p->isStatic() && p->size < -x.dims[d].size)
            fail("attribute 'pads' " + dimsToString(padDims) + " crops axis " +
                 std::to_string(d) + " below zero size");
      try {
        out[d] = Dim::of(x.dims[d].asExpr() + pb.asExpr() + pe.asExpr());
      } catch (const SymExprError &e) {
        fail(std::string(e.what()) + " padding axis " + std::to_string(d));
      }
      if (out[d].isStatic() && out[d].size < 0)
        fail("attribute 'pads' " + dimsToString(padDims) + " crops axis " + std::to_string(d) +
             " below zero size");
      continue;
    }
    // Negative pads crop first, as the interpreter and the lowering apply them; checking each crop
    // against the dim also keeps -begin and -end defined (pads may be INT64_MIN).
    const int64_t dim = x.dims[d].size;
    if (begin < -dim || end < -dim ||
        dim + std::min<int64_t>(begin, 0) + std::min<int64_t>(end, 0) < 0)
      fail("attribute 'pads' " + dimsToString(padDims) + " crops axis " + std::to_string(d) +
           " below zero size");
    const int64_t kept = dim + std::min<int64_t>(begin, 0) + std::min<int64_t>(end, 0);
    std::optional<int64_t> size = shape::checkedAdd(kept, std::max<int64_t>(begin, 0));
    if (size)
      size = shape::checkedAdd(*size, std::max<int64_t>(end, 0));
    if (!size)
      fail("attribute 'pads' " + dimsToString(padDims) + " grows axis " + std::to_string(d) +
           " past int64");
    out[d] = Dim(*size);
  }
  return x.withDims(std::move(out));
}

TensorType gatherType(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  requireRankAtLeast(c, 0, 1);
  int64_t axis = c.view<ops::GatherOp>().axis();
  std::vector<Dim> out(data.dims.begin(), data.dims.begin() + axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + axis + 1, data.dims.end());
  return data.withDims(std::move(out));
}

TensorType gatherElementsType(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  requireRankAtLeast(c, 0, 1);
  if (indices.rank() != data.rank())
    fail("operand 1 (indices) has rank " + std::to_string(indices.rank()) +
         " but operand 0 (data) has rank " + std::to_string(data.rank()));
  return data.withDims(indices.dims);
}

// Checks the leading batch dims shared by data and indices (gather_nd).
void checkBatchDims(const TensorType &data, const TensorType &indices, int64_t batchDims) {
  for (int64_t d = 0; d < batchDims; ++d)
    if (!(data.dims[d] == indices.dims[d]))
      fail("batch dim " + std::to_string(d) + " is " + data.dims[d].str() +
           " in operand 0 (data) but " + indices.dims[d].str() + " in operand 1 (indices)");
}

TensorType gatherNDType(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  int64_t b = c.view<ops::GatherNDOp>().batch_dims();
  if (b < 0)
    fail("attribute 'batch_dims' must be >= 0, got " + std::to_string(b));
  if (b > c.rank(1)) // before b + 1 below, which overflows for INT64_MAX
    fail("attribute 'batch_dims' " + std::to_string(b) + " exceeds the rank of operand 1 (" +
         std::to_string(c.rank(1)) + ")");
  requireRankAtLeast(c, 0, b + 1);
  requireRankAtLeast(c, 1, b + 1);
  int64_t m = staticDim(c, 1, indices.rank() - 1, "index tuple length");
  if (m < 1 || m > data.rank() - b)
    fail("index tuple length " + std::to_string(m) + " (last dim of operand 1) must be in [1, " +
         std::to_string(data.rank() - b) + "]");
  checkBatchDims(data, indices, b);
  std::vector<Dim> out(indices.dims.begin(), indices.dims.end() - 1);
  out.insert(out.end(), data.dims.begin() + b + m, data.dims.end());
  return data.withDims(std::move(out));
}

TensorType scatterElementsType(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1), &updates = c.operand(2);
  requireIndexDType(c, 1);
  requireSameDType(c, 2, 0);
  requireRankAtLeast(c, 0, 1);
  if (indices.rank() != data.rank())
    fail("operand 1 (indices) has rank " + std::to_string(indices.rank()) +
         " but operand 0 (data) has rank " + std::to_string(data.rank()));
  if (updates.dims != indices.dims)
    fail("operand 2 (updates) shape " + dimsToString(updates.dims) +
         " differs from operand 1 (indices) shape " + dimsToString(indices.dims));
  return data;
}

TensorType scatterNDType(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1), &updates = c.operand(2);
  requireIndexDType(c, 1);
  requireSameDType(c, 2, 0);
  requireRankAtLeast(c, 1, 1);
  int64_t m = staticDim(c, 1, indices.rank() - 1, "index tuple length");
  if (m < 1 || m > data.rank())
    fail("index tuple length " + std::to_string(m) + " (last dim of operand 1) must be in [1, " +
         std::to_string(data.rank()) + "]");
  std::vector<Dim> expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data.dims.begin() + m, data.dims.end());
  if (updates.dims != expected)
    fail("operand 2 (updates) shape " + dimsToString(updates.dims) + " should be " +
         dimsToString(expected));
  return data;
}

} // namespace

std::vector<TensorType> inferReshape(const InferContext &c) { return {reshapeType(c)}; }
std::vector<TensorType> inferTranspose(const InferContext &c) { return {transposeType(c)}; }
std::vector<TensorType> inferExpand(const InferContext &c) { return {expandType(c)}; }
std::vector<TensorType> inferSlice(const InferContext &c) { return {sliceType(c)}; }
std::vector<TensorType> inferConcat(const InferContext &c) { return {concatType(c)}; }
std::vector<TensorType> inferIota(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const int64_t axis = c.view<ops::IotaOp>().axis();
  if (axis < 0 || axis >= x.rank())
    fail("axis " + std::to_string(axis) + " is not within rank " + std::to_string(x.rank()));
  return {TensorType(DType::I64, {x.dims[static_cast<size_t>(axis)]})};
}
namespace {
// Operand i, the count a data-dependent dim is bound to (graph/ValueSymbols.h): a rank-0 i64.
void requireCountOperand(const InferContext &c, unsigned i) {
  const TensorType &count = c.operand(i);
  if (count.dtype != DType::I64 || count.rank() != 0)
    fail("operand " + std::to_string(i) + " (the count) must be a rank-0 i64 tensor, got " +
         count.str());
}
} // namespace
std::vector<TensorType> inferArange(const InferContext &c) {
  requireCountOperand(c, 0);
  return {TensorType(DType::I64, {freshSymbol(c, {}, "arange")})};
}
std::vector<TensorType> inferNonZero(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireCountOperand(c, 1);
  if (x.rank() == 0)
    fail("operand 0 must have rank >= 1 (ONNX's rank-0 NonZero is a reshape away)");
  return {TensorType(DType::I64, {Dim(x.rank()), freshSymbol(c, {}, "nonzero")})};
}
namespace {
// boxes [B, N, 4] and scores [B, C, N], f32, B and N agreeing.
void checkNmsOperands(const InferContext &c) {
  const TensorType &boxes = c.operand(0), &scores = c.operand(1);
  requireDType(c, 0, boxes.dtype == DType::F32, "f32");
  requireDType(c, 1, scores.dtype == DType::F32, "f32");
  if (boxes.rank() != 3 || !(boxes.dims[2] == Dim(4)) || scores.rank() != 3 ||
      !(boxes.dims[0] == scores.dims[0]) || !(boxes.dims[1] == scores.dims[2]))
    fail("expected boxes [B, N, 4] and scores [B, C, N], got " + boxes.str() + " and " +
         scores.str());
  const int64_t center = c.attrs.at("center_point_box").getInt();
  if (center != 0 && center != 1)
    fail("center_point_box must be 0 or 1, got " + std::to_string(center));
  if (c.attrs.at("max_output").getInt() < 0)
    fail("max_output must be >= 0");
  // The limits read from data: the operand after the boxes, scores (and nms's count).
  const unsigned limitsAt = c.kind == OpKind::NmsCount ? 2 : 3;
  if (c.numOperands() > limitsAt) {
    const TensorType &limits = c.operand(limitsAt);
    if (limits.dtype != DType::F64 || limits.rank() != 1 || !(limits.dims[0] == Dim(3)))
      fail("operand " + std::to_string(limitsAt) +
           " (limits: max_output, iou_threshold, score_threshold) must be f64 [3], got " +
           limits.str());
  }
}
} // namespace
namespace {
// The number of items Unique compares: the axis' length, or every element.
Dim uniqueItems(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const int64_t axis = c.attrs.at("axis").getInt();
  if (c.attrs.at("has_axis").getInt() == 0) {
    if (std::optional<int64_t> n = x.staticNumElements())
      return Dim(*n);
    if (x.isStatic())
      fail("the element count of " + x.str() + " overflows int64");
    SymExpr n(1);
    for (const Dim &d : x.dims)
      n = n * d.asExpr();
    return Dim::of(n);
  }
  if (axis < 0 || axis >= x.rank())
    fail("axis " + std::to_string(axis) + " is not within rank " + std::to_string(x.rank()));
  return x.dims[static_cast<size_t>(axis)];
}
} // namespace
std::vector<TensorType> inferUniqueCount(const InferContext &c) {
  uniqueItems(c);
  return {TensorType(DType::I64, {})};
}
std::vector<TensorType> inferUnique(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireCountOperand(c, 1);
  requireDType(c, 0, x.dtype != DType::Bool, "a numeric dtype");
  Dim items = uniqueItems(c), u = freshSymbol(c, {}, "unique");
  std::vector<Dim> dims = {u};
  if (c.attrs.at("has_axis").getInt() != 0) {
    dims = x.dims;
    dims[static_cast<size_t>(c.attrs.at("axis").getInt())] = u;
  }
  return {x.withDims(dims), TensorType(DType::I64, {u}), TensorType(DType::I64, {items}),
          TensorType(DType::I64, {u})};
}
std::vector<TensorType> inferNmsCount(const InferContext &c) {
  checkNmsOperands(c);
  return {TensorType(DType::I64, {})};
}
std::vector<TensorType> inferNms(const InferContext &c) {
  checkNmsOperands(c);
  requireCountOperand(c, 2);
  return {TensorType(DType::I64, {freshSymbol(c, {}, "nms"), Dim(3)})};
}
std::vector<TensorType> inferShape(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::ShapeOp>();
  const int64_t start = attrs.start(), end = attrs.end();
  if (start < 0 || end < start || end > x.rank())
    fail("dims [" + std::to_string(start) + ", " + std::to_string(end) + ") are not within rank " +
         std::to_string(x.rank()));
  return {TensorType(DType::I64, {Dim(end - start)})};
}
std::vector<TensorType> inferPad(const InferContext &c) { return {padType(c)}; }
std::vector<TensorType> inferGather(const InferContext &c) { return {gatherType(c)}; }
std::vector<TensorType> inferGatherElements(const InferContext &c) {
  return {gatherElementsType(c)};
}
std::vector<TensorType> inferGatherND(const InferContext &c) { return {gatherNDType(c)}; }
std::vector<TensorType> inferScatterElements(const InferContext &c) {
  return {scatterElementsType(c)};
}
std::vector<TensorType> inferScatterND(const InferContext &c) { return {scatterNDType(c)}; }

} // namespace strata::infer
