// Differential test harness for lowering: build one graph op, evaluate it with the graph
// interpreter, lower it, run the loop function with the loop interpreter on the same tensors and
// compare the results.
#pragma once
#include "strata/graph/Builder.h"
#include "strata/interp/Interpreter.h"
#include "strata/loop/Interpreter.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Verifier.h"
#include "strata/lower/Lower.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace strata::lowertest {

// How results are compared. Exact: bitwise (any NaN matches any NaN). Ulps: each element within
// `tol` relative to itself (transcendentals: libm float vs double-rounded). MaxRel: within `tol`
// relative to the largest |reference| (different summation order).
enum class Cmp { Exact, Ulps, MaxRel };

inline std::mt19937 &rng() {
  static std::mt19937 g(1234);
  return g;
}

// Random values: floats in [-4, 4) with a share of special values when `specials`; integers
// small (with the type's extremes when `specials`); bools half and half.
inline Tensor randomTensor(DType t, Shape shape, bool specials = false) {
  Tensor r(t, shape);
  std::uniform_real_distribution<double> f(-4, 4);
  std::uniform_int_distribution<int> i(isSigned(t) ? -20 : 0, 20), pick(0, 9);
  for (int64_t e = 0; e < r.numElements(); ++e) {
    if (t == DType::Bool) {
      r.setInt(e, pick(rng()) < 5);
    } else if (isFloat(t)) {
      double v = f(rng());
      if (specials) {
        static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.5, 1.5, -2.5, 1, -1};
        if (pick(rng()) < 3)
          v = sp[pick(rng())];
      }
      r.setDouble(e, v);
    } else {
      int64_t v = i(rng());
      if (specials && pick(rng()) < 3) {
        unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
        int64_t mn = isSigned(t) ? (bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1))) : 0;
        const int64_t sp[] = {0, -1, 1, mn, mn + 1, 0, 2, -2, 7, -7};
        v = sp[pick(rng())];
        if (!isSigned(t) && v < 0)
          v = 3;
      }
      r.setInt(e, v);
    }
  }
  return r;
}

inline bool sameElement(const Tensor &a, const Tensor &b, int64_t e, Cmp cmp, double tol, double scale) {
  if (isFloat(a.dtype())) {
    double x = a.getDouble(e), y = b.getDouble(e);
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) && std::isnan(y);
    if (cmp == Cmp::Exact)
      return x == y && std::signbit(x) == std::signbit(y);
    if (x == y)
      return true;
    double bound = cmp == Cmp::Ulps ? std::max(std::fabs(x), std::fabs(y)) : scale;
    return std::fabs(x - y) <= tol * bound;
  }
  size_t sz = dtypeSize(a.dtype());
  return std::memcmp(static_cast<const char *>(a.rawData()) + e * sz,
                     static_cast<const char *>(b.rawData()) + e * sz, sz) == 0;
}

// Runs `op` through both interpreters on `inputs` and compares every result.
inline void checkOpOn(const Op &opRef, const std::vector<Tensor> &inputs, Cmp cmp = Cmp::Exact,
                      double tol = 0, const lower::LowerOptions &lo = {}) {
  const Op *op = &opRef;
  auto ref = evaluateOp(*op, inputs);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  auto fn = lower::lowerOp(*op, lo);
  ASSERT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
  llvm::Error verr = loop::verifyFunction(*fn);
  ASSERT_FALSE(static_cast<bool>(verr)) << llvm::toString(std::move(verr)) << "\n"
                                        << loop::printFunction(*fn);
  std::vector<Tensor> args = inputs;
  for (unsigned i = 0; i < op->numResults(); ++i)
    args.push_back(Tensor(op->result(i)->type().dtype, op->result(i)->type().staticShape()));
  llvm::Error err = loop::evaluate(*fn, args);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err)) << "\n"
                                       << loop::printFunction(*fn);
  for (unsigned i = 0; i < op->numResults(); ++i) {
    const Tensor &want = (*ref)[i], &got = args[inputs.size() + i];
    ASSERT_EQ(want.dtype(), got.dtype());
    ASSERT_EQ(want.shape(), got.shape());
    double scale = 0;
    for (int64_t e = 0; isFloat(want.dtype()) && e < want.numElements(); ++e)
      if (std::isfinite(want.getDouble(e)))
        scale = std::max(scale, std::fabs(want.getDouble(e)));
    int bad = 0;
    for (int64_t e = 0; e < want.numElements() && bad < 5; ++e)
      if (!sameElement(want, got, e, cmp, tol, scale)) {
        ++bad;
        ADD_FAILURE() << op->opName() << " result " << i << " element " << e << ": interpreter "
                      << want.getDouble(e) << ", loop " << got.getDouble(e);
      }
  }
}

// Builds `kind` over graph inputs typed like `inputs`, runs both interpreters and compares.
inline void checkOp(OpKind kind, const std::vector<Tensor> &inputs, AttrMap attrs = {},
                    Cmp cmp = Cmp::Exact, double tol = 0, const lower::LowerOptions &lo = {}) {
  Graph g;
  std::vector<Value *> vs;
  for (const Tensor &t : inputs)
    vs.push_back(g.addInput(TensorType::fromShape(t.dtype(), t.shape())));
  Builder b(g);
  checkOpOn(*b.create(kind, vs, std::move(attrs)), inputs, cmp, tol, lo);
}

// Lowers `kind` on inputs shaped like `inputs` and returns the loop IR text.
inline std::string loweredText(OpKind kind, const std::vector<Tensor> &inputs, AttrMap attrs,
                               const lower::LowerOptions &lo = {}) {
  Graph g;
  std::vector<Value *> vs;
  for (const Tensor &t : inputs)
    vs.push_back(g.addInput(TensorType::fromShape(t.dtype(), t.shape())));
  Builder b(g);
  auto fn = lower::lowerOp(*b.create(kind, vs, std::move(attrs)), lo);
  EXPECT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
  return fn ? loop::printFunction(*fn) : "";
}

} // namespace strata::lowertest
