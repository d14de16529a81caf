#include "Commands.h"

#include "strata/graph/Parser.h"
#include "strata/graph/Verifier.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace strata::cli {

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::unique_ptr<Graph> loadModel(const std::string &path, const ImportOptions &opts) {
  if (endsWith(path, ".onnx")) {
    auto result = importOnnxFile(path, opts);
    if (!result) {
      std::cerr << "error: " << llvm::toString(result.takeError()) << "\n";
      return nullptr;
    }
    return std::move(result->graph);
  }
  auto graph = parseGraphFile(path);
  if (!graph) {
    std::cerr << "error: " << llvm::toString(graph.takeError()) << "\n";
    return nullptr;
  }
  if (auto err = verifyGraph(**graph)) {
    std::cerr << "error: " << path << ": " << llvm::toString(std::move(err)) << "\n";
    return nullptr;
  }
  return std::move(*graph);
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
      std::cerr << "error: " << path << ": write failed\n";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    std::cerr << "error: " << path << ": cannot create file\n";
    return false;
  }
  return true;
}

} // namespace strata::cli
