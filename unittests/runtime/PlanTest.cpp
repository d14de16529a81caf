// The execution plan's text form (what AOT libraries embed) and the executor, driven by plain C++
// kernels so that placement, symbol binding and output sources are tested without codegen.
#include "strata/runtime/Executor.h"
#include "strata/runtime/Plan.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace strata;
using namespace strata::runtime;

namespace {

// y = x * 2 over n floats; args: x, y, &n.
void doubleKernel(void **args) {
  auto *x = static_cast<const float *>(args[0]);
  auto *y = static_cast<float *>(args[1]);
  int64_t n = *static_cast<const int64_t *>(args[2]) * 3;
  for (int64_t i = 0; i < n; ++i)
    y[i] = 2 * x[i];
}

// z = a + b + c (a constant), n * 3 floats; args: a, b, c, z, &n.
void addKernel(void **args) {
  auto *a = static_cast<const float *>(args[0]), *b = static_cast<const float *>(args[1]);
  auto *c = static_cast<const float *>(args[2]);
  auto *z = static_cast<float *>(args[3]);
  int64_t n = *static_cast<const int64_t *>(args[4]) * 3;
  for (int64_t i = 0; i < n; ++i)
    z[i] = a[i] + b[i] + c[i % 3];
}

// x: [batch, 3] -> t = 2x, u = 2t, out0 = t + u + c; out1 copies the input.
Plan samplePlan() {
  Plan p;
  p.symbols = {"batch"};
  p.inputs = {{"x", DType::F32, {{0, 0}, {3, -1}}}};
  p.outputs = {{"out", DType::F32, {{0, 0}, {3, -1}}}, {"echo", DType::F32, {{0, 0}, {3, -1}}}};
  p.outputSources = {{PlanArg::Output, 0}, {PlanArg::Input, 0}};
  p.buffers = {{{12, {0}}, 0, 2}, {{12, {0}}, 1, 2}};
  p.constants = {{0, 12}};
  p.weightsBytes = 64;
  p.numKernels = 2;
  p.steps = {
      {"double (node t)", 0, {{PlanArg::Input, 0}, {PlanArg::Buffer, 0}, {PlanArg::Symbol, 0}}},
      {"double (node u)", 0, {{PlanArg::Buffer, 0}, {PlanArg::Buffer, 1}, {PlanArg::Symbol, 0}}},
      {"add (node out)",
       1,
       {{PlanArg::Buffer, 0},
        {PlanArg::Buffer, 1},
        {PlanArg::Constant, 0},
        {PlanArg::Output, 0},
        {PlanArg::Symbol, 0}}}};
  return p;
}

alignas(64) const float kPlanWeights[16] = {100, 200, 300};

TEST(PlanText, RoundTrips) {
  Plan p = samplePlan();
  p.inputs[0].name = "a name with spaces % and\nnewline";
  std::string text = printPlan(p);
  Plan q;
  Status s = parsePlan(text, q);
  ASSERT_FALSE(s) << s.message();
  EXPECT_EQ(q.inputs[0].name, p.inputs[0].name);
  EXPECT_EQ(printPlan(q), text);
  EXPECT_EQ(q.steps.size(), 3u);
  EXPECT_EQ(q.steps[2].name, "add (node out)");
  EXPECT_EQ(q.buffers[1].size.symbols, std::vector<int>{0});
}

TEST(PlanText, RejectsDamage) {
  std::string text = printPlan(samplePlan());
  Plan q;
  auto error = [&](const std::string &t) {
    Status s = parsePlan(t, q);
    EXPECT_TRUE(s);
    return s.message();
  };
  EXPECT_NE(error("strata-plan 2\n").find("plan version 2 is not supported"), std::string::npos);
  EXPECT_NE(error("hello\n").find("not a strata plan"), std::string::npos);
  std::string badArg = text;
  badArg.replace(badArg.find("buffer 1 symbol 0"), 8, "buffer 7");
  EXPECT_NE(error(badArg).find("out of range"), std::string::npos);
  EXPECT_NE(error(text + "bogus 1\n").find("unknown record 'bogus'"), std::string::npos);
}

TEST(Executor, BindsRunsAndReusesTheArena) {
  Executor ex(samplePlan(), {&doubleKernel, &addKernel},
              reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  for (int64_t batch : {2, 1, 16}) {
    std::vector<float> x(batch * 3);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i);
    ASSERT_EQ(ex.bind({DType::F32}, {{batch, 3}}).message(), "");
    EXPECT_EQ(ex.outputShape(0), (std::vector<int64_t>{batch, 3}));
    std::vector<float> out(batch * 3), echo(batch * 3);
    const void *in[] = {x.data()};
    void *outs[] = {out.data(), echo.data()};
    ASSERT_EQ(ex.run(in, outs).message(), "");
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(out[i], 2 * x[i] + 4 * x[i] + kPlanWeights[i % 3]) << "batch " << batch;
      EXPECT_EQ(echo[i], x[i]);
    }
    // t and u are live together: two disjoint 64-byte-aligned stretches.
    EXPECT_EQ(ex.arenaBytes(), 2 * ((batch * 12 + 63) / 64 * 64));
  }
  EXPECT_EQ(ex.arenaAllocations(), 2); // batch 2; batch 1 fits; batch 16 grows it
}

TEST(Executor, ChecksInputsBeforeRunning) {
  Executor ex(samplePlan(), {&doubleKernel, &addKernel},
              reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  EXPECT_EQ(ex.bind({}, {}).message(), "expected 1 inputs, got 0");
  EXPECT_EQ(ex.bind({DType::I32}, {{2, 3}}).message(),
            "input 0 ('x'): expected dtype f32, got i32");
  EXPECT_EQ(ex.bind({DType::F32}, {{2, 4}}).message(),
            "input 0 ('x'): dim 1 is 4 but the model expects 3");
  EXPECT_EQ(ex.bind({DType::F32}, {{2}}).message(),
            "input 0 ('x'): expected rank 2, got 1 (shape [2])");
  EXPECT_EQ(ex.run(nullptr, nullptr).message(), "run before a successful bind");
  EXPECT_EQ(ex.arenaAllocations(), 0);
}

// The shape program: a derived symbol (a window's output size) computed from the input's when
// bound, sizing an output; a negative one is an error naming it; the text keeps the formula.
TEST(Executor, ComputesDerivedSymbols) {
  Plan p;
  p.symbols = {"h", "h-2"};
  p.formulas = {"", "h-2"};
  p.inputs = {{"x", DType::F32, {{0, 0}}}};
  p.outputs = {{"y", DType::F32, {{0, 1}}}};
  p.outputSources = {{PlanArg::Input, 0}};
  p.checks = {{"h-2", "5", "operand 1 dim 0 of op 'add'"}};
  p.numKernels = 0;
  Plan q;
  ASSERT_EQ(parsePlan(printPlan(p), q).message(), "");
  EXPECT_EQ(q.formulas, p.formulas);
  ASSERT_EQ(q.checks.size(), 1u);
  EXPECT_EQ(q.checks[0].where, p.checks[0].where);
  Executor ex(q, {}, reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  ASSERT_EQ(ex.bind({DType::F32}, {{7}}).message(), "");
  EXPECT_EQ(ex.outputShape(0), std::vector<int64_t>{5});
  EXPECT_EQ(ex.symbolValue(1), 5);
  EXPECT_EQ(ex.bind({DType::F32}, {{8}}).message(),
            "at the input sizes h = 8, operand 1 dim 0 of op 'add' is 6 but must equal 5");
  EXPECT_EQ(ex.bind({DType::F32}, {{1}}).message(),
            "at the input sizes h = 1, dim h-2 is -1: the inputs are too small for the model (a "
            "window larger than its padded input, or a crop larger than its axis)");
  // A formula must read input symbols declared before it.
  std::string text = printPlan(p);
  text.replace(text.find("symbol h\n"), 9, "");
  EXPECT_NE(parsePlan(text, q).message().find("no input symbol declared before it"),
            std::string::npos);
}

// A kernel writing 0, 1, ... to its output of the run-time length its symbol holds.
void writeIota(void **args) {
  const int64_t k = *static_cast<const int64_t *>(args[2]);
  for (int64_t i = 0; i < k; ++i)
    static_cast<int64_t *>(args[1])[i] = i;
}

TEST(Executor, BindsDataDependentSizesDuringTheRun) {
  // y [k]: k is no input's dim but the value of x[0], at most x's length n.
  Plan p;
  p.symbols = {"n", "k"};
  p.formulas = {"", ""};
  p.bounds = {"", "n"};
  p.inputs = {{"x", DType::I64, {{0, 0}}}};
  p.outputs = {{"y", DType::I64, {{0, 1}}}};
  p.outputSources = {{PlanArg::Output, 0}};
  p.steps = {{"op 'iota'", 0, {{PlanArg::Input, 0}, {PlanArg::Output, 0}, {PlanArg::Symbol, 1}}}};
  p.binds = {{0, 1, {PlanArg::Input, 0}}};
  p.numKernels = 1;
  Plan q;
  ASSERT_EQ(parsePlan(printPlan(p), q).message(), "");
  ASSERT_TRUE(q.isValueBound(1));
  EXPECT_EQ(q.bounds[1], "n");
  ASSERT_EQ(q.binds.size(), 1u);
  Executor ex(q, {writeIota}, reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  auto run = [&](std::vector<int64_t> x) {
    if (Status s = ex.bind({DType::I64}, {{static_cast<int64_t>(x.size())}}))
      return s.message();
    EXPECT_EQ(ex.outputShape(0), std::vector<int64_t>{static_cast<int64_t>(x.size())});
    std::vector<int64_t> y(x.size(), -7);
    const void *in[] = {x.data()};
    void *out[] = {y.data()};
    if (Status s = ex.run(in, out))
      return s.message();
    const int64_t k = ex.outputShape(0).at(0);
    for (int64_t i = 0; i < k; ++i)
      EXPECT_EQ(y[static_cast<size_t>(i)], i);
    return "k = " + std::to_string(k);
  };
  EXPECT_EQ(run({3, 0, 0, 0, 0}), "k = 3");
  EXPECT_EQ(run({0, 9}), "k = 0");
  EXPECT_EQ(run({5, 1, 1, 1, 1}), "k = 5");
  EXPECT_EQ(run({6, 1, 1, 1, 1}),
            "before op 'iota': the data-dependent size 'k' is 6, outside its bounds [0, 5]");
  EXPECT_EQ(run({-1, 1}),
            "before op 'iota': the data-dependent size 'k' is -1, outside its bounds [0, 2]");
  // A bind of a symbol no value binds, or from an output, is refused when parsed.
  std::string text = printPlan(p);
  std::string bad = text;
  bad.replace(bad.find("bind 0 1"), 8, "bind 0 0");
  EXPECT_NE(parsePlan(bad, q).message().find("bad bind"), std::string::npos);
  bad = text;
  bad.replace(bad.find("bind 0 1 input"), 14, "bind 0 1 output");
  EXPECT_NE(parsePlan(bad, q).message().find("out of range"), std::string::npos);
}

// Control-flow steps (PlanStep::If, Loop) over region plans sharing the kernel table: the branch
// the condition picks runs on the step's arguments; the loop feeds its carried value back
// through its result and a spare buffer. Regions bind the enclosing plan's symbols by name.
Plan controlFlowPlan() {
  auto rows = [](const char *name, DType dt = DType::F32) {
    return PlanTensor{name, dt, {{0, 0}, {3, -1}}};
  };
  Plan then, other, body;
  for (Plan *r : {&then, &other, &body}) {
    r->symbols = {"n"};
    r->numKernels = 1;
    r->weightsBytes = 64;
  }
  then.inputs = {rows("x")};
  then.outputs = {rows("y")};
  then.outputSources = {{PlanArg::Output, 0}};
  then.steps = {{"double (node then)", 0,
                 {{PlanArg::Input, 0}, {PlanArg::Output, 0}, {PlanArg::Symbol, 0}}}};
  other.inputs = {rows("x")};
  other.outputs = {rows("y")};
  other.outputSources = {{PlanArg::Input, 0}};
  body.inputs = {{"i", DType::I64, {}}, {"c", DType::Bool, {}}, rows("acc")};
  body.outputs = {{"c", DType::Bool, {}}, rows("acc2")};
  body.outputSources = {{PlanArg::Input, 1}, {PlanArg::Output, 1}};
  body.steps = {{"double (node body)", 0,
                 {{PlanArg::Input, 2}, {PlanArg::Output, 1}, {PlanArg::Symbol, 0}}}};
  Plan p;
  p.symbols = {"n"};
  p.inputs = {{"c", DType::Bool, {}}, rows("x"), {"m", DType::I64, {}}};
  p.outputs = {rows("y"), rows("z")};
  p.outputSources = {{PlanArg::Output, 0}, {PlanArg::Output, 1}};
  p.regions = {then, other, body};
  p.numKernels = 1;
  p.weightsBytes = 64;
  PlanStep branch{"op 'if' (node pick)", 0,
                  {{PlanArg::Input, 0}, {PlanArg::Input, 1}, {PlanArg::Output, 0}}};
  branch.kind = PlanStep::If;
  branch.regions = {0, 1};
  branch.numInputs = 2;
  PlanStep loop{"op 'loop' (node again)", 0,
                {{PlanArg::Input, 2}, {PlanArg::Input, 0}, {PlanArg::Input, 1}, {PlanArg::Output, 1}}};
  loop.kind = PlanStep::Loop;
  loop.regions = {2};
  loop.numInputs = 3;
  loop.numCarried = 1;
  p.steps = {branch, loop};
  return p;
}

TEST(Executor, RunsIfAndLoopRegions) {
  Plan q;
  const std::string text = printPlan(controlFlowPlan());
  ASSERT_EQ(parsePlan(text, q).message(), "");
  EXPECT_EQ(printPlan(q), text);
  ASSERT_EQ(q.regions.size(), 3u);
  Executor ex(q, {&doubleKernel}, reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  for (bool cond : {true, false})
    for (int64_t trips : {0, 1, 3}) {
      const int64_t n = 2 + trips;
      std::vector<float> x(n * 3), y(n * 3, -1), z(n * 3, -1);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(i);
      ASSERT_EQ(ex.bind({DType::Bool, DType::F32, DType::I64}, {{}, {n, 3}, {}}).message(), "");
      const void *in[] = {&cond, x.data(), &trips};
      void *out[] = {y.data(), z.data()};
      ASSERT_EQ(ex.run(in, out).message(), "");
      const float scale = cond ? static_cast<float>(1 << trips) : 1;
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(y[i], cond ? 2 * x[i] : x[i]) << cond << " " << trips;
        EXPECT_EQ(z[i], scale * x[i]) << cond << " " << trips;
      }
    }
  // Damage: a region that does not end, a step whose region is missing or does not match.
  std::string bad = text.substr(0, text.rfind("region end"));
  EXPECT_NE(parsePlan(bad, q).message().find("does not end"), std::string::npos);
  bad = text;
  bad.replace(bad.find("if 0 1"), 6, "if 0 7");
  EXPECT_NE(parsePlan(bad, q).message().find("bad if"), std::string::npos);
  bad = text;
  bad.replace(bad.find("loop 2 1 3"), 10, "loop 2 1 2");
  EXPECT_NE(parsePlan(bad, q).message().find("bad input count"), std::string::npos);
  bad = text;
  bad.replace(bad.find("if 0 1 2 3"), 10, "if 0 2 2 3");
  EXPECT_NE(parsePlan(bad, q).message().find("does not match its region"), std::string::npos);
  bad = text;
  bad.replace(bad.find("if 0 1 2 3 input 0 input 1 output 0"), 35, "if 0 1 2 3 input 0 input 1 input 0");
  EXPECT_NE(parsePlan(bad, q).message().find("writes a result into an input"), std::string::npos);
  // Regions nest at most 16 deep.
  std::string deep = "strata-plan 1\nkernels 0 weights 0\n";
  for (int i = 0; i < 20; ++i)
    deep += "region begin\nstrata-plan 1\nkernels 0 weights 0\n";
  for (int i = 0; i < 20; ++i)
    deep += "region end\n";
  EXPECT_NE(parsePlan(deep, q).message().find("nest deeper"), std::string::npos);
}

// y = x * 3 over 6 floats (a kernel compiled for one shape): args x, y.
void tripleSix(void **args) {
  auto *x = static_cast<const float *>(args[0]);
  auto *y = static_cast<float *>(args[1]);
  for (int i = 0; i < 6; ++i)
    y[i] = 3 * x[i];
}

// A shape variant (PlanVariant): inputs of exactly its shapes run its region's plan, any other
// shape the general path. (The variant computes 3x where the general path computes 2x, so the
// output shows which ran.)
TEST(Executor, RunsTheVariantForItsShapes) {
  Plan variant;
  variant.inputs = {{"x", DType::F32, {{2, -1}, {3, -1}}}};
  variant.outputs = {{"y", DType::F32, {{2, -1}, {3, -1}}}};
  variant.outputSources = {{PlanArg::Output, 0}};
  variant.steps = {{"triple (node y)", 1, {{PlanArg::Input, 0}, {PlanArg::Output, 0}}}};
  variant.numKernels = 2;
  Plan p;
  p.symbols = {"batch"};
  p.inputs = {{"x", DType::F32, {{0, 0}, {3, -1}}}};
  p.outputs = {{"y", DType::F32, {{0, 0}, {3, -1}}}};
  p.outputSources = {{PlanArg::Output, 0}};
  p.steps = {{"double (node y)", 0, {{PlanArg::Input, 0}, {PlanArg::Output, 0}, {PlanArg::Symbol, 0}}}};
  p.regions = {variant};
  p.variants = {{{{2, 3}}, 0}};
  p.numKernels = 2;
  Plan q;
  const std::string text = printPlan(p);
  ASSERT_EQ(parsePlan(text, q).message(), "");
  EXPECT_EQ(printPlan(q), text);
  Executor ex(q, {&doubleKernel, &tripleSix}, reinterpret_cast<const uint8_t *>(kPlanWeights), 1);
  for (int64_t batch : {2, 4, 2}) {
    std::vector<float> x(batch * 3), y(batch * 3, -1);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i);
    ASSERT_EQ(ex.bind({DType::F32}, {{batch, 3}}).message(), "");
    EXPECT_EQ(ex.context().variant(), batch == 2 ? 0 : -1);
    EXPECT_EQ(ex.outputShape(0), (std::vector<int64_t>{batch, 3}));
    const void *in[] = {x.data()};
    void *out[] = {y.data()};
    ASSERT_EQ(ex.run(in, out).message(), "");
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(y[i], (batch == 2 ? 3 : 2) * x[i]) << "batch " << batch;
  }
  // A variant whose shapes do not fit the inputs is refused when parsed.
  std::string bad = text;
  bad.replace(bad.find("variant 0 1 2 2 3"), 17, "variant 0 1 2 2 4");
  EXPECT_NE(parsePlan(bad, q).message().find("does not match"), std::string::npos);
  bad = text;
  bad.replace(bad.find("variant 0"), 9, "variant 3");
  EXPECT_NE(parsePlan(bad, q).message().find("bad variant"), std::string::npos);
}

} // namespace
