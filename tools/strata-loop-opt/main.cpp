// strata-loop-opt: reads loop IR text, verifies it, optionally simplifies it, prints it. The
// driver of the loop IR's lit tests.
//
//   strata-loop-opt FILE [-o OUT] [--schedule=STEPS] [--default-schedule] [--simplify]
//                   [--check-bounds]
//                   [--no-verify] [--emit-llvm [--target=host|x86-64-v3|x86-64-v2] [-O0..3]]
//
// Stages run in order: parse -> verify -> schedule -> simplify -> verify -> bounds check -> print.
// Any failure prints its error lines to stderr and exits with 1; nothing is written then.
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Verifier.h"
#include "strata/codegen/LoopToLLVM.h"
#include "strata/codegen/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

int main(int argc, char **argv) {
  std::string input, output = "-", schedule;
  bool doSimplify = false, checkBounds = false, noVerify = false, defaultSchedule = false;
  CLI::App app{"Parse, verify, simplify and print strata loop IR"};
  app.add_option("input", input, "Loop IR text file ('-' reads stdin)")->required();
  app.add_option("-o,--output", output, "Output file ('-' is stdout)")->capture_default_str();
  app.add_option("--schedule", schedule,
                 "Schedule steps applied in order, e.g. 'split(i, 8, io, ii); vectorize(ii)'");
  app.add_flag("--default-schedule", defaultSchedule,
               "Apply the default schedule (after --schedule); its steps print as a comment");
  int64_t minParallelWork = strata::loop::kMinParallelWork;
  app.add_option("--min-parallel-work", minParallelWork,
                 "With --default-schedule: the least work a nest needs to go parallel (0: none)")
      ->capture_default_str();
  app.add_flag("--simplify", doSimplify, "Run the arithmetic simplifier");
  app.add_flag("--check-bounds", checkBounds,
               "Fail unless every load and store index is provably inside its buffer");
  app.add_flag("--no-verify", noVerify, "Skip the verifier (print malformed IR as parsed)");
  bool emitLLVM = false;
  std::string target = "host";
  int optLevel = 2;
  app.add_flag("--emit-llvm", emitLLVM, "Print LLVM IR instead of loop IR (docs/codegen.md)");
  app.add_option("--target", target, "With --emit-llvm: host, x86-64-v3 or x86-64-v2");
  app.add_option("-O", optLevel, "With --emit-llvm: LLVM optimization level 0-3 (default 2)");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](llvm::Error err) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  };
  llvm::Expected<strata::loop::LoopFunction> f = strata::loop::parseFunctionFile(input);
  if (!f)
    return fail(f.takeError());
  if (!noVerify)
    if (llvm::Error err = strata::loop::verifyFunction(*f))
      return fail(std::move(err));
  if (!schedule.empty()) {
    llvm::Expected<strata::loop::Schedule> steps = strata::loop::parseSchedule(schedule);
    if (!steps)
      return fail(steps.takeError());
    if (llvm::Error err = strata::loop::applySchedule(*f, *steps))
      return fail(std::move(err));
  }
  std::string chosen;
  if (defaultSchedule) {
    strata::loop::ScheduleTarget t;
    t.minParallelWork = minParallelWork;
    strata::loop::Schedule steps = strata::loop::defaultSchedule(*f, t);
    if (llvm::Error err = strata::loop::applySchedule(*f, steps))
      return fail(std::move(err));
    chosen = "// default schedule: " + strata::loop::printSchedule(steps) + "\n";
  }
  if (doSimplify) {
    *f = strata::loop::simplify(*f);
    if (!noVerify)
      if (llvm::Error err = strata::loop::verifyFunction(*f))
        return fail(std::move(err));
  }
  if (checkBounds)
    if (llvm::Error err = strata::loop::verifyFunction(*f, {.checkBounds = true}))
      return fail(std::move(err));

  std::string text;
  if (emitLLVM) {
    llvm::LLVMContext ctx;
    llvm::Module mod(f->name, ctx);
    if (llvm::Expected<llvm::Function *> fn = strata::codegen::emitLoopFunction(*f, mod); !fn)
      return fail(fn.takeError());
    auto spec = strata::codegen::resolveTarget(target);
    if (!spec)
      return fail(spec.takeError());
    auto tm = strata::codegen::createTargetMachine(*spec);
    if (!tm)
      return fail(tm.takeError());
    strata::codegen::optimizeModule(mod, **tm, optLevel);
    llvm::raw_string_ostream(text) << mod;
  }
  if (text.empty())
    text = chosen + strata::loop::printFunction(*f);
  if (output == "-") {
    llvm::outs() << text;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << output << ": error: cannot write: " << ec.message() << "\n";
    return 1;
  }
  os << text;
  return 0;
}
