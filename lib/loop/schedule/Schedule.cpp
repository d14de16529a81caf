// Schedule text form and the step dispatcher.
#include "ScheduleInternal.h"
#include "strata/loop/Verifier.h"
#include "strata/support/Error.h"

#include "llvm/ADT/StringExtras.h"

namespace strata::loop {

namespace {

struct Primitive {
  std::string_view name;
  size_t minArgs, maxArgs;                   // maxArgs SIZE_MAX: variadic
  std::vector<size_t> forbiddenCounts;       // counts in range that are still invalid
  llvm::Error (*apply)(LoopFunction &, const Step &);
  std::string_view usage;
};

const std::vector<Primitive> &primitives() {
  using namespace sched;
  static const std::vector<Primitive> table = {
      {"split", 2, 4, {3}, applySplit, "split(loop, factor [, outer, inner])"},
      {"tile", 4, 8, {5, 6, 7}, applyTile, "tile(i, j, fi, fj [, io, jo, ii, ji])"},
      {"reorder", 2, SIZE_MAX, {}, applyReorder, "reorder(loop, loop, ...)"},
      {"fuse", 2, 3, {}, applyFuse, "fuse(outer, inner [, fused])"},
      {"vectorize", 1, 2, {}, applyVectorize, "vectorize(loop [, width])"},
      {"unroll", 1, 2, {}, applyUnroll, "unroll(loop [, factor])"},
      {"parallel", 1, 1, {}, applyParallel, "parallel(loop)"},
      {"cache_read", 2, 3, {}, applyCacheRead, "cache_read(buffer, loop [, local])"},
      {"cache_write", 2, 3, {}, applyCacheWrite, "cache_write(buffer, loop [, local])"},
      {"compute_at", 2, 2, {}, applyComputeAt, "compute_at(buffer, loop)"},
      {"compute_inline", 1, 1, {}, applyComputeInline, "compute_inline(buffer)"},
  };
  return table;
}

const Primitive *lookup(std::string_view name) {
  for (const Primitive &p : primitives())
    if (p.name == name)
      return &p;
  return nullptr;
}

bool isNameChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; }

llvm::Error parseError(llvm::StringRef step, const llvm::Twine &msg) {
  return makeError("schedule: '" + step.str() + "': " + msg.str());
}

} // namespace

llvm::Expected<Schedule> parseSchedule(llvm::StringRef text) {
  Schedule sched;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ';');
  for (llvm::StringRef raw : parts) {
    llvm::StringRef part = raw.trim();
    if (part.empty())
      continue; // allows a trailing ';' and an empty schedule
    size_t open = part.find('(');
    if (open == llvm::StringRef::npos || !part.ends_with(")"))
      return parseError(part, "expected 'primitive(args)'");
    Step step{part.take_front(open).trim().str(), {}};
    const Primitive *p = lookup(step.primitive);
    if (!p)
      return parseError(part, "unknown primitive '" + step.primitive + "'");
    llvm::StringRef inside = part.slice(open + 1, part.size() - 1).trim();
    if (!inside.empty()) {
      llvm::SmallVector<llvm::StringRef> args;
      inside.split(args, ',');
      for (llvm::StringRef a : args) {
        a = a.trim();
        a.consume_front("%");
        if (a.empty() || !llvm::all_of(a, isNameChar))
          return parseError(part, "bad argument '" + a.str() + "'");
        step.args.push_back(a.str());
      }
    }
    size_t n = step.args.size();
    if (n < p->minArgs || n > p->maxArgs || llvm::is_contained(p->forbiddenCounts, n))
      return parseError(part, "expected " + std::string(p->usage));
    sched.push_back(std::move(step));
  }
  return sched;
}

std::string printStep(const Step &s) {
  return s.primitive + "(" + llvm::join(s.args, ", ") + ")";
}

std::string printSchedule(const Schedule &s) {
  std::vector<std::string> steps;
  for (const Step &step : s)
    steps.push_back(printStep(step));
  return llvm::join(steps, "; ");
}

llvm::Error applyStep(LoopFunction &f, const Step &step) {
  const Primitive *p = lookup(step.primitive);
  size_t n = step.args.size();
  if (!p || n < p->minArgs || n > p->maxArgs || llvm::is_contained(p->forbiddenCounts, n))
    return parseError(printStep(step), p ? "expected " + std::string(p->usage)
                                         : "unknown primitive '" + step.primitive + "'");
  LoopFunction g = f; // work on a copy so that a failing step leaves f alone
  if (llvm::Error err = p->apply(g, step))
    return err;
  pruneAnnotations(g);
  // Catches, e.g., a new loop name that shadows or duplicates an existing one.
  if (llvm::Error err = verifyFunction(g))
    return sched::stepError(step, "result does not verify:\n" + llvm::toString(std::move(err)));
  f = std::move(g);
  return llvm::Error::success();
}

llvm::Error applySchedule(LoopFunction &f, const Schedule &s) {
  for (const Step &step : s)
    if (llvm::Error err = applyStep(f, step))
      return err;
  return llvm::Error::success();
}

} // namespace strata::loop
