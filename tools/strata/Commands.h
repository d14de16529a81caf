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

Action addImportCommand(CLI::App &app);
Action addRunCommand(CLI::App &app);
Action addConformanceCommand(CLI::App &app);
Action addCompileCommand(CLI::App &app);
Action addBenchCommand(CLI::App &app);

// Loads a model: `.onnx` through the importer, anything else as graph IR text. Prints the error
// to stderr and returns null on failure.
std::unique_ptr<Graph> loadModel(const std::string &path, const ImportOptions &opts = {});

// Writes `text` to `path` atomically ("-" = stdout). Returns false after printing an error.
bool writeTextOutput(const std::string &path, const std::string &text);

} // namespace strata::cli
