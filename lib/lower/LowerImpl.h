// Private helpers shared by the lowering files: the per-op context, loop-nest construction and
// broadcast index arithmetic. Lowering functions throw NotLowered / LowerError; the driver
// (Lower.cpp) turns them into llvm::Error.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/Ops.h"
#include "strata/loop/IR.h"
#include "strata/lower/Lower.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::lower {

using loop::Expr;
using loop::Stmt;
using Exprs = std::vector<loop::Expr>;

// The op (or this dtype/attribute combination of it) has no lowering yet.
struct NotLowered : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The op is malformed for lowering (bad attribute, shape mismatch).
struct LowerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void notLowered(const Op &op, const std::string &why = "");

struct LowerCtx {
  explicit LowerCtx(const Op &o, int counter = 0) : op(o), varCounter(counter) {}
  const Op &op;
  std::vector<loop::Buffer> ins, outs;
  std::vector<Shape> inShapes, outShapes;
  std::vector<DType> inTypes, outTypes;
  // Symbolic extents: every dim of every operand and result as an i64 expression, a constant or
  // arithmetic on the function's symbol parameters. inShapes/outShapes hold -1 for a symbolic
  // dim, so only lowerings registered with `symbolicExtents` (which size loops by these) ever
  // see an op with one (`symbolic`).
  std::vector<Exprs> inDims, outDims;
  bool symbolic = false;
  // The function's symbol parameters by symbol name, shared with the contexts of a kernel's ops.
  std::map<std::string, loop::Var> *symbolVars = nullptr;
  // `d` as an i64 expression: its size, or its formula over the symbol parameters.
  Expr dimExpr(const Dim &d);
  Exprs dimsOf(const TensorType &t);
  // Copies what a sub-context (a kernel's op) shares with this one.
  void shareWith(LowerCtx &sub) const {
    sub.opts = opts;
    sub.notes = notes;
    sub.symbolVars = symbolVars;
    sub.varCounter = std::max(sub.varCounter, varCounter);
  }
  // Adds operand or result `v`'s buffer, sizes and dtype.
  void addIn(const loop::Buffer &b, const TensorType &t);
  void addOut(const loop::Buffer &b, const TensorType &t);
  int varCounter = 0;
  LowerOptions opts;
  // Micro-kernels (LowerConvBlocked.cpp, LowerMatMulTiled.cpp) store their result vector through
  // this when set: a fused kernel's epilogue then runs on the accumulators in registers, writing
  // the kernel's results directly (LowerKernel.cpp). `idx` indexes the op's result (its last
  // entry a ramp), `value` is the result there.
  std::function<Stmt(const Exprs &idx, const Expr &value)> storeResult;
  Stmt storeOut(const Exprs &idx, const Expr &value) {
    return storeResult ? storeResult(idx, value) : loop::store(outs[0], idx, value);
  }
  // What this lowering states about its loops (the function's annotations; shared by the
  // contexts of a kernel's ops): the role of every loop it makes, and its nests' origin and work.
  loop::LoopAnnotations *notes = nullptr;
  void role(const loop::Var &v, loop::LoopRole r) {
    if (notes)
      notes->roles[v->name] = r;
  }
  void nest(const loop::Var &root, loop::NestInfo info) {
    if (notes)
      notes->nests[root->name] = std::move(info);
  }
  // A loop over [0, extent) with its role.
  Stmt loopOver(const loop::Var &v, int64_t extent, loop::LoopRole r, Stmt body);
  Stmt loopOver(const loop::Var &v, const Expr &extent, loop::LoopRole r, Stmt body);
  // A fresh loop/index variable (names must be unique within a function).
  loop::Var newVar(const std::string &hint = "i");
  // A fresh local buffer name.
  std::string newName(const std::string &hint);
};

inline Expr imm(int64_t v) { return loop::intImm(v); }
inline Expr bin(loop::ExprKind k, Expr a, Expr b) {
  return loop::binary(k, std::move(a), std::move(b));
}
// a * b, folded when both are constants or one is 1 (static shapes keep the loop IR they had
// before extents could be symbolic).
inline Expr mulExtents(const Expr &a, const Expr &b) {
  if (a.asInt() && b.asInt())
    return loop::intImm(*a.asInt() * *b.asInt());
  return a.asInt() == 1 ? b : b.asInt() == 1 ? a : a * b;
}
// The product of nominal sizes, saturating at int64's maximum (a nest's work estimate must not
// overflow on a hostile graph's dims).
inline int64_t saturatingProduct(std::initializer_list<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p = shape::checkedMul(p, std::max<int64_t>(s, 0)).value_or(std::numeric_limits<int64_t>::max());
  return p;
}
// ceil(a / b) for an extent a and a positive constant b.
inline Expr ceilDivExtent(const Expr &a, int64_t b) {
  if (a.asInt())
    return loop::intImm((*a.asInt() + b - 1) / b);
  return loop::binary(loop::ExprKind::FloorDiv, a + loop::intImm(b - 1), loop::intImm(b));
}
// std::min and std::max as C++ computes them ((b < a) ? b : a and (a < b) ? b : a): the
// interpreter's result for NaN operands, and one vminps/vmaxps each for floats (loop::min/max
// lower to minnum/maxnum, whose NaN fix-ups cost more and made LLVM scalarize vectors).
inline Expr stdMin(const Expr &a, const Expr &b) {
  return loop::select(bin(loop::ExprKind::LT, b, a), b, a);
}
inline Expr stdMax(const Expr &a, const Expr &b) {
  return loop::select(bin(loop::ExprKind::LT, a, b), b, a);
}
// True where `x` is NaN (x != x).
inline Expr isNaN(const Expr &x) { return bin(loop::ExprKind::NE, x, x); }
// A one-element local accumulator.
struct Acc {
  loop::Buffer buf;
  Expr get() const { return loop::load(buf, {imm(0)}); }
  Stmt set(Expr v) const { return loop::store(buf, {imm(0)}, std::move(v)); }
};
inline Acc makeAcc(LowerCtx &c, const std::string &hint, DType t) {
  return {loop::makeBuffer(c.newName(hint), t, {imm(1)}, {}, loop::MemoryScope::Local)};
}
Exprs vars(const std::vector<loop::Var> &vs);

// Folds the `lanes` lanes of `acc` (a local vector accumulator) with `combine` by halving (lane l
// with lane l + h) into result[0]. The fold works on a copy: narrower accesses to `acc` itself
// make LLVM's SROA split it into scalars, and the loop accumulating into it then runs one lane
// at a time (the softmax max and sum loops did, at a tenth of their vector speed).
Stmt foldLanes(LowerCtx &c, const loop::Buffer &acc, int64_t lanes,
               const std::function<Expr(const Expr &, const Expr &)> &combine,
               const loop::Buffer &result);
// A serial loop nest over `shape` (outermost first), every loop of role `role` (output dims:
// Parallel; dims summed over: Reduction); `body` gets the index of every dim.
Stmt loopNest(LowerCtx &c, const Shape &shape, loop::LoopRole role,
              const std::function<Stmt(const Exprs &)> &body);
Stmt loopNest(LowerCtx &c, const Exprs &extents, loop::LoopRole role,
              const std::function<Stmt(const Exprs &)> &body);
// Static sizes as constant extents.
Exprs extentsOf(const Shape &shape);
// The product of extents (a constant when all are).
Expr product(const Exprs &extents);
using loop::LoopRole;
// Indices into an operand of extents `in` numpy-broadcast to `out` (right-aligned; a dim that is
// the constant 1 where the result's is not reads index 0).
Exprs broadcastIndex(const Exprs &outIdx, const Exprs &out, const Exprs &in);
// Row-major linear index of `idx` in `extents`, and its inverse.
Expr linearIndex(const Exprs &idx, const Exprs &extents);
Exprs delinearize(const Expr &linear, const Exprs &extents);
// A statement failing the run (with a check_index naming c.op's node and `what`) unless the
// run-time count `found` equals `count`, the data-dependent size it was bound to: a graph
// whose count operand lies gets an error, never a result with unwritten entries.
Stmt requireCount(LowerCtx &c, const Expr &found, const Expr &count, const std::string &what);
// Rejects dtypes the loop IR computes differently from the graph interpreter: f16/bf16 outside
// the ops that compute them in f32 and round on store (elementwise) or only copy them.
void requireSupportedDType(const Op &op, DType t);
// A local (per-thread) buffer of `n` elements.
inline loop::Buffer localArray(LowerCtx &c, const std::string &hint, DType t, int64_t n = 1) {
  return loop::makeBuffer(c.newName(hint), t, {imm(n)}, {}, loop::MemoryScope::Local);
}
// `axis` itself when in [0, rank) (the attributes' normal form), else a LowerError: a guard for
// graphs that never met the verifier.
size_t checkedAxis(const LowerCtx &c, int64_t axis, size_t rank);
// An index read from data (`raw`, i32 or i64) into an axis of size `dim`: widened to i64,
// checked against ONNX's range [-dim, dim) and wrapped once if negative, by a check_index whose
// site names c.op's node and `what` (a failing index fails the run, no access leaves the
// buffer). `used`: whether any iteration reads it; an axis of size 0 that is read can never be
// indexed, a LowerError.
Expr checkedDataIndex(const LowerCtx &c, const Expr &raw, DType t, int64_t dim,
                      const std::string &what, bool used = true);
Expr checkedDataIndex(const LowerCtx &c, const Expr &raw, DType t, const Expr &dim,
                      const std::string &what, bool used = true);

// LowerSort.cpp. Whether (va, ia) strictly comes before (vb, ib): larger values first when
// `largest`, NaN (float `fl`) beyond every number, ties to the lower index.
Expr comesFirst(const Expr &va, const Expr &ia, const Expr &vb, const Expr &ib, bool largest,
                bool fl);
// Sorts the indices keys[0][0..count) (`keys` a local [2, capacity] i32/i64 buffer) stably by
// the strict order `before(a, b)` on two i64 indices: a bottom-up merge sort, run p of pass p
// merged from one row of `keys` into the other. `maxPasses` (mergePasses of count's bound)
// loops run, each a no-op once its run covers count; `parity` ends naming the sorted row.
Stmt mergeSortIndices(LowerCtx &c, const loop::Buffer &keys, const Expr &count,
                      int64_t maxPasses, const Acc &parity,
                      const std::function<Expr(const Expr &, const Expr &)> &before);
// The passes a merge sort of at most `maxCount` entries needs (ceil(log2(maxCount)), at most 62).
int64_t mergePasses(int64_t maxCount);

// The lowering of each op (Registry.cpp: the groups of the op definitions, then one line per op):
// the statement computing every result of c.op. `narrowFloats`: whether it computes f16/bf16
// operands (through f32, rounding once on store) or only copies them; other lowerings refuse them.
// `symbolicExtents`: whether it sizes every loop and index by c.inDims/c.outDims, so it also
// lowers ops with symbolic dims (the others refuse them).
struct Lowering {
  Stmt (*lower)(LowerCtx &c) = nullptr;
  bool narrowFloats = false;
  bool symbolicExtents = false;
};
const Lowering &loweringOf(OpKind k);
// Dispatches c.op (any lowered op, kernels included) through loweringOf.
Stmt lowerBody(LowerCtx &c);

// Per-op lowerings, one file per family.
Stmt lowerElementwise(LowerCtx &c); // LowerElementwise.cpp: every T_ELEMENTWISE op
Stmt lowerIndexMap(LowerCtx &c);    // LowerDataMovement.cpp: every T_INDEX_MAP op
Stmt lowerConcat(LowerCtx &c);
Stmt lowerGatherChannels(LowerCtx &c);
Stmt lowerShape(LowerCtx &c);
Stmt lowerIota(LowerCtx &c);
Stmt lowerNonZero(LowerCtx &c);
Stmt lowerNmsCount(LowerCtx &c); // LowerNms.cpp
Stmt lowerNms(LowerCtx &c);
Stmt lowerRoiAlign(LowerCtx &c); // LowerRoiAlign.cpp
Stmt lowerUniqueCount(LowerCtx &c); // LowerUnique.cpp
Stmt lowerUnique(LowerCtx &c);
Stmt lowerPad(LowerCtx &c);
Stmt lowerGather(LowerCtx &c);
Stmt lowerGatherElements(LowerCtx &c);
Stmt lowerGatherNd(LowerCtx &c); // LowerScatter.cpp
Stmt lowerScatterElements(LowerCtx &c);
Stmt lowerScatterNd(LowerCtx &c);
Stmt lowerMatMul(LowerCtx &c); // LowerMatMul.cpp
Stmt lowerConv(LowerCtx &c);   // LowerConv.cpp
Stmt lowerPool(LowerCtx &c);
Stmt lowerConvTranspose(LowerCtx &c); // LowerConvTranspose.cpp
Stmt lowerReduce(LowerCtx &c);        // LowerReduction.cpp
Stmt lowerSoftmax(LowerCtx &c);
Stmt lowerLogSoftmax(LowerCtx &c);
Stmt lowerAttention(LowerCtx &c); // LowerAttention.cpp
// Whether attention `op` takes the register-tiled kernel (f32, Dv a multiple of 8), which reads
// q, k and v only while packing them: a fused kernel inlines their index maps there.
bool attentionUsesTiledKernel(const Op &op);
Stmt lowerArgReduce(LowerCtx &c); // LowerNormalize.cpp
Stmt lowerLayerNorm(LowerCtx &c);
Stmt lowerCumSum(LowerCtx &c);
Stmt lowerResize(LowerCtx &c);     // LowerResize.cpp
Stmt lowerTopK(LowerCtx &c);       // LowerTopK.cpp
Stmt lowerEinsum(LowerCtx &c);     // LowerEinsum.cpp
Stmt lowerWinogradInput(LowerCtx &c); // LowerWinograd.cpp
Stmt lowerWinogradOutput(LowerCtx &c);
Stmt lowerKernelBody(LowerCtx &c); // LowerKernel.cpp: fused kernels
// pow on integer operands: square-and-multiply over the exponent's bits (LowerPow.cpp).
Stmt lowerIntPow(LowerCtx &c);

// The register-tiled micro-kernel for blocked 2-D f32 conv (LowerConvBlocked.cpp).
bool canLowerBlockedConv(const LowerCtx &c);
Stmt lowerBlockedConv(LowerCtx &c);
// The register-tiled micro-kernel for f32 matmul with whole-vector columns (LowerMatMulTiled.cpp).
bool canLowerTiledMatMul(const LowerCtx &c);
Stmt lowerTiledMatMul(LowerCtx &c);
// Softmax, log_softmax and layer_norm over f32 rows along the last axis, vectorized
// (LowerRowVector.cpp); other rows keep the scalar lowerings.
bool canLowerVectorRows(const LowerCtx &c);
Stmt lowerVectorSoftmax(LowerCtx &c, bool logarithm);
Stmt lowerVectorLayerNorm(LowerCtx &c);
// The source index (into operand 0) of result index `idx` of a T_INDEX_MAP op.
Exprs indexMapSource(const Op &op, const Exprs &in, const Exprs &out, const Exprs &idx);

// `e` with scalar operands of vector operations broadcast to the widest lanes among their
// operands: an elementwise expression built from scalar constants and vector loads.
Expr widenLanes(const Expr &e);

// The scalar expression of elementwise op `op` applied to `args` (already broadcast, of the
// op's operand dtypes `argTypes`); reusable for fused kernels.
Expr elementwiseExpr(const Op &op, const Exprs &args, const std::vector<DType> &argTypes);

} // namespace strata::lower
