#include "Commands.h"

#include "strata/graph/Parser.h"
#include "strata/graph/Verifier.h"
#include "strata/support/Limits.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace strata::cli {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

namespace {
int lastCode = kFailed;
} // namespace

int fail(int kind, const std::string &text) {
  std::cerr << "error: " << text << "\n";
  // Diagnostics of compiler bugs carry the phase "internal" (docs/cli.md).
  bool internal =
      text.find(": internal: ") != std::string::npos || text.rfind("internal: ", 0) == 0;
  lastCode = internal ? kInternal : kind;
  return lastCode;
}

int failedCode() { return lastCode; }

std::unique_ptr<Graph> loadModel(const std::string &path, const ImportOptions &opts) {
  if (endsWith(path, ".onnx")) {
    auto result = importOnnxFile(path, opts);
    if (!result) {
      fail(kBadModel, llvm::toString(result.takeError()));
      return nullptr;
    }
    return std::move(result->graph);
  }
  auto graph = parseGraphFile(path);
  if (!graph) {
    fail(kBadModel, llvm::toString(graph.takeError()));
    return nullptr;
  }
  if (auto err = verifyGraph(**graph)) {
    fail(kBadModel, path + ": " + llvm::toString(std::move(err)));
    return nullptr;
  }
  return std::move(*graph);
}

void addLimitOption(CLI::App *cmd) {
  std::string names;
  for (const LimitInfo &l : limitTable())
    names += std::string(names.empty() ? "" : ", ") + l.name;
  cmd->add_option_function<std::vector<std::string>>(
         "--limit",
         [](const std::vector<std::string> &assignments) {
           Limits limits = processLimits();
           for (const std::string &a : assignments)
             if (auto why = parseLimitAssignment(a, limits))
               throw CLI::ValidationError("--limit", *why);
           setProcessLimits(limits);
         },
         "Change a resource limit: NAME=VALUE (K/M/G/T suffixes: powers of 1024); names: " + names +
             " (docs/cli.md, \"Limits\")")
      ->type_name("NAME=VALUE");
}

bool writeTextOutput(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return true;
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      fail(kIoError, path + ": write failed");
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail(kIoError, path + ": cannot create file");
    return false;
  }
  return true;
}

} // namespace strata::cli
