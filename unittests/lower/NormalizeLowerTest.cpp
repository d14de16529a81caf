// Differential tests of arg_reduce, layer_norm and cumsum lowering (LowerNormalize.cpp): all
// follow the interpreter's order and precision, so they compare exactly.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;

TEST(LowerArgReduce, KindsAxesTiesAndNaN) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::U8, DType::I64})
    for (const char *kind : {"max", "min"})
      for (int64_t axis : {0, 1, 2, -1})
        for (int keep : {0, 1})
          for (int last : {0, 1}) {
            SCOPED_TRACE(std::string(kind) + " " + std::string(dtypeName(t)) + " axis " +
                         std::to_string(axis) + " keep " + std::to_string(keep) + " last " +
                         std::to_string(last));
            // Small value range (specials included) so that ties and NaN runs occur.
            Tensor x = randomTensor(t, {3, 4, 5}, true);
            if (!isFloat(t))
              for (int64_t e = 0; e < x.numElements(); ++e)
                x.setInt(e, x.getInt(e) % 3);
            checkOp(OpKind::ArgReduce, {x},
                    {{"kind", kind}, {"axis", axis}, {"keepdims", keep}, {"select_last_index", last}});
          }
  checkOp(OpKind::ArgReduce, {randomTensor(DType::F32, {6})}, {{"kind", "max"}, {"axis", 0}, {"keepdims", 0}, {"select_last_index", 0}});
}

TEST(LowerLayerNorm, AxesScaleBiasBroadcast) {
  for (DType t : {DType::F32, DType::F64})
    for (int64_t axis : {0, 1, 2, -1}) {
      Shape x{2, 3, 4};
      Shape trailing(x.begin() + (axis < 0 ? axis + 3 : axis), x.end());
      SCOPED_TRACE(std::string(dtypeName(t)) + " axis " + std::to_string(axis));
      checkOp(OpKind::LayerNorm, {randomTensor(t, x), randomTensor(t, trailing), randomTensor(t, trailing)},
              {{"axis", axis}, {"epsilon", 1e-3}});
      checkOp(OpKind::LayerNorm, {randomTensor(t, x), randomTensor(t, {1})}, {{"axis", axis}, {"epsilon", 1e-5}});
    }
  // Specials in the input.
  checkOp(OpKind::LayerNorm, {randomTensor(DType::F32, {2, 3, 4}, true), randomTensor(DType::F32, {4}),
                              randomTensor(DType::F32, {4})},
          {{"axis", -1}, {"epsilon", 1e-5}});
}

TEST(LowerCumSum, AxesExclusiveReverse) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I8, DType::U32})
    for (int64_t axis : {0, 1, -1})
      for (int excl : {0, 1})
        for (int rev : {0, 1}) {
          SCOPED_TRACE(std::string(dtypeName(t)) + " axis " + std::to_string(axis));
          checkOp(OpKind::CumSum, {randomTensor(t, {3, 4, 5}, true)},
                  {{"axis", axis}, {"exclusive", excl}, {"reverse", rev}});
        }
}

} // namespace
