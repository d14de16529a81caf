// Kernels whose loop IR is the same but for the name share one function: the table of a module
// built with sharedKernels points their entries at one trampoline, and both run right.
#include "CodegenTestUtil.h"
#include "strata/codegen/KernelModule.h"
#include "strata/loop/Parser.h"
#include "strata/support/KernelStatus.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

loop::LoopFunction kernelNamed(const std::string &name, const char *op) {
  std::string text = "func @" + name + R"((%x: f32[8] in, %y: f32[8] out) {
  for %i in [0, 8) serial {
    %y[%i] = %x[%i] )" + op + R"( 2.0
  }
})";
  auto f = loop::parseFunction(text);
  EXPECT_TRUE(!!f) << (f ? "" : llvm::toString(f.takeError()));
  return f ? std::move(*f) : loop::LoopFunction{};
}

TEST(KernelModule, SameLoopIrButTheNameSharesOneFunction) {
  std::vector<loop::LoopFunction> kernels = {kernelNamed("k0_add", "+"), kernelNamed("k1_mul", "*"),
                                             kernelNamed("k2_add", "+")};
  std::vector<size_t> shared = codegen::sharedKernels(kernels);
  EXPECT_EQ(shared, (std::vector<size_t>{0, 1, 0}));

  llvm::LLVMContext ctx;
  llvm::Module m("table", ctx);
  codegen::emitKernelTable(kernels, m, "table", &shared);
  auto *table = m.getGlobalVariable("table");
  ASSERT_NE(table, nullptr);
  auto *entries = llvm::cast<llvm::ConstantArray>(table->getInitializer());
  ASSERT_EQ(entries->getNumOperands(), 3u);
  EXPECT_EQ(entries->getOperand(0), entries->getOperand(2));
  EXPECT_EQ(entries->getOperand(0)->getName(), "k0_add_packed");
  EXPECT_EQ(entries->getOperand(1)->getName(), "k1_mul_packed");
  EXPECT_EQ(m.getFunction("k2_add_packed"), nullptr); // never declared: k0's serves it

  // Through the JIT: three entry points, the first and last the same code, each right.
  auto entryPoints = strata::testing::jit().compileAll(kernels);
  ASSERT_TRUE(!!entryPoints) << llvm::toString(entryPoints.takeError());
  ASSERT_EQ(entryPoints->size(), 3u);
  EXPECT_EQ((*entryPoints)[0], (*entryPoints)[2]);
  float x[8], y[8];
  for (int i = 0; i < 8; ++i)
    x[i] = static_cast<float>(i);
  for (size_t k = 0; k < 3; ++k) {
    KernelStatus status{};
    void *args[] = {x, y, &status};
    (*entryPoints)[k](args);
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(y[i], k == 1 ? x[i] * 2 : x[i] + 2) << "kernel " << k << " at " << i;
  }
}

} // namespace
