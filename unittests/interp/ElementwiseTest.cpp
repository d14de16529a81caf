// Elementwise, select, cast and constant kernels against hand-computed expectations.
#include "KernelTestHelpers.h"

#include <limits>

using namespace strata;
using namespace strata::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(Elementwise, AddSameShapeAndBroadcast) {
  OpRunner r;
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(doubles(r.run(OpKind::Add, {a, a})), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  // Trailing-dim broadcast, and a scalar on the left.
  Tensor row = f32({3}, {10, 20, 30});
  Tensor sum = r.run(OpKind::Add, {a, row});
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  EXPECT_EQ(doubles(sum), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(doubles(r.run(OpKind::Sub, {f32({}, {1}), a})),
            (std::vector<double>{0, -1, -2, -3, -4, -5}));
}

TEST(Elementwise, BroadcastBothOperands) {
  OpRunner r;
  Tensor col = f32({2, 1}, {1, 2});
  Tensor row = f32({1, 3}, {10, 20, 30});
  Tensor prod = r.run(OpKind::Mul, {col, row});
  EXPECT_EQ(prod.shape(), (Shape{2, 3}));
  EXPECT_EQ(doubles(prod), (std::vector<double>{10, 20, 30, 20, 40, 60}));
  // A channel bias [C,1,1] over NCHW, the resnet pattern.
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor bias = f32({2, 1, 1}, {100, 200});
  EXPECT_EQ(doubles(r.run(OpKind::Add, {x, bias})),
            (std::vector<double>{101, 102, 103, 104, 205, 206, 207, 208}));
}

TEST(Elementwise, BroadcastMismatchNamesOpAndNode) {
  OpRunner r;
  r.setLocation("Add_1");
  std::string err = r.error(OpKind::Add, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(err, "interp: op 'add' (node \"Add_1\"): cannot broadcast shapes [2x3] and [4]");
}

TEST(Elementwise, DTypeMismatchIsAnError) {
  OpRunner r;
  std::string err = r.error(OpKind::Add, {f32({1}, {1}), i32({1}, {1})});
  EXPECT_NE(err.find("operand dtypes differ (f32 vs i32)"), std::string::npos) << err;
}

TEST(Elementwise, EmptyTensors) {
  OpRunner r;
  Tensor empty = f32({0, 3}, {});
  Tensor sum = r.run(OpKind::Add, {empty, f32({3}, {1, 2, 3})});
  EXPECT_EQ(sum.shape(), (Shape{0, 3}));
  EXPECT_EQ(r.run(OpKind::Exp, {empty}).shape(), (Shape{0, 3}));
  EXPECT_EQ(r.run(OpKind::Select, {boolean({0, 1}, {}), empty, f32({}, {0})}).shape(),
            (Shape{0, 3}));
  EXPECT_EQ(r.run(OpKind::Cast, {empty}, {{"to", DType::I8}}).shape(), (Shape{0, 3}));
}

TEST(Elementwise, LargeScalarBroadcastFastPath) {
  OpRunner r;
  std::vector<double> v(1000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i);
  Tensor out = r.run(OpKind::Mul, {f32({10, 100}, v), f32({}, {2})});
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(out.getDouble(static_cast<int64_t>(i)), 2.0 * static_cast<double>(i));
}

TEST(Elementwise, IntegerArithmeticWraps) {
  OpRunner r;
  Tensor a = tensorOf<int>(DType::I8, {2}, {127, -128});
  Tensor b = tensorOf<int>(DType::I8, {2}, {1, 1});
  EXPECT_EQ(ints(r.run(OpKind::Add, {a, b})), (std::vector<int64_t>{-128, -127}));
  EXPECT_EQ(ints(r.run(OpKind::Sub, {b, a})), (std::vector<int64_t>{-126, -127}));
  Tensor u = tensorOf<int>(DType::U16, {1}, {65535});
  EXPECT_EQ(ints(r.run(OpKind::Mul, {u, u})), (std::vector<int64_t>{1}));
  EXPECT_EQ(ints(r.run(OpKind::Neg, {a})), (std::vector<int64_t>{-127, -128}));
  EXPECT_EQ(ints(r.run(OpKind::Abs, {a})), (std::vector<int64_t>{127, -128}));
}

TEST(Elementwise, IntegerDivisionTruncatesTowardZero) {
  OpRunner r;
  Tensor a = i32({5}, {7, -7, 7, -7, 5});
  Tensor b = i32({5}, {2, 2, -2, -2, 0});
  EXPECT_EQ(ints(r.run(OpKind::Div, {a, b})), (std::vector<int64_t>{3, -3, -3, 3, 0}));
  int64_t minI32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(ints(r.run(OpKind::Div, {i32({1}, {minI32}), i32({1}, {-1})})),
            (std::vector<int64_t>{minI32}));
  EXPECT_EQ(ints(r.run(OpKind::Div, {i64({2}, {-9, 9}), i64({}, {4})})),
            (std::vector<int64_t>{-2, 2}));
}

TEST(Elementwise, ModSignRules) {
  OpRunner r;
  Tensor a = i32({5}, {7, -7, 7, -7, 3});
  Tensor b = i32({5}, {3, 3, -3, -3, 0});
  // fmod=0: sign of the divisor (Python %); by zero yields 0.
  EXPECT_EQ(ints(r.run(OpKind::Mod, {a, b}, {{"fmod", 0}})),
            (std::vector<int64_t>{1, 2, -2, -1, 0}));
  // fmod=1: sign of the dividend (C fmod).
  EXPECT_EQ(ints(r.run(OpKind::Mod, {a, b}, {{"fmod", 1}})),
            (std::vector<int64_t>{1, -1, 1, -1, 0}));
  Tensor fa = f32({3}, {5.5, -5.5, 6});
  Tensor fb = f32({3}, {-2, 2, 3});
  EXPECT_EQ(doubles(r.run(OpKind::Mod, {fa, fb}, {{"fmod", 1}})),
            (std::vector<double>{1.5, -1.5, 0}));
  EXPECT_EQ(doubles(r.run(OpKind::Mod, {fa, fb}, {{"fmod", 0}})),
            (std::vector<double>{-0.5, 0.5, 0}));
  Tensor ua = tensorOf<int>(DType::U8, {2}, {250, 7});
  Tensor ub = tensorOf<int>(DType::U8, {2}, {7, 0});
  EXPECT_EQ(ints(r.run(OpKind::Mod, {ua, ub}, {{"fmod", 0}})), (std::vector<int64_t>{5, 0}));
}

TEST(Elementwise, Pow) {
  OpRunner r;
  EXPECT_EQ(ints(r.run(OpKind::Pow, {i64({5}, {2, -2, 2, -1, 3}), i64({5}, {10, 3, -1, -3, 0})})),
            (std::vector<int64_t>{1024, -8, 0, -1, 1}));
  // The exponent is converted to the base's dtype.
  EXPECT_EQ(doubles(r.run(OpKind::Pow, {f32({2}, {2, 4}), i64({2}, {3, -1})})),
            (std::vector<double>{8, 0.25}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Pow, {f64({2}, {9, -8}), f64({}, {0.5})})),
                         {3, kNaN}));
}

TEST(Elementwise, MaxMinPropagateNaN) {
  OpRunner r;
  Tensor a = f32({4}, {1, kNaN, 3, -kInf});
  Tensor b = f32({4}, {2, 2, kNaN, 0});
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Max, {a, b})), {2, kNaN, kNaN, 0}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Min, {a, b})), {1, kNaN, kNaN, -kInf}));
  EXPECT_EQ(ints(r.run(OpKind::Max, {i32({2}, {-5, 5}), i32({}, {0})})),
            (std::vector<int64_t>{0, 5}));
}

TEST(Elementwise, HalfPrecisionComputesInF32AndRounds) {
  OpRunner r;
  Tensor sum = r.run(OpKind::Add, {f16({3}, {1.5, 1, 2048}), f16({3}, {0.25, 1.0 / 2048, 1})});
  EXPECT_EQ(sum.dtype(), DType::F16);
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 and rounds to even (1); 2049 does the same.
  EXPECT_EQ(doubles(sum), (std::vector<double>{1.75, 1, 2048}));
  Tensor bf = tensorOf<double>(DType::BF16, {2}, {1, 3});
  Tensor prod = r.run(OpKind::Mul, {bf, bf});
  EXPECT_EQ(prod.dtype(), DType::BF16);
  EXPECT_EQ(doubles(prod), (std::vector<double>{1, 9}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Sqrt, {f16({2}, {4, -1})})), {2, kNaN}));
}

TEST(Elementwise, ComparisonsProduceBool) {
  OpRunner r;
  Tensor a = f32({4}, {1, 2, 3, kNaN});
  Tensor b = f32({4}, {2, 2, 2, kNaN});
  Tensor eq = r.run(OpKind::Eq, {a, b});
  EXPECT_EQ(eq.dtype(), DType::Bool);
  EXPECT_EQ(ints(eq), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(ints(r.run(OpKind::Lt, {a, b})), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints(r.run(OpKind::Le, {a, b})), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(ints(r.run(OpKind::Lt, {i64({2}, {-1, 5}), i64({}, {0})})),
            (std::vector<int64_t>{1, 0}));
}

TEST(Elementwise, LogicalAndBitwise) {
  OpRunner r;
  Tensor p = boolean({4}, {0, 0, 1, 1});
  Tensor q = boolean({4}, {0, 1, 0, 1});
  EXPECT_EQ(ints(r.run(OpKind::And, {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints(r.run(OpKind::Or, {p, q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(r.run(OpKind::Xor, {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(r.run(OpKind::Not, {p})), (std::vector<int64_t>{1, 1, 0, 0}));
  Tensor x = i32({2}, {12, -1});
  Tensor y = i32({2}, {10, 5});
  EXPECT_EQ(ints(r.run(OpKind::And, {x, y})), (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(ints(r.run(OpKind::Or, {x, y})), (std::vector<int64_t>{14, -1}));
  EXPECT_EQ(ints(r.run(OpKind::Xor, {x, y})), (std::vector<int64_t>{6, -6}));
  EXPECT_EQ(ints(r.run(OpKind::Not, {x})), (std::vector<int64_t>{-13, 0}));
  EXPECT_NE(r.error(OpKind::And, {f32({1}, {1}), f32({1}, {1})}).find("unsupported dtype f32"),
            std::string::npos);
}

TEST(Elementwise, BitShift) {
  OpRunner r;
  Tensor x = tensorOf<int>(DType::U8, {4}, {1, 255, 16, 3});
  Tensor s = tensorOf<int>(DType::U8, {4}, {3, 1, 2, 9});
  EXPECT_EQ(ints(r.run(OpKind::BitShift, {x, s}, {{"direction", "left"}})),
            (std::vector<int64_t>{8, 254, 64, 0}));
  EXPECT_EQ(ints(r.run(OpKind::BitShift, {x, s}, {{"direction", "right"}})),
            (std::vector<int64_t>{0, 127, 4, 0}));
  Tensor big = tensorOf<uint64_t>(DType::U64, {1}, {1});
  EXPECT_EQ(r.run(OpKind::BitShift, {big, tensorOf<uint64_t>(DType::U64, {1}, {63})},
                  {{"direction", "left"}})
                .data<uint64_t>()[0],
            uint64_t{1} << 63);
}

TEST(Elementwise, UnaryMath) {
  OpRunner r;
  EXPECT_EQ(doubles(r.run(OpKind::Neg, {f32({2}, {1, -2})})), (std::vector<double>{-1, 2}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Sign, {f32({4}, {-3, 0, 2, kNaN})})),
                         {-1, 0, 1, kNaN}));
  EXPECT_EQ(ints(r.run(OpKind::Sign, {i32({3}, {-7, 0, 9})})), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Exp, {f64({2}, {0, 1})})), {1, std::exp(1.0)}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Log, {f64({3}, {1, 0, -1})})), {0, -kInf, kNaN}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Sigmoid, {f64({3}, {0, 1000, -1000})})),
                         {0.5, 1, 0}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Tanh, {f32({2}, {0, 20})})), {0, 1}));
  EXPECT_TRUE(sameValues(doubles(r.run(OpKind::Erf, {f64({2}, {0, 1})})), {0, std::erf(1.0)}));
  EXPECT_EQ(doubles(r.run(OpKind::Floor, {f32({2}, {1.5, -1.5})})), (std::vector<double>{1, -2}));
  EXPECT_EQ(doubles(r.run(OpKind::Ceil, {f32({2}, {1.5, -1.5})})), (std::vector<double>{2, -1}));
  std::string err = r.error(OpKind::Exp, {i32({1}, {1})});
  EXPECT_EQ(err, "interp: op 'exp': exp: unsupported dtype i32");
}

TEST(Elementwise, RoundHalvesToEven) {
  OpRunner r;
  EXPECT_EQ(doubles(r.run(OpKind::Round, {f32({7}, {0.5, 1.5, 2.5, -0.5, -2.5, 2.4, -2.6})})),
            (std::vector<double>{0, 2, 2, -0.0, -2, 2, -3}));
}

TEST(Elementwise, IsNaNAndIsInfFlags) {
  OpRunner r;
  Tensor x = f32({4}, {1, kNaN, kInf, -kInf});
  EXPECT_EQ(ints(r.run(OpKind::IsNaN, {x})), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(ints(r.run(OpKind::IsInf, {x}, {{"detect_negative", 1}, {"detect_positive", 1}})),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(ints(r.run(OpKind::IsInf, {x}, {{"detect_negative", 0}, {"detect_positive", 1}})),
            (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(ints(r.run(OpKind::IsInf, {x}, {{"detect_negative", 1}, {"detect_positive", 0}})),
            (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST(Elementwise, SelectBroadcastsAllThreeOperands) {
  OpRunner r;
  Tensor cond = boolean({2, 1}, {1, 0});
  Tensor a = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = i64({}, {-1});
  Tensor out = r.run(OpKind::Select, {cond, a, b});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(ints(out), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  Tensor c2 = boolean({3}, {1, 0, 1});
  EXPECT_EQ(doubles(r.run(OpKind::Select, {c2, f16({}, {0.5}), f16({2, 1}, {7, 8})})),
            (std::vector<double>{0.5, 7, 0.5, 0.5, 8, 0.5}));
}

TEST(Cast, FloatToIntTruncatesAndSaturates) {
  OpRunner r;
  Tensor x = f32({6}, {1.7, -1.7, kNaN, 1e20, -1e20, kInf});
  const int64_t maxI32 = std::numeric_limits<int32_t>::max();
  const int64_t minI32 = std::numeric_limits<int32_t>::min();
  Tensor out = r.run(OpKind::Cast, {x}, {{"to", DType::I32}});
  EXPECT_EQ(out.dtype(), DType::I32);
  EXPECT_EQ(ints(out), (std::vector<int64_t>{1, -1, 0, maxI32, minI32, maxI32}));
  EXPECT_EQ(ints(castTensor(f64({2}, {300.9, -5}), DType::U8)), (std::vector<int64_t>{255, 0}));
  Tensor big = castTensor(f64({2}, {1e30, -1e30}), DType::I64);
  EXPECT_EQ(big.data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.data<int64_t>()[1], std::numeric_limits<int64_t>::min());
}

TEST(Cast, BoolAndIntegerConversions) {
  EXPECT_EQ(ints(castTensor(f32({4}, {0, 0.5, kNaN, -0.0}), DType::Bool)),
            (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(doubles(castTensor(boolean({2}, {1, 0}), DType::F32)), (std::vector<double>{1, 0}));
  // Integer narrowing wraps like numpy's astype.
  EXPECT_EQ(ints(castTensor(i32({3}, {300, -1, 127}), DType::I8)),
            (std::vector<int64_t>{44, -1, 127}));
  EXPECT_EQ(ints(castTensor(i32({1}, {-1}), DType::U16)), (std::vector<int64_t>{65535}));
  EXPECT_EQ(doubles(castTensor(i64({1}, {16777217}), DType::F32)),
            (std::vector<double>{16777216}));
}

TEST(Cast, HalfPrecisionRoundsToNearestEven) {
  Tensor x = f32({5}, {1 + 1.0 / 2048, 1 + 3.0 / 2048, 65504, 65520, 1e-8});
  Tensor h = castTensor(x, DType::F16);
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(doubles(h), (std::vector<double>{1, 1 + 4.0 / 2048, 65504, kInf, 0}));
  Tensor b = castTensor(f32({2}, {1 + 1.0 / 256, 1 + 3.0 / 256}), DType::BF16);
  EXPECT_EQ(doubles(b), (std::vector<double>{1, 1 + 4.0 / 256}));
  EXPECT_EQ(ints(castTensor(f16({3}, {2.5, -2.5, 100}), DType::I32)),
            (std::vector<int64_t>{2, -2, 100}));
  EXPECT_TRUE(castTensor(x, DType::F32).identical(x));
}

TEST(Constant, ReturnsAttributeAndRejectsElidedData) {
  OpRunner r;
  Tensor value = i64({2}, {4, 5});
  Tensor out = r.run(OpKind::Constant, {}, {{"value", value}});
  EXPECT_TRUE(out.identical(value));
  std::string err = r.error(OpKind::Constant, {}, {{"value", Tensor()}});
  EXPECT_EQ(err, "interp: op 'constant': constant data elided");
}

} // namespace
