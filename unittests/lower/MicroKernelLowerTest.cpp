// The register-tiled micro-kernels (LowerConvBlocked.cpp, LowerMatMulTiled.cpp) against the graph
// interpreter: column and row tails, padding on every side, strides, dilations, bias, batch
// broadcasting; and a check that these shapes really take the micro-kernel path.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;

AttrMap conv(I strides, I pads, I dilations, const char *layout) {
  return {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", int64_t{1}},
          {"layout", layout}};
}

TEST(MicroKernel, BlockedConvTailsPadsStridesDilations) {
  struct Case {
    int64_t c, o, h, w, k;
    I strides, pads, dilations;
  };
  for (const Case &k : {Case{8, 16, 6, 6, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}},     // T = 6
                        Case{16, 8, 9, 13, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}},    // OW 13: tail
                        Case{8, 8, 11, 15, 3, {2, 2}, {0, 2, 1, 0}, {1, 1}},    // uneven pads
                        Case{8, 16, 10, 10, 3, {1, 2}, {2, 2, 2, 2}, {2, 2}},   // dilation
                        Case{16, 16, 7, 7, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}}}) { // 1x1, no guards
    SCOPED_TRACE("c" + std::to_string(k.c) + " o" + std::to_string(k.o) + " " +
                 std::to_string(k.h) + "x" + std::to_string(k.w));
    std::vector<Tensor> in = {randomTensor(DType::F32, {2, k.c / 8, k.h, k.w, 8}),
                              randomTensor(DType::F32, {k.o / 8, k.c / 8, k.k, k.k, 8, 8}),
                              randomTensor(DType::F32, {k.o})};
    AttrMap attrs = conv(k.strides, k.pads, k.dilations, "NCHW8c");
    checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-5);
    in.pop_back(); // without bias
    checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-5);
    std::string text = loweredText(OpKind::Conv, in, attrs);
    EXPECT_NE(text.find("parallel"), std::string::npos) << text;
    EXPECT_NE(text.find("fma("), std::string::npos) << text;
  }
}

TEST(MicroKernel, BlockedDepthwiseConv) {
  for (I strides : {I{1, 1}, I{2, 2}}) {
    std::vector<Tensor> in = {randomTensor(DType::F32, {1, 2, 9, 13, 8}),
                              randomTensor(DType::F32, {2, 1, 3, 3, 1, 8}),
                              randomTensor(DType::F32, {16})};
    AttrMap attrs = conv(strides, {1, 1, 1, 1}, {1, 1}, "NCHW8c");
    attrs["group"] = int64_t{16};
    checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-5);
    EXPECT_NE(loweredText(OpKind::Conv, in, attrs).find("fma("), std::string::npos);
  }
}

TEST(MicroKernel, PlainConvWithVectorsOfOutputChannels) {
  // The network stem: 3 input channels, 16 output channels, 7x7 stride 2 pad 3, odd sizes.
  std::vector<Tensor> in = {randomTensor(DType::F32, {1, 3, 17, 19}),
                            randomTensor(DType::F32, {16, 3, 7, 7}), randomTensor(DType::F32, {16})};
  AttrMap attrs = conv({2, 2}, {3, 3, 3, 3}, {1, 1}, "");
  attrs.erase("layout");
  checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-5);
  EXPECT_NE(loweredText(OpKind::Conv, in, attrs).find("fma("), std::string::npos);
  // Many input channels: even one block's weight vectors are too many to stage on the stack
  // (128 * 3 * 3 vectors of 8: 36 KiB); gathered.
  in = {randomTensor(DType::F32, {1, 128, 5, 6}), randomTensor(DType::F32, {16, 128, 3, 3})};
  AttrMap padded = conv({1, 1}, {1, 1, 1, 1}, {1, 1}, "");
  padded.erase("layout");
  checkOp(OpKind::Conv, in, padded, Cmp::MaxRel, 1e-5);
  std::string text = loweredText(OpKind::Conv, in, padded);
  EXPECT_EQ(text.find("wstage"), std::string::npos) << text;
  in = {randomTensor(DType::F32, {1, 3, 17, 19}), randomTensor(DType::F32, {16, 3, 7, 7})};
  EXPECT_NE(loweredText(OpKind::Conv, in, attrs).find("wstage"), std::string::npos);
  // 12 output channels are not whole vectors: the generic nest.
  in = {randomTensor(DType::F32, {1, 3, 9, 9}), randomTensor(DType::F32, {12, 3, 3, 3})};
  checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-6);
  EXPECT_EQ(loweredText(OpKind::Conv, in, attrs).find("fma("), std::string::npos);
}

// Conv tiles of O output channel blocks by T columns from the registers: with 32, four blocks
// of 6 columns where OW = 6, two of 14 where OW = 14, three where the blocks divide by 3 only;
// with 16 registers at most two blocks. Each against the interpreter.
TEST(MicroKernel, ConvTilesFromRegisters) {
  struct Case {
    int64_t c, o, w, registers;
    const char *accumulators; // the tile's local buffer
  };
  for (const Case &k :
       {Case{8, 32, 6, 32, "f32[4, 6, 8] local"}, Case{8, 32, 14, 32, "f32[2, 14, 8] local"},
        Case{16, 24, 9, 32, "f32[3, 9, 8] local"}, Case{8, 32, 6, 16, "f32[2, 6, 8] local"},
        Case{8, 8, 13, 16, nullptr}}) {
    SCOPED_TRACE("o" + std::to_string(k.o) + " w" + std::to_string(k.w) + " registers " +
                 std::to_string(k.registers));
    lower::LowerOptions lo;
    lo.vectorRegisters = k.registers;
    std::vector<Tensor> in = {randomTensor(DType::F32, {1, k.c / 8, 5, k.w, 8}),
                              randomTensor(DType::F32, {k.o / 8, k.c / 8, 3, 3, 8, 8}),
                              randomTensor(DType::F32, {k.o})};
    AttrMap attrs = conv({1, 1}, {1, 1, 1, 1}, {1, 1}, "NCHW8c");
    checkOp(OpKind::Conv, in, attrs, Cmp::MaxRel, 1e-5, lo);
    if (k.accumulators) {
      std::string text = loweredText(OpKind::Conv, in, attrs, lo);
      EXPECT_NE(text.find(k.accumulators), std::string::npos) << text;
    }
  }
}

TEST(MicroKernel, TiledMatMulRowTailsBatchesBias) {
  struct Case {
    Shape a, b;
    bool bias;
  };
  for (const Case &c : {Case{{5, 7}, {7, 24}, true},       // R 4 with a tail row, C 3
                        Case{{1, 9}, {9, 16}, false},      // one row (a lifted batch), C 2
                        Case{{2, 3, 9}, {9, 8}, true},     // batch on the left only
                        Case{{2, 6, 5}, {2, 5, 16}, false}, // batched both
                        Case{{1, 4, 3}, {3, 3, 40}, true},  // broadcast batch, 5 vectors: C 3, last tile clamped
                        Case{{6, 1, 5}, {5, 24}, true}}) {  // batch rows folded into M
    SCOPED_TRACE(shapeToString(c.a) + " @ " + shapeToString(c.b));
    std::vector<Tensor> in = {randomTensor(DType::F32, c.a), randomTensor(DType::F32, c.b)};
    if (c.bias)
      in.push_back(randomTensor(DType::F32, {c.b.back()}));
    checkOp(OpKind::MatMul, in, {}, Cmp::MaxRel, 1e-5);
    EXPECT_NE(loweredText(OpKind::MatMul, in, {}).find("fma("), std::string::npos);
  }
}

// Column tiles sized from the register count: a GEMV row gets up to 8 vectors of accumulators,
// four rows up to 3 (16 registers) or 6 (32); vector counts without a divisor near the widest
// tile clamp the last tile, whose vectors past N are computed again but not stored.
TEST(MicroKernel, ColumnTilesFromRegisters) {
  struct Case {
    Shape a, b;
    int64_t registers;
  };
  for (const Case &c : {Case{{1, 33}, {33, 104}, 16},     // 13 vectors, C 7: one clamped vector
                        Case{{1, 20}, {20, 1000}, 32},    // 125 vectors, C 5 divides
                        Case{{4, 9}, {9, 104}, 32},       // C 5 of 13: two clamped
                        Case{{3, 2, 11}, {11, 88}, 32},   // 11 vectors, C 6; rows folded, tail row
                        Case{{2, 5, 7}, {2, 7, 56}, 16}}) { // batched, C 3 of 7, clamped
    SCOPED_TRACE(shapeToString(c.a) + " @ " + shapeToString(c.b) + " registers " +
                 std::to_string(c.registers));
    lower::LowerOptions lo;
    lo.vectorRegisters = c.registers;
    std::vector<Tensor> in = {randomTensor(DType::F32, c.a), randomTensor(DType::F32, c.b),
                              randomTensor(DType::F32, {c.b.back()})};
    checkOp(OpKind::MatMul, in, {}, Cmp::MaxRel, 1e-5, lo);
    in.pop_back();
    checkOp(OpKind::MatMul, in, {}, Cmp::MaxRel, 1e-5, lo);
  }
  lower::LowerOptions wide;
  wide.vectorRegisters = 32;
  std::vector<Tensor> gemv = {randomTensor(DType::F32, {1, 16}), randomTensor(DType::F32, {16, 64})};
  std::string text = loweredText(OpKind::MatMul, gemv, {}, wide);
  EXPECT_NE(text.find(": f32[1, 8, 8] local"), std::string::npos) << text; // 8 accumulators
}

// AVX-512 widths: 16-lane vectors where the shapes allow, 8 where they do not.
TEST(MicroKernel, SixteenLanes) {
  lower::LowerOptions lo;
  lo.vectorLanesF32 = 16;
  std::vector<Tensor> mm = {randomTensor(DType::F32, {5, 7}), randomTensor(DType::F32, {7, 48}),
                            randomTensor(DType::F32, {48})};
  checkOp(OpKind::MatMul, mm, {}, Cmp::MaxRel, 1e-5, lo);
  EXPECT_NE(loweredText(OpKind::MatMul, mm, {}, lo).find("ramp(0, 1, 16)"), std::string::npos);
  mm = {randomTensor(DType::F32, {3, 7}), randomTensor(DType::F32, {7, 24})}; // 24: 8 lanes
  checkOp(OpKind::MatMul, mm, {}, Cmp::MaxRel, 1e-5, lo);
  EXPECT_EQ(loweredText(OpKind::MatMul, mm, {}, lo).find("ramp(0, 1, 16)"), std::string::npos);

  AttrMap plain = conv({2, 2}, {3, 3, 3, 3}, {1, 1}, "");
  plain.erase("layout");
  std::vector<Tensor> stem = {randomTensor(DType::F32, {1, 3, 15, 15}),
                              randomTensor(DType::F32, {32, 3, 7, 7}), randomTensor(DType::F32, {32})};
  checkOp(OpKind::Conv, stem, plain, Cmp::MaxRel, 1e-5, lo);
  std::vector<Tensor> blocked = {randomTensor(DType::F32, {1, 1, 8, 9, 16}),
                                 randomTensor(DType::F32, {2, 1, 3, 3, 16, 16}),
                                 randomTensor(DType::F32, {32})};
  checkOp(OpKind::Conv, blocked, conv({1, 1}, {1, 1, 1, 1}, {1, 1}, "NCHW16c"), Cmp::MaxRel, 1e-5,
          lo);
}

} // namespace
