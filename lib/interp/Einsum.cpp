// einsum: general equations (implicit / explicit output, ellipsis broadcasting, repeated labels
// for diagonals) by direct iteration over every index combination: O(product of extents).
#include "Kernels.h"

#include <algorithm>
#include <map>

namespace strata::interp::structured {

namespace {

// A subscript term as a list of labels: letters keep their char code, the k-th broadcast
// (ellipsis) dim, counted from the left of the global ellipsis, is kEllipsisBase + k.
constexpr int kEllipsisBase = 1000;

struct Term {
  std::vector<char> letters; // in order, '.' marks where the ellipsis sits
  bool hasEllipsis = false;
};

Term parseTerm(const Op &op, const std::string &text) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (t.hasEllipsis || text.compare(i, 3, "...") != 0)
        fail(op, "malformed ellipsis in einsum term '" + text + "'");
      t.hasEllipsis = true;
      t.letters.push_back('.');
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters.push_back(c);
    } else {
      fail(op, std::string("invalid character '") + c + "' in einsum equation");
    }
  }
  return t;
}

// Expands a term to one label per axis given how many dims its ellipsis covers.
std::vector<int> expandTerm(const Term &t, int64_t ellipsisDims, int64_t globalEllipsis) {
  std::vector<int> labels;
  for (char c : t.letters) {
    if (c != '.') {
      labels.push_back(c);
      continue;
    }
    for (int64_t k = 0; k < ellipsisDims; ++k)
      labels.push_back(kEllipsisBase + static_cast<int>(globalEllipsis - ellipsisDims + k));
  }
  return labels;
}

} // namespace

Tensors einsumKernel(const Op &op, const Tensors &operandsIn) {
  std::string equation;
  for (char c : op.stringAttr("equation"))
    if (c != ' ')
      equation += c;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<Term> inputs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    inputs.push_back(parseTerm(op, lhs.substr(start, comma - start)));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
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
    int64_t letters =
        static_cast<int64_t>(inputs[i].letters.size()) - (inputs[i].hasEllipsis ? 1 : 0);
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
    labels[i] = expandTerm(inputs[i], ellipsisDims[i], globalEllipsis);
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
      if (label < kEllipsisBase)
        ++occurrences[label];
    }
  }

  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    Term out = parseTerm(op, equation.substr(arrow + 2));
    outLabels = expandTerm(out, globalEllipsis, globalEllipsis);
    for (int label : outLabels) {
      if (!extent.count(label) && label < kEllipsisBase)
        fail(op, std::string("output label '") + char(label) + "' does not appear in the inputs");
      if (std::count(outLabels.begin(), outLabels.end(), label) > 1)
        fail(op, "output label repeated in '" + equation + "'");
    }
  } else {
    for (int64_t k = 0; k < globalEllipsis; ++k)
      outLabels.push_back(kEllipsisBase + static_cast<int>(k));
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
