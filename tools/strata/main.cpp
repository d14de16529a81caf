// strata: the compiler driver. `strata <command> --help` documents each command.
#include "Commands.h"

#include "llvm/Support/InitLLVM.h"

#include <iostream>

int main(int argc, char **argv) {
  CLI::App app{"strata: a neural-network compiler (ONNX -> graph IR -> native code)"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App *, strata::cli::Action>> commands;
  auto add = [&](strata::cli::Action (*adder)(CLI::App &)) {
    size_t before = app.get_subcommands({}).size();
    strata::cli::Action action = adder(app);
    commands.push_back({app.get_subcommands({})[before], std::move(action)});
  };
  add(strata::cli::addImportCommand);
  add(strata::cli::addRunCommand);
  add(strata::cli::addConformanceCommand);
  add(strata::cli::addCompileCommand);
  add(strata::cli::addBenchCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  for (auto &[sub, action] : commands)
    if (sub->parsed())
      return action();
  return 1;
}
