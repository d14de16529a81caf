//===- VectorMathTest.cpp - Accuracy of the emitted vector math against libm -----------------===//
//
// Each function is emitted into `void k(const float *in, [const float *in2,] float *out, i64 n)`
// loops (W lanes at a time as <W x float>, then a scalar tail), optimized with LLVM's O2
// pipeline for the host CPU and run through ORC LLJIT. Results are compared with the double
// precision libm function; the error is |got - ref| in units of the f32 ulp at ref.
//
// The sweep visits every 97th f32 bit pattern (44M inputs, all signs and exponents, NaNs
// included), so the measured maxima are for a dense deterministic sample, not exhaustive.
//
//===-----------------------------------------------------------------------------------------===//
#include "strata/codegen/VectorMath.h"
#include "strata/support/Sanitizers.h"

#include <gtest/gtest.h>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace llvm;
using namespace strata::codegen;

namespace {

constexpr MathFn kUnaryFns[] = {MathFn::Exp,     MathFn::Log, MathFn::Tanh, MathFn::Erf,
                                MathFn::Sigmoid, MathFn::Sin, MathFn::Cos,  MathFn::Atan};
constexpr unsigned kWidths[] = {1, 4, 8, 16};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using UnaryKernel = void (*)(const float *, float *, int64_t);
using BinaryKernel = void (*)(const float *, const float *, float *, int64_t);

std::string kernelName(MathFn fn, unsigned width) {
  return (mathFnName(fn) + "_w" + Twine(width)).str();
}

// Emits the kernel loop for `fn` at `width` lanes (width 1: scalar loop only).
void emitKernel(Module &mod, MathFn fn, unsigned width) {
  LLVMContext &ctx = mod.getContext();
  unsigned arity = mathFnArity(fn);
  Type *ptr = PointerType::getUnqual(ctx);
  Type *i64 = Type::getInt64Ty(ctx);
  Type *f32 = Type::getFloatTy(ctx);
  SmallVector<Type *, 4> params(arity + 1, ptr);
  params.push_back(i64);
  Function *f = Function::Create(FunctionType::get(Type::getVoidTy(ctx), params, false),
                                 Function::ExternalLinkage, kernelName(fn, width), mod);
  Value *n = f->getArg(arity + 1);
  Value *out = f->getArg(arity);
  auto *entry = BasicBlock::Create(ctx, "entry", f);
  auto *vHead = BasicBlock::Create(ctx, "vec.head", f);
  auto *vBody = BasicBlock::Create(ctx, "vec.body", f);
  auto *tHead = BasicBlock::Create(ctx, "tail.head", f);
  auto *tBody = BasicBlock::Create(ctx, "tail.body", f);
  auto *exit = BasicBlock::Create(ctx, "exit", f);
  IRBuilder<> b(entry);
  Value *nVec = b.CreateAnd(n, ConstantInt::get(i64, -static_cast<int64_t>(width)));
  b.CreateBr(vHead);

  auto body = [&](Type *ty, Value *idx, unsigned step) {
    SmallVector<Value *, 2> args;
    for (unsigned a = 0; a < arity; ++a)
      args.push_back(b.CreateAlignedLoad(ty, b.CreateGEP(f32, f->getArg(a), idx), Align(4)));
    b.CreateAlignedStore(emitMathFn(b, fn, args), b.CreateGEP(f32, out, idx), Align(4));
    return b.CreateAdd(idx, ConstantInt::get(i64, step));
  };

  b.SetInsertPoint(vHead);
  PHINode *i = b.CreatePHI(i64, 2);
  i->addIncoming(ConstantInt::get(i64, 0), entry);
  b.CreateCondBr(width > 1 ? b.CreateICmpSLT(i, nVec) : b.getFalse(), vBody, tHead);
  b.SetInsertPoint(vBody);
  i->addIncoming(body(FixedVectorType::get(f32, width), i, width), vBody);
  b.CreateBr(vHead);

  b.SetInsertPoint(tHead);
  PHINode *j = b.CreatePHI(i64, 2);
  j->addIncoming(i, vHead);
  b.CreateCondBr(b.CreateICmpSLT(j, n), tBody, exit);
  b.SetInsertPoint(tBody);
  j->addIncoming(body(f32, j, 1), tBody);
  b.CreateBr(tHead);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

// True when the function calls anything but the intrinsics the emitters promise to use.
bool hasForeignCalls(const Function &f, std::string &what) {
  for (const Instruction &inst : instructions(f))
    if (const auto *call = dyn_cast<CallBase>(&inst)) {
      const Function *callee = call->getCalledFunction();
      Intrinsic::ID id = callee ? callee->getIntrinsicID() : Intrinsic::not_intrinsic;
      if (id != Intrinsic::fmuladd && id != Intrinsic::fabs) {
        what = callee ? callee->getName().str() : "indirect call";
        return true;
      }
    }
  return false;
}

// All kernels for one CPU, compiled once per test binary.
class MathJit {
public:
  explicit MathJit(const std::string &cpu) {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    auto jtmb = cantFail(orc::JITTargetMachineBuilder::detectHost());
    if (!cpu.empty()) {
      jtmb.setCPU(cpu);
      jtmb.getFeatures() = SubtargetFeatures();
    }
    std::unique_ptr<TargetMachine> tm = cantFail(jtmb.createTargetMachine());
    jit = cantFail(orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create());
    auto ctx = std::make_unique<LLVMContext>();
    auto mod = std::make_unique<Module>("vector-math-test", *ctx);
    mod->setDataLayout(jit->getDataLayout());
    mod->setTargetTriple(jtmb.getTargetTriple().str());
    for (unsigned w : kWidths) {
      for (MathFn fn : kUnaryFns)
        emitKernel(*mod, fn, w);
      emitKernel(*mod, MathFn::Pow, w);
    }
    for (const Function &f : *mod)
      if (!f.isDeclaration() && hasForeignCalls(f, foreignCall))
        break;
    std::string err;
    raw_string_ostream os(err);
    if (verifyModule(*mod, &os))
      verifyError = err;
    optimize(*mod, *tm);
    for (const Function &f : *mod)
      if (!f.isDeclaration() && f.getIntrinsicID() == Intrinsic::not_intrinsic)
        for (const Instruction &inst : instructions(f))
          if (const auto *call = dyn_cast<CallBase>(&inst))
            if (call->getCalledFunction() && !call->getCalledFunction()->isIntrinsic())
              libCallAfterO2 = call->getCalledFunction()->getName().str();
    cantFail(jit->addIRModule(orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  }

  template <typename Fn> Fn kernel(MathFn fn, unsigned width) {
    return cantFail(jit->lookup(kernelName(fn, width))).toPtr<Fn>();
  }

  std::string verifyError, foreignCall, libCallAfterO2;

private:
  static void optimize(Module &mod, TargetMachine &tm) {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2).run(mod, mam);
  }

  std::unique_ptr<orc::LLJIT> jit;
};

MathJit &hostJit() {
  static MathJit jit("");
  return jit;
}

// ---------------------------------------------------------------------------------------------
// Error measurement

double refOf(MathFn fn, double x) {
  switch (fn) {
  case MathFn::Exp: return std::exp(x);
  case MathFn::Log: return std::log(x);
  case MathFn::Tanh: return std::tanh(x);
  case MathFn::Erf: return std::erf(x);
  case MathFn::Sigmoid:
    return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
  case MathFn::Sin: return std::sin(x);
  case MathFn::Cos: return std::cos(x);
  case MathFn::Atan: return std::atan(x);
  case MathFn::Pow: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// |got - ref| in f32 ulps at ref (subnormal spacing below FLT_MIN); NaN/inf must match exactly.
double ulpError(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got))
    return std::isnan(ref) && std::isnan(got) ? 0.0 : kInf;
  if (std::isinf(ref) || std::isinf(got))
    return static_cast<float>(ref) == got ? 0.0 : kInf;
  double mag = std::fabs(ref);
  double ulp = 0x1p-149;
  if (mag >= 0x1p-126) {
    int e = 0;
    std::frexp(mag, &e); // mag in [2^(e-1), 2^e)
    ulp = std::ldexp(1.0, e - 24);
  }
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

struct Stats {
  double maxUlp = 0;
  float worstX = 0, worstY = 0;
  uint64_t count = 0;
  void add(double err, float x, float y = 0) {
    ++count;
    if (err > maxUlp) {
      maxUlp = err;
      worstX = x;
      worstY = y;
    }
  }
};

// Every `stride`-th f32 bit pattern; `inRange` picks the inputs the bound is claimed for, the
// others only have to stay finite-or-NaN within `outsideLimit` in magnitude.
Stats sweep(UnaryKernel k, MathFn fn, uint32_t stride, float maxAbsIn = kInf,
            double outsideLimit = kInf) {
  Stats st;
  std::vector<float> in, out;
  constexpr size_t kChunk = 1 << 20;
  in.reserve(kChunk);
  auto flush = [&] {
    out.resize(in.size());
    k(in.data(), out.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      if (std::fabs(in[i]) <= maxAbsIn)
        st.add(ulpError(out[i], refOf(fn, in[i])), in[i]);
      else if (!(std::fabs(out[i]) <= outsideLimit)) // NaN results here only for NaN inputs
        st.add(std::isnan(in[i]) && std::isnan(out[i]) ? 0.0 : kInf, in[i]);
    }
    in.clear();
  };
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += stride) {
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
    if (in.size() == kChunk)
      flush();
  }
  flush();
  return st;
}

std::vector<float> specialValues() {
  return {0.0f,
          -0.0f,
          kInf,
          -kInf,
          kNaN,
          -kNaN,
          1.0f,
          -1.0f,
          0.5f,
          -0.5f,
          2.0f,
          -2.0f,
          3.0f,
          -3.0f,
          0x1p-149f,
          -0x1p-149f,
          0x1p-126f,
          0x1.fffffep-127f,
          -0x1p-126f,
          std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(),
          88.72283f,
          88.7229f,
          -87.33655f,
          -103.9721f,
          -103.9728f,
          -104.0f,
          89.0f,
          1e10f,
          -1e10f,
          3.9192f,
          9.01f,
          1.5707964f,
          3.1415927f,
          0x1p-12f,
          1e-30f,
          1e30f};
}

// Documented bounds (docs/vector-math.md) in f32 ulps, with or without FMA; the sweeps
// assert them.
double boundFor(MathFn fn) {
  switch (fn) {
  case MathFn::Exp: return 1.5;
  case MathFn::Log: return 1.0;
  case MathFn::Tanh: return 1.5;
  case MathFn::Erf: return 1.5;
  case MathFn::Sigmoid: return 2.5;
  case MathFn::Sin: return 1.5;
  case MathFn::Cos: return 1.5;
  case MathFn::Atan: return 1.5;
  case MathFn::Pow: return 1.0;
  }
  return 0;
}

// The range over which sin/cos claim their bound; beyond it results only stay in [-1, 1].
constexpr float kTrigMaxArg = 0x1p26f;

class VectorMathAccuracy : public ::testing::TestWithParam<MathFn> {};

// Sweep strides (every n-th f32 bit pattern). A sanitizer build checks memory safety, not
// accuracy, and its unoptimized harness is ~10x slower: it sweeps 16x sparser, the normal build
// keeps the dense sweeps the documented bounds come from.
#ifdef STRATA_ADDRESS_SANITIZER
constexpr uint32_t kDenseStride = 1553, kSparseStride = 15991;
#else
constexpr uint32_t kDenseStride = 97, kSparseStride = 997;
#endif

TEST(VectorMath, EmitsVerifiedPortableIR) {
  MathJit &jit = hostJit();
  EXPECT_EQ(jit.verifyError, "");
  EXPECT_EQ(jit.foreignCall, "") << "emitted IR calls something other than fmuladd/fabs";
  EXPECT_EQ(jit.libCallAfterO2, "") << "O2 turned the math into a library call";
}

TEST(VectorMath, NameTable) {
  for (MathFn fn : {MathFn::Exp, MathFn::Log, MathFn::Tanh, MathFn::Erf, MathFn::Sigmoid,
                    MathFn::Sin, MathFn::Cos, MathFn::Atan, MathFn::Pow})
    EXPECT_EQ(mathFnByName(mathFnName(fn)), fn);
  EXPECT_FALSE(mathFnByName("softmax").has_value());
  EXPECT_EQ(mathFnArity(MathFn::Pow), 2u);
  EXPECT_EQ(mathFnArity(MathFn::Erf), 1u);
}

// Sweeps `fn` on `jit`, prints the measured maximum and checks it against the bound.
void checkSweep(MathJit &jit, MathFn fn, uint32_t stride, const char *label) {
  bool trig = fn == MathFn::Sin || fn == MathFn::Cos;
  Stats st = sweep(jit.kernel<UnaryKernel>(fn, 8), fn, stride, trig ? kTrigMaxArg : kInf,
                   trig ? 1.0 : kInf);
  std::cout << std::setprecision(9) << "[ vector-math ] " << label << mathFnName(fn).str()
            << " max error " << st.maxUlp << " ulp over " << st.count
            << " inputs (worst at x = " << st.worstX << ")\n";
  ::testing::Test::RecordProperty(std::string(label) + "max_ulp", std::to_string(st.maxUlp));
  EXPECT_LE(st.maxUlp, boundFor(fn))
      << label << mathFnName(fn).str() << " worst input " << st.worstX;
}

TEST_P(VectorMathAccuracy, DenseSweepAgainstLibm) {
  checkSweep(hostJit(), GetParam(), kDenseStride, "");
}

TEST_P(VectorMathAccuracy, SpecialValuesMatchLibm) {
  MathFn fn = GetParam();
  std::vector<float> in = specialValues(), out(in.size());
  hostJit().kernel<UnaryKernel>(fn, 8)(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    double ref = refOf(fn, in[i]);
    if ((fn == MathFn::Sin || fn == MathFn::Cos) && std::isfinite(in[i]) &&
        std::fabs(in[i]) > kTrigMaxArg) {
      EXPECT_LE(std::fabs(out[i]), 1.0f) << mathFnName(fn).str() << "(" << in[i] << ")";
    } else if (std::isnan(ref) || std::isinf(ref) || ref == 0.0) {
      float rf = static_cast<float>(ref);
      EXPECT_TRUE(std::isnan(rf) ? std::isnan(out[i])
                                 : out[i] == rf && std::signbit(out[i]) == std::signbit(rf))
          << mathFnName(fn).str() << "(" << in[i] << ") = " << out[i] << ", libm " << rf;
    } else {
      EXPECT_LE(ulpError(out[i], ref), boundFor(fn)) << mathFnName(fn).str() << "(" << in[i] << ")";
    }
  }
}

// Every width and the scalar tail compute the same function, bit for bit.
TEST_P(VectorMathAccuracy, AllWidthsAgree) {
  MathFn fn = GetParam();
  std::vector<float> in;
  for (uint64_t u = 12345; u < (uint64_t{1} << 32); u += 4099)
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  in.resize(in.size() - in.size() % 16 + 13); // leave a tail for every width
  std::vector<float> ref(in.size()), out(in.size());
  hostJit().kernel<UnaryKernel>(fn, 8)(in.data(), ref.data(), static_cast<int64_t>(in.size()));
  for (unsigned w : kWidths) {
    hostJit().kernel<UnaryKernel>(fn, w)(in.data(), out.data(), static_cast<int64_t>(in.size()));
    size_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i)
      bad += std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(ref[i]) &&
             !(std::isnan(out[i]) && std::isnan(ref[i]));
    EXPECT_EQ(bad, 0u) << mathFnName(fn).str() << " width " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Unary, VectorMathAccuracy, ::testing::ValuesIn(kUnaryFns),
                         [](const ::testing::TestParamInfo<MathFn> &info) {
                           return mathFnName(info.param).str();
                         });

// ---------------------------------------------------------------------------------------------
// pow

struct Lcg {
  uint64_t state;
  uint32_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 32);
  }
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 8) * 0x1p-24f;
  }
};

// Four groups of `perGroup` deterministic pairs: any finite positive base with a moderate
// exponent, bases in [1/2, 2] with exponents reaching over- and underflow, negative bases
// with integer exponents, and bases within 2^-14 of 1 with huge exponents (which need
// log|x| to far more than f32 precision).
Stats powSweep(BinaryKernel k, size_t perGroup) {
  std::vector<float> xs, ys;
  Lcg rng{42};
  for (size_t i = 0; i < perGroup; ++i) {
    uint32_t bits = rng.next() & 0x7fffffff;
    xs.push_back(std::bit_cast<float>(bits >= 0x7f800000u ? bits - 0x00800000u : bits));
    ys.push_back(rng.uniform(-4.0f, 4.0f));
    xs.push_back(rng.uniform(0.5f, 2.0f));
    ys.push_back(rng.uniform(-160.0f, 160.0f));
    xs.push_back(rng.uniform(-10.0f, 0.0f));
    ys.push_back(std::nearbyint(rng.uniform(-45.0f, 45.0f)));
    xs.push_back(1.0f + static_cast<float>(static_cast<int>(rng.next() % 2048) - 1024) * 0x1p-24f);
    ys.push_back((rng.next() & 1 ? 1.0f : -1.0f) *
                 std::ldexp(rng.uniform(1.0f, 2.0f), 10 + rng.next() % 20));
  }
  std::vector<float> out(xs.size());
  k(xs.data(), ys.data(), out.data(), static_cast<int64_t>(xs.size()));
  Stats st;
  for (size_t i = 0; i < xs.size(); ++i)
    st.add(ulpError(out[i], std::pow(static_cast<double>(xs[i]), static_cast<double>(ys[i]))),
           xs[i], ys[i]);
  return st;
}

TEST(VectorMathPow, RandomPairsAgainstLibm) {
  Stats st = powSweep(hostJit().kernel<BinaryKernel>(MathFn::Pow, 8), 1 << 20);
  std::cout << "[ vector-math ] pow max error " << st.maxUlp << " ulp over " << st.count
            << " inputs (worst at x = " << st.worstX << ", y = " << st.worstY << ")\n";
  RecordProperty("max_ulp", std::to_string(st.maxUlp));
  EXPECT_LE(st.maxUlp, boundFor(MathFn::Pow)) << "pow(" << st.worstX << ", " << st.worstY << ")";
}

// Every pair of special values, plus exponents that are odd, even and non-integers; NaN,
// infinities and signed zeros must match C99 pow exactly.
TEST(VectorMathPow, SpecialCasesMatchLibm) {
  std::vector<float> base = specialValues();
  std::vector<float> expo = base;
  for (float y : {0.5f, -0.5f, 2.5f, -2.5f, 4.0f, -4.0f, 5.0f, -5.0f, 0x1p24f, 0x1p24f + 2.0f,
                  16777215.0f, -16777215.0f, 0x1p-30f})
    expo.push_back(y);
  std::vector<float> xs, ys;
  for (float x : base)
    for (float y : expo) {
      xs.push_back(x);
      ys.push_back(y);
    }
  std::vector<float> out(xs.size());
  hostJit().kernel<BinaryKernel>(MathFn::Pow, 8)(xs.data(), ys.data(), out.data(),
                                                 static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    double ref = std::pow(static_cast<double>(xs[i]), static_cast<double>(ys[i]));
    float rf = static_cast<float>(ref);
    if (std::isnan(rf) || std::isinf(rf) || rf == 0.0f)
      EXPECT_TRUE(std::isnan(rf) ? std::isnan(out[i])
                                 : out[i] == rf && std::signbit(out[i]) == std::signbit(rf))
          << "pow(" << xs[i] << ", " << ys[i] << ") = " << out[i] << ", libm " << rf;
    else
      EXPECT_LE(ulpError(out[i], ref), boundFor(MathFn::Pow))
          << "pow(" << xs[i] << ", " << ys[i] << ") = " << out[i] << ", libm " << ref;
  }
}

TEST(VectorMathPow, AllWidthsAgree) {
  std::vector<float> xs, ys;
  Lcg rng{7};
  for (int i = 0; i < 100003; ++i) {
    xs.push_back(rng.uniform(-4.0f, 4.0f));
    ys.push_back(i % 3 ? std::nearbyint(rng.uniform(-20.0f, 20.0f)) : rng.uniform(-20.0f, 20.0f));
  }
  std::vector<float> ref(xs.size()), out(xs.size());
  auto n = static_cast<int64_t>(xs.size());
  hostJit().kernel<BinaryKernel>(MathFn::Pow, 8)(xs.data(), ys.data(), ref.data(), n);
  for (unsigned w : kWidths) {
    hostJit().kernel<BinaryKernel>(MathFn::Pow, w)(xs.data(), ys.data(), out.data(), n);
    size_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i)
      bad += std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(ref[i]) &&
             !(std::isnan(out[i]) && std::isnan(ref[i]));
    EXPECT_EQ(bad, 0u) << "width " << w;
  }
}

// ---------------------------------------------------------------------------------------------
// Without FMA (x86-64-v2: llvm.fmuladd becomes a multiply and an add) the bounds still hold;
// a sparser sweep keeps this cheap.

TEST(VectorMathNoFma, BoundsHoldOnX86_64_v2) {
  if (!Triple(sys::getProcessTriple()).isX86() || !Triple(sys::getProcessTriple()).isArch64Bit())
    GTEST_SKIP() << "x86-64 only";
  static MathJit jit("x86-64-v2");
  ASSERT_EQ(jit.libCallAfterO2, "");
  for (MathFn fn : kUnaryFns)
    checkSweep(jit, fn, kSparseStride, "x86-64-v2 ");
  Stats st = powSweep(jit.kernel<BinaryKernel>(MathFn::Pow, 8), 1 << 17);
  std::cout << "[ vector-math ] x86-64-v2 pow max error " << st.maxUlp << " ulp\n";
  EXPECT_LE(st.maxUlp, boundFor(MathFn::Pow));
}

} // namespace
