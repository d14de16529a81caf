// Hostile and unsupported inputs: every one must give one clear error naming the file and what is
// wrong, never a crash.
#include "ImportTestHelpers.h"

#include "strata/import/OnnxImporter.h"

#include <fstream>
#include <random>

namespace strata {
namespace {

using namespace import_test;

std::string importError(const std::string &path, const ImportOptions &opts = {}) {
  auto r = importOnnxFile(path, opts);
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

std::string writeTemp(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + "strata_import_" + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

#define EXPECT_HAS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

TEST(ImportErrors, MissingFile) {
  std::string msg = importError("/nonexistent/model.onnx");
  EXPECT_HAS(msg, "/nonexistent/model.onnx: cannot read ONNX model");
}

TEST(ImportErrors, EmptyFile) {
  std::string path = writeTemp("empty.onnx", "");
  EXPECT_EQ(importError(path), path + ": not a valid ONNX model (empty file)");
}

TEST(ImportErrors, RandomBytes) {
  std::mt19937 rng(1);
  std::string bytes(4096, '\0');
  for (char &c : bytes)
    c = static_cast<char>(rng());
  std::string path = writeTemp("random.onnx", bytes);
  EXPECT_HAS(importError(path), path + ": not a valid ONNX model");
}

// Every prefix of a real model: an error or (at a field boundary) a smaller model, never a crash.
TEST(ImportErrors, EveryTruncationIsHandled) {
  std::string bytes = readBytes(modelPath("cases/pad_constant/model.onnx"));
  ASSERT_GT(bytes.size(), 50u);
  int failures = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::string path = writeTemp("truncated.onnx", bytes.substr(0, len));
    std::string msg = importError(path);
    failures += !msg.empty();
    if (!msg.empty()) {
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    }
  }
  EXPECT_GT(failures, static_cast<int>(bytes.size()) / 2);
}

TEST(ImportErrors, CorruptedBytesNeverCrash) {
  std::string bytes = readBytes(modelPath("cases/gather/model.onnx"));
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    std::string mutated = bytes;
    for (int k = 0; k < 3; ++k)
      mutated[rng() % mutated.size()] = static_cast<char>(rng());
    std::string path = writeTemp("corrupt.onnx", mutated);
    (void)importError(path); // must return, whatever it says
  }
}

TEST(ImportErrors, MissingNodeInput) {
  std::string path = modelPath("bad/missing_input.onnx");
  std::string msg = importError(path);
  EXPECT_HAS(msg, path + ": op 'Add' (node \"add_0\"): input 'nowhere' is not");
}

TEST(ImportErrors, CycleNamesItsNodes) {
  std::string path = modelPath("bad/cycle.onnx");
  std::string msg = importError(path);
  EXPECT_HAS(msg, path + ": op 'Add' (node \"add_a\"): the graph has a cycle: \"add_a\" -> "
                         "\"relu_b\" -> \"add_a\"");
}

TEST(ImportErrors, WrongAttributeType) {
  std::string msg = importError(modelPath("bad/wrong_attr_type.onnx"));
  EXPECT_HAS(msg,
             "op 'Transpose' (node \"t0\"): attribute 'perm' must be a list of ints, got a float");
}

TEST(ImportErrors, AbsurdDim) {
  std::string msg = importError(modelPath("bad/absurd_dim.onnx"));
  EXPECT_HAS(msg, "graph input 'x' has dim 1000000000000, over the max-tensor-elements limit");
}

TEST(ImportErrors, InitializerSizeMismatch) {
  std::string msg = importError(modelPath("bad/short_initializer.onnx"));
  EXPECT_HAS(msg, "tensor 'w' has 12 bytes of data but its shape 4x4 of f32 needs 64");
}

TEST(ImportErrors, HugeInitializer) {
  std::string msg = importError(modelPath("bad/huge_initializer.onnx"));
  EXPECT_HAS(msg, "constants declare 4000000000000000000 bytes (at tensor 'big'), over the "
                  "max-constant-bytes limit");
}

TEST(ImportErrors, UnsupportedOpsListedTogether) {
  std::string path = modelPath("bad/unknown_ops.onnx");
  // (NonZero and Unique, supported now, are imported and not listed.)
  EXPECT_EQ(importError(path), path + ": unsupported ONNX ops: com.example.Foo (nodes: Foo_4)");
}

TEST(ImportErrors, StringInput) {
  std::string msg = importError(modelPath("bad/string_input.onnx"));
  EXPECT_HAS(msg, "graph input 's' has unsupported element type STRING");
}

TEST(ImportErrors, OpsetOutOfRange) {
  std::string msg = importError(modelPath("bad/future_opset.onnx"));
  EXPECT_HAS(msg, "unsupported opset 99 (supported: 1 to 21)");
}

TEST(ImportErrors, ExternalDataMustStayInModelDir) {
  std::string msg = importError(modelPath("bad/escaping_external.onnx"));
  EXPECT_HAS(msg, "external data location '../escape.bin' escapes the model's directory");
}

TEST(ImportErrors, SpecializedInputMustMatchDeclaration) {
  ImportOptions opts;
  opts.specializableInputs["shape"] = Tensor::fromVector<int32_t>(DType::I32, {2}, {3, 2});
  std::string msg = importError(modelPath("bad/dynamic_reshape.onnx"), opts);
  EXPECT_HAS(msg, "specialized input 'shape' is i32 but the model declares tensor<2xi64>");
}

TEST(ReadTensorProtoErrors, Garbage) {
  std::string path = writeTemp("garbage.pb", std::string("\xff\xff\xff\xff\x0f", 5));
  auto t = readTensorProtoFile(path);
  ASSERT_FALSE(static_cast<bool>(t));
  std::string msg = llvm::toString(t.takeError());
  EXPECT_HAS(msg, path + ": not a valid TensorProto");
  auto missing = readTensorProtoFile("/nonexistent/x.pb");
  ASSERT_FALSE(static_cast<bool>(missing));
  llvm::consumeError(missing.takeError());
}

} // namespace
} // namespace strata
