// Helpers shared by the code generation tests.
#pragma once
#include "strata/codegen/Jit.h"

#include <gtest/gtest.h>

#include <memory>

namespace strata::testing {

// One loop JIT for the host, created on first use and shared by the tests of a binary.
inline codegen::LoopJit &jit() {
  static std::unique_ptr<codegen::LoopJit> j = [] {
    auto r = codegen::LoopJit::create("host");
    if (!r) {
      ADD_FAILURE() << llvm::toString(r.takeError());
      return std::unique_ptr<codegen::LoopJit>();
    }
    return std::move(*r);
  }();
  return *j;
}

} // namespace strata::testing
