// The loop IR interpreter on hand-written kernels, parsed from text, against hand-computed values.
#include "strata/loop/Interpreter.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::loop;

namespace {

LoopFunction parse(const char *text) {
  auto f = parseFunction(text);
  if (!f) {
    ADD_FAILURE() << llvm::toString(f.takeError());
    return {};
  }
  llvm::Error err = verifyFunction(*f, {.checkBounds = true});
  EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  return std::move(*f);
}

std::string run(const LoopFunction &f, std::vector<Tensor> &args) {
  llvm::Error err = evaluate(f, args);
  return err ? llvm::toString(std::move(err)) : "";
}

TEST(LoopInterpreterTest, ElementwiseAddWithBroadcast) {
  // out[i, j] = a[i, j] + b[j]: b broadcast along rows; %n symbolic.
  LoopFunction f = parse(R"(func @add(%a: f32[2, %n] in, %b: f32[%n] in, %out: f32[2, %n] out, %n: i64) {
  for %i in [0, 2) parallel {
    for %j in [0, %n) serial {
      %out[%i, %j] = %a[%i, %j] + %b[%j]
    }
  }
})");
  std::vector<Tensor> args = {Tensor::fromVector<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                              Tensor::fromVector<float>(DType::F32, {3}, {10, 20, 30}),
                              Tensor(DType::F32, {2, 3}), Tensor::scalar(DType::I64, 3)};
  ASSERT_EQ(run(f, args), "");
  EXPECT_EQ(args[2].toDoubleVector(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(LoopInterpreterTest, RowSumReduction) {
  LoopFunction f = parse(R"(func @rowsum(%x: f32[2, 4] in, %y: f32[2] out) {
  for %i in [0, 2) serial {
    %y[%i] = 0.0
    for %k in [0, 4) serial {
      %y[%i] = %y[%i] + %x[%i, %k]
    }
  }
})");
  std::vector<Tensor> args = {
      Tensor::fromVector<float>(DType::F32, {2, 4}, {1, 2, 3, 4, -1, -2, -3, 10}),
      Tensor(DType::F32, {2})};
  ASSERT_EQ(run(f, args), "");
  EXPECT_EQ(args[1].toDoubleVector(), (std::vector<double>{10, 4}));
}

TEST(LoopInterpreterTest, MatmulWithLocalAccumulatorAndVectorLanes) {
  // C = A * B for 2x3 * 3x4, the j loop as 4-lane vectors accumulated in a local buffer.
  LoopFunction f = parse(R"(func @matmul(%A: f32[2, 3] in, %B: f32[3, 4] in, %C: f32[2, 4] out) {
  for %i in [0, 2) serial {
    allocate %acc: f32[4] local {
      %acc[ramp(0, 1, 4)] = broadcast(0.0, 4)
      for %k in [0, 3) serial {
        %acc[ramp(0, 1, 4)] = fma(broadcast(%A[%i, %k], 4), %B[%k, ramp(0, 1, 4)], %acc[ramp(0, 1, 4)])
      }
      %C[%i, ramp(0, 1, 4)] = %acc[ramp(0, 1, 4)]
    }
  }
})");
  std::vector<Tensor> args = {
      Tensor::fromVector<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
      Tensor::fromVector<float>(DType::F32, {3, 4}, {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1}),
      Tensor(DType::F32, {2, 4})};
  ASSERT_EQ(run(f, args), "");
  EXPECT_EQ(args[2].toDoubleVector(), (std::vector<double>{1, 2, 3, 6, 4, 5, 6, 15}));
}

TEST(LoopInterpreterTest, IntegerSemanticsAndStrides) {
  // Floor vs truncating division, wrap-around, a strided (transposed) view, and if/else.
  LoopFunction f = parse(R"(func @ints(%o: i32[2, 3] strides [1, 2] out, %p: i8[4] out) {
  for %i in [0, 2) serial {
    for %j in [0, 3) serial {
      if %i == 0 {
        %o[%i, %j] = floordiv(cast<i32>(%j) - 2i32, 2i32)
      } else {
        %o[%i, %j] = (cast<i32>(%j) - 2i32) / 2i32
      }
    }
  }
  for %k in [0, 4) unrolled {
    %p[%k] = cast<i8>(%k) * 100i8
  }
})");
  std::vector<Tensor> args = {Tensor(DType::I32, {2, 3}), Tensor(DType::I8, {4})};
  ASSERT_EQ(run(f, args), "");
  // Stored column-major: o[i, j] at j * 2 + i.
  EXPECT_EQ(args[0].toIntVector(), (std::vector<int64_t>{-1, -1, -1, 0, 0, 0}));
  EXPECT_EQ(args[1].toIntVector(), (std::vector<int64_t>{0, 100, -56, 44}));
}

TEST(LoopInterpreterTest, BitwiseShiftsAndFloatMod) {
  // Shifts are logical on the bit pattern; amounts >= the width (read unsigned) give 0.
  LoopFunction f = parse(R"(func @bits(%o: i8[6] out, %m: f64[2] out) {
  for %k in [0, 6) serial {
    %o[%k] = bitor(shr(-16i8, cast<i8>(%k) * 2i8), shl(bitand(cast<i8>(%k), 1i8), 7i8))
  }
  %m[0] = -7.5f64 % 2.0f64
  %m[1] = 7.5f64 % -2.0f64
})");
  std::vector<Tensor> args = {Tensor(DType::I8, {6}), Tensor(DType::F64, {2})};
  ASSERT_EQ(run(f, args), "");
  // 0xF0 >> 0, 2, 4, 6, 8, 10, with bit 7 set on odd k.
  EXPECT_EQ(args[0].toIntVector(), (std::vector<int64_t>{-16, -68, 15, -125, 0, -128}));
  EXPECT_EQ(args[1].getDouble(0), -1.5);
  EXPECT_EQ(args[1].getDouble(1), 1.5);
}

TEST(LoopInterpreterTest, Errors) {
  auto f = parseFunction(R"(func @oob(%o: f32[4] out, %d: i64) {
  for %i in [0, 5) serial {
    %o[%i] = cast<f32>(10 / (4 - %i + %d))
  }
})");
  ASSERT_TRUE(static_cast<bool>(f));
  std::vector<Tensor> args = {Tensor(DType::F32, {4}), Tensor::scalar(DType::I64, 1)};
  EXPECT_EQ(run(*f, args), "@oob: access to %o out of bounds: index 4 of dimension 0 (%i)");
  args[1] = Tensor::scalar(DType::I64, -1); // 4 - 3 - 1 == 0
  EXPECT_EQ(run(*f, args), "@oob: integer division by zero or overflow in 10 / (4 - %i + %d)");
  args[0] = Tensor(DType::F32, {3});
  EXPECT_EQ(run(*f, args), "@oob: argument %o must be a f32 tensor of shape [4], got f32 [3]");
  args.pop_back();
  EXPECT_EQ(run(*f, args), "@oob: @oob takes 2 arguments, got 1");
}

} // namespace
