// The plan's text form, embedded in AOT libraries. One record per line, fields separated by
// spaces; names are percent-escaped so they hold no whitespace. Version line first:
//   strata-plan 1
//   kernels <n> weights <bytes>
//   symbol <name> [<formula>]                      a formula: a derived symbol
//   value <name> <bound>                            a value-bound symbol and its bound formula
//                                                   (* when none: Plan::isUnbounded)
//   invalid <name> <text>                           after an unbounded value line: what a
//                                                   negative value of it means (Plan::invalid)
//   input|output <name> <dtype> <rank> <dim>...     dim: a size, or ?<symbol index>
//   sizesfrom <input>                               an input whose values sizes are read from
//   source <kind> <index>                           one per output, in order
//   buffer <bytes> <first> <last> <nsym> <symbol>...
//   constant <offset> <bytes>
//   step <kernel> <nargs> <kind> <index>... <name>
//   if <then> <else> <ninputs> <nargs> <kind> <index>... <name>     regions' indices
//   loop <body> <ncarried> <ninputs> <nargs> <kind> <index>... <name>
//   region begin ... region end                     a region's plan, this form nested
//   variant <region> <ninputs> (<rank> <dim>...)...  input shapes run by a region's plan
//   check <lhs> <rhs> <where>                        formulas that must be equal when bound
//   atleast <lhs> <rhs> <where>                      lhs >= rhs when bound
//   bind <step> <symbol> <kind> <index>              before the step: symbol = the int64 there
//   resultbind <step> <symbol> <result> <dim>        after the if step: symbol = that result dim;
//                                                    after a loop: the iterations (a scan's dim 0,
//                                                    bounded, or unbounded: grown as it runs)
#include "strata/runtime/Plan.h"

#include "strata/support/SymExpr.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace strata::runtime {

namespace {

constexpr const char *kMagic = "strata-plan";
constexpr int kVersion = 1;

std::string escape(const std::string &s) {
  static const char *hex = "0123456789ABCDEF";
  std::string r;
  for (unsigned char c : s) {
    if (c <= ' ' || c == '%' || c >= 0x7f) {
      r += '%';
      r += hex[c >> 4];
      r += hex[c & 15];
    } else {
      r += static_cast<char>(c);
    }
  }
  return r.empty() ? "%" : r; // "%" alone: the empty name
}

bool unescape(const std::string &s, std::string &out) {
  out.clear();
  if (s == "%")
    return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size())
      return false;
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9')
        return c - '0';
      if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
      return -1;
    };
    int hi = nib(s[i + 1]), lo = nib(s[i + 2]);
    if (hi < 0 || lo < 0)
      return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

const char *kindName(PlanArg::Kind k) {
  switch (k) {
  case PlanArg::Buffer:
    return "buffer";
  case PlanArg::Input:
    return "input";
  case PlanArg::Output:
    return "output";
  case PlanArg::Constant:
    return "constant";
  case PlanArg::Symbol:
    return "symbol";
  }
  return "?";
}

bool parseKind(const std::string &s, PlanArg::Kind &k) {
  for (auto c : {PlanArg::Buffer, PlanArg::Input, PlanArg::Output, PlanArg::Constant,
                 PlanArg::Symbol})
    if (s == kindName(c)) {
      k = c;
      return true;
    }
  return false;
}

void printTensor(std::ostringstream &os, const char *what, const PlanTensor &t) {
  os << what << ' ' << escape(t.name) << ' ' << dtypeName(t.dtype) << ' ' << t.dims.size();
  for (const PlanDim &d : t.dims) {
    if (d.isStatic())
      os << ' ' << d.size;
    else
      os << " ?" << d.symbol;
  }
  os << '\n';
}

// Why `formula` is not a formula over the input symbols `p` declares so far ("" when it is).
std::string formulaError(const Plan &p, const std::string &formula) {
  std::string why;
  std::optional<SymExpr> e = SymExpr::parse(formula, why);
  if (!e)
    return why;
  std::set<std::string> used;
  e->collectSymbols(used);
  for (const std::string &u : used) {
    bool declared = false;
    for (size_t i = 0; i < p.symbols.size(); ++i)
      declared |= p.symbols[i] == u && !p.isDerived(i);
    if (!declared)
      return "it reads '" + u + "', no input symbol declared before it";
  }
  return "";
}

} // namespace

std::vector<bool> symbolsReadingUnbounded(const Plan &p) {
  std::vector<bool> reads(p.symbols.size(), false);
  // Formulas and bounds read earlier base symbols; derived ones may sit anywhere: iterate until
  // nothing changes (each pass settles at least one more).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < p.symbols.size(); ++i) {
      if (reads[i])
        continue;
      bool r = p.isUnbounded(i);
      const std::string *text = p.isDerived(i)       ? &p.formulas[i]
                                : p.isValueBound(i) ? &p.bounds[i]
                                                    : nullptr;
      if (!r && text && !p.isUnbounded(i)) {
        std::string why;
        if (std::optional<SymExpr> e = SymExpr::parse(*text, why)) {
          std::set<std::string> used;
          e->collectSymbols(used);
          for (size_t j = 0; j < p.symbols.size() && !r; ++j)
            r = reads[j] && !p.isDerived(j) && used.count(p.symbols[j]);
        }
      }
      if (r) {
        reads[i] = true;
        changed = true;
      }
    }
  }
  return reads;
}

std::string printPlan(const Plan &p) {
  std::ostringstream os;
  os << kMagic << ' ' << kVersion << '\n';
  os << "kernels " << p.numKernels << " weights " << p.weightsBytes << '\n';
  for (size_t i = 0; i < p.symbols.size(); ++i) {
    if (p.isValueBound(i)) {
      os << "value " << escape(p.symbols[i]) << ' ' << escape(p.bounds[i]) << '\n';
      if (i < p.invalid.size() && !p.invalid[i].empty())
        os << "invalid " << escape(p.symbols[i]) << ' ' << escape(p.invalid[i]) << '\n';
      continue;
    }
    os << "symbol " << escape(p.symbols[i]);
    if (p.isDerived(i))
      os << ' ' << escape(p.formulas[i]);
    os << '\n';
  }
  for (const PlanTensor &t : p.inputs)
    printTensor(os, "input", t);
  for (const PlanTensor &t : p.outputs)
    printTensor(os, "output", t);
  for (int64_t i : p.sizeInputs)
    os << "sizesfrom " << i << '\n';
  for (const PlanArg &a : p.outputSources)
    os << "source " << kindName(a.kind) << ' ' << a.index << '\n';
  for (const PlanBuffer &b : p.buffers) {
    os << "buffer " << b.size.bytes << ' ' << b.first << ' ' << b.last << ' '
       << b.size.symbols.size();
    for (int s : b.size.symbols)
      os << ' ' << s;
    os << '\n';
  }
  for (const PlanConstant &c : p.constants)
    os << "constant " << c.offset << ' ' << c.bytes << '\n';
  for (const Plan &r : p.regions)
    os << "region begin\n" << printPlan(r) << "region end\n";
  for (const PlanStep &s : p.steps) {
    if (s.kind == PlanStep::If)
      os << "if " << s.regions.at(0) << ' ' << s.regions.at(1) << ' ' << s.numInputs << ' '
         << s.args.size();
    else if (s.kind == PlanStep::Loop)
      os << "loop " << s.regions.at(0) << ' ' << s.numCarried << ' ' << s.numInputs << ' '
         << s.args.size();
    else
      os << "step " << s.kernel << ' ' << s.args.size();
    for (const PlanArg &a : s.args)
      os << ' ' << kindName(a.kind) << ' ' << a.index;
    os << ' ' << escape(s.name) << '\n';
  }
  for (const PlanCheck &c : p.checks)
    os << (c.atLeast ? "atleast " : "check ") << escape(c.lhs) << ' ' << escape(c.rhs) << ' ' << escape(c.where) << '\n';
  for (const PlanBind &b : p.binds)
    os << "bind " << b.step << ' ' << b.symbol << ' ' << kindName(b.value.kind) << ' '
       << b.value.index << '\n';
  for (const PlanResultBind &b : p.resultBinds)
    os << "resultbind " << b.step << ' ' << b.symbol << ' ' << b.result << ' ' << b.dim << '\n';
  for (const PlanVariant &v : p.variants) {
    os << "variant " << v.region << ' ' << v.shapes.size();
    for (const std::vector<int64_t> &shape : v.shapes) {
      os << ' ' << shape.size();
      for (int64_t d : shape)
        os << ' ' << d;
    }
    os << '\n';
  }
  return os.str();
}

namespace {
Status parsePlanAt(const std::string &text, Plan &p, int depth);
// Region plans nest at most this deep (a damaged plan must not recurse without bound).
constexpr int kMaxRegionDepth = 16;
} // namespace

Status parsePlan(const std::string &text, Plan &p) { return parsePlanAt(text, p, 0); }

namespace {
// A control step's arguments against its regions' plans: counts, and the loop body's fixed
// inputs (iteration i64 [], cond bool []) and first output (cond bool []).
Status checkControlStep(const Plan &p, const PlanStep &s) {
  if (s.kind == PlanStep::Kernel)
    return Status();
  const int64_t nargs = static_cast<int64_t>(s.args.size());
  const int64_t fixed = s.kind == PlanStep::If ? 1 : 2 + s.numCarried;
  if (s.numInputs < fixed || s.numInputs > nargs)
    return Status::error("control step '" + s.name + "' has a bad input count");
  const int64_t results = nargs - s.numInputs;
  for (int64_t r : s.regions) {
    const Plan &region = p.regions[static_cast<size_t>(r)];
    const int64_t ins = static_cast<int64_t>(region.inputs.size());
    const int64_t outs = static_cast<int64_t>(region.outputs.size());
    bool ok = s.kind == PlanStep::If
                  ? ins == s.numInputs - 1 && outs == results
                  : ins == s.numInputs && outs >= 1 + s.numCarried && outs - 1 == results;
    if (!ok)
      return Status::error("control step '" + s.name + "' does not match its region's " +
                           std::to_string(ins) + " inputs and " + std::to_string(outs) +
                           " outputs");
    auto scalarOf = [](const PlanTensor &t, DType dt) {
      return t.dtype == dt && t.dims.empty();
    };
    if (s.kind == PlanStep::Loop &&
        (!scalarOf(region.inputs[0], DType::I64) || !scalarOf(region.inputs[1], DType::Bool) ||
         !scalarOf(region.outputs[0], DType::Bool)))
      return Status::error("loop step '" + s.name + "' has a body without its iteration and "
                           "condition scalars");
    // A region writes its outputs into the step's results, placed before it runs: their sizes
    // must be known when it is entered (a loop body's, the same at every iteration).
    // (A loop's scan entries may: the step allocates their results after the first entry.)
    const std::vector<bool> readsUnbounded = symbolsReadingUnbounded(region);
    for (const PlanTensor &in : region.inputs) // bound by the enclosing plan's sizes
      for (const PlanDim &d : in.dims)
        if (!d.isStatic() && region.isValueBound(static_cast<size_t>(d.symbol)))
          return Status::error("control step '" + s.name + "' has a region input '" + in.name +
                               "' sized by a size its own run decides");
    for (size_t i = 0; i < region.outputs.size(); ++i) {
      const PlanTensor &o = region.outputs[i];
      const bool scanEntry =
          s.kind == PlanStep::Loop && static_cast<int64_t>(i) >= 1 + s.numCarried;
      for (const PlanDim &d : o.dims)
        if (!d.isStatic() && !scanEntry &&
            (readsUnbounded[static_cast<size_t>(d.symbol)] ||
             (s.kind == PlanStep::Loop && region.isValueBound(static_cast<size_t>(d.symbol)))))
          return Status::error("control step '" + s.name + "' has a region output '" + o.name +
                               "' whose size the region's own run decides");
    }
  }
  // A control step writes only buffers and outputs, each result its own (a loop may replace a
  // result's storage while it runs).
  for (int64_t i = s.numInputs; i < nargs; ++i) {
    if (s.args[i].kind != PlanArg::Buffer && s.args[i].kind != PlanArg::Output)
      return Status::error("control step '" + s.name + "' writes a result into an input, a "
                           "constant or a symbol");
    for (int64_t j = 0; j < nargs; ++j)
      if (j != i && s.kind == PlanStep::Loop && s.args[j].kind == s.args[i].kind &&
          s.args[j].index == s.args[i].index)
        return Status::error("loop step '" + s.name + "' passes one tensor as result " +
                             std::to_string(i - s.numInputs) + " and as another argument");
  }
  return Status();
}

Status parsePlanAt(const std::string &text, Plan &p, int depth) {
  p = Plan{};
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  auto fail = [&](const std::string &why) {
    return Status::error("plan line " + std::to_string(lineNo) + ": " + why);
  };
  if (!std::getline(in, line))
    return fail("empty plan");
  ++lineNo;
  {
    std::istringstream ls(line);
    std::string magic;
    int version = 0;
    if (!(ls >> magic >> version) || magic != kMagic)
      return fail("not a strata plan");
    if (version != kVersion)
      return fail("plan version " + std::to_string(version) + " is not supported (expected " +
                  std::to_string(kVersion) + ")");
  }
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty())
      continue;
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "kernels") {
      std::string w;
      if (!(ls >> p.numKernels >> w >> p.weightsBytes) || w != "weights")
        return fail("bad kernels line");
    } else if (tag == "symbol") {
      std::string raw, name;
      if (!(ls >> raw) || !unescape(raw, name))
        return fail("bad symbol");
      std::string formula;
      if (ls >> raw) {
        if (!unescape(raw, formula) || formula.empty())
          return fail("bad symbol formula");
        if (std::string why = formulaError(p, formula); !why.empty())
          return fail("bad symbol formula: " + why);
      }
      p.symbols.push_back(name);
      p.formulas.push_back(formula);
      p.bounds.resize(p.symbols.size());
    } else if (tag == "value") {
      std::string raw, name, bound;
      if (!(ls >> raw) || !unescape(raw, name) || !(ls >> raw) || !unescape(raw, bound) ||
          bound.empty())
        return fail("bad value symbol");
      if (std::string why = bound == kUnboundedSize ? "" : formulaError(p, bound); !why.empty())
        return fail("bad value symbol bound: " + why);
      p.symbols.push_back(name);
      p.formulas.push_back("");
      p.bounds.resize(p.symbols.size());
      p.bounds.back() = bound;
    } else if (tag == "invalid") {
      // (What the last value symbol's negative value means: it follows that symbol's line.)
      std::string raw, name, text;
      if (!(ls >> raw) || !unescape(raw, name) || !(ls >> raw) || !unescape(raw, text) ||
          text.empty() || p.symbols.empty() || p.symbols.back() != name ||
          !p.isUnbounded(p.symbols.size() - 1) || p.invalid.size() >= p.symbols.size())
        return fail("bad invalid-size text");
      p.invalid.resize(p.symbols.size());
      p.invalid.back() = text;
    } else if (tag == "bind") {
      PlanBind b;
      std::string k;
      if (!(ls >> b.step >> b.symbol >> k >> b.value.index) || !parseKind(k, b.value.kind) ||
          b.symbol < 0 || b.symbol >= static_cast<int>(p.symbols.size()) ||
          !p.isValueBound(static_cast<size_t>(b.symbol)) || b.step < 0 ||
          (!p.binds.empty() && b.step < p.binds.back().step) ||
          std::any_of(p.binds.begin(), p.binds.end(),
                      [&](const PlanBind &o) { return o.symbol == b.symbol; }))
        return fail("bad bind");
      p.binds.push_back(b);
    } else if (tag == "resultbind") {
      PlanResultBind b;
      if (!(ls >> b.step >> b.symbol >> b.result >> b.dim) || b.symbol < 0 ||
          b.symbol >= static_cast<int>(p.symbols.size()) ||
          !p.isValueBound(static_cast<size_t>(b.symbol)) || b.step < 0 || b.result < 0 ||
          b.dim < 0 || (!p.resultBinds.empty() && b.step < p.resultBinds.back().step))
        return fail("bad result bind");
      p.resultBinds.push_back(b);
    } else if (tag == "variant") {
      PlanVariant v;
      size_t n = 0;
      if (!(ls >> v.region >> n) || v.region < 0 ||
          v.region >= static_cast<int64_t>(p.regions.size()) || n > 4096)
        return fail("bad variant");
      constexpr size_t kMaxRank = 64;
      for (size_t i = 0; i < n; ++i) {
        size_t rank = 0;
        if (!(ls >> rank) || rank > kMaxRank)
          return fail("bad variant shape");
        std::vector<int64_t> shape(rank);
        for (int64_t &d : shape)
          if (!(ls >> d) || d < 0)
            return fail("bad variant dim");
        v.shapes.push_back(std::move(shape));
      }
      p.variants.push_back(std::move(v));
    } else if (tag == "check" || tag == "atleast") {
      PlanCheck c;
      c.atLeast = tag == "atleast";
      std::string a, b, w;
      if (!(ls >> a >> b >> w) || !unescape(a, c.lhs) || !unescape(b, c.rhs) ||
          !unescape(w, c.where))
        return fail("bad check");
      for (const std::string *f : {&c.lhs, &c.rhs})
        if (std::string why = formulaError(p, *f); !why.empty())
          return fail("bad check: " + why);
      p.checks.push_back(std::move(c));
    } else if (tag == "input" || tag == "output") {
      PlanTensor t;
      std::string raw, dt;
      size_t rank = 0;
      if (!(ls >> raw >> dt >> rank) || !unescape(raw, t.name))
        return fail("bad tensor");
      auto parsed = parseDType(dt);
      if (!parsed)
        return fail("unknown dtype '" + dt + "'");
      t.dtype = *parsed;
      for (size_t d = 0; d < rank; ++d) {
        std::string dim;
        if (!(ls >> dim) || dim.empty())
          return fail("missing dim");
        PlanDim pd;
        try {
          if (dim[0] == '?') {
            pd.symbol = std::stoi(dim.substr(1));
            if (pd.symbol < 0)
              return fail("bad dim '" + dim + "'");
          } else {
            pd.size = std::stoll(dim);
          }
        } catch (...) {
          return fail("bad dim '" + dim + "'");
        }
        if (pd.symbol >= static_cast<int>(p.symbols.size()) || pd.size < 0)
          return fail("dim out of range");
        t.dims.push_back(pd);
      }
      (tag == "input" ? p.inputs : p.outputs).push_back(std::move(t));
    } else if (tag == "sizesfrom") {
      int64_t i = 0;
      if (!(ls >> i) || i < 0 || i >= static_cast<int64_t>(p.inputs.size()) ||
          (!p.sizeInputs.empty() && i <= p.sizeInputs.back()))
        return fail("bad sizesfrom");
      p.sizeInputs.push_back(i);
    } else if (tag == "source") {
      std::string k;
      PlanArg a;
      if (!(ls >> k >> a.index) || !parseKind(k, a.kind))
        return fail("bad output source");
      p.outputSources.push_back(a);
    } else if (tag == "buffer") {
      PlanBuffer b;
      size_t n = 0;
      // A symbol may repeat ([seq, seq] scores): bounded by a rank no tensor reaches instead.
      constexpr size_t kMaxSymbolicDims = 64;
      if (!(ls >> b.size.bytes >> b.first >> b.last >> n) || n > kMaxSymbolicDims)
        return fail("bad buffer");
      for (size_t i = 0; i < n; ++i) {
        int s = -1;
        if (!(ls >> s) || s < 0 || s >= static_cast<int>(p.symbols.size()))
          return fail("bad buffer symbol");
        b.size.symbols.push_back(s);
      }
      p.buffers.push_back(std::move(b));
    } else if (tag == "constant") {
      PlanConstant c;
      if (!(ls >> c.offset >> c.bytes) || c.offset < 0 || c.bytes < 0 ||
          c.offset > p.weightsBytes || c.bytes > p.weightsBytes - c.offset)
        return fail("bad constant");
      p.constants.push_back(c);
    } else if (tag == "region") {
      std::string what;
      if (!(ls >> what) || what != "begin")
        return fail("bad region");
      if (depth + 1 > kMaxRegionDepth)
        return fail("regions nest deeper than " + std::to_string(kMaxRegionDepth));
      // The nested plan's lines up to the matching "region end".
      std::string inner;
      int open = 1;
      const int first = lineNo;
      while (open > 0 && std::getline(in, line)) {
        ++lineNo;
        if (line == "region begin")
          ++open;
        else if (line == "region end" && --open == 0)
          break;
        inner += line + '\n';
      }
      if (open > 0)
        return fail("region begun on line " + std::to_string(first) + " does not end");
      Plan region;
      if (Status st = parsePlanAt(inner, region, depth + 1))
        return Status::error("plan line " + std::to_string(first) + ": in the region: " +
                             st.message());
      p.regions.push_back(std::move(region));
    } else if (tag == "step" || tag == "if" || tag == "loop") {
      PlanStep s;
      size_t n = 0;
      bool ok = true;
      if (tag == "step") {
        ok = (ls >> s.kernel) && s.kernel >= 0 && s.kernel < p.numKernels;
      } else {
        s.kind = tag == "if" ? PlanStep::If : PlanStep::Loop;
        s.regions.resize(tag == "if" ? 2 : 1);
        for (int64_t &r : s.regions)
          ok = ok && (ls >> r) && r >= 0 && r < static_cast<int64_t>(p.regions.size());
        if (tag == "loop")
          ok = ok && (ls >> s.numCarried) && s.numCarried >= 0;
        ok = ok && (ls >> s.numInputs) && s.numInputs >= 0;
      }
      if (!ok || !(ls >> n))
        return fail("bad " + tag);
      for (size_t i = 0; i < n; ++i) {
        std::string k;
        PlanArg a;
        if (!(ls >> k >> a.index) || !parseKind(k, a.kind))
          return fail("bad step argument");
        s.args.push_back(a);
      }
      std::string raw;
      if (!(ls >> raw) || !unescape(raw, s.name))
        return fail("bad step name");
      if (Status st = checkControlStep(p, s))
        return fail(st.message());
      p.steps.push_back(std::move(s));
    } else {
      return fail("unknown record '" + tag + "'");
    }
  }
  // Every index must point at something, so a damaged plan cannot make the executor stray.
  auto argOk = [&](const PlanArg &a) {
    int64_t limit = 0;
    switch (a.kind) {
    case PlanArg::Buffer:
      limit = static_cast<int64_t>(p.buffers.size());
      break;
    case PlanArg::Input:
      limit = static_cast<int64_t>(p.inputs.size());
      break;
    case PlanArg::Output:
      limit = static_cast<int64_t>(p.outputs.size());
      break;
    case PlanArg::Constant:
      limit = static_cast<int64_t>(p.constants.size());
      break;
    case PlanArg::Symbol:
      limit = static_cast<int64_t>(p.symbols.size());
      break;
    }
    return a.index >= 0 && a.index < limit;
  };
  lineNo = 0;
  if (p.outputSources.size() != p.outputs.size())
    return fail("one output source per output expected");
  for (const PlanArg &a : p.outputSources)
    if (!argOk(a) || a.kind == PlanArg::Symbol)
      return fail("output source out of range");
  for (const PlanBuffer &b : p.buffers)
    if (b.size.bytes < 0 || b.first < 0 || b.first > b.last ||
        b.last > static_cast<int64_t>(p.steps.size()))
      return fail("buffer live range out of range");
  for (const PlanStep &s : p.steps)
    for (const PlanArg &a : s.args)
      if (!argOk(a))
        return fail("argument of step '" + s.name + "' out of range");
  // A variant's region takes this plan's inputs, at shapes of their ranks and static dims, and
  // gives its outputs.
  for (const PlanVariant &v : p.variants) {
    const Plan &r = p.regions[static_cast<size_t>(v.region)];
    bool ok = v.shapes.size() == p.inputs.size() && r.inputs.size() == p.inputs.size() &&
              r.outputs.size() == p.outputs.size();
    for (size_t i = 0; ok && i < p.inputs.size(); ++i) {
      ok = v.shapes[i].size() == p.inputs[i].dims.size() && r.inputs[i].dtype == p.inputs[i].dtype;
      for (size_t d = 0; ok && d < v.shapes[i].size(); ++d)
        ok = p.inputs[i].dims[d].symbol >= 0 || p.inputs[i].dims[d].size == v.shapes[i][d];
    }
    for (size_t i = 0; ok && i < p.outputs.size(); ++i)
      ok = r.outputs[i].dtype == p.outputs[i].dtype &&
           r.outputs[i].dims.size() == p.outputs[i].dims.size();
    if (!ok)
      return fail("variant of region " + std::to_string(v.region) +
                  " does not match the plan's inputs and outputs");
  }
  // A result bind names a dim of a result of an if step (bounded), or a dim of a loop's scan
  // result: dim 0, the iteration count (bounded, or unbounded: the result grown as the loop
  // runs), or an entry dim (set from the first entry, unbounded).
  for (const PlanResultBind &b : p.resultBinds) {
    const bool ok = b.step < static_cast<int64_t>(p.steps.size()) &&
                    p.steps[static_cast<size_t>(b.step)].kind != PlanStep::Kernel;
    const PlanStep *s = ok ? &p.steps[static_cast<size_t>(b.step)] : nullptr;
    const bool unbounded = p.isUnbounded(static_cast<size_t>(b.symbol));
    if (!ok || b.result >= static_cast<int64_t>(s->args.size()) - s->numInputs ||
        (s->kind == PlanStep::Loop && (b.result < s->numCarried || (b.dim > 0 && !unbounded))) ||
        (s->kind == PlanStep::If && unbounded))
      return fail("result bind after step " + std::to_string(b.step) + " out of range");
    if (s->kind == PlanStep::Loop) {
      const auto &outs = p.regions[static_cast<size_t>(s->regions[0])].outputs;
      const size_t entry = static_cast<size_t>(1 + b.result);
      if (b.dim > 0 && (entry >= outs.size() ||
                        b.dim > static_cast<int64_t>(outs[entry].dims.size())))
        return fail("result bind after step " + std::to_string(b.step) + " names no dim");
      continue;
    }
    for (int64_t r : s->regions) {
      const auto &outs = p.regions[static_cast<size_t>(r)].outputs;
      if (b.dim >= static_cast<int64_t>(outs[static_cast<size_t>(b.result)].dims.size()))
        return fail("result bind after step " + std::to_string(b.step) + " names no dim");
    }
  }
  // A bind reads one int64 from an input, a constant or a buffer the plan sized for it.
  for (const PlanBind &b : p.binds)
    if (b.step >= static_cast<int64_t>(p.steps.size()) || !argOk(b.value) ||
        b.value.kind == PlanArg::Symbol || b.value.kind == PlanArg::Output)
      return fail("bind before step " + std::to_string(b.step) + " out of range");
  return Status();
}

} // namespace

Status parseLibraryPlan(const char *text, int64_t tableKernels, int64_t weightsBytes, Plan &p) {
  if (Status s = parsePlan(text ? text : "", p))
    return s;
  if (p.numKernels != tableKernels)
    return Status::error("the plan names " + std::to_string(p.numKernels) +
                         " kernels but the library has " + std::to_string(tableKernels));
  if (p.weightsBytes > weightsBytes)
    return Status::error("the plan needs " + std::to_string(p.weightsBytes) +
                         " weight bytes but the library has " + std::to_string(weightsBytes));
  return Status();
}

} // namespace strata::runtime
