// Differential tests of topk and einsum lowering against the graph interpreter.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

// Values from a small set, so ties (broken by the lower index) are common.
Tensor fewValues(DType t, Shape shape, bool nans) {
  Tensor r(t, shape);
  const double vs[] = {3, -1, 3, 0, 7, -1, NAN};
  for (int64_t e = 0; e < r.numElements(); ++e)
    r.setDouble(e, vs[(e * 5 + e / 3) % (nans ? 7 : 6)]);
  return r;
}

TEST(LowerTopK, EveryAxisLargestAndSmallest) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::U8})
    for (int64_t axis : {0, 1, -1})
      for (int largest : {0, 1})
        for (int64_t k : {1, 3}) {
          SCOPED_TRACE(std::string(dtypeName(t)) + " axis " + std::to_string(axis) + " largest " +
                       std::to_string(largest) + " k " + std::to_string(k));
          AttrMap attrs{{"axis", axis}, {"k", k}, {"largest", largest}, {"sorted", 1}};
          checkOp(OpKind::TopK, {randomTensor(t, {3, 4, 5}, true)}, attrs);
          checkOp(OpKind::TopK, {fewValues(t, {4, 3, 6}, isFloat(t))}, attrs);
        }
}

TEST(LowerTopK, WholeAxisAndHalf) {
  checkOp(OpKind::TopK, {fewValues(DType::F32, {2, 7}, true)},
          {{"axis", 1}, {"k", 7}, {"largest", 1}, {"sorted", 1}});
  checkOp(OpKind::TopK, {randomTensor(DType::F16, {3, 8}, true)},
          {{"axis", 1}, {"k", 4}, {"largest", 0}, {"sorted", 1}});
}

TEST(LowerEinsum, ContractionsTransposesDiagonalsAndEllipsis) {
  struct Case {
    const char *eq;
    std::vector<Shape> shapes;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}},
      {"i,i", {{6}, {6}}},
      {"ij->", {{3, 4}}},
      {"ij->ji", {{3, 4}}},
      {"ii->i", {{4, 4}}},
      {"...ii->...i", {{2, 3, 3}}},
      {"ij,kj", {{2, 3}, {4, 3}}},        // implicit output: ik
      {"i,j,k->ijk", {{2}, {3}, {2}}},    // three operands
      {"...j,j->...", {{2, 1, 3}, {3}}},  // ellipsis with a size-1 axis
      {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
  };
  for (const Case &c : cases)
    for (DType t : {DType::F32, DType::F64, DType::I32}) {
      SCOPED_TRACE(std::string(c.eq) + " " + std::string(dtypeName(t)));
      std::vector<Tensor> ins;
      for (const Shape &s : c.shapes)
        ins.push_back(randomTensor(t, s));
      checkOp(OpKind::Einsum, ins, {{"equation", c.eq}});
    }
}

} // namespace
