// The differential fuzzer: the input bytes describe a small random graph (f32 inputs of rank 1-3,
// then up to 12 ops drawn from elementwise, broadcasting binary, reductions, softmax, transposes,
// matmul and concat, each on earlier values); the interpreter and the JIT engine (default
// pipeline, default schedule) run it on the same seeded inputs, and every output must agree
// within a tolerance scaled to the reference's magnitude. A graph the builder rejects is skipped;
// one that builds must compile (or be refused with an error) and must agree.
#include "FuzzTarget.h"

#include "strata/driver/CompiledModel.h"
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Printer.h"
#include "strata/interp/Interpreter.h"

#include <cmath>
#include <random>

namespace {

using namespace strata;

// Reads the input a byte at a time; past its end every read is 0.
struct Bytes {
  const uint8_t *data;
  size_t size, at = 0;
  unsigned next(unsigned bound) { return bound ? (at < size ? data[at++] : 0) % bound : 0; }
};

Shape randomShape(Bytes &in) {
  Shape s(1 + in.next(3));
  for (int64_t &d : s)
    d = 1 + in.next(5);
  return s;
}

std::vector<int64_t> permutation(Bytes &in, size_t rank) {
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i)
    p[i] = static_cast<int64_t>(i);
  for (size_t i = rank; i > 1; --i)
    std::swap(p[i - 1], p[in.next(static_cast<unsigned>(i))]);
  return p;
}

// One op on earlier values; nullptr when the draw does not apply (the builder may still refuse).
Value *randomOp(Builder &b, Bytes &in, std::vector<Value *> &values) {
  Value *x = values[in.next(static_cast<unsigned>(values.size()))];
  const size_t rank = x->type().rank();
  // No floor/round: they turn a last-bit difference between two correct evaluation orders into a
  // whole unit.
  static const OpKind unary[] = {OpKind::Neg,     OpKind::Abs, OpKind::Exp,      OpKind::Tanh,
                                 OpKind::Sigmoid, OpKind::Erf, OpKind::HardSwish};
  static const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul,
                                  OpKind::Max, OpKind::Min, OpKind::Div};
  const unsigned choice = in.next(8);
  if (rank == 0 && choice >= 4) // a scalar (a full reduction without keepdims): elementwise only
    return nullptr;
  switch (choice) {
  case 0:
  case 1: {
    OpKind k = unary[in.next(std::size(unary))];
    if (k == OpKind::Exp) // keep magnitudes tame: exp(tanh(x))
      x = b.value(OpKind::Tanh, {x});
    return b.value(k, {x});
  }
  case 2:
  case 3: { // with an earlier value, or with a constant of a suffix of x's shape (broadcast); a
    // divisor is always such a constant (in [0.25, 2]), never a value that may come near 0
    OpKind k = binary[in.next(std::size(binary))];
    Value *y = values[in.next(static_cast<unsigned>(values.size()))];
    if (in.next(2) || k == OpKind::Div) {
      Shape xs = x->type().staticShape();
      Shape s(xs.end() - static_cast<std::ptrdiff_t>(in.next(static_cast<unsigned>(rank) + 1)),
              xs.end());
      Tensor c(DType::F32, s);
      for (int64_t i = 0; i < c.numElements(); ++i)
        c.setDouble(i, 0.25 * (1 + in.next(8)));
      y = b.constant(c);
    }
    return b.value(k, {x, y});
  }
  case 4: {
    static const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min,
                                       ReduceKind::Mean};
    std::vector<int64_t> axes;
    for (size_t d = 0; d < rank; ++d)
      if (in.next(2))
        axes.push_back(static_cast<int64_t>(d));
    if (axes.empty())
      axes.push_back(static_cast<int64_t>(in.next(static_cast<unsigned>(rank))));
    return b.value(OpKind::Reduce, {x},
                   {{"kind", ops::enumAttr(kinds[in.next(std::size(kinds))])},
                    {"axes", Attribute(axes)},
                    {"keepdims", Attribute(int64_t{in.next(2)})}});
  }
  case 5:
    return b.value(
        in.next(2) ? OpKind::Softmax : OpKind::LogSoftmax, {x},
        {{"axis", Attribute(static_cast<int64_t>(in.next(static_cast<unsigned>(rank))))}});
  case 6:
    if (rank < 2)
      return nullptr;
    return b.value(OpKind::Transpose, {x}, {{"perm", Attribute(permutation(in, rank))}});
  default: {
    if (in.next(2)) { // concat with itself along an axis
      int64_t axis = in.next(static_cast<unsigned>(rank));
      return b.value(OpKind::Concat, {x, x}, {{"axis", Attribute(axis)}});
    }
    // x @ w with a constant w [last dim, 1..6]
    Tensor w(DType::F32, Shape{x->type().staticShape().back(), int64_t{1 + in.next(6)}});
    for (int64_t i = 0; i < w.numElements(); ++i)
      w.setDouble(i, 0.125 * (static_cast<int>(in.next(16)) - 8));
    return b.value(OpKind::MatMul, {x, b.constant(w)});
  }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes in{data, size};
  auto build = [&](Graph &g) -> bool {
    in.at = 0;
    Builder b(g);
    std::vector<Value *> values;
    unsigned numInputs = 1 + in.next(2);
    for (unsigned i = 0; i < numInputs; ++i)
      values.push_back(
          g.addInput(TensorType::fromShape(DType::F32, randomShape(in)), "x" + std::to_string(i)));
    unsigned numOps = 1 + in.next(12);
    try {
      for (unsigned i = 0; i < numOps; ++i)
        if (Value *v = randomOp(b, in, values))
          values.push_back(v);
    } catch (const BuildError &) {
      return false;
    }
    if (values.size() == numInputs)
      return false;
    g.addOutput(values.back(), "y");
    if (values.size() > numInputs + 1 && in.next(2))
      g.addOutput(values[numInputs + in.next(static_cast<unsigned>(values.size() - numInputs - 1))],
                  "z");
    return true;
  };
  Graph ref, jitGraph;
  const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  if (!build(ref) || !build(jitGraph)) {
    if (verbose)
      std::fprintf(stderr, "skipped: the builder refused the graph\n");
    return 0;
  }
  std::vector<Tensor> inputs;
  std::mt19937 rng(static_cast<unsigned>(size));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (unsigned i = 0; i < ref.numInputs(); ++i) {
    Tensor t(DType::F32, ref.input(i)->type().staticShape());
    for (int64_t e = 0; e < t.numElements(); ++e)
      t.setDouble(e, dist(rng));
    inputs.push_back(std::move(t));
  }
  auto want = interpret(ref, inputs);
  if (!want) {
    llvm::consumeError(want.takeError());
    return 0;
  }
  std::string text = printGraph(ref);
  driver::CompileOptions opts;
  opts.threads = 1;
  auto model = driver::compileModel(jitGraph, opts);
  if (!model) {
    std::string msg = llvm::toString(model.takeError());
    if (msg.find("not implemented") != std::string::npos)
      return 0;
    strata::fuzz::violated("a graph the interpreter runs compiles", msg + "\n" + text);
  }
  auto got = (*model)->run(inputs);
  if (!got)
    strata::fuzz::violated("the compiled graph runs",
                           llvm::toString(got.takeError()) + "\n" + text);
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor &w = (*want)[o], &r = (*got)[o];
    if (w.shape() != r.shape() || w.dtype() != r.dtype())
      strata::fuzz::violated("shapes and dtypes agree", text);
    double scale = 1e-6;
    for (int64_t i = 0; i < w.numElements(); ++i)
      if (std::isfinite(w.getDouble(i)))
        scale = std::max(scale, std::abs(w.getDouble(i)));
    for (int64_t i = 0; i < w.numElements(); ++i) {
      double a = w.getDouble(i), c = r.getDouble(i);
      bool same = (std::isnan(a) && std::isnan(c)) || a == c || std::abs(a - c) <= 1e-4 * scale;
      if (!same)
        strata::fuzz::violated("the JIT agrees with the interpreter",
                               "output " + std::to_string(o) + " element " + std::to_string(i) +
                                   ": interpreter " + std::to_string(a) + ", jit " +
                                   std::to_string(c) + "\n" + text);
    }
  }
  if (verbose)
    std::fprintf(stderr, "agree (%u kernels):\n%s\n", static_cast<unsigned>((*model)->numKernels()),
                 text.c_str());
  return 0;
}
