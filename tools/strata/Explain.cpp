// strata explain MODEL [-o report.html] [--input NAME=FILE]... [--threads N] [--target T]
// [--iters N]: writes one self-contained HTML page that steps the model down every rung of the
// compiler, shows where each ONNX node went and why some things did not happen, and where the
// time and memory go (docs/explain.md).
#include "Commands.h"
#include "Engine.h"

#include "strata/driver/Explain.h"
#include "strata/import/OnnxImporter.h"

#include <chrono>
#include <fmt/format.h>

namespace strata::cli {

namespace {

struct ExplainOpts {
  std::string model, output = "report.html", target = "host", passes = "default";
  std::vector<std::string> inputs, dims, shapes;
  unsigned threads = 0, iters = 10, warmup = 2, seed = 0;
  int optLevel = 2;
  bool quiet = false;
};

int runExplain(const ExplainOpts &o) {
  auto start = std::chrono::steady_clock::now();
  std::vector<driver::SourceNode> source;
  std::vector<OnnxNode> nodes;
  std::vector<Tensor> inputsAt;
  // A model with symbolic dims its kernels cannot take is explained at its inputs' shapes.
  std::unique_ptr<Graph> g =
      loadModelForRun(o.model, o.shapes, o.inputs, o.dims, o.seed, inputsAt, &nodes);
  if (!g)
    return failedCode();
  for (OnnxNode &n : nodes)
    source.push_back(
        {std::move(n.name), std::move(n.opType), std::move(n.inputs), std::move(n.outputs)});
  double importMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto inputs = &inputsAt;

  driver::ExplainOptions eo;
  eo.modelPath = o.model;
  eo.pipeline = o.passes;
  eo.target = o.target;
  eo.optLevel = o.optLevel;
  eo.threads = o.threads;
  eo.iters = o.iters;
  eo.warmup = o.warmup;
  if (!o.quiet)
    eo.log = [](const std::string &line) { fmt::print(stderr, "explain: {}\n", line); };
  auto report = driver::explainModel(*g, source, importMs, *inputs, eo);
  if (!report)
    return fail(kBadModel, o.model + ": " + llvm::toString(report.takeError()));
  std::string html = driver::explainHtml(*report);
  if (!writeTextOutput(o.output, html))
    return failedCode();
  fmt::print("wrote {} ({:.1f} MB): {} rungs, {} kernels\n", o.output, html.size() / 1e6,
             (*report)["rungs"].size(), (*report)["kernels"].size());
  return kOk;
}

} // namespace

Action addExplainCommand(CLI::App &app) {
  auto o = std::make_shared<ExplainOpts>();
  CLI::App *cmd = app.add_subcommand(
      "explain", "Write an HTML report of what the compiler did to a model, rung by rung, and "
                 "where its time and memory go");
  addLimitOption(cmd);
  cmd->add_option("model", o->model, "Model (.onnx or graph IR text)")->required();
  cmd->add_option("-o,--output", o->output, "The report (one self-contained HTML file)")
      ->capture_default_str();
  addInputOptions(cmd, o->inputs, o->dims, o->seed); // for the timed runs
  addShapeOption(cmd, o->shapes);
  cmd->add_option("--threads", o->threads, "Threads of the compiled model (0: one per core)")
      ->capture_default_str();
  addTargetOption(cmd, o->target);
  cmd->add_option("-O", o->optLevel, "LLVM optimization level 0-3")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--passes", o->passes, "Graph pipeline ('default': the standard one)")
      ->capture_default_str();
  cmd->add_option("--iters", o->iters, "Timed runs for the per-kernel profile (0: do not run)")
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before them")->capture_default_str();
  cmd->add_flag("--quiet,-q", o->quiet, "No progress lines on stderr");
  return [o]() { return runExplain(*o); };
}

} // namespace strata::cli
