// strata bisect MODEL [--input NAME=FILE]... [--tol T] [--passes P] [--inject-fault RUNG:NAME]
// [--repro-dir DIR]: compares the compiled model with the reference interpreter and, when they
// disagree, names the graph pass, kernel or schedule step that broke the answer and writes a
// reduced model that fails the same way (docs/bisect.md). Last line: `culprit: ...` or
// `no mismatch`.
#include "Commands.h"
#include "Engine.h"

#include "strata/driver/Bisect.h"
#include "strata/graph/Printer.h"
#include "strata/io/Npy.h"

#include "llvm/Support/FileSystem.h"

#include <filesystem>
#include <fmt/format.h>

namespace strata::cli {

namespace {

struct BisectOpts {
  std::string model, passes = "default", target = "host", fault, reproDir = "bisect-repro";
  std::vector<std::string> inputs, dims, shapes;
  unsigned seed = 0, threads = 1;
  double tol = 1e-4;
  bool noReduce = false;
};

// Single quotes for a shell, unless the word needs none.
std::string shellWord(const std::string &s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=:") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int writeReproducer(const BisectOpts &o, const driver::Reproducer &r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(o.reproDir, ec);
  if (ec)
    return fail(kIoError, o.reproDir + ": " + ec.message());
  PrintOptions po;
  po.emitBlobs = true; // the reproducer carries its constants' data
  po.printLocations = true;
  std::string model = (fs::path(o.reproDir) / "repro.sg").string();
  if (!writeTextOutput(model, printGraph(*r.graph, po)))
    return failedCode();
  // The binary running now, so the command works where strata is not on PATH.
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable("strata", &anchor);
  std::string command = shellWord(self.empty() ? "strata" : self) + " bisect " + shellWord(model);
  for (unsigned i = 0; i < r.graph->numInputs(); ++i) {
    const std::string &name = r.graph->input(i)->name();
    std::string file = (fs::path(o.reproDir) / (name + ".npy")).string();
    if (auto err = writeNpy(file, r.inputs[i]))
      return fail(kIoError, llvm::toString(std::move(err)));
    command += " --input " + shellWord(name + "=" + file);
  }
  command += " --passes=" + shellWord(r.pipeline.empty() ? "none" : r.pipeline);
  command += fmt::format(" --tol {} --target {}", o.tol, o.target);
  if (r.fault.active())
    command += " --inject-fault=" + shellWord(r.fault.text());
  if (!writeTextOutput((fs::path(o.reproDir) / "rerun.sh").string(),
                       "#!/bin/sh\n# strata bisect's reproducer: fails as '" + r.culprit.text() +
                           "'\n" + command + "\n"))
    return failedCode();
  fmt::print("reproducer: {} ({} ops), fails the same way: {}\n", model, r.ops, r.culprit.text());
  fmt::print("rerun: {}\n", command);
  return kOk;
}

int runBisect(const BisectOpts &o) {
  driver::BisectOptions bo;
  bo.pipeline = o.passes == "none" ? "" : o.passes;
  bo.target = o.target;
  bo.threads = o.threads;
  bo.tolerance = o.tol;
  bo.reduce = !o.noReduce;
  if (!o.fault.empty()) {
    auto f = driver::parseFaultInjection(o.fault);
    if (!f)
      return fail(kUsage, llvm::toString(f.takeError()));
    bo.fault = *f;
  }
  bo.log = [](const std::string &line) { fmt::print("bisect: {}\n", line); };

  // A model with symbolic dims its kernels cannot take is bisected at its inputs' shapes.
  std::vector<Tensor> inputsAt;
  std::unique_ptr<Graph> g = loadModelForRun(o.model, o.shapes, o.inputs, o.dims, o.seed, inputsAt);
  if (!g)
    return failedCode();
  auto inputs = &inputsAt;
  if (bo.fault.active())
    fmt::print("bisect: injected fault {} (for testing bisect)\n", bo.fault.text());

  auto result = driver::bisect(*g, *inputs, bo);
  if (!result)
    return fail(kBadModel, o.model + ": " + llvm::toString(result.takeError()));
  if (result->culprit.rung == driver::Culprit::Rung::None) {
    fmt::print("no mismatch\n");
    return kOk;
  }
  if (!result->culprit.detail.empty())
    fmt::print("bisect: {}{}\n", result->culprit.node.empty() ? "" : result->culprit.node + ": ",
               result->culprit.detail);
  if (result->repro) {
    if (int code = writeReproducer(o, *result->repro))
      return code;
  } else if (!result->reproNote.empty()) {
    fmt::print("bisect: {}\n", result->reproNote);
  }
  fmt::print("culprit: {}\n", result->culprit.text());
  return kFailed;
}

} // namespace

Action addBisectCommand(CLI::App &app) {
  auto o = std::make_shared<BisectOpts>();
  CLI::App *cmd = app.add_subcommand(
      "bisect",
      "Find the graph pass, kernel, schedule step or LLVM pass that makes the compiled model "
      "disagree with the interpreter, and write a small reproducer");
  addLimitOption(cmd);
  cmd->add_option("model", o->model, "Model (.onnx or graph IR text)")->required();
  addInputOptions(cmd, o->inputs, o->dims, o->seed);
  addShapeOption(cmd, o->shapes);
  cmd->add_option("--tol", o->tol, "Tolerance, relative to each tensor's largest |reference|")
      ->capture_default_str();
  cmd->add_option("--passes", o->passes, "Graph pipeline ('none': no passes)")
      ->capture_default_str();
  addTargetOption(cmd, o->target);
  cmd->add_option("--threads", o->threads, "Threads of the compiled model")->capture_default_str();
  cmd->add_option("--inject-fault", o->fault,
                  "Testing bisect itself: miscompile on purpose at graph-pass:PASS, "
                  "kernel:KERNEL or schedule:STEP (docs/bisect.md)");
  cmd->add_option("--repro-dir", o->reproDir, "Where the reproducer goes")->capture_default_str();
  cmd->add_flag("--no-reduce", o->noReduce, "Name the culprit only; write no reproducer");
  return [o]() { return runBisect(*o); };
}

} // namespace strata::cli
