// Differential tests of reductions, softmax, matmul, conv and pool lowering. Reductions and
// softmax follow the interpreter's order and precision, so they compare exactly; matmul and conv
// sum in a different order than the interpreter's blocked GEMM (tolerance 1e-6 relative to the
// largest |reference|), except integers, which wrap identically in any order.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;

TEST(LowerReduction, EveryKindAxesAndKeepdims) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I8})
    for (const char *kind : {"sum", "prod", "max", "min", "mean"})
      for (const I &axes : {I{}, I{0}, I{1}, I{-1}, I{0, 2}, I{1, 2}})
        for (int keep : {0, 1}) {
          SCOPED_TRACE(std::string(kind) + " " + std::string(dtypeName(t)) + " keep " + std::to_string(keep));
          checkOp(OpKind::Reduce, {randomTensor(t, {3, 4, 5}, isFloat(t))},
                  {{"kind", kind}, {"axes", axes}, {"keepdims", keep}});
        }
}

TEST(LowerReduction, BoolMaxMinAndEmptyGroups) {
  for (const char *kind : {"max", "min"})
    checkOp(OpKind::Reduce, {randomTensor(DType::Bool, {4, 3})},
            {{"kind", kind}, {"axes", I{1}}, {"keepdims", 0}});
  for (const char *kind : {"sum", "prod", "max", "min", "mean"}) {
    checkOp(OpKind::Reduce, {Tensor(DType::F32, {3, 0})}, {{"kind", kind}, {"axes", I{1}}, {"keepdims", 1}});
    checkOp(OpKind::Reduce, {Tensor(DType::I32, {3, 0})}, {{"kind", kind}, {"axes", I{1}}, {"keepdims", 0}});
  }
}

TEST(LowerReduction, SoftmaxAndLogSoftmaxEveryAxis) {
  for (OpKind k : {OpKind::Softmax, OpKind::LogSoftmax})
    for (DType t : {DType::F32, DType::F64})
      for (int64_t axis : {0, 1, 2, -1}) {
        Tensor x = randomTensor(t, {3, 4, 5});
        for (int64_t e = 0; e < x.numElements(); ++e) // spread, so the max subtraction matters
          x.setDouble(e, x.getDouble(e) * 30);
        checkOp(k, {x}, {{"axis", axis}});
      }
  checkOp(OpKind::Softmax, {randomTensor(DType::F32, {2, 6}, true)}, {{"axis", 1}});
}

TEST(LowerMatMul, BatchedBroadcastAndVectors) {
  struct Case { Shape a, b; };
  for (const Case &c : {Case{{3, 4}, {4, 5}}, Case{{2, 3, 4}, {4, 5}}, Case{{2, 1, 3, 4}, {3, 4, 2}},
                        Case{{4}, {2, 4, 3}}, Case{{2, 3, 4}, {4}}, Case{{4}, {4}}}) {
    SCOPED_TRACE(shapeToString(c.a) + " @ " + shapeToString(c.b));
    checkOp(OpKind::MatMul, {randomTensor(DType::F32, c.a), randomTensor(DType::F32, c.b)}, {},
            Cmp::MaxRel, 1e-6);
    checkOp(OpKind::MatMul, {randomTensor(DType::I32, c.a, true), randomTensor(DType::I32, c.b, true)});
  }
}

TEST(LowerMatMul, BiasAddedAfterAccumulation) {
  checkOp(OpKind::MatMul, {randomTensor(DType::F32, {2, 3, 4}), randomTensor(DType::F32, {4, 5}),
                           randomTensor(DType::F32, {5})},
          {}, Cmp::MaxRel, 1e-6);
  checkOp(OpKind::MatMul, {randomTensor(DType::I64, {3, 4}), randomTensor(DType::I64, {4, 2}),
                           randomTensor(DType::I64, {3, 1})});
}

AttrMap convAttrs(I strides, I pads, I dilations, int64_t group) {
  return {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}};
}

TEST(LowerConv, StridesPadsDilationsGroupsBias) {
  checkOp(OpKind::Conv, {randomTensor(DType::F32, {2, 3, 7, 6}), randomTensor(DType::F32, {4, 3, 3, 3})},
          convAttrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1), Cmp::MaxRel, 1e-6);
  checkOp(OpKind::Conv, {randomTensor(DType::F32, {1, 4, 9, 8}), randomTensor(DType::F32, {6, 2, 3, 2}),
                         randomTensor(DType::F32, {6})},
          convAttrs({2, 3}, {2, 0, 1, 1}, {2, 1}, 2), Cmp::MaxRel, 1e-6);
  // Depthwise, and f64.
  checkOp(OpKind::Conv, {randomTensor(DType::F32, {1, 3, 5, 5}), randomTensor(DType::F32, {3, 1, 3, 3})},
          convAttrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 3), Cmp::MaxRel, 1e-6);
  checkOp(OpKind::Conv, {randomTensor(DType::F64, {1, 2, 5, 4}), randomTensor(DType::F64, {2, 2, 2, 2}),
                         randomTensor(DType::F64, {2})},
          convAttrs({1, 2}, {0, 1, 1, 0}, {1, 1}, 1), Cmp::MaxRel, 1e-12);
  // 1-D conv (N-d lowering).
  checkOp(OpKind::Conv, {randomTensor(DType::F32, {2, 2, 9}), randomTensor(DType::F32, {3, 2, 3})},
          {{"strides", I{2}}, {"pads", I{1, 2}}, {"dilations", I{2}}, {"group", 1}}, Cmp::MaxRel, 1e-6);
}

AttrMap poolAttrs(const char *kind, I kernel, I strides, I pads, int64_t ceil, int64_t includePad,
                  I dilations = {1, 1}) {
  return {{"kind", kind}, {"kernel", kernel}, {"strides", strides}, {"pads", pads},
          {"dilations", dilations}, {"ceil_mode", ceil}, {"count_include_pad", includePad}, {"p", 2}};
}

TEST(LowerPool, MaxAndAvg) {
  Tensor x = randomTensor(DType::F32, {2, 3, 7, 6}, true);
  for (const char *kind : {"max", "avg"}) {
    SCOPED_TRACE(kind);
    checkOp(OpKind::Pool, {x}, poolAttrs(kind, {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0));
    checkOp(OpKind::Pool, {x}, poolAttrs(kind, {3, 2}, {2, 2}, {1, 0, 1, 1}, 1, 0));
    checkOp(OpKind::Pool, {x}, poolAttrs(kind, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0, 0, {2, 2}));
  }
  checkOp(OpKind::Pool, {x}, poolAttrs("avg", {3, 3}, {2, 1}, {1, 1, 1, 1}, 0, 1));
  checkOp(OpKind::Pool, {randomTensor(DType::F64, {1, 2, 5, 5})}, poolAttrs("avg", {2, 2}, {2, 2}, {0, 0, 1, 1}, 0, 1));
}

// lp sums |x|^p in f64 over the real taps (pads excluded), then takes the p-th root.
TEST(LowerPool, Lp) {
  for (DType t : {DType::F32, DType::F64})
    for (int64_t p : {1, 2, 3}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " p " + std::to_string(p));
      AttrMap attrs = poolAttrs("lp", {3, 2}, {2, 1}, {1, 0, 1, 1}, 0, 0);
      attrs["p"] = p;
      checkOp(OpKind::Pool, {randomTensor(t, {2, 3, 6, 5})}, attrs);
    }
  // A 1-D window over a 3-D tensor, as LRN imports.
  checkOp(OpKind::Pool, {randomTensor(DType::F32, {1, 5, 4})}, poolAttrs("lp", {3}, {1}, {1, 1}, 0, 0, {1}));
}

// Integer max starts from the dtype's minimum, so all-minimum windows and padding agree.
TEST(LowerPool, IntegerMax) {
  for (DType t : {DType::U8, DType::I8, DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor x = randomTensor(t, {1, 2, 5, 5}, true);
    checkOp(OpKind::Pool, {x}, poolAttrs("max", {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0));
    checkOp(OpKind::Pool, {x}, poolAttrs("max", {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, 0, {2, 1}));
  }
}

} // namespace

namespace {

using I2 = std::vector<int64_t>;

AttrMap convTAttrs(I2 strides, I2 pads, I2 dilations, int64_t group, I2 outPad) {
  return {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group},
          {"output_padding", outPad}};
}

TEST(LowerConvTranspose, StridesPadsDilationsGroupsBias) {
  checkOp(OpKind::ConvTranspose, {randomTensor(DType::F32, {2, 3, 4, 5}), randomTensor(DType::F32, {3, 2, 3, 3})},
          convTAttrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1, {0, 0}), Cmp::MaxRel, 1e-6);
  checkOp(OpKind::ConvTranspose, {randomTensor(DType::F32, {1, 4, 3, 4}), randomTensor(DType::F32, {4, 3, 3, 2}),
                                  randomTensor(DType::F32, {6})},
          convTAttrs({2, 3}, {1, 0, 1, 1}, {1, 2}, 2, {1, 2}), Cmp::MaxRel, 1e-6);
  checkOp(OpKind::ConvTranspose, {randomTensor(DType::F64, {1, 2, 5}), randomTensor(DType::F64, {2, 3, 3}),
                                  randomTensor(DType::F64, {3})},
          convTAttrs({2}, {1, 2}, {2}, 1, {1}), Cmp::MaxRel, 1e-12);
}

} // namespace
