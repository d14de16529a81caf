// Shared helpers of the ONNX converters: attribute access with type checks, TensorProto decoding
// (inline, typed fields and external data) and small shape utilities.
#include "Converter.h"

#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>

namespace strata::onnx_import {

using onnx::AttributeProto;
using onnx::TensorProto;

// --- Attributes ------------------------------------------------------------------------------

const AttributeProto *findAttr(const onnx::NodeProto &node, const std::string &name) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool hasAttr(const onnx::NodeProto &node, const std::string &name) {
  return findAttr(node, name) != nullptr;
}

static const char *attrTypeName(int type) {
  switch (type) {
  case AttributeProto::FLOAT: return "a float";
  case AttributeProto::INT: return "an int";
  case AttributeProto::STRING: return "a string";
  case AttributeProto::TENSOR: return "a tensor";
  case AttributeProto::GRAPH: return "a graph";
  case AttributeProto::FLOATS: return "a list of floats";
  case AttributeProto::INTS: return "a list of ints";
  case AttributeProto::STRINGS: return "a list of strings";
  case AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
  case AttributeProto::TYPE_PROTO: return "a type";
  default: return "of undefined type";
  }
}

// Old exporters leave `type` unset; then the filled field tells the kind.
static bool isOfType(const AttributeProto &a, AttributeProto::AttributeType want) {
  if (a.type() != AttributeProto::UNDEFINED)
    return a.type() == want;
  switch (want) {
  case AttributeProto::INT: return a.has_i();
  case AttributeProto::FLOAT: return a.has_f();
  case AttributeProto::STRING: return a.has_s();
  case AttributeProto::INTS: return a.ints_size() > 0;
  case AttributeProto::FLOATS: return a.floats_size() > 0;
  default: return false;
  }
}

[[noreturn]] static void wrongType(const AttributeProto &a, const char *want) {
  throw ConvertError("attribute '" + a.name() + "' must be " + want + ", got " +
                     attrTypeName(a.type()));
}

int64_t attrInt(const onnx::NodeProto &node, const std::string &name, int64_t dflt) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return dflt;
  if (!isOfType(*a, AttributeProto::INT))
    wrongType(*a, "an int");
  return a->i();
}

float attrFloat(const onnx::NodeProto &node, const std::string &name, float dflt) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return dflt;
  if (isOfType(*a, AttributeProto::FLOAT))
    return a->f();
  if (isOfType(*a, AttributeProto::INT)) // harmless widening some exporters rely on
    return static_cast<float>(a->i());
  wrongType(*a, "a float");
}

std::string attrString(const onnx::NodeProto &node, const std::string &name,
                       const std::string &dflt) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return dflt;
  if (!isOfType(*a, AttributeProto::STRING))
    wrongType(*a, "a string");
  return a->s();
}

std::vector<int64_t> attrInts(const onnx::NodeProto &node, const std::string &name,
                              std::vector<int64_t> dflt) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return dflt;
  if (!isOfType(*a, AttributeProto::INTS))
    wrongType(*a, "a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> attrFloats(const onnx::NodeProto &node, const std::string &name) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return {};
  if (!isOfType(*a, AttributeProto::FLOATS))
    wrongType(*a, "a list of floats");
  return {a->floats().begin(), a->floats().end()};
}

// --- Element types -----------------------------------------------------------------------------

std::optional<DType> dtypeFromOnnx(int32_t onnxType) {
  switch (onnxType) {
  case TensorProto::FLOAT: return DType::F32;
  case TensorProto::UINT8: return DType::U8;
  case TensorProto::INT8: return DType::I8;
  case TensorProto::UINT16: return DType::U16;
  case TensorProto::INT16: return DType::I16;
  case TensorProto::INT32: return DType::I32;
  case TensorProto::INT64: return DType::I64;
  case TensorProto::BOOL: return DType::Bool;
  case TensorProto::FLOAT16: return DType::F16;
  case TensorProto::DOUBLE: return DType::F64;
  case TensorProto::UINT32: return DType::U32;
  case TensorProto::UINT64: return DType::U64;
  case TensorProto::BFLOAT16: return DType::BF16;
  default: return std::nullopt; // string, complex, undefined, float8...
  }
}

static std::string onnxTypeName(int32_t t) {
  if (TensorProto::DataType_IsValid(t))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  return "type " + std::to_string(t);
}

// --- TensorProto decoding ----------------------------------------------------------------------

static std::string tensorLabel(const TensorProto &t) {
  return "tensor '" + t.name() + "'";
}

struct DecodedHeader {
  DType dtype;
  Shape shape;
  size_t bytes;
};

static DecodedHeader decodeHeader(const TensorProto &t) {
  auto dt = dtypeFromOnnx(t.data_type());
  if (!dt)
    throw ConvertError(tensorLabel(t) + " has unsupported element type " +
                       onnxTypeName(t.data_type()));
  // Refused before anything is read or allocated (support/Limits.h).
  const Limits limits = processLimits();
  if (t.dims_size() > limits.maxRank)
    throw ConvertError(tensorLabel(t) + " has rank " + std::to_string(t.dims_size()) + ", " +
                       overLimit(&Limits::maxRank, limits.maxRank));
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) {
    if (d < 0)
      throw ConvertError(tensorLabel(t) + " has negative dim " + std::to_string(d));
    if (d > limits.maxTensorElements)
      throw ConvertError(tensorLabel(t) + " has dim " + std::to_string(d) + ", " +
                         overLimit(&Limits::maxTensorElements, limits.maxTensorElements));
  }
  int64_t elems = numElements(shape);
  if (elems > limits.maxTensorElements)
    throw ConvertError(tensorLabel(t) + " of shape " + shapeToString(shape) + " " +
                       tooManyElements(elems, limits.maxTensorElements));
  if (!shape::strideExtent(shape)) // strides must fit even when a 0 dim empties the tensor
    throw ConvertError(tensorLabel(t) + " of shape " + shapeToString(shape) +
                       " has dims whose product overflows int64");
  if (elems > INT64_MAX / 16) // a raised limit must still leave the byte count representable
    throw ConvertError(tensorLabel(t) + " of shape " + shapeToString(shape) + " is too large");
  int64_t bytes = elems * static_cast<int64_t>(dtypeSize(*dt));
  return {*dt, std::move(shape), static_cast<size_t>(bytes)};
}

[[noreturn]] static void sizeMismatch(const TensorProto &t, const DecodedHeader &h, size_t have,
                                      const char *unit) {
  throw ConvertError(tensorLabel(t) + " has " + std::to_string(have) + " " + unit +
                     " of data but its shape " + shapeToString(h.shape) + " of " +
                     std::string(dtypeName(h.dtype)) + " needs " +
                     std::to_string(std::string_view(unit) == "bytes"
                                        ? h.bytes
                                        : h.bytes / dtypeSize(h.dtype)));
}

// A view of `bytes` at `data` kept alive by `owner`; copied instead when misaligned for the dtype.
static Tensor viewOrCopy(const DecodedHeader &h, const void *data, std::shared_ptr<void> owner) {
  if (reinterpret_cast<uintptr_t>(data) % dtypeSize(h.dtype) == 0)
    return Tensor(h.dtype, h.shape, std::make_shared<Buffer>(data, h.bytes, std::move(owner)));
  Tensor t(h.dtype, h.shape);
  if (h.bytes)
    std::memcpy(t.rawData(), data, h.bytes);
  return t;
}

// External data files are mapped once and shared by every tensor that lives in them. The cache
// holds weak references keyed by path, size and modification time, so a rewritten file is
// re-read and nothing stays mapped once its tensors are gone.
static std::shared_ptr<llvm::MemoryBuffer> openShared(const std::string &path,
                                                      const std::string &what) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    throw ConvertError(what + ": cannot open external data file '" + path + "': " + ec.message());
  std::string key = path + "|" + std::to_string(st.getSize()) + "|" +
                    std::to_string(st.getLastModificationTime().time_since_epoch().count());
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<llvm::MemoryBuffer>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto live = cache[key].lock())
    return live;
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    throw ConvertError(what + ": cannot read external data file '" + path +
                       "': " + buf.getError().message());
  std::shared_ptr<llvm::MemoryBuffer> shared(std::move(*buf));
  cache[key] = shared;
  return shared;
}

// Raw bool data is a byte per element; a byte other than 0 and 1 is not a bool value (reading it
// as one is undefined), so any non-zero byte becomes 1, in a copy of the bytes.
static Tensor canonicalBools(Tensor t) {
  if (t.dtype() != DType::Bool || !t.byteSize())
    return t;
  Tensor c(DType::Bool, t.shape());
  const auto *src = static_cast<const uint8_t *>(t.rawData());
  auto *dst = static_cast<uint8_t *>(c.rawData());
  for (size_t i = 0; i < t.byteSize(); ++i)
    dst[i] = src[i] != 0;
  return c;
}

static Tensor externalTensor(const TensorProto &t, const DecodedHeader &h,
                             const std::string &baseDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    try {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception &) {
      throw ConvertError(tensorLabel(t) + " has invalid external data " + kv.key() + " '" +
                         kv.value() + "'");
    }
  }
  if (location.empty())
    throw ConvertError(tensorLabel(t) + " has external data without a location");
  // The location must stay inside the model's directory: no absolute paths, no "..".
  if (llvm::sys::path::is_absolute(location))
    throw ConvertError(tensorLabel(t) + ": external data location '" + location +
                       "' must be relative to the model's directory");
  for (auto it = llvm::sys::path::begin(location), e = llvm::sys::path::end(location); it != e;
       ++it)
    if (*it == "..")
      throw ConvertError(tensorLabel(t) + ": external data location '" + location +
                         "' escapes the model's directory");
  llvm::SmallString<256> full(baseDir.empty() ? "." : baseDir);
  llvm::sys::path::append(full, location);
  llvm::SmallString<256> realDir, realFile;
  if (!llvm::sys::fs::real_path(baseDir.empty() ? "." : baseDir, realDir) &&
      !llvm::sys::fs::real_path(full, realFile)) {
    std::string dir = std::string(realDir.str()) + "/";
    if (realFile.str().substr(0, dir.size()) != dir) // e.g. through a symlink
      throw ConvertError(tensorLabel(t) + ": external data location '" + location +
                         "' escapes the model's directory");
  }
  // A FIFO or device would block or never end: only regular files hold weights.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(full, status) && !llvm::sys::fs::is_regular_file(status))
    throw ConvertError(tensorLabel(t) + ": external data location '" + location +
                       "' is not a regular file");
  std::shared_ptr<llvm::MemoryBuffer> file = openShared(std::string(full.str()), tensorLabel(t));
  int64_t fileSize = static_cast<int64_t>(file->getBufferSize());
  if (length >= 0 && length != static_cast<int64_t>(h.bytes))
    sizeMismatch(t, h, static_cast<size_t>(length), "bytes");
  if (offset < 0 || offset > fileSize || static_cast<int64_t>(h.bytes) > fileSize - offset)
    throw ConvertError(tensorLabel(t) + ": external data [" + std::to_string(offset) + ", +" +
                       std::to_string(h.bytes) + ") lies outside '" + location + "' (" +
                       std::to_string(fileSize) + " bytes)");
  return canonicalBools(viewOrCopy(h, file->getBufferStart() + offset, file));
}

template <typename Src, typename Field>
static void copyField(const TensorProto &t, const DecodedHeader &h, Tensor &out,
                      const Field &field) {
  size_t n = static_cast<size_t>(out.numElements());
  if (static_cast<size_t>(field.size()) != n)
    sizeMismatch(t, h, static_cast<size_t>(field.size()), "elements");
  for (size_t i = 0; i < n; ++i) {
    Src v = field.Get(static_cast<int>(i));
    switch (h.dtype) {
    case DType::F16:
    case DType::BF16: // stored as their 16-bit patterns in int32_data
      out.data<uint16_t>()[i] = static_cast<uint16_t>(v);
      break;
#define X(e, name, ty, sz)                                                                         \
  case DType::e:                                                                                   \
    out.data<ty>()[i] = static_cast<ty>(v);                                                        \
    break;
      X(F32, , float, ) X(F64, , double, ) X(I8, , int8_t, ) X(I16, , int16_t, )
      X(I32, , int32_t, ) X(I64, , int64_t, ) X(U8, , uint8_t, ) X(U16, , uint16_t, )
      X(U32, , uint32_t, ) X(U64, , uint64_t, ) X(Bool, , bool, )
#undef X
    }
  }
}

static Tensor typedFieldTensor(const TensorProto &t, const DecodedHeader &h) {
  // The field must hold every element before anything is allocated for them: a header may
  // declare gigabytes that the file does not contain.
  int fieldSize = 0;
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    fieldSize = t.float_data_size();
    break;
  case TensorProto::DOUBLE:
    fieldSize = t.double_data_size();
    break;
  case TensorProto::INT64:
    fieldSize = t.int64_data_size();
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    fieldSize = t.uint64_data_size();
    break;
  default:
    fieldSize = t.int32_data_size();
    break;
  }
  if (static_cast<size_t>(fieldSize) != static_cast<size_t>(numElements(h.shape)))
    sizeMismatch(t, h, static_cast<size_t>(fieldSize), "elements");
  Tensor out(h.dtype, h.shape);
  switch (t.data_type()) {
  case TensorProto::FLOAT: copyField<float>(t, h, out, t.float_data()); break;
  case TensorProto::DOUBLE: copyField<double>(t, h, out, t.double_data()); break;
  case TensorProto::INT64: copyField<int64_t>(t, h, out, t.int64_data()); break;
  case TensorProto::UINT32:
  case TensorProto::UINT64: copyField<uint64_t>(t, h, out, t.uint64_data()); break;
  default: copyField<int32_t>(t, h, out, t.int32_data()); break; // the narrow types and bool
  }
  return out;
}

static bool isExternal(const TensorProto &t) {
  return t.data_location() == TensorProto::EXTERNAL;
}

Tensor tensorFromProto(const TensorProto &t, const std::string &baseDir) {
  DecodedHeader h = decodeHeader(t);
  if (isExternal(t))
    return externalTensor(t, h, baseDir);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != h.bytes)
      sizeMismatch(t, h, t.raw_data().size(), "bytes");
    Tensor out(h.dtype, h.shape);
    if (h.bytes)
      std::memcpy(out.rawData(), t.raw_data().data(), h.bytes);
    return canonicalBools(std::move(out));
  }
  return typedFieldTensor(t, h);
}

Tensor takeTensorFromProto(TensorProto &t, const std::string &baseDir) {
  if (isExternal(t) || !t.has_raw_data())
    return tensorFromProto(t, baseDir);
  DecodedHeader h = decodeHeader(t);
  if (t.raw_data().size() != h.bytes)
    sizeMismatch(t, h, t.raw_data().size(), "bytes");
  // The proto's string becomes the tensor's storage: no copy of the weights.
  std::shared_ptr<std::string> bytes(t.release_raw_data());
  const void *data = bytes->data();
  return canonicalBools(viewOrCopy(h, data, std::move(bytes)));
}

// --- Shapes --------------------------------------------------------------------------------------

std::string sanitizeSymbol(const std::string &s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  return out;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  // A scalar accepts 0 and -1 (ONNX's rank-agnostic defaults); the ops then see no axis at all.
  if (rank == 0 && (axis == 0 || axis == -1))
    return axis;
  if (std::optional<int64_t> a = shape::normalizeAxis(axis, rank))
    return *a;
  throw ConvertError("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
}

std::vector<Dim> requireDimsInput(ImportContext &ctx, const onnx::NodeProto &node, int i,
                                  const char *what) {
  std::vector<Dim> dims;
  if (std::optional<Tensor> t = ctx.constantInput(node, i)) {
    for (int64_t v : t->toIntVector())
      dims.emplace_back(v);
  } else if (auto symbolic = ctx.symbolicInput(node, i)) {
    for (const SymExpr &e : *symbolic)
      dims.push_back(Dim::of(e));
  } else {
    ctx.requireConstantInput(node, i, what); // throws, naming the input
  }
  return dims;
}

Value *scalarElement(Builder &b, Value *t, int64_t i) {
  Value *v = t->type().dtype == DType::I64
                 ? t
                 : b.value(OpKind::Cast, {t}, {{"to", Attribute(DType::I64)}});
  if (v->type().rank() == 0)
    return v;
  v = b.value(OpKind::Slice, {v},
              {{"starts", Attribute(std::vector<int64_t>{i})},
               {"ends", Attribute(std::vector<int64_t>{i + 1})},
               {"steps", Attribute(std::vector<int64_t>{1})}});
  return b.value(OpKind::Reshape, {v}, {{"shape", Attribute(std::vector<int64_t>{})}});
}

std::vector<Dim> dataDims(ImportContext &ctx, Value *t, const std::string &name) {
  const TensorType &type = t->type();
  std::optional<int64_t> length = type.staticNumElements();
  if (type.rank() > 1 || !length || isFloat(type.dtype) || type.dtype == DType::Bool)
    throw ConvertError("a shape read from data must be a 1-D integer tensor of static length, "
                       "got " + type.str());
  if (*length > processLimits().maxRank)
    throw ConvertError("a shape of " + std::to_string(*length) + " entries, " +
                       overLimit(&Limits::maxRank, processLimits().maxRank));
  std::vector<Dim> dims;
  for (int64_t i = 0; i < *length; ++i) {
    // An element shape arithmetic knows (a Shape's dim beside sizes read from data) is kept.
    if (std::optional<SymExpr> f = ctx.elementFormula(t, i); f && ctx.knownNonNegative(*f)) {
      dims.push_back(Dim::of(*f));
      continue;
    }
    dims.push_back(
        dataDim(ctx, scalarElement(ctx.builder(), t, i), name + "_" + std::to_string(i)));
  }
  return dims;
}

Value *dataArange(ImportContext &ctx, Value *count, const std::string &name,
                  const std::string &invalid) {
  AttrMap attrs;
  if (!invalid.empty())
    attrs["invalid"] = Attribute(invalid);
  Value *a = ctx.builder().value(OpKind::Arange, {count}, std::move(attrs));
  a->setType(TensorType(DType::I64, {Dim::sym(ctx.uniqueSymbol(sanitizeSymbol("val_" + name)))}));
  return a;
}

Dim dataDim(ImportContext &ctx, Value *count, const std::string &name,
            const std::string &invalid) {
  return dataArange(ctx, count, name, invalid)->type().dims[0];
}

std::vector<Dim> dimsInputOrData(ImportContext &ctx, const onnx::NodeProto &node, int i,
                                 const char *what) {
  if (ctx.constantInput(node, i) || ctx.symbolicInput(node, i))
    return requireDimsInput(ctx, node, i, what);
  Value *t = ctx.input(node, i);
  if (!t)
    ctx.requireConstantInput(node, i, what); // throws, naming the input
  return dataDims(ctx, t, node.output_size() > 0 ? node.output(0) : what);
}

Value *countTo(ImportContext &ctx, const SymExpr &size) {
  auto witness = ctx.dimWitness(size);
  if (!witness)
    return nullptr;
  return ctx.builder().value(OpKind::Iota, {witness->first},
                             {{"axis", Attribute(witness->second)}});
}

Value *reshapeTo(Builder &b, Value *x, const std::vector<Dim> &dims) {
  const TensorType &in = x->type();
  if (in.dims == dims)
    return x;
  // ONNX's spelling where it says it: sizes, 0 to copy a symbolic dim in place, one -1 for
  // one that moves; otherwise (several symbolic dims move, or a literal 0 beside symbols) the
  // target as formulas, each entry exactly its dim.
  std::vector<int64_t> shape;
  bool inferred = false, spelled = true, hasLiteralZero = false;
  for (size_t i = 0; i < dims.size() && spelled; ++i) {
    const Dim &d = dims[i];
    if (d.isStatic()) {
      shape.push_back(d.size);
      hasLiteralZero |= d.size == 0;
    } else if (i < in.dims.size() && in.dims[i] == d) {
      shape.push_back(0);
    } else if (!inferred) {
      shape.push_back(-1);
      inferred = true;
    } else {
      spelled = false;
    }
  }
  bool symbolic = std::any_of(dims.begin(), dims.end(), [](const Dim &d) { return !d.isStatic(); });
  AttrMap attrs{{"shape", spelled && !(hasLiteralZero && symbolic) ? Attribute(shape)
                                                                     : Attribute::dims(dims)}};
  // (A static 0 in a dims target is an empty dim only under allowzero.)
  if (hasLiteralZero)
    attrs["allowzero"] = Attribute(int64_t{1});
  return b.value(OpKind::Reshape, {x}, std::move(attrs));
}

} // namespace strata::onnx_import
