// Internal helpers shared by the ONNX op converters that decompose composite ONNX ops onto the
// graph IR's primitives: short names for common ops, scalar constants in an operand's dtype,
// per-channel broadcasting, numerically careful log1p/expm1, and conv/pool padding resolution.
#pragma once
#include "Converter.h"

#include <optional>
#include <string>
#include <vector>

namespace strata::onnx_import {

// --- Small op shorthands (all infer types through the Builder) ------------------------------
Value *add(Builder &b, Value *x, Value *y);
Value *sub(Builder &b, Value *x, Value *y);
Value *mul(Builder &b, Value *x, Value *y);
Value *div(Builder &b, Value *x, Value *y);
Value *maximum(Builder &b, Value *x, Value *y);
Value *minimum(Builder &b, Value *x, Value *y);
Value *unary(Builder &b, OpKind kind, Value *x);
Value *select(Builder &b, Value *cond, Value *ifTrue, Value *ifFalse);
Value *lessThan(Builder &b, Value *x, Value *y);

// Rank-0 constant holding `v` in the dtype of `like`.
Value *scalarLike(Builder &b, Value *like, double v);
// Casts to `dtype`; returns `x` unchanged when it already has that dtype.
Value *castTo(Builder &b, Value *x, DType dtype);
Value *reshape(Builder &b, Value *x, std::vector<int64_t> shape);
Value *transpose(Builder &b, Value *x, std::vector<int64_t> perm);
// ONNX Slice's lists (axes empty: the leading axes; steps empty: 1) as a slice in normal form.
Value *slice(Builder &b, Value *x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
             const std::vector<int64_t> &steps = {});
// reduce op; `kind` is sum | prod | max | min | mean; axes must be normalized (non-negative).
Value *reduce(Builder &b, Value *x, ReduceKind kind, std::vector<int64_t> axes, bool keepdims);

// --- Axes and dims read when the model runs ---------------------------------------------------
// x's dims as a 1-D i64 tensor (a constant when static).
Value *dimsOf(Builder &b, Value *x);
// `axes` (an integer tensor of rank 0 or 1 computed at run time), each entry normalized for
// `rank` (negative ones from the end) when the model runs: a gather from [0, rank), so an entry
// outside [-rank, rank) fails the run naming the node. Same rank as `axes`, i64.
Value *runtimeAxes(Builder &b, Value *axes, int64_t rank);
// How many times each axis of [0, rank) appears in the normalized 1-D `axes`: i64 [rank].
Value *axisCounts(Builder &b, Value *normalizedAxes, int64_t rank);
// Inclusive running sum of a 1-D vector.
Value *cumulativeSum(Builder &b, Value *v);
// The dims of `x` that `counts` (axisCounts: i64 [rank of x]) does not name, in order, as sizes
// read from data: `outRank` of them (rank minus the axes named). An axis named twice (or
// `alsoValid` false) makes the first negative, failing the run (`invalid` says what that means).
std::vector<Dim> unnamedDims(ImportContext &ctx, Value *x, Value *counts, int64_t outRank,
                             const std::string &name, const std::string &invalid,
                             Value *alsoValid = nullptr);
// Whether no axis is named twice (bool []), from axisCounts.
Value *eachAxisOnce(Builder &b, Value *counts);
// x reshaped to exactly `dims` (a dims attribute, allowzero): each symbol stays in the result's
// type (a size read from data keeps its arange alive), where reshapeTo may spell one as -1.
Value *reshapeExactly(Builder &b, Value *x, const std::vector<Dim> &dims);
// A size read from data that is `size` when `valid`, else -1: the run fails at its arange
// saying `invalid` (the rule broken), naming the node, where ONNX would reject it.
Dim checkedDataDim(ImportContext &ctx, Value *size, Value *valid, const std::string &name,
                   const std::string &invalid);

// `x` unchanged, but only when `ok` (a bool []) holds when the model runs: otherwise the run
// fails saying `invalid` (a size named `name` goes negative). A gather of x's elements at an
// arange of that size (a copy), so no rewrite of reshapes can drop the check. With `like`, the
// result has its type (x's elements as like's dims: `ok` must say they are x's).
Value *requireAtRun(ImportContext &ctx, Value *x, Value *ok, const std::string &name,
                    const std::string &invalid, Value *like = nullptr);

// Reshapes a per-channel vector [C] to [C, 1, ..., 1] so that it broadcasts against a tensor of
// `rank` laid out as [N, C, spatial...] (channel at axis 1).
Value *perChannel(Builder &b, Value *vec, int64_t rank);

// log(1 + x) and exp(x) - 1 accurate for small |x| (Kahan's tricks: the rounding error of
// forming 1 + x is cancelled by dividing by the exactly representable difference).
Value *log1p(Builder &b, Value *x);
Value *expm1(Builder &b, Value *x);

// An activation by its ONNX name (the RNN family's `activations` list: Sigmoid, Tanh, Relu,
// Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus), with its
// alpha/beta where it takes them (absent: ONNX's defaults). Throws ConvertError for other names.
Value *namedActivation(Builder &b, Value *x, const std::string &name, std::optional<double> alpha,
                       std::optional<double> beta);
bool activationTakesAlpha(const std::string &name);
bool activationTakesBeta(const std::string &name);

// [lo, hi)
std::vector<int64_t> iota(int64_t lo, int64_t hi);
// Static dims of `x`; throws ConvertError naming `what` if any dim is symbolic.
std::vector<int64_t> staticShape(Value *x, const char *what);
// Static size of dim `axis` of `x`; throws ConvertError naming `what` if it is symbolic.
int64_t staticDim(Value *x, int64_t axis, const char *what);
// Whether output i of the node is present and named (i.e. the model asks for it).
bool outputRequested(const onnx::NodeProto &node, int i);
// Input 1.. that is optional: nullptr when absent.
Value *optionalInput(ImportContext &ctx, const onnx::NodeProto &node, int i);
// Input that must exist; throws ConvertError naming `what` when absent.
// Dim `axis` of `x` as a run-time value (i64 []): a loop's trip count over that dim.
Value *dimValue(Builder &b, Value *x, int64_t axis);
// `stacked` (a loop's scan result) with its leading axis reversed: entry j becomes entry
// last - j (`last` the i64 [] index of its last entry), for reverse directions.
Value *reverseSteps(Builder &b, Value *stacked, Value *last);
// A run-time `loop` op (graph/ControlFlow.h) over `body`, a region built apart whose first
// inputs are the iteration, the condition and the carried values: closed over the outer values
// it reads (its constants copied in); `types` are the results' (a scan's length its first dim).
Op *createLoop(Builder &b, Value *trips, Value *cond, const std::vector<Value *> &carried,
               std::unique_ptr<Graph> body, const std::vector<TensorType> &types);
Value *requiredInput(ImportContext &ctx, const onnx::NodeProto &node, int i, const char *what);
// Throws ConvertError when x's rank is not at least `minRank`.
void requireRank(Value *x, int64_t minRank, const char *what);

// Explicit [begins..., ends...] pads for a conv/pool window over the spatial dims of `x`
// (NC + spatial layout), resolving ONNX auto_pad (NOTSET uses the `pads` attribute).
// kernel/strides/dilations have one entry per spatial dim.
std::vector<int64_t> resolveWindowPads(const onnx::NodeProto &node, Value *x,
                                       const std::vector<int64_t> &kernel,
                                       const std::vector<int64_t> &strides,
                                       const std::vector<int64_t> &dilations);
// The `name` ints attribute, defaulting to `count` ones; throws if its length is not `count`.
std::vector<int64_t> spatialAttr(const onnx::NodeProto &node, const std::string &name,
                                 size_t count, int64_t dflt);

} // namespace strata::onnx_import
