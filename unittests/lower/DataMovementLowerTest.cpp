// Differential tests of data-movement lowering (pure index arithmetic) against the interpreter.
#include "LowerTestUtil.h"
#include "strata/graph/NormalForm.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;

TEST(LowerDataMovement, Reshape) {
  checkOp(OpKind::Reshape, {randomTensor(DType::F32, {2, 3, 4})}, {{"shape", I{4, -1}}});
  checkOp(OpKind::Reshape, {randomTensor(DType::I64, {2, 3, 4})}, {{"shape", I{0, 12, 1}}});
  checkOp(OpKind::Reshape, {randomTensor(DType::Bool, {6})}, {{"shape", I{3, 1, 2}}});
  checkOp(OpKind::Reshape, {randomTensor(DType::F32, {1})}, {{"shape", I{}}});
}

TEST(LowerDataMovement, Transpose) {
  checkOp(OpKind::Transpose, {randomTensor(DType::F32, {2, 3, 4})}, {{"perm", I{2, 0, 1}}});
  checkOp(OpKind::Transpose, {randomTensor(DType::I8, {3, 5})}, {{"perm", I{1, 0}}});
}

TEST(LowerDataMovement, Expand) {
  checkOp(OpKind::Expand, {randomTensor(DType::F32, {3, 1})}, {{"shape", I{2, 3, 4}}});
  checkOp(OpKind::Expand, {randomTensor(DType::I32, {1, 4})}, {{"shape", I{3, 1}}});
}

TEST(LowerDataMovement, SliceClampsAndNegativeSteps) {
  Tensor x = randomTensor(DType::F32, {5, 6, 7});
  auto slice = [&](I starts, I ends, I axes, I steps) { // ONNX's lists, in normal form
    auto attrs = sliceAttributes(x.rank(), starts, ends, axes, steps);
    ASSERT_TRUE(static_cast<bool>(attrs));
    checkOp(OpKind::Slice, {x}, *attrs);
  };
  slice({1, 0}, {4, 6}, {0, 2}, {1, 2});
  slice({-1}, {-100}, {1}, {-2});
  slice({100, -3}, {-100, 100}, {0, -1}, {-1, 1});
  slice({2}, {2}, {0}, {1}); // empty
}

TEST(LowerDataMovement, Concat) {
  checkOp(OpKind::Concat, {randomTensor(DType::F32, {2, 1, 3}), randomTensor(DType::F32, {2, 4, 3}),
                           randomTensor(DType::F32, {2, 2, 3})},
          {{"axis", 1}});
  checkOp(OpKind::Concat, {randomTensor(DType::I64, {2, 2}), randomTensor(DType::I64, {2, 3})},
          {{"axis", -1}});
}

TEST(LowerDataMovement, ConstantPadIncludingCrops) {
  Tensor x = randomTensor(DType::F32, {3, 4});
  checkOp(OpKind::Pad, {x, Tensor::scalar(DType::F32, 7.5)}, {{"pads", I{1, 2, 0, 3}}, {"mode", "constant"}});
  checkOp(OpKind::Pad, {x, Tensor::scalar(DType::F32, -1)}, {{"pads", I{-1, 1, 2, -2}}, {"mode", "constant"}});
  checkOp(OpKind::Pad, {randomTensor(DType::I32, {2, 2, 2}), Tensor::scalar(DType::I32, 9)},
          {{"pads", I{0, 1, 0, 1, 0, 1}}, {"mode", "constant"}});
}

TEST(LowerDataMovement, GatherWithNegativeIndices) {
  Tensor data = randomTensor(DType::F32, {4, 5, 3});
  Tensor idx = Tensor::fromVector<int64_t>(DType::I64, {2, 3}, {0, -1, 3, -5, 2, 4});
  checkOp(OpKind::Gather, {data, idx}, {{"axis", 1}});
  Tensor idx32 = Tensor::fromVector<int32_t>(DType::I32, {3}, {-4, 3, 0});
  checkOp(OpKind::Gather, {data, idx32}, {{"axis", 0}});
  checkOp(OpKind::Gather, {data, Tensor::scalar(DType::I64, -1)}, {{"axis", 2}});
}

TEST(LowerDataMovement, GatherElements) {
  Tensor data = randomTensor(DType::I32, {3, 4});
  Tensor idx = Tensor::fromVector<int64_t>(DType::I64, {3, 2}, {0, -1, 3, 2, -4, 1});
  checkOp(OpKind::GatherElements, {data, idx}, {{"axis", 1}});
  Tensor idx0 = Tensor::fromVector<int64_t>(DType::I64, {2, 4}, {0, 1, 2, -1, -3, 2, 1, 0});
  checkOp(OpKind::GatherElements, {data, idx0}, {{"axis", 0}});
}

// Pads wider than the axis (reflect and wrap go round more than once), crops, size-1 axes.
TEST(LowerDataMovement, EdgeReflectWrapPad) {
  for (const char *mode : {"edge", "reflect", "wrap"}) {
    SCOPED_TRACE(mode);
    Tensor x = randomTensor(DType::F32, {3, 4}, true);
    checkOp(OpKind::Pad, {x, Tensor::scalar(DType::F32, 0)}, {{"pads", I{1, 2, 0, 3}}, {"mode", mode}});
    checkOp(OpKind::Pad, {x, Tensor::scalar(DType::F32, 0)}, {{"pads", I{5, 9, 4, 7}}, {"mode", mode}});
    checkOp(OpKind::Pad, {x, Tensor::scalar(DType::F32, 0)}, {{"pads", I{-1, 2, 2, -2}}, {"mode", mode}});
    checkOp(OpKind::Pad, {randomTensor(DType::I64, {1, 2, 3}), Tensor::scalar(DType::I64, 0)},
            {{"pads", I{2, 1, 0, 1, 3, 2}}, {"mode", mode}});
  }
}

} // namespace

namespace {

// Index tensors with in-range values, a share of them negative (wrapped once).
Tensor indexTensor(DType t, Shape shape, int64_t dim) {
  Tensor r(t, shape);
  std::uniform_int_distribution<int64_t> d(-dim, dim - 1);
  for (int64_t e = 0; e < r.numElements(); ++e)
    r.setInt(e, d(rng()));
  return r;
}

TEST(LowerGatherNd, TuplesSlicesAndBatchDims) {
  Tensor data = randomTensor(DType::F32, {3, 4, 5}, true);
  checkOp(OpKind::GatherND, {data, indexTensor(DType::I64, {2, 2}, 3)}, {{"batch_dims", 0}});
  Tensor ind(DType::I32, {2, 3, 3});
  for (int64_t e = 0; e < ind.numElements(); ++e) // per-coordinate ranges 3, 4, 5
    ind.setInt(e, static_cast<int64_t>(e % 3 + 2 + e) % (3 + e % 3) - 1);
  checkOp(OpKind::GatherND, {data, ind}, {{"batch_dims", 0}});
  checkOp(OpKind::GatherND, {data, indexTensor(DType::I64, {3, 2, 1}, 4)}, {{"batch_dims", 1}});
}

TEST(LowerScatter, ElementsAndNdWithReductions) {
  for (const char *red : {"none", "add", "mul", "max", "min"})
    for (DType t : {DType::F32, DType::I32, DType::U8, DType::Bool}) {
      SCOPED_TRACE(std::string(red) + " " + std::string(dtypeName(t)));
      for (int64_t axis : {0, 1, -1})
        checkOp(OpKind::ScatterElements,
                {randomTensor(t, {3, 4}, true), indexTensor(DType::I64, {2, 3}, axis == 0 ? 3 : 4),
                 randomTensor(t, {2, 3}, true)},
                {{"axis", axis}, {"reduction", red}});
      checkOp(OpKind::ScatterND,
              {randomTensor(t, {3, 4, 2}), indexTensor(DType::I32, {5, 1}, 3), randomTensor(t, {5, 4, 2})},
              {{"reduction", red}});
      checkOp(OpKind::ScatterND,
              {randomTensor(t, {3, 4}), indexTensor(DType::I64, {2, 3, 1}, 3), randomTensor(t, {2, 3, 4})},
              {{"reduction", red}});
    }
}

} // namespace
