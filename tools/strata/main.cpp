// strata: the compiler driver. `strata <command> --help` documents each command; exit codes are
// listed in docs/cli.md and Commands.h.
#include "Commands.h"

#include "strata/support/CrashContext.h"
#include "strata/support/Sanitizers.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"

#include <csignal>
#include <cstring>
#include <iostream>
#include <unistd.h>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace {

// strata's version, LLVM's, and the host target with the CPU features LLVM detects.
std::string versionText() {
  std::string features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    if (f.second)
      features += (features.empty() ? "" : " ") + f.first().str();
  return "strata " STRATA_VERSION "\nLLVM " LLVM_VERSION_STRING "\nhost: " +
         llvm::sys::getDefaultTargetTriple() + ", cpu " + llvm::sys::getHostCPUName().str() +
         "\nfeatures: " + features;
}

#if !defined(STRATA_ADDRESS_SANITIZER) && !defined(STRATA_THREAD_SANITIZER)
// A crash is a bug: say what strata was doing (CrashContext.h), then die of the signal as
// before. Only async-signal-safe calls. Sanitizer builds keep the sanitizer's better report.
void onCrash(int sig) {
  const char *what = strata::crashContext();
  const char *name = sig == SIGSEGV  ? "SIGSEGV"
                     : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE"
                     : sig == SIGILL ? "SIGILL"
                                     : "SIGABRT";
  auto put = [](const char *s) { (void)!::write(2, s, std::strlen(s)); };
  put("strata: internal error: crashed with ");
  put(name);
  put(*what ? " while " : " (no activity recorded)");
  put(what);
  put("\nplease report this with the model and the command line\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void installCrashHandler() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, onCrash);
}
#else
void installCrashHandler() {}
#endif

} // namespace

int main(int argc, char **argv) {
  installCrashHandler();
  CLI::App app{"strata: a neural-network compiler (ONNX -> graph IR -> native code)"};
  app.set_version_flag("--version", versionText,
                       "Print strata's and LLVM's versions and the host "
                       "target with its CPU features");
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
  add(strata::cli::addBisectCommand);
  add(strata::cli::addExplainCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e); // prints help, the version, or the usage error
    return code == 0 ? strata::cli::kOk : strata::cli::kUsage;
  }
  for (auto &[sub, action] : commands)
    if (sub->parsed()) {
      try {
        return action();
      } catch (const std::exception &e) { // every expected failure is an error value: a bug
        return strata::cli::fail(strata::cli::kInternal,
                                 std::string("internal: uncaught exception: ") + e.what());
      }
    }
  return strata::cli::kUsage;
}
