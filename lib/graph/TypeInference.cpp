// Type inference entry points, attribute checking, shared helpers and the elementwise family.
#include "TypeInferenceImpl.h"
#include "strata/support/Error.h"

#include <algorithm>

namespace strata {
namespace infer {

// --- Helpers -------------------------------------------------------------------------------------

std::string intsToString(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string dimsToString(const std::vector<Dim> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i].str();
  return s + "]";
}

int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string &what) {
  if (axis < -rank || axis >= rank)
    fail(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

int64_t InferContext::intAttr(const char *name, int64_t dflt) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? dflt : it->second.getInt();
}

double InferContext::floatAttr(const char *name, double dflt) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? dflt : it->second.getFloat();
}

const std::string &InferContext::stringAttr(const char *name) const {
  static const std::string empty;
  auto it = attrs.find(name);
  return it == attrs.end() ? empty : it->second.getString();
}

std::vector<int64_t> InferContext::intsAttr(const char *name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? std::vector<int64_t>{} : it->second.getInts();
}

std::vector<double> InferContext::floatsAttr(const char *name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? std::vector<double>{} : it->second.getFloats();
}

bool InferContext::flagAttr(const char *name) const {
  int64_t v = intAttr(name);
  if (v != 0 && v != 1)
    fail("attribute '" + std::string(name) + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

const std::string &InferContext::enumAttr(const char *name,
                                          std::initializer_list<const char *> allowed) const {
  const std::string &v = stringAttr(name);
  std::string list;
  for (const char *a : allowed) {
    if (v == a)
      return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  fail("attribute '" + std::string(name) + "' is \"" + v + "\"; expected one of " + list);
}

int64_t InferContext::axisAttr(const char *name, int64_t r) const {
  return normalizeAxis(intAttr(name), r, "attribute '" + std::string(name) + "'");
}

void requireSameDType(const InferContext &c, unsigned a, unsigned b) {
  if (c.operand(a).dtype != c.operand(b).dtype)
    fail("operand " + std::to_string(a) + " has dtype " +
         std::string(dtypeName(c.operand(a).dtype)) + " but operand " + std::to_string(b) +
         " has " + std::string(dtypeName(c.operand(b).dtype)));
}

void requireDType(const InferContext &c, unsigned i, bool ok, const char *expected) {
  if (!ok)
    fail("operand " + std::to_string(i) + " has dtype " +
         std::string(dtypeName(c.operand(i).dtype)) + "; expected " + expected);
}

void requireIndexDType(const InferContext &c, unsigned i) {
  DType t = c.operand(i).dtype;
  requireDType(c, i, t == DType::I32 || t == DType::I64, "i32 or i64 indices");
}

void requireRankAtLeast(const InferContext &c, unsigned i, int64_t r) {
  if (c.rank(i) < r)
    fail("operand " + std::to_string(i) + " has rank " + std::to_string(c.rank(i)) +
         "; expected at least " + std::to_string(r));
}

int64_t staticDim(const InferContext &c, unsigned i, int64_t d, const char *what) {
  const Dim &dim = c.operand(i).dims[d];
  if (!dim.isStatic())
    fail(std::string(what) + " (dim " + std::to_string(d) + " of operand " + std::to_string(i) +
         ") is symbolic " + dim.str() + "; it must be static");
  return dim.size;
}

// --- Elementwise family --------------------------------------------------------------------------

namespace {

bool isNumeric(DType t) { return t != DType::Bool; }
bool isIntOrBool(DType t) { return !isFloat(t); }

// Broadcast all operands' shapes together, naming the operand that does not fit.
std::vector<Dim> broadcastAll(const InferContext &c, unsigned first = 0) {
  std::vector<Dim> dims = c.operand(first).dims;
  for (unsigned i = first + 1; i < c.numOperands(); ++i) {
    std::string why;
    auto next = broadcastDims(dims, c.operand(i).dims, &why);
    if (!next)
      fail("operand " + std::to_string(i) + " shape " + dimsToString(c.operand(i).dims) +
           " does not broadcast with " + dimsToString(dims) + ": " + why);
    dims = std::move(*next);
  }
  return dims;
}

} // namespace

std::vector<TensorType> inferElementwise(const InferContext &c) {
  const TensorType &x = c.operand(0);
  switch (c.kind) {
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Sign:
    requireDType(c, 0, isNumeric(x.dtype), "a numeric dtype");
    return {x};
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Atan:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sigmoid:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Round:
    requireDType(c, 0, isFloat(x.dtype), "a float dtype");
    return {x};
  case OpKind::Not:
    requireDType(c, 0, isIntOrBool(x.dtype), "bool or an integer dtype");
    return {x};
  case OpKind::IsNaN:
    requireDType(c, 0, isFloat(x.dtype), "a float dtype");
    return {x.withDType(DType::Bool)};
  case OpKind::IsInf:
    requireDType(c, 0, isFloat(x.dtype), "a float dtype");
    c.flagAttr("detect_negative");
    c.flagAttr("detect_positive");
    return {x.withDType(DType::Bool)};
  case OpKind::Cast:
    return {x.withDType(c.attrs.at("to").getDType())};
  case OpKind::Select: {
    requireDType(c, 0, x.dtype == DType::Bool, "bool for the condition");
    requireSameDType(c, 2, 1);
    return {TensorType(c.operand(1).dtype, broadcastAll(c), x.device)};
  }
  default:
    break;
  }

  // Binary ops.
  const TensorType &y = c.operand(1);
  switch (c.kind) {
  case OpKind::Pow: // the exponent is converted to the base's dtype, so dtypes may differ
    requireDType(c, 0, isNumeric(x.dtype), "a numeric dtype");
    requireDType(c, 1, isNumeric(y.dtype), "a numeric dtype");
    return {TensorType(x.dtype, broadcastAll(c), x.device)};
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
    requireSameDType(c, 1, 0);
    requireDType(c, 0, isIntOrBool(x.dtype), "bool or an integer dtype");
    break;
  case OpKind::BitShift:
    requireSameDType(c, 1, 0);
    requireDType(c, 0, isInteger(x.dtype), "an integer dtype");
    c.enumAttr("direction", {"left", "right"});
    break;
  case OpKind::Eq:
  case OpKind::Lt:
  case OpKind::Le:
    requireSameDType(c, 1, 0);
    return {TensorType(DType::Bool, broadcastAll(c), x.device)};
  case OpKind::Mod:
    c.flagAttr("fmod");
    [[fallthrough]];
  default: // add, sub, mul, div, max, min
    requireSameDType(c, 1, 0);
    requireDType(c, 0, isNumeric(x.dtype), "a numeric dtype");
    break;
  }
  return {TensorType(x.dtype, broadcastAll(c), x.device)};
}

// --- Dispatch ------------------------------------------------------------------------------------

namespace {

void checkAttributesOrThrow(OpKind kind, const AttrMap &attrs) {
  const OpInfo &info = opInfo(kind);
  for (const auto &[name, attr] : attrs) {
    const AttrSpec *spec = info.findAttr(name);
    if (!spec)
      fail("unknown attribute '" + name + "'");
    if (attr.kind() != spec->kind)
      fail("attribute '" + name + "' has kind " + std::string(attrKindName(attr.kind())) +
           " but " + std::string(attrKindName(spec->kind)) + " is expected");
  }
  for (const AttrSpec &spec : info.attrs)
    if (!spec.optional && !attrs.count(spec.name))
      fail("missing required attribute '" + spec.name + "' (" +
           std::string(attrKindName(spec.kind)) + ")");
}

void checkArity(OpKind kind, size_t n) {
  const OpInfo &info = opInfo(kind);
  size_t lo = static_cast<size_t>(info.minOperands);
  bool variadic = info.maxOperands < 0;
  size_t hi = static_cast<size_t>(info.maxOperands);
  if (n >= lo && (variadic || n <= hi))
    return;
  std::string expected = variadic          ? "at least " + std::to_string(lo)
                         : lo == hi        ? std::to_string(lo)
                                           : std::to_string(lo) + " to " + std::to_string(hi);
  bool singular = (variadic ? lo : hi) == 1;
  fail("expected " + expected + " operand" + (singular ? "" : "s") + ", got " +
       std::to_string(n));
}

} // namespace

Inferred inferDetailed(OpKind kind, const std::vector<TensorType> &operands, const AttrMap &attrs) {
  checkArity(kind, operands.size());
  checkAttributesOrThrow(kind, attrs);
  // Results live where the operands live; mixing devices needs an explicit transfer.
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].device != operands[0].device)
      fail("operand " + std::to_string(i) + " is on " +
           (operands[i].device == Device::GPU ? "gpu" : "cpu") + " but operand 0 is on " +
           (operands[0].device == Device::GPU ? "gpu" : "cpu"));

  Inferred out;
  InferContext c{kind, operands, attrs, &out.freshSymbols};
  const OpInfo &info = opInfo(kind);
  if (kind == OpKind::Constant) {
    const Tensor &t = attrs.at("value").getTensor();
    // Elided constants (printed IR without its blob section) still know their dtype and shape.
    if (!t.valid() && !t.isElided())
      fail("attribute 'value' holds no tensor data");
    out.types = {TensorType::fromShape(t.dtype(), t.shape())};
  } else if (kind == OpKind::Kernel) {
    // A kernel's results are its region's outputs; the verifier checks them against the region.
    fail("kernel result types come from its region");
  } else if (usesBlockedLayout(kind, attrs)) {
    out.types = inferLayout(c);
  } else if (kind == OpKind::Einsum) {
    out.types = inferEinsum(c);
  } else if (info.traits & T_ELEMENTWISE) {
    out.types = inferElementwise(c);
  } else if (info.traits & T_STRUCTURED) {
    out.types = inferStructured(c);
  } else {
    out.types = inferDataMovement(c);
  }
  return out;
}

} // namespace infer

llvm::Expected<std::vector<TensorType>> inferResultTypes(OpKind kind,
                                                        const std::vector<TensorType> &operands,
                                                        const AttrMap &attrs) {
  try {
    return infer::inferDetailed(kind, operands, attrs).types;
  } catch (const infer::InferError &e) {
    return makeError(e.what());
  }
}

llvm::Error checkAttributes(OpKind kind, const AttrMap &attrs) {
  try {
    infer::checkAttributesOrThrow(kind, attrs);
    return llvm::Error::success();
  } catch (const infer::InferError &e) {
    return makeError(e.what());
  }
}

} // namespace strata
