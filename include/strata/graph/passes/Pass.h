// A graph pass: one transformation (or analysis) of a whole graph that says whether it changed
// anything. Passes are created by name from the registry (one line per pass in Registry.cpp).
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Counters passes and patterns bump (`--stats`): "<pass>.<counter>" -> count.
class Statistics {
public:
  void add(const std::string &key, int64_t n = 1) { counts_[key] += n; }
  int64_t get(const std::string &key) const {
    auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }
  const std::map<std::string, int64_t> &all() const { return counts_; }

private:
  std::map<std::string, int64_t> counts_;
};

// Options every pass may consult.
struct PassOptions {
  // Allow rewrites that are not exact under IEEE arithmetic (documented per pattern).
  bool fastMath = false;
  // Largest constant (elements) constant folding may create.
  int64_t foldElementLimit = 1 << 16;
  // Vector width in f32 lanes for layout decisions (8 for AVX2).
  int64_t vectorWidth = 8;
  // Architectural SIMD registers (16 for AVX2, 32 for AVX-512): pack-matmul-weights' panels.
  int64_t vectorRegisters = 16;
  // winograd's tile: 0 lets its cost model choose per conv, 2 or 4 uses that tile on every conv
  // it applies to, -1 keeps every conv direct.
  int64_t winogradTile = 0;
  // Whether the code generator can compute `op` inside a fused kernel: the fuse pass asks before
  // grouping an op, so every kernel it forms lowers (the driver sets lower::lowersInKernel).
  // Unset: every op can, for graph-level work without a code generator.
  std::function<bool(const Op &)> fusesIntoKernel;
};

// Why a pass did not do what it might have ("not fused into ...", "not blocked: ..."), naming
// the node it is about: what `strata explain` shows next to each kernel.
struct Remark {
  std::string pass, node, message;
};

struct PassContext {
  PassOptions options;
  Statistics stats;
  std::vector<Remark> remarks;
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Transforms `g` in place; returns true when it changed the graph.
  virtual llvm::Expected<bool> run(Graph &g, PassContext &ctx) = 0;
};

struct PassInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Pass>()> create;
};

// All registered passes, in registry order.
const std::vector<PassInfo> &passRegistry();
const PassInfo *lookupPass(std::string_view name);

} // namespace strata
