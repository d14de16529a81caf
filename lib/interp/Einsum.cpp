// einsum: general equations (implicit / explicit output, ellipsis broadcasting, repeated labels
// for diagonals) by direct iteration over every index combination: O(product of extents).
#include "Kernels.h"

#include "strata/graph/Einsum.h"

#include <algorithm>
#include <map>

namespace strata::interp::structured {

namespace {

EinsumTerm parseTerm(const Op &op, const std::string &text) {
  std::string error;
  std::optional<EinsumTerm> t = parseEinsumTerm(text, error);
  if (!t)
    fail(op, "einsum: " + error);
  return std::move(*t);
}

} // namespace

Tensors einsumKernel(const Op &op, const Tensors &operandsIn) {
  std::string equation;
  for (char c : ops::EinsumOp(op).equation())
    if (c != ' ')
      equation += c;
  size_t arrow = equation.find("->");
  std::vector<EinsumTerm> inputs;
  for (const std::string &text : splitEinsumInputs(equation.substr(0, arrow)))
    inputs.push_back(parseTerm(op, text));
  if (inputs.size() != operandsIn.size())
    fail(op, "equation '" + equation + "' names " + std::to_string(inputs.size()) +
                 " operands but " + std::to_string(operandsIn.size()) + " were given");
  DType dtype = operandsIn[0].dtype();
  Tensors operands;
  for (const Tensor &t : operandsIn) {
    if (t.dtype() != dtype)
      fail(op, "operand dtypes differ");
    operands.push_back(widenHalf(t));
  }
  if (dtype == DType::Bool)
    fail(op, "bool operands are not supported");

  // Axis labels of each operand, with ellipsis dims right-aligned across operands.
  size_t numOperands = operands.size();
  std::vector<int64_t> ellipsisDims(numOperands, 0);
  int64_t globalEllipsis = 0;
  for (size_t i = 0; i < numOperands; ++i) {
    int64_t letters = inputs[i].numLetters();
    int64_t rank = operands[i].rank();
    if (inputs[i].hasEllipsis ? rank < letters : rank != letters)
      fail(op, "operand " + std::to_string(i) + " of rank " + std::to_string(rank) +
                   " does not match its subscripts in '" + equation + "'");
    ellipsisDims[i] = inputs[i].hasEllipsis ? rank - letters : 0;
    globalEllipsis = std::max(globalEllipsis, ellipsisDims[i]);
  }
  std::vector<std::vector<int>> labels(numOperands);
  std::map<int, int64_t> extent;
  std::map<int, int> occurrences; // letter counts, for the implicit output
  for (size_t i = 0; i < numOperands; ++i) {
    labels[i] = expandEinsumTerm(inputs[i], ellipsisDims[i], globalEllipsis);
    for (size_t a = 0; a < labels[i].size(); ++a) {
      int label = labels[i][a];
      int64_t dim = operands[i].shape()[a];
      auto [it, fresh] = extent.emplace(label, dim);
      if (!fresh && it->second != dim) {
        if (it->second == 1)
          it->second = dim;
        else if (dim != 1)
          fail(op, "label extents disagree (" + std::to_string(it->second) + " vs " +
                       std::to_string(dim) + ") in '" + equation + "'");
      }
      if (label < kEinsumEllipsisLabel)
        ++occurrences[label];
    }
  }

  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    EinsumTerm out = parseTerm(op, equation.substr(arrow + 2));
    outLabels = expandEinsumTerm(out, globalEllipsis, globalEllipsis);
    for (int label : outLabels) {
      if (!extent.count(label) && label < kEinsumEllipsisLabel)
        fail(op, std::string("output label '") + char(label) + "' does not appear in the inputs");
      if (std::count(outLabels.begin(), outLabels.end(), label) > 1)
        fail(op, "output label repeated in '" + equation + "'");
    }
  } else {
    for (int64_t k = 0; k < globalEllipsis; ++k)
      outLabels.push_back(kEinsumEllipsisLabel + static_cast<int>(k));
    for (auto [label, count] : occurrences) // std::map: sorted by char code
      if (count == 1)
        outLabels.push_back(label);
  }
  // Loop order: output labels, then the contracted ones.
  std::vector<int> loopLabels = outLabels;
  for (auto &entry : extent)
    if (std::find(outLabels.begin(), outLabels.end(), entry.first) == outLabels.end())
      loopLabels.push_back(entry.first);
  size_t numOut = outLabels.size(), numLoops = loopLabels.size();
  std::vector<int64_t> loopExtent(numLoops);
  for (size_t l = 0; l < numLoops; ++l)
    loopExtent[l] = extent[loopLabels[l]];

  // strides[i][l]: how far operand i's offset moves per step of loop l (repeated labels add up,
  // size-1 broadcast axes do not move).
  std::vector<std::vector<int64_t>> strides(numOperands, std::vector<int64_t>(numLoops, 0));
  for (size_t i = 0; i < numOperands; ++i) {
    std::vector<int64_t> axisStrides = contiguousStrides(operands[i].shape());
    for (size_t a = 0; a < labels[i].size(); ++a) {
      if (operands[i].shape()[a] == 1)
        continue;
      size_t l = std::find(loopLabels.begin(), loopLabels.end(), labels[i][a]) - loopLabels.begin();
      strides[i][l] += axisStrides[a];
    }
  }

  Shape outShape(loopExtent.begin(), loopExtent.begin() + numOut);
  Tensor result(operands[0].dtype(), outShape);
  int64_t outCount = numElements(outShape);
  int64_t innerCount = numElements(Shape(loopExtent.begin() + numOut, loopExtent.end()));
  visitDType(op, operands[0].dtype(), /*allowInts=*/true, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using A = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      std::vector<const T *> data(numOperands);
      for (size_t i = 0; i < numOperands; ++i)
        data[i] = operands[i].template data<T>();
      T *out = result.data<T>();
      std::vector<int64_t> index(numLoops, 0), offset(numOperands, 0);
      // Advances loops [first, last) as an odometer, keeping every operand offset in step.
      auto advance = [&](size_t first, size_t last) {
        for (size_t l = last; l-- > first;) {
          bool carry = ++index[l] == loopExtent[l];
          for (size_t i = 0; i < numOperands; ++i)
            offset[i] += carry ? -strides[i][l] * (loopExtent[l] - 1) : strides[i][l];
          if (!carry)
            return;
          index[l] = 0;
        }
      };
      for (int64_t o = 0; o < outCount; ++o) {
        A sum{};
        for (int64_t c = 0; c < innerCount; ++c) {
          A product = A(1);
          for (size_t i = 0; i < numOperands; ++i)
            product = wrapMul(product, static_cast<A>(data[i][offset[i]]));
          sum = wrapAdd(sum, product);
          advance(numOut, numLoops);
        }
        out[o] = static_cast<T>(sum);
        advance(0, numOut);
      }
    }
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
