// strata conformance DIR: runs ONNX backend test folders (model.onnx, test_data_set_*/) and
// compares with ONNX's tolerances. Tests run in forked worker processes, so a crash or hang in
// one test is reported as that test's failure instead of ending the run.
#include "Commands.h"

#include "strata/graph/passes/PassManager.h"
#include "strata/interp/Interpreter.h"
#include "strata/driver/CompiledModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace strata::cli {

namespace {

struct ConfOpts {
  std::string dir, engine = "interp", filter, expected, writePasses, passes, shard;
  double rtol = 1e-3, atol = 1e-7;
  bool specializeInputs = false;
  unsigned timeoutSeconds = 120;
};

enum class Outcome { Pass, Fail, Unsupported };

struct TestResult {
  Outcome outcome;
  std::string reason;
};

std::vector<fs::path> sortedEntries(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> v;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      v.push_back(e.path());
  // input_10 must come after input_9: sort by the numeric suffix.
  std::sort(v.begin(), v.end(), [](const fs::path &a, const fs::path &b) {
    auto num = [](const fs::path &p) {
      std::string s = p.stem().string();
      size_t u = s.rfind('_');
      return u == std::string::npos ? 0L : std::strtol(s.c_str() + u + 1, nullptr, 10);
    };
    return num(a) < num(b);
  });
  return v;
}

// ONNX 1.12 stores bfloat16 test data as uint16 tensors holding the bits; view them as bf16.
Tensor asDType(const Tensor &t, DType wanted) {
  if (wanted == DType::BF16 && t.dtype() == DType::U16)
    return Tensor(DType::BF16, t.shape(), t.buffer());
  return t;
}

// Compares with numpy.testing.assert_allclose semantics: |a - b| <= atol + rtol * |b| where both
// are finite; an infinity matches only the same infinity and a NaN only a NaN (numpy.isclose with
// equal_nan); shapes and dtypes must agree.
std::optional<std::string> compare(const Tensor &got, const Tensor &wantIn, double rtol,
                                   double atol) {
  Tensor want = asDType(wantIn, got.dtype());
  if (got.dtype() != want.dtype())
    return fmt::format("dtype {} but expected {}", dtypeName(got.dtype()), dtypeName(want.dtype()));
  if (got.shape() != want.shape())
    return fmt::format("shape [{}] but expected [{}]", fmt::join(got.shape(), ","),
                       fmt::join(want.shape(), ","));
  double worst = 0;
  int64_t worstIndex = -1, bad = 0;
  for (int64_t i = 0, n = want.numElements(); i < n; ++i) {
    double a = got.getDouble(i), b = want.getDouble(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) {
        ++bad;
        worstIndex = i;
        worst = INFINITY;
      }
      continue;
    }
    if (a == b)
      continue;
    double err = std::fabs(a - b); // inf when either is infinite (and they differ)
    if (std::isinf(a) || std::isinf(b) || !(err <= atol + rtol * std::fabs(b))) {
      ++bad;
      if (!(err <= worst)) {
        worst = err;
        worstIndex = i;
      }
    }
  }
  if (!bad)
    return std::nullopt;
  return fmt::format("mismatch in {} of {} elements, max abs error {:.6g} at index {} (got {:.9g}, "
                     "expected {:.9g})",
                     bad, want.numElements(), worst, worstIndex, got.getDouble(worstIndex),
                     want.getDouble(worstIndex));
}

TestResult runTest(const fs::path &testDir, const ConfOpts &o) {
  fs::path model = testDir / "model.onnx";
  auto dataSets = sortedEntries(testDir, "test_data_set_");
  if (dataSets.empty())
    return {Outcome::Fail, "no test_data_set_* folder"};

  // Read the first data set's inputs up front: they may specialize shape inputs at import.
  auto readSet = [&](const fs::path &set, const std::string &prefix,
                     std::vector<std::pair<std::string, Tensor>> &out) -> std::optional<std::string> {
    for (const fs::path &p : sortedEntries(set, prefix)) {
      std::string name;
      auto t = readTensorProtoFile(p.string(), &name);
      if (!t)
        return llvm::toString(t.takeError());
      out.push_back({name, std::move(*t)});
    }
    return std::nullopt;
  };
  std::vector<std::pair<std::string, Tensor>> firstInputs;
  if (auto err = readSet(dataSets[0], "input_", firstInputs))
    return {Outcome::Unsupported, "unsupported test data: " + *err};

  // Specializing (--specialize-inputs): the first data set's shape-deciding inputs become
  // constants at import. Otherwise the model runs as `strata run` runs it: imported as it is, or,
  // when its shape arithmetic folds only at known sizes or some inputs' values decide shapes,
  // imported again at each data set's binding: its input shapes and the values of those inputs
  // (docs/runtime.md).
  ImportOptions io;
  if (o.specializeInputs)
    for (auto &[name, t] : firstInputs)
      io.specializableInputs[name] = t;
  auto importFailure = [](std::string msg) -> TestResult {
    bool unsupported = msg.find("unsupported") != std::string::npos;
    return {unsupported ? Outcome::Unsupported : Outcome::Fail, std::move(msg)};
  };
  auto imported = importOnnxFile(model.string(), io);
  std::vector<std::string> perShapeInputs; // non-empty: imported per data set at its binding
  std::vector<std::string> valueInputs;    // inputs whose values are part of the binding
  if (!imported) {
    std::string msg = llvm::toString(imported.takeError());
    if (o.specializeInputs)
      return importFailure(msg);
    auto interface = perShapeInterface(model.string());
    if (!interface)
      return importFailure(msg);
    for (const auto &in : interface->inputs)
      perShapeInputs.push_back(in.first);
    valueInputs = interface->valueInputs;
  }

  // Makes `g` runnable: optimized (interp with --passes) or compiled (jit). The jit engine
  // compiles once per graph (its pipeline: --passes if given, else its default); a missing
  // lowering is UNSUPPORTED, so the counts say what is not built yet.
  std::unique_ptr<driver::CompiledModel> compiled;
  auto prepare = [&](Graph &g) -> std::optional<TestResult> {
    compiled.reset();
    if (o.engine == "jit") {
      driver::CompileOptions co;
      if (!o.passes.empty())
        co.pipeline = o.passes;
      auto m = driver::compileModel(g, co);
      if (!m) {
        std::string msg = llvm::toString(m.takeError());
        bool missing = msg.find("not implemented yet") != std::string::npos ||
                       msg.find("not supported by the jit engine yet") != std::string::npos;
        return TestResult{missing ? Outcome::Unsupported : Outcome::Fail, msg};
      }
      compiled = std::move(*m);
    } else if (!o.passes.empty()) {
      PassManager pm;
      PassContext ctx;
      llvm::Error err = pm.parsePipeline(o.passes);
      if (!err)
        err = pm.run(g, ctx);
      if (err)
        return TestResult{Outcome::Fail, "optimizing: " + llvm::toString(std::move(err))};
    }
    return std::nullopt;
  };
  std::unique_ptr<Graph> graph;
  std::vector<Shape> graphShapes; // the input shapes `graph` was imported at (per-shape import)
  std::map<std::string, Tensor> graphValues; // and the value inputs' values
  std::set<std::string> specialized;
  if (imported) {
    graph = std::move(imported->graph);
    if (auto r = prepare(*graph))
      return *r;
    specialized.insert(imported->specializedInputs.begin(), imported->specializedInputs.end());
  }

  for (const fs::path &set : dataSets) {
    std::vector<std::pair<std::string, Tensor>> ins, outs;
    if (set == dataSets[0])
      ins = firstInputs;
    else if (auto err = readSet(set, "input_", ins))
      return {Outcome::Unsupported, "unsupported test data: " + *err};
    if (auto err = readSet(set, "output_", outs))
      return {Outcome::Unsupported, "unsupported test data: " + *err};
    auto find = [&](const std::string &name) {
      return std::find_if(ins.begin(), ins.end(), [&](auto &p) { return p.first == name; });
    };
    if (!perShapeInputs.empty()) {
      std::vector<Shape> shapes;
      for (const std::string &name : perShapeInputs) {
        auto it = find(name);
        if (it == ins.end())
          return {Outcome::Fail, "no test data for input '" + name + "'"};
        shapes.push_back(it->second.shape());
      }
      std::map<std::string, Tensor> values;
      for (const std::string &name : valueInputs)
        if (auto it = find(name); it != ins.end())
          values[name] = it->second;
      // Data sets of one binding share import and compile.
      if (!graph || shapes != graphShapes || values != graphValues) {
        auto g = importOnnxFileAtShapes(model.string(), perShapeInputs, shapes, values);
        if (!g)
          return importFailure(llvm::toString(g.takeError()));
        graph = std::move(*g);
        graphShapes = std::move(shapes);
        graphValues = std::move(values);
        if (auto r = prepare(*graph))
          return *r;
      }
    }
    Graph &g = *graph;

    std::vector<Tensor> inputs;
    for (unsigned i = 0; i < g.numInputs(); ++i) {
      const std::string &name = g.input(i)->name();
      auto it = find(name);
      if (it == ins.end())
        return {Outcome::Fail, "no test data for input '" + name + "'"};
      inputs.push_back(asDType(it->second, g.input(i)->type().dtype));
    }
    for (auto &[name, t] : ins)
      if (specialized.count(name) && set != dataSets[0] &&
          !t.identical(io.specializableInputs[name]))
        return {Outcome::Unsupported,
                "input '" + name + "' was specialized but differs between data sets"};

    auto results = compiled ? compiled->run(inputs) : interpret(g, inputs);
    if (!results)
      return {Outcome::Fail, llvm::toString(results.takeError())};
    if (results->size() != outs.size())
      return {Outcome::Fail, fmt::format("{} outputs but expected {}", results->size(), outs.size())};
    for (size_t i = 0; i < outs.size(); ++i)
      if (auto diff = compare((*results)[i], outs[i].second, o.rtol, o.atol))
        return {Outcome::Fail, "output '" + g.outputName(static_cast<unsigned>(i)) + "': " + *diff};
  }
  return {Outcome::Pass, ""};
}

// Runs tests[first..] in one forked worker, at most kTestsPerWorker of them: a crash or hang
// ends only the worker, and the test it was running is that test's failure. One worker per
// test cost four times the tests' own time (every child set LLVM up again and faulted in a
// fresh heap: 10 s against 2.4 s for 189 JIT tests, 38 s against 7 s under AddressSanitizer).
// Each result is one line on the pipe, "INDEX OUTCOME REASON", written with one write() of at
// most PIPE_BUF bytes so that a worker dying mid-test never leaves half a record.
constexpr size_t kTestsPerWorker = 64;

// Runs at most `count` tests from `first`. Returns the index after the last test the worker
// got to; when it died running one after others, that test is left unreported (`blamed`) for
// the caller to run alone, since what killed it may be an earlier test's doing.
size_t runWorker(const std::vector<fs::path> &tests, size_t first, size_t count,
                 const ConfOpts &o, const std::function<void(size_t, TestResult)> &report,
                 std::optional<size_t> &blamed) {
  blamed.reset();
  const size_t last = std::min(tests.size(), first + count);
  int fds[2] = {-1, -1};
  std::cout.flush();
  std::fflush(stdout);
  const pid_t pid = pipe(fds) == 0 ? fork() : -1;
  if (pid < 0) { // no isolation rather than no run
    for (int fd : fds)
      if (fd >= 0)
        close(fd);
    report(first, runTest(tests[first], o));
    return first + 1;
  }
  if (pid == 0) {
    close(fds[0]);
    // The timeout needs SIGALRM's default action, whatever the launching process left set.
    std::signal(SIGALRM, SIG_DFL);
    sigset_t alarmOnly;
    sigemptyset(&alarmOnly);
    sigaddset(&alarmOnly, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alarmOnly, nullptr);
    for (size_t i = first; i < last; ++i) {
      alarm(o.timeoutSeconds); // the default action of SIGALRM ends the worker
      TestResult r = runTest(tests[i], o);
      alarm(0);
      std::replace(r.reason.begin(), r.reason.end(), '\n', ' ');
      std::string line = fmt::format("{} {} ", i, static_cast<int>(r.outcome));
      size_t room = PIPE_BUF - line.size() - 1;
      line += r.reason.size() > room ? r.reason.substr(0, room - 3) + "..." : r.reason;
      line += '\n';
      if (write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        _exit(1);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  size_t next = first; // the first test without a result
  std::string pending;
  char buf[4096];
  ssize_t n;
  auto takeLines = [&] {
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      std::string line = pending.substr(0, nl);
      unsigned long index = 0;
      int outcome = 0, used = 0;
      if (std::sscanf(line.c_str(), "%lu %d %n", &index, &outcome, &used) < 2 || index != next ||
          outcome < 0 || outcome > static_cast<int>(Outcome::Unsupported))
        continue; // not a record this worker could have written; the test stays unreported
      report(next++, {static_cast<Outcome>(outcome), line.substr(static_cast<size_t>(used))});
    }
  };
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0)
      pending.append(buf, static_cast<size_t>(n));
    takeLines();
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (next == last)
    return next;
  // The worker ended before reporting tests[next]: that test ended it, or one before it left
  // the process broken; then the caller runs it alone.
  if (next != first) {
    blamed = next;
    return next;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    report(next, {Outcome::Fail, sig == SIGALRM
                                     ? fmt::format("timed out after {} s", o.timeoutSeconds)
                                     : fmt::format("crashed with signal {} ({})", sig,
                                                   strsignal(sig))});
  } else {
    report(next, {Outcome::Fail, fmt::format("test process exited with status {} without a result",
                                             WIFEXITED(status) ? WEXITSTATUS(status) : -1)});
  }
  return next + 1;
}

std::set<std::string> readNameList(const std::string &path) {
  std::set<std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    names.insert(line);
  }
  return names;
}

// Whether test `name` is in shard `index` of `count`: by a stable hash of the name, so the shards
// of one run partition the tests and the expected list alike, whatever DIR holds.
bool inShard(const std::string &name, unsigned index, unsigned count) {
  return llvm::xxh3_64bits(llvm::arrayRefFromStringRef(name)) % count == index;
}

int runConformance(const ConfOpts &o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec))
    return fail(kUsage, o.dir + ": not a directory");
  unsigned shardIndex = 0, shardCount = 1;
  if (!o.shard.empty()) {
    unsigned long i = 0, n = 0;
    char slash = 0, extra = 0;
    if (std::sscanf(o.shard.c_str(), "%lu%c%lu%c", &i, &slash, &n, &extra) != 3 || slash != '/' ||
        n == 0 || n > 1000 || i >= n)
      return fail(kUsage, "--shard expects I/N with 0 <= I < N <= 1000, got '" + o.shard + "'");
    shardIndex = static_cast<unsigned>(i);
    shardCount = static_cast<unsigned>(n);
  }
  std::regex filter;
  try {
    filter = std::regex(o.filter.empty() ? ".*" : o.filter);
  } catch (const std::regex_error &e) {
    return fail(kUsage, std::string("--filter: invalid regular expression: ") + e.what());
  }
  auto selected = [&](const std::string &name) {
    return std::regex_search(name, filter) && inShard(name, shardIndex, shardCount);
  };
  std::vector<fs::path> tests;
  for (const auto &e : fs::directory_iterator(o.dir, ec))
    if (fs::exists(e.path() / "model.onnx") && selected(e.path().filename().string()))
      tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());

  std::set<std::string> expected;
  if (!o.expected.empty()) {
    if (!fs::exists(o.expected))
      return fail(kUsage, o.expected + ": no such file");
    expected = readNameList(o.expected);
  }

  // A listed test (within --filter) with no folder is a regression too: an empty or partial test
  // folder must not pass for a complete run.
  std::vector<std::string> missing;
  {
    std::set<std::string> present;
    for (const fs::path &t : tests)
      present.insert(t.filename().string());
    for (const std::string &name : expected)
      if (selected(name) && !present.count(name))
        missing.push_back(name);
  }

  int passed = 0, failed = 0, unsupported = 0;
  std::vector<std::string> passes, regressions;
  auto record = [&](size_t i, TestResult r) {
    std::string name = tests[i].filename().string();
    if (r.outcome == Outcome::Pass) {
      ++passed;
      passes.push_back(name);
      return;
    }
    ++failed;
    if (r.outcome == Outcome::Unsupported)
      ++unsupported;
    std::replace(r.reason.begin(), r.reason.end(), '\n', ' ');
    fmt::print("{} {}: {}\n", r.outcome == Outcome::Unsupported ? "UNSUPPORTED" : "FAIL", name,
               r.reason);
    std::fflush(stdout);
    if (expected.count(name))
      regressions.push_back(name);
  };
  for (size_t next = 0; next < tests.size();) {
    std::optional<size_t> blamed;
    next = runWorker(tests, next, kTestsPerWorker, o, record, blamed);
    if (blamed) { // alone, in a fresh process: its own result, and a note if it passes there
      bool passedAlone = false;
      std::optional<size_t> again;
      next = runWorker(
          tests, *blamed, 1, o,
          [&](size_t i, TestResult r) {
            passedAlone = r.outcome == Outcome::Pass;
            record(i, std::move(r));
          },
          again);
      if (passedAlone)
        fmt::print("NOTE {}: its worker died running it after other tests; alone it passed\n",
                   tests[*blamed].filename().string());
    }
  }
  if (!o.writePasses.empty()) {
    std::string text = "# ONNX node tests expected to pass (engine: " + o.engine + ")\n";
    for (const std::string &p : passes)
      text += p + "\n";
    if (!writeTextOutput(o.writePasses, text))
      return failedCode();
  }
  for (const std::string &r : regressions)
    fmt::print("REGRESSION {}: listed in {} but failed\n", r, o.expected);
  for (const std::string &m : missing)
    fmt::print("REGRESSION {}: listed in {} but has no test folder (model.onnx) in {}\n", m,
               o.expected, o.dir);
  fmt::print("{} unsupported\n", unsupported);
  fmt::print("{} passed, {} failed\n", passed, failed);
  if (!missing.empty())
    fmt::print("{} listed tests missing\n", missing.size());
  if (!o.expected.empty())
    return regressions.empty() && missing.empty() ? 0 : 1;
  return failed == 0 ? 0 : 1;
}

} // namespace

Action addConformanceCommand(CLI::App &app) {
  auto o = std::make_shared<ConfOpts>();
  CLI::App *cmd = app.add_subcommand("conformance", "Run ONNX backend test folders");
  addLimitOption(cmd);
  cmd->add_option("dir", o->dir, "Folder of ONNX backend test folders")->required();
  cmd->add_option("--engine", o->engine, "Execution engine")
      ->check(CLI::IsMember({"interp", "jit"}))
      ->capture_default_str();
  cmd->add_option("--filter", o->filter, "Only tests whose name matches this regex");
  cmd->add_option("--expected", o->expected,
                  "File of test names that must pass; exit 1 only if one of them fails");
  cmd->add_option("--write-passes", o->writePasses, "Write the names of passing tests here");
  cmd->add_flag("--specialize-inputs", o->specializeInputs,
                "Fold the first data set's shape-deciding inputs (a Reshape's shape, Slice's "
                "starts, ...) into constants at import, as if the model had them built in; "
                "without it the model runs as `strata run` runs it");
  cmd->add_option("--passes", o->passes,
                  "Optimize each test's graph with this pipeline (e.g. default) before running it");
  cmd->add_option("--timeout", o->timeoutSeconds, "Seconds allowed per test")->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run only shard I of N (I/N): the tests, and listed names, whose name hash is I "
                  "modulo N; N processes with 0/N..N-1/N run every test once");
  return [o]() { return runConformance(*o); };
}

} // namespace strata::cli
