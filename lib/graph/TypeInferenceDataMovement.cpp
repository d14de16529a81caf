// Type inference for data-movement ops: reshape, transpose, expand, slice, concat, pad, the
// gather family and the scatter family.
#include "TypeInferenceImpl.h"

#include <algorithm>
#include <limits>

namespace strata::infer {

namespace {

// ONNX Reshape with a static target shape. Symbolic input dims survive when copied by a 0 or
// absorbed whole by -1; when -1 absorbs a symbolic dim scaled by a static ratio (or several
// symbolic dims), the result is a fresh symbol named after the absorbed symbols plus "_r".
TensorType inferReshape(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const std::vector<int64_t> shape = c.intsAttr("shape");
  bool allowZero = c.flagAttr("allowzero");
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
      knownOut *= s;
    }
  }
  if (allowZero && hasZero && inferredAt >= 0)
    fail("attribute 'shape' " + intsToString(shape) + " has both 0 and -1 with allowzero=1");

  // What of the input is left after removing the copied dims.
  int64_t staticIn = 1;
  std::vector<std::string> symbolsIn;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (copied[i])
      continue;
    if (x.dims[i].isStatic())
      staticIn *= x.dims[i].size;
    else
      symbolsIn.push_back(x.dims[i].symbol);
  }

  std::string inShape = dimsToString(x.dims);
  if (inferredAt < 0) {
    if (!symbolsIn.empty())
      fail("attribute 'shape' " + intsToString(shape) + " cannot be checked against symbolic dim ?" +
           symbolsIn[0] + " of input " + inShape + "; copy it with 0 or infer it with -1");
    if (staticIn != knownOut)
      fail("attribute 'shape' " + intsToString(shape) + " has " + std::to_string(knownOut) +
           " elements but input " + inShape + " has " + std::to_string(staticIn));
    return x.withDims(std::move(out));
  }

  if (symbolsIn.empty()) {
    if (knownOut == 0 || staticIn % knownOut != 0)
      fail("attribute 'shape' " + intsToString(shape) + ": cannot infer -1 for input " + inShape);
    out[inferredAt] = Dim(staticIn / knownOut);
  } else if (symbolsIn.size() == 1 && staticIn == knownOut) {
    out[inferredAt] = Dim::sym(symbolsIn[0]);
  } else {
    bool divides = knownOut != 0 && staticIn != 0 &&
                   (staticIn % knownOut == 0 || knownOut % staticIn == 0);
    if (!divides)
      fail("attribute 'shape' " + intsToString(shape) + ": cannot infer -1 for input " + inShape +
           " (static sizes do not divide)");
    std::string name;
    for (const std::string &s : symbolsIn)
      name += s + "_";
    name += "r";
    c.freshSymbols->insert(name);
    out[inferredAt] = Dim::sym(name);
  }
  return x.withDims(std::move(out));
}

TensorType inferTranspose(const InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> perm = c.intsAttr("perm");
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

TensorType inferExpand(const InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> shape = c.intsAttr("shape");
  for (int64_t s : shape)
    if (s < 0)
      fail("attribute 'shape' " + intsToString(shape) + " has a negative size");
  std::vector<Dim> target(shape.begin(), shape.end());
  std::string why;
  auto dims = broadcastDims(x.dims, target, &why);
  if (!dims)
    fail("operand 0 shape " + dimsToString(x.dims) + " cannot expand to attribute 'shape' " +
         intsToString(shape) + ": " + why);
  return x.withDims(std::move(*dims));
}

// Output length of one sliced dim, with ONNX's clamping rules.
int64_t slicedLength(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0)
    return 0;
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

TensorType inferSlice(const InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> starts = c.intsAttr("starts"), ends = c.intsAttr("ends");
  std::vector<int64_t> axes = c.intsAttr("axes"), steps = c.intsAttr("steps");
  // As in ONNX, absent (empty) axes mean the leading axes and absent steps mean 1.
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail("attributes 'starts', 'ends', 'axes' and 'steps' must have the same length (got " +
         std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " +
         std::to_string(axes.size()) + ", " + std::to_string(steps.size()) + ")");
  std::vector<Dim> out = x.dims;
  std::vector<bool> seen(x.dims.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalizeAxis(axes[i], x.rank(), "attribute 'axes' entry");
    if (seen[axis])
      fail("attribute 'axes' " + intsToString(axes) + " repeats axis " + std::to_string(axis));
    seen[axis] = true;
    if (steps[i] == 0)
      fail("attribute 'steps' " + intsToString(steps) + " has a zero step");
    const Dim &d = x.dims[axis];
    if (!d.isStatic()) {
      bool fullRange =
          starts[i] == 0 && ends[i] == std::numeric_limits<int64_t>::max() && steps[i] == 1;
      if (!fullRange)
        fail("slice of symbolic dim " + d.str() + " (axis " + std::to_string(axis) +
             ") needs starts=0, ends=INT64_MAX, steps=1; got " + std::to_string(starts[i]) + ", " +
             std::to_string(ends[i]) + ", " + std::to_string(steps[i]));
      continue; // keeps its symbol
    }
    out[axis] = Dim(slicedLength(d.size, starts[i], ends[i], steps[i]));
  }
  return x.withDims(std::move(out));
}

TensorType inferConcat(const InferContext &c) {
  const TensorType &first = c.operand(0);
  if (first.rank() == 0)
    fail("operand 0 is a scalar; concat needs rank >= 1");
  int64_t axis = c.axisAttr("axis", first.rank());
  std::vector<Dim> out = first.dims;
  int64_t total = 0;
  bool symbolic = false;
  for (unsigned i = 0; i < c.numOperands(); ++i) {
    const TensorType &t = c.operand(i);
    requireSameDType(c, i, 0);
    if (t.rank() != first.rank())
      fail("operand " + std::to_string(i) + " has rank " + std::to_string(t.rank()) +
           " but operand 0 has rank " + std::to_string(first.rank()));
    for (int64_t d = 0; d < t.rank(); ++d)
      if (d != axis && !(t.dims[d] == first.dims[d]))
        fail("operand " + std::to_string(i) + " dim " + std::to_string(d) + " is " +
             t.dims[d].str() + " but operand 0 has " + first.dims[d].str() +
             " (only the concat axis may differ)");
    symbolic |= !t.dims[axis].isStatic();
    total += t.dims[axis].isStatic() ? t.dims[axis].size : 0;
  }
  if (symbolic && c.numOperands() > 1)
    fail("concat along a symbolic dim (axis " + std::to_string(axis) +
         ") needs every operand's axis dim to be static");
  if (!symbolic)
    out[axis] = Dim(total);
  return first.withDims(std::move(out));
}

TensorType inferPad(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const TensorType &value = c.operand(1);
  c.enumAttr("mode", {"constant", "reflect", "edge", "wrap"});
  if (value.rank() != 0)
    fail("operand 1 (pad value) must be a rank-0 tensor, got rank " + std::to_string(value.rank()));
  requireSameDType(c, 1, 0);
  std::vector<int64_t> pads = c.intsAttr("pads");
  int64_t r = x.rank();
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    fail("attribute 'pads' " + intsToString(pads) + " must have 2 * rank = " +
         std::to_string(2 * r) + " entries");
  std::vector<Dim> out = x.dims;
  for (int64_t d = 0; d < r; ++d) {
    int64_t begin = pads[d], end = pads[d + r];
    if (!x.dims[d].isStatic()) {
      if (begin != 0 || end != 0)
        fail("cannot pad symbolic dim " + x.dims[d].str() + " (axis " + std::to_string(d) + ")");
      continue;
    }
    int64_t size = x.dims[d].size + begin + end;
    if (size < 0)
      fail("attribute 'pads' " + intsToString(pads) + " crops axis " + std::to_string(d) +
           " below zero size");
    out[d] = Dim(size);
  }
  return x.withDims(std::move(out));
}

TensorType inferGather(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  requireRankAtLeast(c, 0, 1);
  int64_t axis = c.axisAttr("axis", data.rank());
  std::vector<Dim> out(data.dims.begin(), data.dims.begin() + axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + axis + 1, data.dims.end());
  return data.withDims(std::move(out));
}

TensorType inferGatherElements(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  requireRankAtLeast(c, 0, 1);
  c.axisAttr("axis", data.rank());
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

TensorType inferGatherND(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1);
  requireIndexDType(c, 1);
  int64_t b = c.intAttr("batch_dims");
  if (b < 0)
    fail("attribute 'batch_dims' must be >= 0, got " + std::to_string(b));
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

TensorType inferScatterElements(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1), &updates = c.operand(2);
  requireIndexDType(c, 1);
  requireSameDType(c, 2, 0);
  requireRankAtLeast(c, 0, 1);
  c.axisAttr("axis", data.rank());
  c.enumAttr("reduction", {"none", "add", "mul", "max", "min"});
  if (indices.rank() != data.rank())
    fail("operand 1 (indices) has rank " + std::to_string(indices.rank()) +
         " but operand 0 (data) has rank " + std::to_string(data.rank()));
  if (updates.dims != indices.dims)
    fail("operand 2 (updates) shape " + dimsToString(updates.dims) +
         " differs from operand 1 (indices) shape " + dimsToString(indices.dims));
  return data;
}

TensorType inferScatterND(const InferContext &c) {
  const TensorType &data = c.operand(0), &indices = c.operand(1), &updates = c.operand(2);
  requireIndexDType(c, 1);
  requireSameDType(c, 2, 0);
  c.enumAttr("reduction", {"none", "add", "mul", "max", "min"});
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

std::vector<TensorType> inferDataMovement(const InferContext &c) {
  switch (c.kind) {
  case OpKind::Reshape: return {inferReshape(c)};
  case OpKind::Transpose: return {inferTranspose(c)};
  case OpKind::Expand: return {inferExpand(c)};
  case OpKind::Slice: return {inferSlice(c)};
  case OpKind::Concat: return {inferConcat(c)};
  case OpKind::Pad: return {inferPad(c)};
  case OpKind::Gather: return {inferGather(c)};
  case OpKind::GatherElements: return {inferGatherElements(c)};
  case OpKind::GatherND: return {inferGatherND(c)};
  case OpKind::ScatterElements: return {inferScatterElements(c)};
  case OpKind::ScatterND: return {inferScatterND(c)};
  default:
    fail("no type inference rule for op '" + std::string(opInfo(c.kind).name) + "'");
  }
}

} // namespace strata::infer
