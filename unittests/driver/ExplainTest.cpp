// strata explain's report: every rung present with counts that agree with the graph and the
// program, provenance from source nodes to kernels, the reasons recorded, per-kernel machine code,
// timings, the arena, and a page whose inline data cannot end its own <script> element.
#include "strata/driver/Explain.h"

#include "strata/graph/Parser.h"

#include "DriverTestUtil.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::driver;
using strata::driver::testing::randomTensor;

namespace {

// A conv over 3 channels, a sigmoid, a 16-channel conv, a residual add; weights are inputs, so
// layout-nchwc leaves the convs plain and says why.
const char *kModel = R"(
graph @main(%x: tensor<1x3x12x12xf32>, %w1: tensor<16x3x3x3xf32>, %w2: tensor<16x16x3x3xf32>) -> (y: tensor<1x16x12x12xf32>) {
  %a = conv(%x, %w1) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : tensor<1x16x12x12xf32> loc("stem")
  %r = sigmoid(%a) : tensor<1x16x12x12xf32> loc("relu</script>")
  %b = conv(%r, %w2) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : tensor<1x16x12x12xf32> loc("body")
  %y = add(%b, %r) : tensor<1x16x12x12xf32> loc("residual")
  return %y
})";

std::unique_ptr<Graph> model() {
  auto g = parseGraph(kModel);
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  return g ? std::move(*g) : nullptr;
}

} // namespace

TEST(Explain, EveryRungWithCountsProvenanceAndMachineCode) {
  auto g = model();
  ASSERT_TRUE(g);
  std::vector<SourceNode> source = {{"stem", "Conv", {"x", "w1"}, {"a"}},
                                    {"relu</script>", "Sigmoid", {"a"}, {"r"}},
                                    {"body", "Conv", {"r", "w2"}, {"b"}},
                                    {"residual", "Add", {"b", "r"}, {"y"}},
                                    {"gone", "Identity", {"y"}, {"y2"}}};
  const size_t imported = g->numOpsRecursive();
  std::vector<Tensor> inputs = {randomTensor({1, 3, 12, 12}, 1), randomTensor({16, 3, 3, 3}, 2),
                                randomTensor({16, 16, 3, 3}, 3)};
  ExplainOptions opts;
  opts.modelPath = "test.sg";
  opts.threads = 1;
  opts.iters = 2;
  opts.warmup = 1;
  auto report = explainModel(*g, source, 1.5, inputs, opts);
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  const auto &r = *report;

  std::vector<std::string> ids;
  for (const auto &rung : r["rungs"])
    ids.push_back(rung["id"]);
  ASSERT_GE(ids.size(), 8u);
  EXPECT_EQ(ids.front(), "onnx");
  EXPECT_EQ(ids[1], "graph");
  std::vector<std::string> tail(ids.end() - 5, ids.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"kernels", "loop", "scheduled", "llvm", "asm"}));
  EXPECT_EQ(r["rungs"][0]["count"], source.size());
  EXPECT_EQ(r["rungs"][1]["count"], imported);
  for (const auto &rung : r["rungs"]) {
    EXPECT_TRUE(rung.contains("portability")) << rung["id"];
    EXPECT_TRUE(rung["count"].get<int64_t>() > 0) << rung["id"];
  }
  // Portable until something is decided for the target; machine code never is.
  EXPECT_TRUE(r["rungs"][1]["portability"]["neutral"].get<bool>());
  EXPECT_FALSE(r["rungs"].back()["portability"]["neutral"].get<bool>());

  const auto &kernels = r["kernels"];
  EXPECT_EQ(r["rungs"][ids.size() - 5]["count"], kernels.size());
  int64_t asmTotal = 0;
  for (const auto &k : kernels) {
    const std::string name = k["name"];
    EXPECT_NE(k["asm"].get<std::string>().find(name + ":"), std::string::npos) << name;
    EXPECT_NE(k["llvm"].get<std::string>().find("define"), std::string::npos) << name;
    EXPECT_GT(k["loopStmts"].get<int64_t>(), 0) << name;
    EXPECT_GT(k["flops"].get<double>(), 0) << name;
    EXPECT_GT(k["bytes"].get<double>(), 0) << name;
    EXPECT_GE(k["ms"].get<double>(), 0) << name;
    asmTotal += k["asmInstructions"].get<int64_t>();
  }
  EXPECT_EQ(r["rungs"].back()["count"], asmTotal);

  // Provenance: each surviving node names its kernels; the one not in the graph says so.
  bool stemRemark = false;
  for (const auto &n : r["nodes"]) {
    if (n["name"] == "gone") {
      EXPECT_TRUE(n["kernels"].empty());
      EXPECT_NE(n["fate"].get<std::string>().find("import"), std::string::npos);
      continue;
    }
    EXPECT_FALSE(n["kernels"].empty()) << n["name"];
    for (const auto &k : n["kernels"]) {
      bool listed = false;
      for (const auto &m : kernels[k.get<size_t>()]["nodes"])
        listed |= m == n["name"];
      EXPECT_TRUE(listed) << n["name"];
    }
    if (n["name"] == "stem")
      for (const auto &rem : n["remarks"])
        stemRemark |= rem["message"].get<std::string>().find("not blocked") != std::string::npos;
  }
  EXPECT_TRUE(stemRemark) << "the stem conv's layout remark is missing";

  // Timings, the roof and the arena.
  ASSERT_TRUE(r["run"].is_object());
  EXPECT_GT(r["run"]["medianMs"].get<double>(), 0);
  EXPECT_GT(r["roof"]["peakGflops"].get<double>(), 0);
  EXPECT_GT(r["roof"]["bandwidthGBs"].get<double>(), 0);
  const auto &mem = r["memory"];
  EXPECT_GT(mem["arenaBytes"].get<int64_t>(), 0);
  EXPECT_GE(mem["buffersTotalBytes"].get<int64_t>(), mem["arenaBytes"].get<int64_t>());
  for (const auto &b : mem["buffers"]) {
    EXPECT_LE(b["offset"].get<int64_t>() + b["bytes"].get<int64_t>(), mem["arenaBytes"]);
    EXPECT_LE(b["first"], b["last"]);
  }
  EXPECT_FALSE(r["compile"]["passes"].empty());

  // The page: the data inline, and a node named "relu</script>" cannot close the element.
  std::string html = explainHtml(r);
  size_t data = html.find("id=\"report-data\">");
  ASSERT_NE(data, std::string::npos);
  size_t end = html.find("</script>", data);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(html.find("/*STRATA_REPORT_DATA*/"), std::string::npos);
  auto parsed = nlohmann::json::parse(html.substr(data + 17, end - data - 17), nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed["nodes"][1]["name"], "relu</script>");
  for (const char *external : {"http://", "https://", "src=\"", "href=\""})
    EXPECT_EQ(html.substr(0, data).find(external), std::string::npos) << external;
}

TEST(Explain, WithoutRunningTheModel) {
  auto g = model();
  ASSERT_TRUE(g);
  ExplainOptions opts;
  opts.iters = 0;
  auto report = explainModel(*g, {}, 0, {}, opts);
  ASSERT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  EXPECT_TRUE((*report)["run"].is_null());
  EXPECT_TRUE((*report)["roof"].is_null());
  EXPECT_EQ((*report)["rungs"][0]["id"], "graph"); // no source model: no ONNX rung
}
