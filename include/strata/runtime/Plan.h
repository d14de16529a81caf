// The execution plan (docs/runtime.md): what a compiled model runs, independent of how its kernels
// were compiled. The JIT engine builds one in memory; an AOT shared library carries it as text
// (PlanText.h) next to its kernels and weights. No LLVM or graph dependency: this header and the
// executor are compiled into every AOT library's runtime.
#pragma once
#include "strata/support/DType.h"
#include "strata/support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::runtime {

// One dimension of an interface tensor: a static size, or the run-time value of a symbol.
struct PlanDim {
  int64_t size = 0;
  int symbol = -1; // index into Plan::symbols, or -1 when static
  bool isStatic() const { return symbol < 0; }
};

struct PlanTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<PlanDim> dims;
};

// A size in bytes: `bytes` times the product of the listed symbols' values.
struct PlanSize {
  int64_t bytes = 0;
  std::vector<int> symbols;
};

// An intermediate buffer: its size and the steps (inclusive) from its first write to last read.
// Offsets are placed when the symbols are bound (static-only models: once).
struct PlanBuffer {
  PlanSize size;
  int64_t first = 0, last = 0;
};

// A constant: `bytes` at `offset` in the weights blob (offsets are multiples of 64).
struct PlanConstant {
  int64_t offset = 0, bytes = 0;
};

// Where one kernel argument lives.
struct PlanArg {
  enum Kind : uint8_t { Buffer, Input, Output, Constant, Symbol } kind = Buffer;
  int64_t index = 0; // into Plan::buffers, the inputs, the outputs, Plan::constants or symbols
};

// One native call: kernel `kernel` (index into the kernel table) with its arguments in the
// order of the kernel's parameters (buffers as data pointers, symbols as pointers to int64).
// Or run-time control flow (graph/ControlFlow.h), its regions plans of their own (Plan::regions)
// run on the step's arguments: args [0, numInputs) are read, the rest are its results.
//   If:   regions {then, else}; args cond (bool), captures..., results...
//   Loop: regions {body}; args trip count (i64), cond (bool), carried[numCarried], captures...,
//         results: carried..., scans... (each scan output's entries stacked)
struct PlanStep {
  std::string name; // "conv (node conv_3)": for traces and error messages
  int64_t kernel = 0;
  std::vector<PlanArg> args;
  enum Kind : uint8_t { Kernel, If, Loop } kind = Kernel;
  std::vector<int64_t> regions; // indices into Plan::regions
  int64_t numInputs = 0, numCarried = 0;
};

// A condition on the bound sizes that the shape functions assumed: two dims equal (a symbolic
// dim broadcast against a size, a matmul's contracted dims) or a window's output size at least
// 1, as formulas over input symbols.
// bind() refuses sizes that break one, naming `where`, before any kernel could read past a
// buffer.
struct PlanCheck {
  std::string lhs, rhs;
  std::string where; // "operand 0 dim 1 of op 'add' (node Add_3)"
  bool atLeast = false; // lhs >= rhs instead of lhs == rhs (a window that must fit once)
};

// A data-dependent size: before step `step` runs, `symbol` (a value-bound one) takes the int64
// stored at `value` (a rank-0 i64 tensor an earlier step computed, such as nonzero's count).
struct PlanBind {
  int64_t step = 0;
  int symbol = 0;
  PlanArg value;
};

// A data-dependent size a control step decides: after step `step` has run, `symbol` (a
// value-bound one) takes dim `dim` of result `result` as an if's branch taken gave it, or a
// loop's iteration count (dim 0 of a scan result).
struct PlanResultBind {
  int64_t step = 0;
  int symbol = 0;
  int64_t result = 0, dim = 0;
};

// A specialization for one set of input shapes (`strata compile --shape`): the plan
// regions[region], compiled for exactly these shapes. bind() runs it instead of this plan when
// every input has its shape; other shapes take this plan's general path.
struct PlanVariant {
  std::vector<std::vector<int64_t>> shapes; // one per input
  int64_t region = 0;
};

// The bound text of a value-bound symbol that nothing bounds before the run.
inline constexpr const char *kUnboundedSize = "*";

struct Plan {
  // Symbols are bound from the inputs' dims, or derived: `formulas[i]` (SymExpr text, empty for
  // an input's symbol) computes a dim of an intermediate or output from the input symbols when
  // they are bound, as the shape functions gave it (fdiv(height+1,2) after a stride-2 conv):
  // the host-side shape program. Kernels take only input symbols; plan sizes may use any.
  // A value-bound symbol (`bounds[i]` non-empty) is a data-dependent size: no input binds it; a
  // PlanBind (or a control step's PlanResultBind) sets it during the run. Until then it stands
  // at its bound, a formula over the symbols declared before it (inputs' and earlier
  // value-bound ones), which buffers, outputs and derived symbols are sized by when the inputs
  // are bound; a run refuses a value past it.
  std::vector<std::string> symbols;
  std::vector<std::string> formulas; // one per symbol
  std::vector<std::string> bounds;   // one per symbol, or shorter: missing entries are ""
  // What a negative value of an unbounded size means, where the compiler computes it as -1 for
  // an input that breaks a rule ("an axis is named twice"): the run's error says it (plan line
  // `invalid SYMBOL TEXT`). One per symbol, or shorter.
  std::vector<std::string> invalid;
  std::vector<PlanBind> binds;       // in step order
  std::vector<PlanResultBind> resultBinds; // in step order
  bool isDerived(size_t symbol) const {
    return symbol < formulas.size() && !formulas[symbol].empty();
  }
  bool isValueBound(size_t symbol) const {
    return symbol < bounds.size() && !bounds[symbol].empty();
  }
  // A value-bound symbol with no bound known before the run (kUnboundedSize: a size read from
  // data). Until its bind it stands at 0; buffers and outputs whose sizes read it (directly, or
  // through derived symbols or bounds) are allocated when the run has bound it, not placed in
  // the arena.
  bool isUnbounded(size_t symbol) const {
    return symbol < bounds.size() && bounds[symbol] == kUnboundedSize;
  }
  std::vector<PlanTensor> inputs, outputs;
  // Inputs (indices, ascending) whose values sizes are read from (a Reshape's shape given as an
  // input): a caller must give them; made-up values would make up the sizes.
  std::vector<int64_t> sizeInputs;
  // Per output: Output with its own index when a kernel writes it directly, otherwise the place
  // it is copied from after the last step (an input, a constant, a buffer or another output).
  std::vector<PlanArg> outputSources;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanConstant> constants;
  std::vector<PlanStep> steps;
  std::vector<PlanCheck> checks;
  // The plans of control-flow steps' regions. Each shares this plan's kernel table, weights and
  // constants (the same list); its inputs' symbols are the enclosing plan's, bound by name.
  std::vector<Plan> regions;
  std::vector<PlanVariant> variants; // tried in order before the general path
  int64_t numKernels = 0;
  int64_t weightsBytes = 0;
};

// Per symbol of `p`: whether its value reads an unbounded size (it is one, or its formula or
// bound reads one): what is sized by it is allocated during the run.
std::vector<bool> symbolsReadingUnbounded(const Plan &p);

// The serialized form embedded in AOT libraries: a line-oriented text, versioned.
std::string printPlan(const Plan &p);
// Parses printPlan's output; malformed text is an error naming the line.
Status parsePlan(const std::string &text, Plan &p);
// What an AOT library's C API does before building its executor: parses its embedded plan and
// checks it against the library's own kernel table length and weights size, recorded apart from
// the plan, so a damaged plan cannot index past either.
Status parseLibraryPlan(const char *text, int64_t tableKernels, int64_t weightsBytes, Plan &p);

} // namespace strata::runtime
