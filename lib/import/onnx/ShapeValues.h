// Shape arithmetic on the elements of small integer tensors, in row-major order (see
// ShapeValues.cpp).
#pragma once
#include "Converter.h"

#include <functional>
#include <optional>
#include <vector>

namespace strata::onnx_import {

// fn over the elements of a and b (one of them may be a single element, broadcast); nullopt
// when either is unknown, the sizes do not broadcast or fn gives up on an element.
std::optional<std::vector<SymExpr>>
pairwise(const std::optional<std::vector<SymExpr>> &a, const std::optional<std::vector<SymExpr>> &b,
         const std::function<std::optional<SymExpr>(const SymExpr &, const SymExpr &)> &fn);

// `data` (row-major, of `shape`) transposed by `perm`; nullopt for a bad permutation or a size
// that does not match.
std::optional<std::vector<SymExpr>> transposeElements(const std::vector<SymExpr> &data,
                                                      const Shape &shape,
                                                      const std::vector<int64_t> &perm);

// ReduceProd/ReduceSum/ReduceMin/ReduceMax (`op`) of every element of `data` (min/max:
// torchvision's min(candidates, count)); nullopt for another op, or min/max of nothing.
std::optional<SymExpr> reduceElements(const std::string &op, const std::vector<SymExpr> &data);

// A Slice (`node`) of a small tensor of static `type` whose starts/ends/axes/steps are constants.
std::optional<std::vector<SymExpr>> sliceElements(ImportContext &ctx, const onnx::NodeProto &node,
                                                  const TensorType &type);

// The float elements a node computes from shape values (a detector's resize: sizes cast to f32,
// divided, min'ed, floored; SymExpr::fromFloat makes them sizes again at the Cast back): Cast,
// Identity/Unsqueeze/Squeeze/Reshape/Flatten, Concat along axis 0, Gather along axis 0, + - * /
// Min Max of two, ReduceMax/ReduceMin of all, Reciprocal, Floor, Ceil, Round. `floats(i)`:
// operand i's elements (formulas or constants) when it is float; `ints(i)`: when it is an
// integer. The result is f64 when `wide`, else f32. Nullopt for anything else.
std::optional<std::vector<SymFloatRef>> floatShapeValues(
    const onnx::NodeProto &node, bool wide,
    const std::function<std::optional<std::vector<SymFloatRef>>(int)> &floats,
    const std::function<std::optional<std::vector<SymExpr>>(int)> &ints);

// The integer elements a node computes from shape values (ImportContext::symbolicInput): Cast,
// Identity/Unsqueeze/Squeeze/Reshape/Flatten, Equal and Where decided per element, Transpose,
// Gather along axis 0, Concat, Slice, Reduce* of every element, + - * / Mod Min Max. `in(i)`:
// operand i's elements; `markSize(e)`: e is a size (>= 0 for every valid binding). The result
// type is `outType`. Nullopt for anything else.
std::optional<std::vector<SymExpr>>
integerShapeValues(ImportContext &ctx, const onnx::NodeProto &node, const TensorType &outType,
                   const std::function<std::optional<std::vector<SymExpr>>(int)> &in,
                   const std::function<void(const SymExpr &)> &markSize);

// `elements` as a tensor of integer or bool `type` when every one is a constant (shape
// arithmetic that came out constant: a symbolic tensor's static batch dim), else nullopt.
std::optional<Tensor> constantOfElements(const TensorType &type,
                                         const std::vector<SymExpr> &elements);

// Element i (row-major) of the integer graph value `v` as a formula, where one is known though
// the whole tensor's is not (sizes concatenated from a Shape's dims and values read from data):
// `whole(v)` gives a value's elements when shape arithmetic or a constant knows them all; the
// walk goes through casts between integers, reshapes, 1-D concats and 1-D slices.
std::optional<SymExpr>
elementFormula(const Value *v, int64_t i,
               const std::function<std::optional<std::vector<SymExpr>>(const Value *)> &whole);

// The elements of an f32/f64 tensor as SymFloat constants of its width; nullopt for others.
std::optional<std::vector<SymFloatRef>> floatElements(const Tensor &t);

} // namespace strata::onnx_import
