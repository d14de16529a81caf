// Type inference entry points, attribute checking (kinds and normal forms), shared helpers and
// the shape functions of elementwise ops, constants and kernels.
#include "TypeInferenceImpl.h"

#include "strata/graph/Layout.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <cctype>
#include <set>

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

Dim freshSymbol(const InferContext &c, const std::vector<std::string> &from, const char *suffix,
                const std::string &key) {
  std::string name;
  for (const std::string &s : from) {
    for (char ch : s)
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')
        name += ch;
    name += '_';
  }
  name += suffix;
  if (!key.empty()) { // FNV-1a: stable across runs and builds, so printed graphs are too
    uint32_t h = 2166136261u;
    for (char ch : key)
      h = (h ^ static_cast<unsigned char>(ch)) * 16777619u;
    static const char *hex = "0123456789abcdef";
    name += '_';
    for (int shift = 12; shift >= 0; shift -= 4)
      name += hex[(h >> shift) & 15];
  }
  c.freshSymbols->insert(name);
  return Dim::sym(name);
}

std::vector<Dim> broadcastOrFail(const std::vector<Dim> &a, const std::vector<Dim> &b,
                                 const std::string &what) {
  std::string why;
  auto dims = shape::broadcastShapes(a, b, &why);
  if (!dims)
    fail(what + " shape " + dimsToString(b) + " does not broadcast with " + dimsToString(a) + ": " +
         why);
  return std::move(*dims);
}

// --- Elementwise ops: dtypes by the op's DTypeRule, shapes by broadcasting
// ------------------------

namespace {

bool isNumeric(DType t) { return t != DType::Bool; }
bool isIntOrBool(DType t) { return !isFloat(t); }

// Broadcast all operands' shapes together, naming the operand that does not fit. Two different
// symbolic dims (inputs [?n, 4] and [?m, 4]) give a fresh symbol: at run time either may be 1
// or both equal, which binding the inputs' sizes (or the interpreter) checks; the fresh symbol
// is bound when the result is computed, as reshape's.
std::vector<Dim> broadcastAll(const InferContext &c) {
  std::vector<Dim> dims = c.operand(0).dims;
  auto fresh = [&](const Dim &x, const Dim &y) {
    std::set<std::string> used;
    x.expr.collectSymbols(used);
    y.expr.collectSymbols(used);
    std::string a = x.str(), b = y.str(); // broadcasting is symmetric: so is the key
    return freshSymbol(c, std::vector<std::string>(used.begin(), used.end()), "b",
                       std::min(a, b) + "," + std::max(a, b));
  };
  for (unsigned i = 1; i < c.numOperands(); ++i) {
    std::string why;
    auto next = shape::broadcastShapes<Dim>(dims, c.operand(i).dims, &why, fresh);
    if (!next)
      fail("operand " + std::to_string(i) + " shape " + dimsToString(c.operand(i).dims) +
           " does not broadcast with " + dimsToString(dims) + ": " + why);
    dims = std::move(*next);
  }
  return dims;
}

// Operands of one dtype satisfying `ok` (named `what`).
void requireAll(const InferContext &c, bool (*ok)(DType), const char *what) {
  for (unsigned i = 0; i < c.numOperands(); ++i) {
    if (i > 0)
      requireSameDType(c, i, 0);
    requireDType(c, i, ok(c.operand(i).dtype), what);
  }
}

} // namespace

std::vector<TensorType> inferElementwise(const InferContext &c) {
  const TensorType &x = c.operand(0);
  DType result = x.dtype;
  switch (opInfo(c.kind).dtypeRule) {
  case DTypeRule::FloatSame:
    requireAll(c, isFloat, "a float dtype");
    break;
  case DTypeRule::NumericSame:
    requireAll(c, isNumeric, "a numeric dtype");
    break;
  case DTypeRule::IntOrBoolSame:
    requireAll(c, isIntOrBool, "bool or an integer dtype");
    break;
  case DTypeRule::IntegerSame:
    requireAll(c, isInteger, "an integer dtype");
    break;
  case DTypeRule::FloatToBool:
    requireAll(c, isFloat, "a float dtype");
    result = DType::Bool;
    break;
  case DTypeRule::SameToBool:
    for (unsigned i = 1; i < c.numOperands(); ++i)
      requireSameDType(c, i, 0);
    result = DType::Bool;
    break;
  case DTypeRule::PowBase: // the exponent is converted to the base's dtype, so dtypes may differ
    requireDType(c, 0, isNumeric(x.dtype), "a numeric dtype");
    requireDType(c, 1, isNumeric(c.operand(1).dtype), "a numeric dtype");
    break;
  case DTypeRule::Select:
    requireDType(c, 0, x.dtype == DType::Bool, "bool for the condition");
    requireSameDType(c, 2, 1);
    result = c.operand(1).dtype;
    break;
  case DTypeRule::CastTo:
    result = c.view<ops::CastOp>().to();
    break;
  case DTypeRule::Custom:
    fail("elementwise op without a dtype rule");
  }
  return {TensorType(result, broadcastAll(c), x.device)};
}

std::vector<TensorType> inferConstant(const InferContext &c) {
  const Tensor &t = c.view<ops::ConstantOp>().value();
  // Elided constants (printed IR without its blob section) still know their dtype and shape.
  if (!t.valid() && !t.isElided())
    fail("attribute 'value' holds no tensor data");
  return {TensorType::fromShape(t.dtype(), t.shape())};
}

std::vector<TensorType> inferKernel(const InferContext &) {
  // A kernel's results are its region's outputs; the verifier checks them against the region.
  fail("kernel result types come from its region");
}

std::vector<TensorType> inferControlFlow(const InferContext &) {
  // if/loop results are their regions' outputs (graph/ControlFlow.h); the verifier checks them.
  fail("control-flow result types come from the op's regions");
}

// --- Attributes, arity, dispatch
// ------------------------------------------------------------------

namespace {

// Names, kinds and forms of the attributes (OpTable.def); `rank` is operand 0's rank when known
// (the axis forms need it), else -1.
void checkAttributesOrThrow(OpKind kind, const AttrMap &attrs, int64_t rank) {
  const OpInfo &info = opInfo(kind);
  for (const auto &[name, attr] : attrs) {
    const AttrSpec *spec = info.findAttr(name);
    if (!spec)
      fail("unknown attribute '" + name + "'");
    const bool single = spec->form == AttrForm::Dim;
    if (spec->kind == AttrKind::Dims && attr.kind() == AttrKind::Dims) {
      bool symbolic = false;
      for (const Dim &d : attr.getDims())
        symbolic |= !d.isStatic();
      if (!symbolic)
        fail("attribute '" + name + "' lists static dims only: the normal form is " +
             (single ? "an int" : "ints"));
      if (single && attr.getDims().size() != 1)
        fail("attribute '" + name + "' is one dim; it lists " +
             std::to_string(attr.getDims().size()));
    }
    if (single && attr.kind() == AttrKind::Ints)
      fail("attribute '" + name + "' lists static dims only: the normal form is an int");
    if (attr.kind() != spec->kind &&
        !(spec->kind == AttrKind::Dims && attr.kind() == (single ? AttrKind::Int : AttrKind::Ints)))
      fail("attribute '" + name + "' has kind " + std::string(attrKindName(attr.kind())) +
           " but " + std::string(attrKindName(spec->kind)) + " is expected");
    auto inRange = [&](int64_t a) { return rank < 0 || (a >= 0 && a < rank); };
    switch (spec->form) {
    case AttrForm::Plain:
    case AttrForm::Dim:
      break;
    case AttrForm::Flag:
      if (attr.getInt() != 0 && attr.getInt() != 1)
        fail("attribute '" + name + "' must be 0 or 1, got " + std::to_string(attr.getInt()));
      break;
    case AttrForm::Axis:
      if (!inRange(attr.getInt()))
        fail("attribute '" + name + "' " + std::to_string(attr.getInt()) +
             " is not an axis in [0, " + std::to_string(rank) +
             ") (the normal form: negative axes are resolved at import)");
      break;
    case AttrForm::Axes: {
      const std::vector<int64_t> &axes = attr.getInts();
      for (size_t i = 0; i < axes.size(); ++i)
        if (!inRange(axes[i]) || (i > 0 && axes[i] <= axes[i - 1]))
          fail("attribute '" + name + "' " + intsToString(axes) +
               " must list distinct axes in [0, " + std::to_string(rank) +
               ") in increasing order (the normal form)");
      break;
    }
    case AttrForm::Enum: {
      const std::string &v = attr.getString();
      if (std::find(spec->enumTexts.begin(), spec->enumTexts.end(), v) == spec->enumTexts.end()) {
        std::string list;
        for (std::string_view t : spec->enumTexts)
          list += (list.empty() ? "" : ", ") + std::string(t);
        fail("attribute '" + name + "' is \"" + v + "\"; expected one of " + list);
      }
      break;
    }
    case AttrForm::Layout:
      if (!parseChannelLayout(attr.getString()))
        fail("attribute '" + name + "' \"" + attr.getString() +
             "\" is not a channel layout (\"NCHW\" or \"NCHW<c>c\")");
      break;
    }
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

// Every result within the process limits (support/Limits.h), so a hostile attribute or constant
// cannot make a tensor no later rung could allocate or loop over.
void checkResultLimits(const std::vector<TensorType> &types) {
  const Limits limits = processLimits();
  for (size_t r = 0; r < types.size(); ++r) {
    const TensorType &t = types[r];
    std::string what = types.size() == 1 ? "the result" : "result " + std::to_string(r);
    if (t.rank() > limits.maxRank)
      fail(what + " has rank " + std::to_string(t.rank()) + ", " +
           overLimit(&Limits::maxRank, limits.maxRank));
    for (const Dim &d : t.dims) {
      if (d.isStatic() && d.size < 0)
        fail(what + " has negative dim " + std::to_string(d.size) + " in " + dimsToString(t.dims));
      if (d.isStatic() && d.size > limits.maxTensorElements) // even beside a 0 dim
        fail(what + " has dim " + std::to_string(d.size) + ", " +
             overLimit(&Limits::maxTensorElements, limits.maxTensorElements));
    }
    Shape known; // the static dims: a lower bound on the elements whatever the symbols are
    for (const Dim &d : t.dims)
      if (d.isStatic())
        known.push_back(d.size);
    if (!shape::strideExtent(known)) // kernels' strides must fit even when a 0 dim empties it
      fail(what + " " + dimsToString(t.dims) + " has dims whose product overflows int64");
    if (int64_t n = numElements(known); n > limits.maxTensorElements)
      fail(what + " " + dimsToString(t.dims) + " " + tooManyElements(n, limits.maxTensorElements));
  }
}

// The shape function of each op, in OpKind order.
const ShapeFn kShapeFns[] = {
#define OP(e, name, lo, hi, res, traits, dtypes, shape, ...) &shape,
#include "strata/graph/OpTable.def"
};

} // namespace

Inferred inferDetailed(OpKind kind, const std::vector<TensorType> &operands, const AttrMap &attrs) {
  checkArity(kind, operands.size());
  checkAttributesOrThrow(kind, attrs, operands.empty() ? -1 : operands[0].rank());
  // Results live where the operands live; mixing devices needs an explicit transfer.
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].device != operands[0].device)
      fail("operand " + std::to_string(i) + " is on " +
           (operands[i].device == Device::GPU ? "gpu" : "cpu") + " but operand 0 is on " +
           (operands[0].device == Device::GPU ? "gpu" : "cpu"));
  Inferred out;
  InferContext c{kind, operands, attrs, &out.freshSymbols};
  out.types = kShapeFns[static_cast<size_t>(kind)](c);
  checkResultLimits(out.types);
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
    infer::checkAttributesOrThrow(kind, attrs, -1);
    return llvm::Error::success();
  } catch (const infer::InferError &e) {
    return makeError(e.what());
  }
}

} // namespace strata
