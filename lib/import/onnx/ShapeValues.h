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

} // namespace strata::onnx_import
