#include "Commands.h"

#include "strata/graph/Parser.h"
#include "strata/graph/Specialize.h"
#include "strata/graph/Verifier.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"

#include <algorithm>
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
      // Say how to import a model whose shape arithmetic folds only at known sizes.
      std::string error = llvm::toString(result.takeError());
      std::optional<OnnxInterface> interface;
      if (opts.inputShapes.empty() && opts.specializableInputs.empty())
        interface = perShapeInterface(path);
      if (interface && !interface->valueInputs.empty()) {
        std::string names;
        for (const std::string &n : interface->valueInputs)
          names += (names.empty() ? "'" : ", '") + n + "'";
        error += "\nnote: inputs " + names + " decide shapes or attributes at import; give "
                 "--value NAME=FILE for each (built for those values), or run it with `strata "
                 "run` (the jit compiles it per value)";
      } else if (interface) {
        error += "\nnote: the model computes shapes from its symbolic input dims; give "
                 "--shape NAME=D0xD1x... for one shape, or run it with `strata run` (the jit "
                 "compiles it per input shape)";
      }
      fail(kBadModel, error);
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

void addShapeOption(CLI::App *cmd, std::vector<std::string> &shapes) {
  cmd->add_option("--shape", shapes,
                  "Compile for this input shape: NAME=D0xD1x... (repeatable; binds its symbolic "
                  "dims)");
}

llvm::Expected<std::map<std::string, Shape>> parseShapeHints(const std::vector<std::string> &specs) {
  std::map<std::string, Shape> shapes;
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    auto bad = [&] {
      return makeError("--shape expects NAME=D0xD1x... (e.g. input=1x3x640x640), got '" + spec +
                       "'");
    };
    if (eq == std::string::npos || eq == 0)
      return bad();
    Shape shape;
    std::string dims = spec.substr(eq + 1);
    size_t pos = 0;
    while (pos <= dims.size() && !dims.empty()) {
      size_t x = dims.find('x', pos);
      std::string part = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
          part.size() > 15)
        return bad();
      shape.push_back(std::stoll(part));
      if (x == std::string::npos)
        break;
      pos = x + 1;
    }
    shapes[spec.substr(0, eq)] = std::move(shape);
  }
  return shapes;
}

std::unique_ptr<Graph> loadModelAtShapes(const std::string &path,
                                         const std::map<std::string, Shape> &shapes,
                                         std::vector<OnnxNode> *nodes,
                                         const std::map<std::string, Tensor> &values) {
  if (endsWith(path, ".onnx")) {
    ImportOptions opts;
    opts.inputShapes = shapes;
    opts.specializableInputs = values;
    auto result = importOnnxFile(path, opts);
    if (!result) {
      fail(kBadModel, llvm::toString(result.takeError()));
      return nullptr;
    }
    for (const auto &[name, shape] : shapes) {
      bool found = false;
      for (const Value *in : result->graph->inputs())
        found |= in->name() == name;
      found |= values.count(name) > 0; // a constant now
      if (!found) {
        fail(kUsage, "--shape names '" + name + "', which is not an input of " + path);
        return nullptr;
      }
    }
    // Each value must have become a constant: an input the importer never needed stays one.
    std::vector<std::string> specialized = result->specializedInputs;
    for (const auto &[name, value] : values)
      if (std::find(specialized.begin(), specialized.end(), name) == specialized.end()) {
        fail(kUsage, "--value names '" + name + "', which is not an input of " + path +
                         " whose value the model needs at import (those are the inputs that "
                         "decide shapes or attributes)");
        return nullptr;
      }
    if (nodes)
      *nodes = std::move(result->nodes);
    return std::move(result->graph);
  }
  if (!values.empty()) {
    fail(kUsage, "--value applies to ONNX models (" + path + " is graph IR)");
    return nullptr;
  }
  std::unique_ptr<Graph> g = loadModel(path);
  if (!g || shapes.empty())
    return g;
  // Bind the named inputs' symbols from their shapes, then infer every op again.
  std::map<std::string, int64_t> sizes;
  for (const auto &[name, shape] : shapes) {
    const Value *input = nullptr;
    for (const Value *in : g->inputs())
      if (in->name() == name)
        input = in;
    if (!input) {
      fail(kUsage, "--shape names '" + name + "', which is not an input of " + path);
      return nullptr;
    }
    auto bound = bindInputSymbols({{name, input->type()}}, {shape});
    if (!bound) {
      fail(kBadInput, path + ": " + llvm::toString(bound.takeError()));
      return nullptr;
    }
    for (const auto &[symbol, size] : *bound) {
      auto [it, inserted] = sizes.emplace(symbol, size);
      if (!inserted && it->second != size) {
        fail(kBadInput, path + ": --shape gives ?" + symbol + " both " +
                            std::to_string(it->second) + " and " + std::to_string(size));
        return nullptr;
      }
    }
  }
  auto specialized = specializeGraph(*g, sizes);
  if (!specialized) {
    fail(kBadInput, path + ": " + llvm::toString(specialized.takeError()));
    return nullptr;
  }
  return std::move(*specialized);
}

void addWinogradOption(CLI::App *cmd, int64_t &tile) {
  cmd->add_option_function<std::string>(
         "--winograd",
         [&tile](const std::string &v) { tile = v == "auto" ? 0 : v == "off" ? -1 : std::stoi(v); },
         "Winograd F(m x m, 3 x 3) for 3x3 stride-1 convs: auto (a cost model picks per conv), "
         "off, or 2 / 4 (that tile wherever it applies)")
      ->check(CLI::IsMember({"auto", "off", "2", "4"}))
      ->type_name("auto|off|2|4");
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
