// Pipeline parsing and execution: passes run in order, each followed by the checks the options
// ask for (verification, IR dumps, the differential semantics check); fixpoint(...) groups
// repeat until the printed graph stops changing, with a cap and cycle detection.
#include "strata/graph/passes/PassManager.h"
#include "strata/support/CrashContext.h"
#include "strata/support/Error.h"

#include "GraphState.h"
#include "SemanticsCheck.h"

#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"

#include "llvm/Support/Format.h"

#include <cctype>
#include <chrono>
#include <optional>

namespace strata {

struct PassManager::Node {
  std::unique_ptr<Pass> pass;              // a single pass, or
  std::vector<std::shared_ptr<Node>> body; // the passes of a fixpoint group
  bool isGroup() const { return !pass; }
  std::string text() const {
    if (!isGroup())
      return std::string(pass->name());
    std::string s = "fixpoint(";
    for (size_t i = 0; i < body.size(); ++i)
      s += (i ? "," : "") + body[i]->text();
    return s + ")";
  }
};

namespace {

std::string availablePasses() {
  std::string s;
  for (const PassInfo &p : passRegistry())
    s += (s.empty() ? "" : ", ") + p.name;
  return s + ", default, fixpoint(...)";
}

// Recursive-descent reader of the pipeline grammar:
//   list := item (',' item)*     item := 'fixpoint' '(' list ')' | 'default' | pass-name
class PipelineParser {
public:
  using NodeList = std::vector<std::shared_ptr<PassManager::Node>>;
  explicit PipelineParser(std::string_view text) : text_(text) {}

  llvm::Error parse(NodeList &out) {
    if (auto err = parseList(out))
      return err;
    skipSpace();
    if (pos_ != text_.size())
      return syntaxError(std::string("unexpected '") + text_[pos_] + "'");
    return llvm::Error::success();
  }

private:
  llvm::Error parseList(NodeList &out) {
    do {
      if (auto err = parseItem(out))
        return err;
      skipSpace();
    } while (consume(','));
    return llvm::Error::success();
  }

  llvm::Error parseItem(NodeList &out) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
            text_[pos_] == '_'))
      ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (name.empty())
      return syntaxError("expected a pass name");
    skipSpace();
    if (name == "fixpoint") {
      if (!consume('('))
        return syntaxError("expected '(' after 'fixpoint'");
      auto group = std::make_shared<PassManager::Node>();
      if (auto err = parseList(group->body))
        return err;
      if (!consume(')'))
        return syntaxError("expected ')' closing 'fixpoint('");
      out.push_back(std::move(group));
      return llvm::Error::success();
    }
    if (name == "default") {
      // The standard pipeline is itself pipeline text; it never mentions `default`.
      PipelineParser inner(PassManager::defaultPipeline());
      return inner.parse(out);
    }
    const PassInfo *info = lookupPass(name);
    if (!info)
      return makeError("unknown pass '" + name + "' in pipeline; available: " +
                       availablePasses());
    auto node = std::make_shared<PassManager::Node>();
    node->pass = info->create();
    out.push_back(std::move(node));
    return llvm::Error::success();
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  llvm::Error syntaxError(const std::string &what) const {
    return makeError("pipeline syntax error at column " + std::to_string(pos_ + 1) + " of '" +
                     std::string(text_) + "': " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

std::string_view PassManager::defaultPipeline() {
  return "resolve-broadcast-dims,fixpoint(canonicalize,constant-fold,cse,dce),"
         "hoist-loop-invariants,raise-layer-norm,fuse-attention,conv-transpose-to-conv,"
         "fold-batchnorm,fuse-bias,"
         "fixpoint(canonicalize,constant-fold,cse,dce),layout-nchwc,winograd,conv1x1-to-matmul,conv-transpose-to-matmul,"
         "pack-matmul-weights,"
         "fixpoint(canonicalize,cse,dce),fuse,dce";
}

llvm::Error PassManager::parsePipeline(std::string_view text) {
  std::vector<std::shared_ptr<Node>> nodes;
  if (auto err = PipelineParser(text).parse(nodes))
    return err;
  pipeline_.insert(pipeline_.end(), nodes.begin(), nodes.end());
  return llvm::Error::success();
}

void PassManager::addPass(std::unique_ptr<Pass> pass) {
  auto node = std::make_shared<Node>();
  node->pass = std::move(pass);
  pipeline_.push_back(std::move(node));
}

void PassManager::addFixpoint(std::vector<std::unique_ptr<Pass>> body) {
  auto group = std::make_shared<Node>();
  for (auto &p : body) {
    auto node = std::make_shared<Node>();
    node->pass = std::move(p);
    group->body.push_back(std::move(node));
  }
  pipeline_.push_back(std::move(group));
}

std::string PassManager::pipelineText() const {
  std::string s;
  for (size_t i = 0; i < pipeline_.size(); ++i)
    s += (i ? "," : "") + pipeline_[i]->text();
  return s;
}

namespace {

// State of one PassManager::run: the options, the semantics reference and the timings.
class Runner {
public:
  Runner(const PassManagerOptions &opts, PassContext &ctx)
      : opts_(opts), ctx_(ctx), log_(opts.log ? *opts.log : llvm::errs()) {
#ifndef NDEBUG
    verify_ = true; // debug builds always verify after each pass
#else
    verify_ = opts.verifyEach;
#endif
  }

  llvm::Error run(const std::vector<std::shared_ptr<PassManager::Node>> &pipeline, Graph &g) {
    Clock::time_point start = Clock::now();
    if (opts_.verifySemantics) {
      Clock::time_point t = Clock::now();
      auto ref = makeSemanticsReference(g, opts_.semanticsSeed);
      if (!ref)
        return ref.takeError();
      reference_ = std::move(*ref);
      semanticsSeconds_ += secondsSince(t);
    }
    for (const auto &node : pipeline) {
      auto changed = runNode(*node, g);
      if (!changed)
        return changed.takeError();
    }
    if (opts_.timePasses)
      printTimings(secondsSince(start));
    return llvm::Error::success();
  }

private:
  llvm::Expected<bool> runNode(const PassManager::Node &node, Graph &g) {
    if (node.isGroup())
      return runFixpoint(node, g);
    return runPass(*node.pass, g);
  }

  llvm::Expected<bool> runPass(Pass &pass, Graph &g) {
    std::string name(pass.name());
    // --verify-semantics trusts no report: the graph's state before and after tells whether the
    // pass changed it (fingerprinting costs far less than the interpretation that follows).
    std::string before;
    if (reference_) {
      Clock::time_point f = Clock::now();
      before = fingerprinter_.fingerprint(g);
      semanticsSeconds_ += secondsSince(f);
    }
    setCrashContext("running pass '" + name + "'");
    Clock::time_point t = Clock::now();
    auto changed = pass.run(g, ctx_);
    const double seconds = secondsSince(t);
    Timing &timing = timingFor(name);
    timing.seconds += seconds;
    ++timing.runs;
    if (!changed)
      return makeError("pass '" + name + "' failed: " + llvm::toString(changed.takeError()));
    if (*changed)
      ctx_.stats.add(name + ".changed");
    if (opts_.afterPass)
      if (llvm::Error err = opts_.afterPass(name, *changed, seconds, g))
        return err;
    if (opts_.printIrAfterAll || opts_.printIrAfter.count(name)) {
      log_ << "// -----// IR after " << name << " //----- //\n";
      printGraph(g, log_);
      log_.flush();
    }
    if (verify_) {
      Clock::time_point v = Clock::now();
      llvm::Error err = verifyGraph(g);
      verifySeconds_ += secondsSince(v);
      if (err)
        return makeError( // a pass broke the IR: a compiler bug (phase "internal", docs/cli.md)
            Diagnostic::error("verification failed after pass '" + name +
                              "': " + llvm::toString(std::move(err)))
                .inPhase("internal"));
    }
    // Every pass that changed the graph is checked; one that changed it while reporting no
    // change is itself a bug (fixpoint groups stop on that report), and fails here.
    if (reference_) {
      Clock::time_point s = Clock::now();
      bool differs = fingerprinter_.fingerprint(g) != before;
      llvm::Error err = llvm::Error::success();
      if (differs && !*changed)
        err = makeError("pass '" + name + "' changed the graph but reported no change");
      else if (differs || *changed)
        err = checkSemantics(g, *reference_, opts_.semanticsTolerance, name);
      semanticsSeconds_ += secondsSince(s);
      if (err)
        return err;
    }
    return *changed;
  }

  // Repeats the body until an iteration changes nothing. Graph states are compared by their
  // fingerprints (what the printed IR shows): an iteration that leaves the state as it was is a
  // fixed point even when a pass claimed a change; returning to an older state is a cycle.
  llvm::Expected<bool> runFixpoint(const PassManager::Node &group, Graph &g) {
    Clock::time_point t = Clock::now();
    std::vector<std::string> states{fingerprinter_.fingerprint(g)}; // states[i]: after iteration i
    fixpointSeconds_ += secondsSince(t);
    bool anyChange = false;
    for (int iter = 1; iter <= opts_.fixpointCap; ++iter) {
      bool changed = false;
      for (const auto &node : group.body) {
        auto c = runNode(*node, g);
        if (!c)
          return c.takeError();
        changed |= *c;
      }
      if (!changed)
        return anyChange;
      t = Clock::now();
      std::string state = fingerprinter_.fingerprint(g);
      fixpointSeconds_ += secondsSince(t);
      if (state == states.back())
        return anyChange;
      anyChange = true;
      for (size_t m = 0; m + 1 < states.size(); ++m)
        if (states[m] == state)
          return makeError(group.text() + " cycles: graph state after iteration " +
                           std::to_string(iter) + " repeats iteration " + std::to_string(m));
      states.push_back(std::move(state));
    }
    return makeError(group.text() + " did not reach a fixed point within " +
                     std::to_string(opts_.fixpointCap) + " iterations");
  }

  struct Timing {
    std::string name;
    double seconds = 0;
    int64_t runs = 0;
  };
  Timing &timingFor(const std::string &name) {
    for (Timing &t : timings_)
      if (t.name == name)
        return t;
    timings_.push_back({name, 0, 0});
    return timings_.back();
  }

  void printRow(double seconds, const std::string &runs, const std::string &what) {
    log_ << llvm::format("  %10.4f  %6s  %s\n", seconds, runs.c_str(), what.c_str());
  }
  void printTimings(double total) {
    log_ << "===--- pass execution timing report ---===\n";
    log_ << "    wall (s)    runs  pass\n";
    for (const Timing &t : timings_)
      printRow(t.seconds, std::to_string(t.runs), t.name);
    if (fixpointSeconds_ > 0)
      printRow(fixpointSeconds_, "", "(fixpoint state comparison)");
    if (verify_)
      printRow(verifySeconds_, "", "(verification)");
    if (reference_)
      printRow(semanticsSeconds_, "", "(semantics check)");
    printRow(total, "", "total");
    log_.flush();
  }

  const PassManagerOptions &opts_;
  PassContext &ctx_;
  llvm::raw_ostream &log_;
  bool verify_ = false;
  std::optional<SemanticsReference> reference_;
  GraphStateFingerprinter fingerprinter_; // shared by all groups: constants hashed once
  std::vector<Timing> timings_;
  double verifySeconds_ = 0, semanticsSeconds_ = 0, fixpointSeconds_ = 0;
};

} // namespace

llvm::Error PassManager::run(Graph &g, PassContext &ctx) {
  Runner runner(opts_, ctx);
  return runner.run(pipeline_, g);
}

} // namespace strata
