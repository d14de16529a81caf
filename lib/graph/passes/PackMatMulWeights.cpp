// pack-matmul-weights: the constant right operand of an f32 matmul, [K, N], is stored at compile
// time as column panels [N/p, K, p] (matmul's b_panel = p, Layout.h), one panel per column tile
// of the tiled kernel, so the kernel's loads of b walk one contiguous block per tile.
//
// Why: in the plain layout the kernel reads, for each k, C vectors of row k of b; rows lie N*4
// bytes apart. When that pitch is a multiple of 4 KiB (N = 1024, 2048, 3072: BERT's and GPT's
// feed-forward layers) every row of a tile's panel maps to the same L1 set, and the panel,
// reused by every row tile, is evicted by its own rows: 128x768 @ 768x3072 ran 2.9x slower than
// @ 768x3088. Packed, a panel is K*p*4 contiguous bytes, which the cache and the prefetcher see
// as one stream.
//
// The panel width p is the kernel's column tile for the product's rows (matMulColumnVectors: the
// target's registers and vector width, rows = min(M, 4)), so the lowering's tile is exactly one
// panel. A matmul is packed when the tiled kernel applies to it (f32, a of rank >= 2, N a
// multiple of 8, no bias or a bias [N]) and that tile divides the columns; otherwise it keeps
// the plain layout, whose kernel clamps the last tile. Symbolic dims of a count as 1 row, as
// they are bound when a dynamic batch is lowered.
#include "strata/graph/Builder.h"
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/support/Error.h"

#include <algorithm>

namespace strata {
namespace {

// The panel width for `mm`, or 0 when it stays plain.
int64_t panelFor(const Op &mm, const PassOptions &opts) {
  if (mm.kind() != OpKind::MatMul || ops::MatMulOp(mm).b_panel() != 0)
    return 0;
  const TensorType &a = mm.operand(0)->type();
  const Tensor *b = constantValue(mm.operand(1));
  if (!b || !b->valid() || b->rank() != 2 || b->dtype() != DType::F32 || a.dtype != DType::F32 ||
      a.rank() < 2)
    return 0;
  const int64_t k = b->shape()[0], n = b->shape()[1];
  if (k == 0 || n == 0 || n % 8 != 0)
    return 0;
  if (mm.numOperands() > 2) {
    const TensorType &bias = mm.operand(2)->type();
    if (bias.rank() != 1 || !(bias.dims[0] == Dim(n)))
      return 0;
  }
  // The kernel's row tile: up to 4 rows; a symbolic dim (a run-time count of rows) takes all 4,
  // as the kernel does (a panel sized for 1 row would leave 4 x 8 accumulators spilling).
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < a.rank(); ++d)
    rows = std::min<int64_t>(rows * (a.dims[d].isStatic() ? a.dims[d].size : 4), 4);
  if (rows == 0)
    return 0;
  const int64_t lanes = n % opts.vectorWidth == 0 ? opts.vectorWidth : 8;
  bool divides = false;
  int64_t vectors = n / lanes;
  int64_t columns = matMulColumnVectors(vectors, rows, opts.vectorRegisters, &divides);
  return divides ? columns * lanes : 0;
}

int64_t packInGraph(Graph &g, const PassOptions &opts) {
  int64_t packed = 0;
  for (Op *mm : g.opList()) {
    int64_t panel = panelFor(*mm, opts);
    if (!panel)
      continue;
    Builder b(g);
    b.setInsertBefore(mm);
    b.setLocation(mm->location());
    std::vector<Value *> operands(mm->operands().begin(), mm->operands().end());
    Op *weightDef = operands[1]->definingOp();
    operands[1] = b.constant(packMatMulPanels(*constantValue(operands[1]), panel));
    AttrMap attrs = mm->attrs();
    attrs["b_panel"] = panel;
    Value *result = b.value(OpKind::MatMul, operands, attrs);
    if (!mm->result(0)->name().empty() && result->name().empty())
      result->setName(mm->result(0)->name());
    mm->result(0)->replaceAllUsesWith(result);
    g.eraseOp(mm);
    if (weightDef && !weightDef->result(0)->hasUses() && !weightDef->result(0)->isGraphOutput())
      g.eraseOp(weightDef);
    ++packed;
  }
  return packed;
}

class PackMatMulWeightsPass final : public Pass {
public:
  std::string_view name() const override { return "pack-matmul-weights"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    if (ctx.options.vectorWidth < 8 || ctx.options.vectorWidth % 8 != 0 ||
        ctx.options.vectorRegisters < 4)
      return makeError("pack-matmul-weights: needs a vector width that is a multiple of 8 f32 "
                       "lanes and at least 4 registers (got " +
                       std::to_string(ctx.options.vectorWidth) + " lanes, " +
                       std::to_string(ctx.options.vectorRegisters) + " registers)");
    int64_t packed = 0;
    forEachGraph(g, [&](Graph &sub) { packed += packInGraph(sub, ctx.options); });
    if (packed)
      ctx.stats.add("pack-matmul-weights.packed", packed);
    return packed > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createPackMatMulWeightsPass() {
  return std::make_unique<PackMatMulWeightsPass>();
}

} // namespace strata
