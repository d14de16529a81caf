// Test helpers shared by the schedule tests: apply a schedule and compare the interpreter's
// results before and after on random inputs, or expect an error that leaves the function alone.
#pragma once
#include "strata/loop/Bounds.h"
#include "strata/loop/Interpreter.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace strata::loop::testing {

inline LoopFunction parse(const char *text) {
  auto f = parseFunction(text);
  if (!f) {
    ADD_FAILURE() << llvm::toString(f.takeError());
    return {};
  }
  return std::move(*f);
}

// Evaluates a shape expression (constants, scalar parameters, + - *).
inline int64_t evalShape(const Expr &e, const std::map<std::string, int64_t> &scalars) {
  if (auto c = e.asInt())
    return *c;
  if (e.kind() == ExprKind::Var)
    return scalars.at(e->var->name);
  int64_t a = evalShape(e->operands[0], scalars), b = evalShape(e->operands[1], scalars);
  return e.kind() == ExprKind::Add ? a + b : e.kind() == ExprKind::Sub ? a - b : a * b;
}

// Runs f on random inputs (outputs pre-filled with random values too, so that elements a schedule
// wrongly skips or writes show up) and returns every buffer argument afterwards. Values go in
// through setDouble so that buffers of any dtype are filled.
inline std::vector<std::vector<double>>
run(const LoopFunction &f, const std::map<std::string, int64_t> &scalars, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<Tensor> args;
  for (const Param &p : f.params) {
    if (!p.isBuffer()) {
      args.push_back(Tensor::scalar(p.scalar->dtype, double(scalars.at(p.scalar->name))));
      continue;
    }
    Shape shape;
    for (const Expr &d : p.buffer->shape)
      shape.push_back(evalShape(d, scalars));
    Tensor t(p.buffer->dtype, shape);
    for (int64_t k = 0; k < t.numElements(); ++k)
      t.setDouble(k, dist(rng));
    args.push_back(t);
  }
  if (llvm::Error err = evaluate(f, args)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return {};
  }
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < args.size(); ++i)
    if (f.params[i].isBuffer())
      out.push_back(args[i].toDoubleVector());
  return out;
}

// Applies `steps` to `text`'s function, checks that the result verifies (and, with
// `provenInBounds`, that every access is proven in bounds) and computes the same as the original
// for each set of scalar values. Returns the scheduled function's text.
inline std::string checkSchedule(const char *text, const std::string &steps,
                                 const std::vector<std::map<std::string, int64_t>> &scalarSets,
                                 bool provenInBounds = true) {
  LoopFunction f = parse(text), g = f;
  auto sched = parseSchedule(steps);
  if (!sched) {
    ADD_FAILURE() << llvm::toString(sched.takeError());
    return "";
  }
  if (llvm::Error err = applySchedule(g, *sched)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return "";
  }
  llvm::Error err = verifyFunction(g, {.checkBounds = provenInBounds});
  EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err)) << printFunction(g);
  unsigned seed = 1;
  for (const auto &scalars : scalarSets)
    EXPECT_EQ(run(f, scalars, seed), run(g, scalars, seed)) << steps << "\n" << printFunction(g);
  return printFunction(g);
}

inline std::string applyError(const char *text, const std::string &steps) {
  LoopFunction f = parse(text);
  std::string before = printFunction(f);
  auto sched = parseSchedule(steps);
  if (!sched)
    return llvm::toString(sched.takeError());
  llvm::Error err = applySchedule(f, *sched);
  if (!err) {
    ADD_FAILURE() << "expected an error from " << steps;
    return "";
  }
  if (sched->size() == 1) {
    EXPECT_EQ(printFunction(f), before) << "a failed step changed the function";
  }
  return llvm::toString(std::move(err));
}

} // namespace strata::loop::testing
