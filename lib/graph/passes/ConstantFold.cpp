// constant-fold: an op whose operands are all constants is evaluated by the reference
// interpreter (the one definition of every op) and replaced by constants holding its results.
#include "strata/graph/Builder.h"
#include "strata/graph/ControlFlow.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/interp/Interpreter.h"

namespace strata {
namespace {

class ConstantFoldPass final : public Pass {
public:
  std::string_view name() const override { return "constant-fold"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t folded = foldGraph(g, ctx.options);
    if (folded)
      ctx.stats.add("constant-fold.folded", folded);
    return folded > 0;
  }

private:
  // One forward walk folds whole constant subgraphs: a folded op becomes a constant before its
  // users are visited.
  // An if on a known condition becomes its taken branch, whose ops the next round folds (a
  // round walks a snapshot of each graph's ops).
  static int64_t foldGraph(Graph &root, const PassOptions &options) {
    int64_t folded = 0;
    for (bool inlined = true; inlined;) {
      inlined = false;
      forEachGraph(root, [&](Graph &g) {
        for (Op *op : g.opList()) {
          // Constants a region op captures: copied into its regions, where they fold.
          if (int64_t sunk = sinkConstantCaptures(*op)) {
            folded += sunk;
            inlined = true;
          }
          if (op->kind() == OpKind::If) {
            const Tensor *cond = constantValue(op->operand(0));
            if (cond && cond->valid() && cond->numElements() == 1) {
              inlineIfBranch(*op, cond->getDouble(0) != 0 ? 0 : 1);
              ++folded;
              inlined = true;
            }
            continue;
          }
          folded += tryFold(g, *op, options);
        }
      });
    }
    return folded;
  }

  static bool tryFold(Graph &g, Op &op, const PassOptions &options) {
    // Region ops are evaluated through their bodies, which are folded separately.
    if (op.kind() == OpKind::Constant || op.numOperands() == 0 || op.numRegions() != 0)
      return false;
    std::vector<Tensor> operands;
    int64_t operandElements = 0;
    for (Value *v : op.operands()) {
      const Tensor *t = constantValue(v);
      if (!t || !t->valid()) // not a constant, or its bytes were elided from the printed IR
        return false;
      operands.push_back(*t);
      operandElements += t->numElements();
    }
    // The result types are static whenever the operands are constants; check the size before
    // evaluating. A result may outgrow the limit only if it is no larger than its operands
    // (a reduction or a same-size op never inflates the graph; a broadcast would).
    for (unsigned r = 0; r < op.numResults(); ++r) {
      std::optional<int64_t> n = op.result(r)->type().staticNumElements();
      if (!n || (*n > options.foldElementLimit && *n > operandElements))
        return false;
    }
    llvm::Expected<std::vector<Tensor>> results = evaluateOp(op, operands);
    if (!results) {
      // Leave the failure (e.g. an integer division by zero) to run time, where it belongs.
      llvm::consumeError(results.takeError());
      return false;
    }
    if (results->size() != op.numResults())
      return false;
    for (unsigned r = 0; r < op.numResults(); ++r) {
      const TensorType &type = op.result(r)->type();
      if ((*results)[r].dtype() != type.dtype || (*results)[r].shape() != type.staticShape())
        return false;
    }
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    for (unsigned r = 0; r < op.numResults(); ++r) {
      Value *old = op.result(r);
      Value *replacement = b.constant(std::move((*results)[r]));
      replacement->setType(old->type()); // keeps the device
      replacement->setName(old->name());
      old->replaceAllUsesWith(replacement);
    }
    g.eraseOp(&op);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createConstantFoldPass() { return std::make_unique<ConstantFoldPass>(); }

} // namespace strata
