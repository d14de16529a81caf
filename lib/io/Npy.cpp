// .npy files: a magic string, a version, a Python-dict header, then raw C-order data.
#include "strata/io/Npy.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace strata {

namespace {

llvm::Error npyError(const std::string &path, const std::string &msg) {
  return makeError(Diagnostic::error(msg).inFile(path));
}

struct DescrEntry {
  const char *descr;
  DType dtype;
};
// Little-endian descriptors; '|' marks single-byte types.
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::F32}, {"<f2", DType::F16}, {"<f8", DType::F64}, {"|i1", DType::I8},
    {"<i2", DType::I16}, {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},
    {"<u2", DType::U16}, {"<u4", DType::U32}, {"<u8", DType::U64}, {"|b1", DType::Bool},
};

// Extracts the value text following `'key':` in the header dict.
std::optional<std::string> headerField(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return std::nullopt;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return std::nullopt;
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos)
    return std::nullopt;
  size_t end;
  if (header[start] == '(')
    end = header.find(')', start) + 1;
  else if (header[start] == '\'')
    end = header.find('\'', start + 1) + 1;
  else
    end = header.find_first_of(",}", start);
  if (end == std::string::npos || end == 0)
    return std::nullopt;
  return header.substr(start, end - start);
}

} // namespace

llvm::Expected<Tensor> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return npyError(path, "cannot open file");
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY")
    return npyError(path, "not a .npy file (bad magic)");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char *>(b), 2))
      return npyError(path, "truncated header");
    headerLen = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char *>(b), 4))
      return npyError(path, "truncated header");
    headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return npyError(path, "unsupported .npy version " + std::to_string(magic[6]));
  }
  if (headerLen > (1u << 20))
    return npyError(path, "header too large");
  std::string header(headerLen, '\0');
  if (!in.read(header.data(), headerLen))
    return npyError(path, "truncated header");

  auto descr = headerField(header, "descr");
  auto order = headerField(header, "fortran_order");
  auto shapeText = headerField(header, "shape");
  if (!descr || !order || !shapeText)
    return npyError(path, "malformed header");
  if (*order != "False")
    return npyError(path, "Fortran-order arrays are not supported");
  if (descr->size() < 2 || descr->front() != '\'' || descr->back() != '\'' ||
      shapeText->size() < 2 || shapeText->front() != '(' || shapeText->back() != ')')
    return npyError(path, "malformed header");
  std::string d = descr->substr(1, descr->size() - 2);
  if (d == "<b1")
    d = "|b1";
  if (d == "<i1")
    d = "|i1";
  if (d == "<u1")
    d = "|u1";
  std::optional<DType> dtype;
  for (const DescrEntry &e : kDescrs)
    if (d == e.descr)
      dtype = e.dtype;
  if (!dtype)
    return npyError(path, "unsupported dtype '" + d + "'");

  Shape shape;
  std::string inner = shapeText->substr(1, shapeText->size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos)
      continue;
    char *end = nullptr;
    long long v = std::strtoll(item.c_str() + b, &end, 10);
    if (end == item.c_str() + b || v < 0 || v > (1ll << 40))
      return npyError(path, "bad dimension '" + item + "'");
    shape.push_back(v);
  }
  // Within the limits (support/Limits.h) before anything is allocated.
  const Limits limits = processLimits();
  if (static_cast<int64_t>(shape.size()) > limits.maxRank)
    return npyError(path, "array of rank " + std::to_string(shape.size()) + ", " +
                              overLimit(&Limits::maxRank, limits.maxRank));
  if (!shape::strideExtent(shape)) // strides must fit even when a 0 dim empties the array
    return npyError(path, "array of shape " + shapeToString(shape) +
                              " has dims whose product overflows int64");
  const int64_t n = numElements(shape); // saturates
  if (n > limits.maxTensorElements || n > INT64_MAX / 16)
    return npyError(path, "array of shape " + shapeToString(shape) + " " +
                              tooManyElements(n, limits.maxTensorElements));
  // The data must be in the file before memory is taken for it.
  const std::streampos dataStart = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff available = in.tellg() - dataStart;
  in.seekg(dataStart);
  const int64_t needed = n * static_cast<int64_t>(dtypeSize(*dtype));
  if (!in || available < needed)
    return npyError(path, "truncated data: expected " + std::to_string(needed) + " bytes");
  Tensor t(*dtype, shape);
  if (t.byteSize() && !in.read(static_cast<char *>(t.rawData()), t.byteSize()))
    return npyError(path, "truncated data: expected " + std::to_string(t.byteSize()) + " bytes");
  if (*dtype == DType::Bool) // a byte other than 0 and 1 is no bool: any non-zero reads as 1
    for (size_t i = 0; i < t.byteSize(); ++i)
      static_cast<uint8_t *>(t.rawData())[i] = static_cast<uint8_t *>(t.rawData())[i] != 0;
  return t;
}

llvm::Error writeNpy(const std::string &path, const Tensor &t) {
  const char *descr = nullptr;
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == t.dtype())
      descr = e.descr;
  if (!descr)
    return npyError(path, "cannot write dtype " + std::string(dtypeName(t.dtype())) + " as .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : i + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  // Pad so the data starts on a 64-byte boundary, newline-terminated (format version 1).
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out)
      return npyError(path, "cannot create file");
    out.write("\x93NUMPY\x01\x00", 8);
    uint16_t len = static_cast<uint16_t>(header.size());
    char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(lenBytes, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    if (t.byteSize())
      out.write(static_cast<const char *>(t.rawData()), static_cast<std::streamsize>(t.byteSize()));
    if (!out.flush()) {
      std::remove(tmp.c_str());
      return npyError(path, "write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return npyError(path, "cannot rename temporary file into place");
  }
  return llvm::Error::success();
}

} // namespace strata
