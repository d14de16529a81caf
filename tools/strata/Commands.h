// Subcommands of the `strata` driver. Each registers its options on the CLI11 app and runs.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/import/OnnxImporter.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace strata::cli {

// A subcommand's action, run after parsing; returns the process exit code.
using Action = std::function<int()>;

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

// `--limit NAME=VALUE` (repeatable): sets a process limit (support/Limits.h) while the command
// line is parsed; a bad name or value is a usage error.
void addLimitOption(CLI::App *cmd);

// Writes `text` to `path` atomically ("-" = stdout). Returns false after fail(kIoError, ...).
bool writeTextOutput(const std::string &path, const std::string &text);

} // namespace strata::cli
