// Data-movement kernels (reshape ... scatter_nd) against hand-computed expectations.
#include "KernelTestHelpers.h"

#include "strata/graph/NormalForm.h"

#include <limits>

using namespace strata;
using namespace strata::testing;

namespace {

using I = std::vector<int64_t>;
const int64_t kMax = std::numeric_limits<int64_t>::max();
const int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor iota(Shape shape) {
  Tensor t(DType::F32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, static_cast<double>(i));
  return t;
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  OpRunner r;
  Tensor x = iota({2, 3, 4});
  Tensor y = r.run(OpKind::Reshape, {x}, {{"shape", I{0, -1}}});
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  EXPECT_EQ(doubles(y), doubles(x));
  EXPECT_EQ(r.run(OpKind::Reshape, {x}, {{"shape", I{-1, 0, 2}}}).shape(), (Shape{4, 3, 2}));
  // allowzero: a 0 is a real zero-sized dim.
  Tensor empty = iota({0, 4});
  EXPECT_EQ(r.run(OpKind::Reshape, {empty}, {{"shape", I{4, 0}}, {"allowzero", 1}}).shape(),
            (Shape{4, 0}));
  EXPECT_EQ(r.run(OpKind::Reshape, {empty}, {{"shape", I{0, 2, 2}}}).shape(), (Shape{0, 2, 2}));
  std::string err = r.error(OpKind::Reshape, {x}, {{"shape", I{5, -1}}});
  EXPECT_NE(err.find("cannot reshape [2x3x4]"), std::string::npos) << err;
  EXPECT_NE(r.error(OpKind::Reshape, {x}, {{"shape", I{-1, -1}}}).find("more than one -1"),
            std::string::npos);
}

TEST(Transpose, PermutesDims) {
  OpRunner r;
  Tensor x = iota({2, 3});
  Tensor y = r.run(OpKind::Transpose, {x}, {{"perm", I{1, 0}}});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(doubles(y), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor z = r.run(OpKind::Transpose, {iota({2, 3, 4})}, {{"perm", I{2, 0, 1}}});
  EXPECT_EQ(z.shape(), (Shape{4, 2, 3}));
  // z[k][i][j] = x[i][j][k] = 12i + 4j + k
  EXPECT_EQ(z.getDouble(1 * 6 + 1 * 3 + 2), 12 + 8 + 1);
  EXPECT_EQ(r.run(OpKind::Transpose, {iota({0, 3})}, {{"perm", I{1, 0}}}).shape(), (Shape{3, 0}));
}

TEST(Expand, BroadcastsToShape) {
  OpRunner r;
  Tensor y = r.run(OpKind::Expand, {iota({3, 1})}, {{"shape", I{2, 1, 2}}});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(doubles(y), (std::vector<double>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  // The target may be smaller than the input along a dim (1 there keeps the input's size).
  EXPECT_EQ(r.run(OpKind::Expand, {iota({2, 3})}, {{"shape", I{1, 1}}}).shape(), (Shape{2, 3}));
  EXPECT_NE(r.error(OpKind::Expand, {iota({2, 3})}, {{"shape", I{4, 3}}}).find("broadcast"),
            std::string::npos);
}

// ONNX Slice's lists as a slice of `x` in normal form (one entry per dim).
AttrMap sliceAttrs(const Tensor &x, I starts, I ends, I axes, I steps) {
  auto attrs = sliceAttributes(x.rank(), starts, ends, axes, steps);
  EXPECT_TRUE(static_cast<bool>(attrs));
  return attrs ? *attrs : AttrMap{};
}

TEST(Slice, PositiveStepsAndClamping) {
  OpRunner r;
  Tensor x = iota({10});
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {1}, {7}, {0}, {2}))),
            (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {-3}, {kMax}, {0}, {1}))),
            (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(r.run(OpKind::Slice, {x}, sliceAttrs(x, {8}, {2}, {0}, {1})).shape(), (Shape{0}));
  Tensor m = iota({3, 4});
  Tensor y = r.run(OpKind::Slice, {m}, sliceAttrs(m, {1, 0}, {kMax, 2}, {-1, 0}, {1, 1}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(doubles(y), (std::vector<double>{1, 2, 3, 5, 6, 7}));
}

TEST(Slice, NegativeSteps) {
  OpRunner r;
  Tensor x = iota({5});
  // Reverse everything: start clamps to dim-1, INT64_MIN end clamps to -1.
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {-1}, {kMin}, {0}, {-1}))),
            (std::vector<double>{4, 3, 2, 1, 0}));
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {kMax}, {0}, {0}, {-2}))),
            (std::vector<double>{4, 2}));
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {3}, {-5}, {0}, {-1}))),
            (std::vector<double>{3, 2, 1}));
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {x}, sliceAttrs(x, {1}, {3}, {0}, {-1}))).size(), 0u);
  Tensor m = iota({2, 3});
  EXPECT_EQ(doubles(r.run(OpKind::Slice, {m},
                          sliceAttrs(m, {kMax, kMax}, {kMin, kMin}, {0, 1}, {-1, -2}))),
            (std::vector<double>{5, 3, 2, 0}));
  EXPECT_NE(r.error(OpKind::Slice, {x}, sliceAttrs(x, {0}, {1}, {0}, {0})).find("step is 0"),
            std::string::npos);
}

TEST(Concat, JoinsAlongAxis) {
  OpRunner r;
  Tensor a = iota({2, 2});
  Tensor b = f32({2, 1}, {10, 11});
  Tensor y = r.run(OpKind::Concat, {a, b}, {{"axis", -1}});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(doubles(y), (std::vector<double>{0, 1, 10, 2, 3, 11}));
  Tensor z = r.run(OpKind::Concat, {a, iota({0, 2}), a}, {{"axis", 0}});
  EXPECT_EQ(z.shape(), (Shape{4, 2}));
  EXPECT_EQ(doubles(z), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_NE(r.error(OpKind::Concat, {a, iota({3, 3})}, {{"axis", 0}}).find("incompatible"),
            std::string::npos);
}

AttrMap padAttrs(I pads, const char *mode) { return {{"pads", pads}, {"mode", mode}}; }

TEST(Pad, ConstantMode) {
  OpRunner r;
  Tensor x = iota({2, 2});
  Tensor y = r.run(OpKind::Pad, {x, f32({}, {-1})}, padAttrs({1, 0, 0, 1}, "constant"));
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(doubles(y), (std::vector<double>{-1, -1, -1, 0, 1, -1, 2, 3, -1}));
  // Integer dtype, empty input padded to a non-empty output.
  Tensor e = r.run(OpKind::Pad, {i32({0}, {}), i32({}, {7})}, padAttrs({1, 2}, "constant"));
  EXPECT_EQ(ints(e), (std::vector<int64_t>{7, 7, 7}));
}

TEST(Pad, ReflectEdgeWrap) {
  OpRunner r;
  Tensor x = f32({4}, {1, 2, 3, 4});
  Tensor zero = f32({}, {0});
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({2, 3}, "reflect"))),
            (std::vector<double>{3, 2, 1, 2, 3, 4, 3, 2, 1}));
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({2, 1}, "edge"))),
            (std::vector<double>{1, 1, 1, 2, 3, 4, 4}));
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({2, 5}, "wrap"))),
            (std::vector<double>{3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1}));
  // 2-d reflect.
  Tensor m = iota({2, 3});
  Tensor y = r.run(OpKind::Pad, {m, zero}, padAttrs({1, 1, 0, 0}, "reflect"));
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(doubles(y), (std::vector<double>{4, 3, 4, 5, 1, 0, 1, 2, 4, 3, 4, 5}));
  EXPECT_NE(r.error(OpKind::Pad, {f32({0}, {}), zero}, padAttrs({1, 1}, "edge")).find("no elements"),
            std::string::npos);
}

TEST(Pad, NegativePadsCrop) {
  OpRunner r;
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  Tensor zero = f32({}, {0});
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({-1, -2}, "constant"))),
            (std::vector<double>{2, 3}));
  // Crop first, then pad the kept range [2, 3, 4, 5].
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({-1, 2}, "edge"))),
            (std::vector<double>{2, 3, 4, 5, 5, 5}));
  EXPECT_EQ(doubles(r.run(OpKind::Pad, {x, zero}, padAttrs({-1, 1}, "wrap"))),
            (std::vector<double>{2, 3, 4, 5, 2}));
  EXPECT_NE(r.error(OpKind::Pad, {x, zero}, padAttrs({-3, -3}, "constant")).find("crop more"),
            std::string::npos);
}

TEST(Gather, NegativeIndicesWrapAndRangeIsChecked) {
  OpRunner r;
  Tensor data = iota({4, 2});
  Tensor y = r.run(OpKind::Gather, {data, i64({3}, {3, -1, 0})}, {{"axis", 0}});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(doubles(y), (std::vector<double>{6, 7, 6, 7, 0, 1}));
  Tensor z = r.run(OpKind::Gather, {data, i32({2, 2}, {1, 0, 0, 1})}, {{"axis", 1}});
  EXPECT_EQ(z.shape(), (Shape{4, 2, 2}));
  EXPECT_EQ(doubles(z).at(0), 1);
  // Scalar index removes the axis.
  EXPECT_EQ(r.run(OpKind::Gather, {data, i64({}, {-2})}, {{"axis", 0}}).shape(), (Shape{2}));
  r.setLocation("Gather_7");
  EXPECT_EQ(r.error(OpKind::Gather, {data, i64({1}, {9})}, {{"axis", 0}}),
            "interp: op 'gather' (node \"Gather_7\"): indices into axis 0: index 9 is out of range "
            "[-4, 4)");
}

TEST(GatherElements, PicksAlongAxis) {
  OpRunner r;
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = r.run(OpKind::GatherElements, {data, i64({2, 2}, {0, 0, 1, -2})}, {{"axis", 1}});
  EXPECT_EQ(doubles(y), (std::vector<double>{1, 1, 4, 3}));
  Tensor z = r.run(OpKind::GatherElements, {data, i64({1, 2}, {1, 0})}, {{"axis", 0}});
  EXPECT_EQ(doubles(z), (std::vector<double>{3, 2}));
  EXPECT_NE(r.error(OpKind::GatherElements, {data, i64({1, 1}, {2})}, {{"axis", 0}})
                .find("index 2 is out of range [-2, 2)"),
            std::string::npos);
}

TEST(GatherND, TuplesAndBatchDims) {
  OpRunner r;
  Tensor data = iota({2, 2});
  EXPECT_EQ(doubles(r.run(OpKind::GatherND, {data, i64({2, 2}, {0, 0, 1, 1})},
                          {{"batch_dims", 0}})),
            (std::vector<double>{0, 3}));
  Tensor rows = r.run(OpKind::GatherND, {data, i64({2, 1}, {1, -2})}, {{"batch_dims", 0}});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(doubles(rows), (std::vector<double>{2, 3, 0, 1}));
  // batch_dims=1: data [2,2,2], indices [2,1] picks data[b][idx].
  Tensor cube = iota({2, 2, 2});
  Tensor y = r.run(OpKind::GatherND, {cube, i64({2, 1}, {1, 0})}, {{"batch_dims", 1}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(doubles(y), (std::vector<double>{2, 3, 4, 5}));
}

AttrMap scatterAttrs(int64_t axis, const char *reduction) {
  return {{"axis", axis}, {"reduction", reduction}};
}

TEST(ScatterElements, Reductions) {
  OpRunner r;
  Tensor data = f32({1, 4}, {1, 2, 3, 4});
  Tensor idx = i64({1, 3}, {1, 3, 1});
  Tensor upd = f32({1, 3}, {10, 20, 30});
  EXPECT_EQ(doubles(r.run(OpKind::ScatterElements, {data, idx, upd}, scatterAttrs(1, "none"))),
            (std::vector<double>{1, 30, 3, 20}));
  EXPECT_EQ(doubles(r.run(OpKind::ScatterElements, {data, idx, upd}, scatterAttrs(1, "add"))),
            (std::vector<double>{1, 42, 3, 24}));
  EXPECT_EQ(doubles(r.run(OpKind::ScatterElements, {data, idx, upd}, scatterAttrs(1, "mul"))),
            (std::vector<double>{1, 600, 3, 80}));
  Tensor small = f32({1, 3}, {0, 5, 1});
  EXPECT_EQ(doubles(r.run(OpKind::ScatterElements, {data, idx, small}, scatterAttrs(1, "max"))),
            (std::vector<double>{1, 2, 3, 5}));
  EXPECT_EQ(doubles(r.run(OpKind::ScatterElements, {data, idx, small}, scatterAttrs(1, "min"))),
            (std::vector<double>{1, 0, 3, 4}));
  // Axis 0 with negative indices, integer dtype.
  Tensor m = i32({2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(ints(r.run(OpKind::ScatterElements, {m, i64({1, 2}, {-1, 0}), i32({1, 2}, {5, 6})},
                       scatterAttrs(0, "add"))),
            (std::vector<int64_t>{0, 6, 5, 0}));
}

TEST(ScatterND, SlicesAndReductions) {
  OpRunner r;
  Tensor data = iota({4});
  Tensor idx = i64({2, 1}, {1, 1});
  Tensor upd = f32({2}, {10, 5});
  EXPECT_EQ(doubles(r.run(OpKind::ScatterND, {data, idx, upd}, {{"reduction", "add"}})),
            (std::vector<double>{0, 16, 2, 3}));
  EXPECT_EQ(doubles(r.run(OpKind::ScatterND, {data, idx, upd}, {{"reduction", "max"}})),
            (std::vector<double>{0, 10, 2, 3}));
  // Whole-row updates: data [2,3], indices [[1]], updates [1,3].
  Tensor m = iota({2, 3});
  Tensor y = r.run(OpKind::ScatterND, {m, i64({1, 1}, {-1}), f32({1, 3}, {7, 8, 9})},
                   {{"reduction", "none"}});
  EXPECT_EQ(doubles(y), (std::vector<double>{0, 1, 2, 7, 8, 9}));
  EXPECT_NE(r.error(OpKind::ScatterND, {m, i64({1, 1}, {1}), f32({2}, {7, 8})},
                    {{"reduction", "none"}})
                .find("updates shape"),
            std::string::npos);
}

} // namespace
