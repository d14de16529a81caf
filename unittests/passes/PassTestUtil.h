// Helpers shared by the pass tests.
#pragma once
#include "strata/graph/Parser.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace strata::testing {

// The graph of `text`, or null after a test failure naming the parse error.
inline std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text);
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return nullptr;
  }
  return std::move(*g);
}

} // namespace strata::testing
