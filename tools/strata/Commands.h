// Subcommands of the `strata` driver. Each registers its options on the CLI11 app and runs.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/import/OnnxImporter.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace strata::cli {

// A subcommand's action, run after parsing; returns the process exit code.
using Action = std::function<int()>;

// Milliseconds since `start` on the steady clock (compile, load and run timings).
inline double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Exit codes (docs/cli.md, "Exit codes").
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,   // the command ran and its answer is no: failing tests, differing results
  kUsage = 2,    // bad command line: unknown option, missing or contradictory arguments
  kBadModel = 3, // the model cannot be read, imported, verified or compiled
  kBadInput = 4, // an input cannot be read or does not fit the model, or a run fails on its data
  kInternal = 5, // a compiler bug: a pass broke the IR, lowering made invalid loop or LLVM IR
  kIoError = 6,  // an output cannot be written
};

// Prints "error: <text>" to stderr and records the exit code it implies: `kind`, or kInternal
// when the text reports an internal error (a diagnostic of phase "internal"). Returns the code.
int fail(int kind, const std::string &text);
// The code the last fail() recorded (kFailed if none), for callers of functions that report
// their own errors and return null.
int failedCode();

Action addImportCommand(CLI::App &app);
Action addRunCommand(CLI::App &app);
Action addConformanceCommand(CLI::App &app);
Action addCompileCommand(CLI::App &app);
Action addBenchCommand(CLI::App &app);
Action addBisectCommand(CLI::App &app);
Action addExplainCommand(CLI::App &app);

// Loads a model: `.onnx` through the importer, anything else as graph IR text. Reports the error
// (fail(kBadModel, ...)) and returns null on failure.
std::unique_ptr<Graph> loadModel(const std::string &path, const ImportOptions &opts = {});
bool endsWith(const std::string &s, const std::string &suffix);

// `--shape NAME=D0xD1x...` (repeatable): compile a model for these input shapes (its symbolic
// dims bound, its shape arithmetic folded). Parsed by parseShapeHints; a bad spec is a usage error.
void addShapeOption(CLI::App *cmd, std::vector<std::string> &shapes);
llvm::Expected<std::map<std::string, Shape>> parseShapeHints(const std::vector<std::string> &specs);
// `--value NAME=FILE` (repeatable): build for this value of an input the importer needs as a
// constant (OnnxInterface::valueInputs). Parsed (and the files read) by parseValueHints.
void addValueOption(CLI::App *cmd, std::vector<std::string> &values);
llvm::Expected<std::map<std::string, Tensor>>
parseValueHints(const std::vector<std::string> &specs);
// A tensor from a .npy or TensorProto (.pb) file.
llvm::Expected<Tensor> loadTensor(const std::string &path);

// Loads a model at the given input shapes: an ONNX file is imported with them
// (ImportOptions::inputShapes) and with `values` as the constants of those inputs
// (OnnxInterface::valueInputs); graph IR text has the named inputs' symbols bound
// (graph/Specialize.h). Reports the error and returns null on failure.
std::unique_ptr<Graph> loadModelAtShapes(const std::string &path,
                                         const std::map<std::string, Shape> &shapes,
                                         std::vector<OnnxNode> *nodes = nullptr,
                                         const std::map<std::string, Tensor> &values = {});

// `--limit NAME=VALUE` (repeatable): sets a process limit (support/Limits.h) while the command
// line is parsed; a bad name or value is a usage error.
void addLimitOption(CLI::App *cmd);
// --winograd auto|off|2|4: the winograd pass's tile (PassOptions::winogradTile: 0, -1, 2, 4).
void addWinogradOption(CLI::App *cmd, int64_t &tile);

// Writes `text` to `path` atomically ("-" = stdout). Returns false after fail(kIoError, ...).
bool writeTextOutput(const std::string &path, const std::string &text);

} // namespace strata::cli
