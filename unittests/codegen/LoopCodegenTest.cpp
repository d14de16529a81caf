// JIT-compiled loop functions against the loop interpreter: each kernel is parsed from text, run
// by both on the same random inputs, and the outputs compared bit for bit (math intrinsics within
// a few ulp).
#include "CodegenTestUtil.h"
#include "strata/codegen/Jit.h"
#include "strata/loop/Interpreter.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

using namespace strata;

namespace {

using strata::testing::jit;

Tensor copyOf(const Tensor &t) {
  Tensor c(t.dtype(), t.shape());
  if (t.byteSize())
    std::memcpy(c.rawData(), t.rawData(), t.byteSize());
  return c;
}

// Random contents: floats in [-lo, lo] plus a sprinkling of specials, integers in [-50, 50].
Tensor randomTensor(DType t, Shape shape, std::mt19937 &rng, double range, bool specials) {
  Tensor x(t, std::move(shape));
  std::uniform_real_distribution<double> real(-range, range);
  std::uniform_int_distribution<int> integer(-50, 50), pick(0, 15);
  const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 3e9, -3e9};
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (isFloat(t))
      x.setDouble(i, specials && pick(rng) == 0 ? special[rng() % 7] : real(rng));
    else
      x.setInt(i, t == DType::Bool ? integer(rng) > 0 : integer(rng));
  }
  return x;
}

int64_t ulpDistance(double a, double b, DType t) {
  if (std::isnan(a) && std::isnan(b))
    return 0;
  if (t == DType::F64) {
    auto key = [](double v) {
      int64_t i = std::bit_cast<int64_t>(v);
      return i < 0 ? INT64_MIN - i : i;
    };
    return std::abs(key(a) - key(b));
  }
  auto key = [](float v) {
    int32_t i = std::bit_cast<int32_t>(v);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::abs(key(static_cast<float>(a)) - key(static_cast<float>(b)));
}

struct Options {
  std::vector<int64_t> scalars; // values of the scalar params, in order
  double range = 100;
  bool specials = true;
  int64_t maxUlp = 0;
  // min/max of zeros of opposite signs may return either zero (IEEE minNum/maxNum).
  bool signedZeros = true;
  codegen::LoopJit *jit = nullptr; // null: the host JIT at -O2
};

// Runs `text` through the interpreter and the JIT and compares every output buffer.
void check(const std::string &text, const Options &o, int seeds = 3) {
  llvm::Expected<loop::LoopFunction> f = loop::parseFunction(text);
  ASSERT_TRUE(!!f) << llvm::toString(f.takeError());
  ASSERT_FALSE(!!loop::verifyFunction(*f));
  llvm::Expected<codegen::CompiledKernel> k = jit().compile(*f);
  ASSERT_TRUE(!!k) << llvm::toString(k.takeError());
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Tensor> ref;
    size_t s = 0;
    std::map<const loop::VarNode *, int64_t> scalars;
    for (const loop::Param &p : f->params)
      if (!p.isBuffer())
        scalars[p.scalar.get()] = o.scalars.at(s++);
    for (const loop::Param &p : f->params) {
      if (!p.isBuffer()) {
        ref.push_back(Tensor::scalar(p.scalar->dtype, static_cast<double>(scalars[p.scalar.get()])));
        continue;
      }
      Shape shape;
      for (const loop::Expr &e : p.buffer->shape) // shapes here are constants or one scalar
        shape.push_back(e.asInt() ? *e.asInt() : scalars.at(e->var.get()));
      ref.push_back(randomTensor(p.buffer->dtype, shape, rng, o.range, o.specials));
    }
    std::vector<Tensor> got;
    for (const Tensor &t : ref)
      got.push_back(copyOf(t));
    ASSERT_FALSE(!!loop::evaluate(*f, ref));
    llvm::Error err = codegen::LoopJit::call(*k, got);
    ASSERT_FALSE(!!err) << llvm::toString(std::move(err));
    for (size_t i = 0; i < ref.size(); ++i) {
      const Tensor &a = ref[i], &b = got[i];
      for (int64_t e = 0; e < a.numElements(); ++e) {
        if (isFloat(a.dtype())) {
          int64_t d = ulpDistance(a.getDouble(e), b.getDouble(e), a.dtype());
          ASSERT_LE(d, o.maxUlp) << f->params[i].name() << "[" << e << "]: interpreter "
                                 << a.getDouble(e) << ", jit " << b.getDouble(e);
          if (o.maxUlp == 0 && o.signedZeros && !std::isnan(a.getDouble(e))) { // signed zeros
            ASSERT_EQ(std::signbit(a.getDouble(e)), std::signbit(b.getDouble(e)));
          }
        } else {
          ASSERT_EQ(a.getInt(e), b.getInt(e)) << f->params[i].name() << "[" << e << "]";
        }
      }
    }
  }
}

TEST(LoopCodegen, BroadcastAdd) {
  check(R"(func @add(%a: f32[4, %n] in, %b: f32[%n] in, %out: f32[4, %n] out, %n: i64) {
  for %i in [0, 4) parallel {
    for %j in [0, %n) vectorized {
      %out[%i, %j] = %a[%i, %j] + %b[%j]
    }
  }
})",
        {.scalars = {37}});
}

TEST(LoopCodegen, ReluWithNaN) {
  check(R"(func @relu(%x: f32[100] in, %y: f32[100] out, %z: f32[100] out) {
  for %i in [0, 100) vectorized {
    %y[%i] = max(%x[%i], 0.0)
    %z[%i] = min(0.0, %x[%i])
  }
})",
        {.scalars = {}, .signedZeros = false});
}

TEST(LoopCodegen, ExpAndTanhWithinUlps) {
  check(R"(func @ex(%x: f32[64] in, %y: f32[64] out, %t: f32[64] out) {
  for %i in [0, 64) vectorized {
    %y[%i] = exp(%x[%i])
    %t[%i] = tanh(%x[%i])
  }
})",
        {.scalars = {}, .range = 20, .specials = false, .maxUlp = 4});
}

TEST(LoopCodegen, F64MathIsLibm) {
  check(R"(func @m(%x: f64[32] in, %y: f64[32] out) {
  for %i in [0, 32) serial {
    %y[%i] = sqrt(abs(%x[%i])) + exp(%x[%i] * 0.01f64) + erf(%x[%i]) + floor(%x[%i]) + round(%x[%i] * 0.5f64)
  }
})",
        {.scalars = {}, .range = 30});
}

TEST(LoopCodegen, RowSumWithLocalAccumulator) {
  check(R"(func @rowsum(%x: f32[8, %n] in, %y: f32[8] out, %n: i64) {
  for %i in [0, 8) serial {
    allocate %acc: f32[1] local {
      %acc[0] = 0.0
      for %k in [0, %n) serial {
        %acc[0] = %acc[0] + %x[%i, %k]
      }
      %y[%i] = %acc[0]
    }
  }
})",
        {.scalars = {19}, .specials = false});
}

TEST(LoopCodegen, MatmulReduction) {
  check(R"(func @mm(%a: f32[5, 7] in, %b: f32[7, %n] in, %c: f32[5, %n] out, %n: i64) {
  for %i in [0, 5) parallel {
    for %j in [0, %n) serial {
      %c[%i, %j] = 0.0
      for %k in [0, 7) serial {
        %c[%i, %j] = %c[%i, %j] + %a[%i, %k] * %b[%k, %j]
      }
    }
  }
})",
        {.scalars = {9}, .specials = false});
}

TEST(LoopCodegen, IntegerDivisionWithNegatives) {
  check(R"(func @div(%a: i64[64] in, %b: i32[64] in, %q: i64[64] out, %r: i32[64] out, %u: u8[64] out) {
  for %i in [0, 64) serial {
    %q[%i] = floordiv(%a[%i], select(%a[%i] % 2 == 0, -7, 5)) * 1000 + floormod(%a[%i], -3) * 100 + %a[%i] / 4 + %a[%i] % -6
    %r[%i] = floordiv(%b[%i], 3i32) + floormod(%b[%i], 4i32) * 10i32 + %b[%i] / -3i32 + min(%b[%i], 2i32)
    %u[%i] = cast<u8>(%b[%i]) / 3u8 + floormod(cast<u8>(%b[%i]), 7u8)
  }
})",
        {});
}

// Logical shifts of every width (amounts past the width give 0, also in vector loops), bitwise
// ops, and float mod (C fmod, also on f16 held as f32).
TEST(LoopCodegen, BitwiseShiftsAndFloatMod) {
  check(R"(func @bits(%a: i64[64] in, %b: i32[64] in, %s: i64[64] out, %t: u8[64] out, %u: i16[64] out, %f: f32[64] out, %h: f16[64] out, %x: f32[64] in) {
  for %i in [0, 64) vectorized {
    %s[%i] = bitxor(shl(%a[%i], %i), shr(%a[%i], cast<i64>(%b[%i]) + 40))
    %t[%i] = bitor(shl(cast<u8>(%a[%i]), cast<u8>(%i)), bitand(shr(cast<u8>(%b[%i]), cast<u8>(%b[%i])), 7u8))
    %u[%i] = shr(cast<i16>(%a[%i]), cast<i16>(%i) - 8i16)
    %f[%i] = %x[%i] % cast<f32>(%b[%i] % 7i32)
    %h[%i] = cast<f16>(%x[%i]) % 0.75f16
  }
})",
        {});
}

TEST(LoopCodegen, SelectGuardsOutOfBoundsLoads) {
  // The unchosen arm reads past the end: it must not be evaluated (scalar or vector).
  check(R"(func @shift(%x: f32[16] in, %y: f32[16] out, %z: f32[16] out) {
  for %i in [0, 16) serial {
    %y[%i] = select(%i < 15, %x[min(%i + 1, 15)] * 2.0, -1.0)
    %y[%i] = select(%i + 1 < 16, %x[%i + 1 - select(%i + 1 < 16, 0, 1)], %y[%i])
  }
  for %o in [0, 4) serial {
    %z[ramp(%o * 4, 1, 4)] = select(ramp(%o * 4, 1, 4) < broadcast(15, 4), %x[ramp(%o * 4 + 1, 1, 4)], broadcast(0.5, 4))
  }
})",
        {});
}

TEST(LoopCodegen, Casts) {
  check(R"(func @casts(%x: f32[64] in, %k: i64[64] in, %a: i32[64] out, %b: f32[64] out, %c: f16[64] out, %d: bf16[64] out, %e: bool[64] out, %g: u8[64] out, %h: f64[64] out) {
  for %i in [0, 64) vectorized {
    %a[%i] = cast<i32>(%x[%i] * 1e8)
    %b[%i] = cast<f32>(%k[%i] * 123456789012345)
    %c[%i] = cast<f16>(%x[%i]) * cast<f16>(%x[%i])
    %d[%i] = cast<bf16>(%x[%i]) + cast<bf16>(%k[%i])
    %e[%i] = cast<bool>(%x[%i]) && %k[%i] > 0
    %g[%i] = cast<u8>(%x[%i]) + cast<u8>(%k[%i])
    %h[%i] = cast<f64>(cast<f16>(%x[%i] * 1000.0))
  }
})",
        {});
}

TEST(LoopCodegen, ExplicitVectorsAndGather) {
  check(R"(func @vec(%x: f32[4, 8] in, %y: f32[4, 8] out) {
  for %i in [0, 4) serial {
    for %j in [0, 2) unrolled {
      %y[%i, ramp(%j * 4, 1, 4)] = %x[%i, ramp(%j * 4, 1, 4)] + %x[ramp(0, 1, 4), %j * 4 + %i] * broadcast(2.0, 4)
    }
  }
  %y[ramp(0, 1, 4), 7] = fma(%x[ramp(3, -1, 4), 0], broadcast(3.0, 4), broadcast(1.0, 4))
})",
        {.scalars = {}, .maxUlp = 1});
}

TEST(LoopCodegen, PortableTargetsAndO0) {
  const char *text = R"(func @k(%x: f32[3, %n] in, %y: f32[%n] out, %n: i64) {
  for %j in [0, %n) vectorized {
    %y[%j] = max(fma(%x[0, %j], %x[1, %j], %x[2, %j]), sigmoid(%x[0, %j]))
  }
})";
  for (auto [target, opt] : {std::pair{"x86-64-v2", 2}, std::pair{"x86-64-v3", 3}, std::pair{"host", 0}}) {
    auto j = codegen::LoopJit::create(target, opt);
    ASSERT_TRUE(!!j) << llvm::toString(j.takeError());
    check(text, {.scalars = {29}, .specials = false, .maxUlp = 4, .jit = j->get()}, 1);
  }
}

TEST(LoopCodegen, OverlappingBuffersAreRejected) {
  llvm::Expected<loop::LoopFunction> f = loop::parseFunction(
      "func @cp(%x: f32[4] in, %y: f32[4] out) { for %i in [0, 4) serial { %y[%i] = %x[%i] } }");
  ASSERT_TRUE(!!f);
  llvm::Expected<codegen::CompiledKernel> k = jit().compile(*f);
  ASSERT_TRUE(!!k) << llvm::toString(k.takeError());
  Tensor t(DType::F32, {4});
  std::vector<Tensor> args{t, t};
  llvm::Error err = codegen::LoopJit::call(*k, args);
  EXPECT_NE(llvm::toString(std::move(err)).find("overlap"), std::string::npos);
}

TEST(LoopCodegen, UnknownTargetAndGpuLoopsAreErrors) {
  auto j = codegen::LoopJit::create("sparc");
  EXPECT_FALSE(!!j);
  llvm::consumeError(j.takeError());
  llvm::Expected<loop::LoopFunction> f = loop::parseFunction(
      "func @g(%y: f32[4] out) { for %i in [0, 4) gpu_thread { %y[%i] = 1.0 } }");
  ASSERT_TRUE(!!f);
  llvm::Expected<codegen::CompiledKernel> k = jit().compile(*f);
  ASSERT_FALSE(!!k);
  EXPECT_NE(llvm::toString(k.takeError()).find("gpu_thread"), std::string::npos);
}

} // namespace
