// Imports each generated model, runs it through the reference interpreter and compares with the
// numbers numpy computed when the model was made; plus structural checks of the driver (folding,
// names, symbols, external data, specialization).
#include "ImportTestHelpers.h"

#include "strata/import/OnnxImporter.h"
#include "strata/interp/Interpreter.h"

namespace strata {
namespace {

using namespace import_test;

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(modelsDir() / "cases"))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void importRunCompare(const std::filesystem::path &dir) {
  auto result = importOnnxFile((dir / "model.onnx").string());
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  const Graph &g = *result->graph;
  std::vector<Tensor> inputs = readNumbered(dir, "input_");
  std::vector<Tensor> expected = readNumbered(dir, "output_");
  ASSERT_EQ(g.numInputs(), inputs.size());
  ASSERT_EQ(g.numOutputs(), expected.size());
  auto outputs = interpret(g, inputs);
  ASSERT_TRUE(static_cast<bool>(outputs)) << llvm::toString(outputs.takeError());
  for (size_t i = 0; i < expected.size(); ++i)
    expectTensorNear((*outputs)[i], expected[i], "output " + g.outputName(i));
}

class ImportCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ImportCase, MatchesNumpy) { importRunCompare(modelsDir() / "cases" / GetParam()); }

INSTANTIATE_TEST_SUITE_P(Models, ImportCase, ::testing::ValuesIn(caseNames()),
                         [](const auto &info) { return info.param; });

TEST(ImportDriver, ShapeArithmeticFoldsToStaticReshape) {
  auto r = importOnnxFile(modelPath("cases/shape_chain/model.onnx"));
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  const Graph &g = *r->graph;
  // Shape, Gather, Unsqueeze and Concat all folded away; the dead constants are removed too.
  EXPECT_EQ(g.numOps(), 1u);
  EXPECT_EQ(countOps(g, OpKind::Reshape), 1u);
  EXPECT_EQ(g.output(0)->type().str(), "tensor<2x12xf32>");
}

TEST(ImportDriver, NamesFollowOnnx) {
  auto r = importOnnxFile(modelPath("cases/concat/model.onnx"));
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  const Graph &g = *r->graph;
  ASSERT_EQ(g.numInputs(), 2u);
  EXPECT_EQ(g.input(0)->name(), "a");
  EXPECT_EQ(g.input(1)->name(), "b");
  ASSERT_EQ(g.numOutputs(), 1u);
  EXPECT_EQ(g.outputName(0), "y");
  EXPECT_EQ(g.output(0)->name(), "y");
  EXPECT_EQ(g.output(0)->definingOp()->location(), "concat_y");
}

TEST(ImportDriver, DimParamsBecomeSanitizedSymbols) {
  auto r = importOnnxFile(modelPath("bad/symbols.onnx"));
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  const Graph &g = *r->graph;
  ASSERT_EQ(g.numInputs(), 1u);
  EXPECT_EQ(g.input(0)->name(), "in:put"); // exactly the ONNX name
  const auto &dims = g.input(0)->type().dims;
  ASSERT_EQ(dims.size(), 3u);
  ASSERT_NE(dims[0].symbolName(), nullptr);
  EXPECT_EQ(*dims[0].symbolName(), "batch_size");
  ASSERT_NE(dims[1].symbolName(), nullptr);
  EXPECT_EQ(*dims[1].symbolName(), "_3d");
  ASSERT_NE(dims[2].symbolName(), nullptr);
  EXPECT_EQ(dims[2].symbolName()->rfind("unk", 0), 0u);
  ASSERT_NE(g.output(0)->type().dims[0].symbolName(), nullptr);
  EXPECT_EQ(*g.output(0)->type().dims[0].symbolName(), "batch_size");
}

TEST(ImportDriver, SymbolicBatchSurvivesReshapes) {
  auto r = importOnnxFile(modelPath("cases/symbolic_batch/model.onnx"));
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->graph->input(0)->type().str(), "tensor<?N x3x4xf32>");
  EXPECT_EQ(r->graph->output(0)->type().str(), "tensor<?N x24xf32>");
}

TEST(ImportDriver, ExternalData) {
  auto dir = modelsDir() / "external";
  importRunCompare(dir);
  auto r = importOnnxFile((dir / "model.onnx").string());
  ASSERT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r->graph->numInputs(), 1u); // the weights are constants
}

TEST(ImportDriver, SpecializesOnlyInputsNeededStatically) {
  std::string path = modelPath("bad/dynamic_reshape.onnx");
  // As it is: the target read from the shape input's data when the model runs.
  auto plain = importOnnxFile(path);
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  EXPECT_EQ(plain->graph->output(0)->type().str(), "tensor<?val_y_0 x?val_y_1 xf32>");
  EXPECT_EQ(countOps(*plain->graph, OpKind::Arange), 2u);

  ImportOptions opts;
  opts.specializableInputs["shape"] = Tensor::fromVector<int64_t>(DType::I64, {2}, {3, 2});
  opts.specializableInputs["x"] = Tensor(DType::F32, {2, 3}); // not needed statically: stays
  auto r = importOnnxFile(path, opts);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->specializedInputs, std::vector<std::string>{"shape"});
  ASSERT_EQ(r->graph->numInputs(), 1u);
  EXPECT_EQ(r->graph->input(0)->name(), "x");
  EXPECT_EQ(r->graph->output(0)->type().str(), "tensor<3x2xf32>");
}

TEST(ImportDriver, NoFoldingKeepsShapeOps) {
  ImportOptions opts;
  opts.foldConstants = false;
  auto r = importOnnxFile(modelPath("cases/one_hot/model.onnx"), opts);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_GE(countOps(*r->graph, OpKind::Slice), 2u); // off/on values picked at run time
}

TEST(ReadTensorProto, ReadsBackendTestData) {
  auto dir = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "build" /
             "onnx-node-tests" / "test_add" / "test_data_set_0";
  if (!std::filesystem::exists(dir / "input_0.pb"))
    GTEST_SKIP() << "node tests not generated";
  std::string name;
  auto t = readTensorProtoFile((dir / "input_0.pb").string(), &name);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(name, "x");
  EXPECT_EQ(shapeToString(t->shape()), "3x4x5");
}

} // namespace
} // namespace strata
