// ONNX If, Loop and Scan. Resolved at import where it can be: an If whose condition is known
// there (a constant, or computed from static shapes, as it is when a model is imported at its
// input shapes) becomes the ops of its taken branch; a Loop whose trip count and condition stay
// known is unrolled; a Scan is unrolled over its (static) scan axis, each body converted inline
// once per iteration (ImportContext::inlineSubgraph). Control flow decided by tensor data at run
// time becomes a region op (graph/ControlFlow.h): `if` with both branches as closed regions,
// `loop` with its body as one.
#include "Decompose.h"
#include "strata/graph/ControlFlow.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/support/Limits.h"

#include <algorithm>
#include <limits>
#include <set>

namespace strata::onnx_import {
namespace {

using Node = onnx::NodeProto;
using Values = std::vector<Value *>;

const onnx::GraphProto &graphAttr(const Node &n, const std::string &name) {
  const onnx::AttributeProto *a = findAttr(n, name);
  if (!a || !a->has_g())
    throw ConvertError("attribute '" + name + "' (a subgraph) is missing");
  return a->g();
}

std::string nodeLabel(const Node &n) { return n.name().empty() ? n.op_type() : n.name(); }

// A scalar (or one-element) tensor's value as a bool / an int.
bool truthOf(const Tensor &t, const char *what) {
  if (t.numElements() != 1)
    throw ConvertError(std::string(what) + " must have one element, got shape [" +
                       shapeToString(t.shape()) + "]");
  return t.getDouble(0) != 0;
}

int64_t intOf(const Tensor &t, const char *what) {
  if (t.numElements() != 1 || !isInteger(t.dtype()))
    throw ConvertError(std::string(what) + " must be one integer, got " +
                       std::string(dtypeName(t.dtype())) + " [" + shapeToString(t.shape()) + "]");
  return t.getInt(0);
}

// The constant behind `v` when it is one (a folded op or an initializer).
std::optional<Tensor> constantOf(Value *v) {
  if (Op *def = v ? v->definingOp() : nullptr; def && def->kind() == OpKind::Constant)
    return def->attr("value").getTensor();
  return std::nullopt;
}

// `v` with a new axis of size 1 at `axis`.
Value *unsqueezeAt(Builder &b, Value *v, int64_t axis) {
  std::vector<Dim> dims = v->type().dims;
  dims.insert(dims.begin() + axis, Dim(1));
  return reshapeTo(b, v, dims);
}

// `v` without its axis `axis` (of size 1).
Value *squeezeAt(Builder &b, Value *v, int64_t axis) {
  std::vector<Dim> dims = v->type().dims;
  dims.erase(dims.begin() + axis);
  return reshapeTo(b, v, dims);
}

Value *stack(Builder &b, const Values &items, int64_t axis) {
  Values parts;
  for (Value *v : items)
    parts.push_back(unsqueezeAt(b, v, axis));
  return parts.size() == 1 ? parts[0] : b.value(OpKind::Concat, parts, {{"axis", axis}});
}

// The ONNX output names of `body`, for the region's outputs.
void addRegionOutputs(Graph &region, const onnx::GraphProto &body, const Values &outs) {
  for (size_t i = 0; i < outs.size(); ++i)
    region.addOutput(outs[i], static_cast<int>(i) < body.output_size() ? body.output(i).name() : "");
}

// Creates `kind` with `regions`, closed over the outer values they read (appended to
// `operands`), results typed by the regions (ControlFlow.h).
Op *createRegionOp(Builder &b, OpKind kind, Values operands,
                   std::vector<std::unique_ptr<Graph>> regions, AttrMap attrs,
                   const std::vector<TensorType> &resultTypes) {
  std::vector<Graph *> raw;
  for (auto &g : regions)
    raw.push_back(g.get());
  Values captures = captureOuterValues(raw);
  operands.insert(operands.end(), captures.begin(), captures.end());
  // Result types are the regions' (a loop's scan results: their leading dim as given here).
  Op *op = b.graph().createOp(kind, operands, resultTypes, std::move(attrs), b.insertBefore());
  op->setLocation(b.location());
  for (auto &g : regions)
    op->adoptRegion(std::move(g));
  if (llvm::Error err = setResultTypes(*op)) {
    std::string why = llvm::toString(std::move(err));
    op->parentGraph()->eraseOp(op);
    throw ConvertError(why);
  }
  if (llvm::Error err = checkControlFlow(*op)) {
    std::string why = llvm::toString(std::move(err));
    op->parentGraph()->eraseOp(op);
    throw ConvertError(why);
  }
  sinkConstantCaptures(*op);
  return op;
}

Values resultsOf(Op *op) {
  Values r;
  for (unsigned i = 0; i < op->numResults(); ++i)
    r.push_back(op->result(i));
  return r;
}

Values convertIf(ImportContext &ctx, const Node &n) {
  if (std::optional<Tensor> cond = ctx.constantInput(n, 0)) {
    bool taken = truthOf(*cond, "the condition of If");
    const char *branch = taken ? "then_branch" : "else_branch";
    Values out = ctx.inlineSubgraph(graphAttr(n, branch), {}, nodeLabel(n) + "/" + branch);
    if (static_cast<int>(out.size()) != n.output_size())
      throw ConvertError(std::string(branch) + " has " + std::to_string(out.size()) +
                         " outputs but the If node has " + std::to_string(n.output_size()));
    return out;
  }
  // Decided by data at run time: an `if` op running one branch.
  Value *cond = requiredInput(ctx, n, 0, "condition");
  if (cond->type().rank() > 1 || cond->type().staticNumElements() != std::optional<int64_t>(1))
    throw ConvertError("the condition of If must have one element, has type " +
                       cond->type().str());
  if (cond->type().dtype != DType::Bool) // nonzero is true
    cond = castTo(ctx.builder(), cond, DType::Bool);
  std::vector<std::unique_ptr<Graph>> regions;
  for (const char *branch : {"then_branch", "else_branch"}) {
    const onnx::GraphProto &body = graphAttr(n, branch);
    auto g = std::make_unique<Graph>(branch);
    Values out = ctx.convertIntoRegion(body, *g, {}, nodeLabel(n) + "/" + branch);
    if (static_cast<int>(out.size()) != n.output_size())
      throw ConvertError(std::string(branch) + " has " + std::to_string(out.size()) +
                         " outputs but the If node has " + std::to_string(n.output_size()));
    addRegionOutputs(*g, body, out);
    regions.push_back(std::move(g));
  }
  // A dim the branches give differently (an empty result in one, a selection in the other:
  // torchvision's batched_nms) is a data-dependent size of its own, `if_<output>`, that the
  // branch taken decides at run time (graph/ValueSymbols.h).
  std::vector<TensorType> types;
  for (unsigned i = 0; i < regions[0]->numOutputs(); ++i) {
    TensorType t = regions[0]->output(i)->type();
    const TensorType &other = regions[1]->output(i)->type();
    if (t.dtype == other.dtype && t.rank() == other.rank()) {
      std::vector<size_t> differ;
      for (size_t d = 0; d < t.dims.size(); ++d)
        if (t.dims[d] != other.dims[d])
          differ.push_back(d);
      for (size_t d : differ)
        t.dims[d] = Dim::sym(sanitizeSymbol(
            "if_" + (i < static_cast<unsigned>(n.output_size()) ? n.output(i) : "") +
            (differ.size() > 1 ? "_" + std::to_string(d) : "")));
    }
    types.push_back(std::move(t));
  }
  return resultsOf(createRegionOp(ctx.builder(), OpKind::If, {cond}, std::move(regions), {},
                                  types));
}

// A Loop run at run time: its body as the region of a `loop` op. Scan outputs need their length
// known before the loop runs: the trip count (a constant or a formula of symbolic dims) with a
// condition that stays true.
Values buildLoopOp(ImportContext &ctx, const Node &n, const Values &carried, int numScan) {
  Builder &b = ctx.builder();
  const onnx::GraphProto &body = graphAttr(n, "body");
  const int numCarried = static_cast<int>(carried.size());
  Value *trips = ctx.input(n, 0);
  std::optional<SymExpr> tripLength;
  if (!trips) {
    trips = b.scalar(DType::I64, static_cast<double>(std::numeric_limits<int64_t>::max()));
  } else {
    if (trips->type().dtype != DType::I64 ||
        trips->type().staticNumElements() != std::optional<int64_t>(1))
      throw ConvertError("the trip count of Loop must be one int64, has type " +
                         trips->type().str());
    if (auto m = ctx.constantInput(n, 0))
      tripLength = SymExpr(intOf(*m, "the trip count of Loop"));
    else if (auto f = ctx.symbolicInput(n, 0); f && f->size() == 1)
      tripLength = (*f)[0];
  }
  Value *cond = ctx.input(n, 1);
  // Carried values the body appends to (carried k, the concat's axis, its scan output's index
  // among the body's outputs).
  struct Appended {
    int k;
    int64_t axis;
    size_t output;
  };
  std::vector<Appended> appended;
  bool condAlwaysTrue = false;
  if (!cond) {
    cond = b.scalar(DType::Bool, 1.0);
    condAlwaysTrue = true;
  } else if (auto c = ctx.constantInput(n, 1)) {
    condAlwaysTrue = truthOf(*c, "the condition of Loop");
  }
  if (cond->type().dtype != DType::Bool || cond->type().staticNumElements() != std::optional<int64_t>(1))
    throw ConvertError("the condition of Loop must be one bool, has type " + cond->type().str());

  auto g = std::make_unique<Graph>("body");
  Values formals = {g->addInput(TensorType(DType::I64, {}), body.input(0).name()),
                    g->addInput(TensorType(DType::Bool, {}), body.input(1).name())};
  for (int k = 0; k < numCarried; ++k)
    formals.push_back(g->addInput(carried[k]->type(), body.input(2 + k).name()));
  Values out = ctx.convertIntoRegion(body, *g, formals, nodeLabel(n) + "/body");
  if (static_cast<int>(out.size()) != 1 + numCarried + numScan)
    throw ConvertError("the body gives " + std::to_string(out.size()) + " outputs; expected " +
                       std::to_string(1 + numCarried + numScan));
  {
    Builder rb(*g);
    rb.setLocation(b.location());
    if (out[0]->type().dtype != DType::Bool ||
        out[0]->type().staticNumElements() != std::optional<int64_t>(1))
      throw ConvertError("the body's condition output must be one bool, has type " +
                         out[0]->type().str());
    if (out[0]->type().rank() != 0)
      out[0] = reshapeTo(rb, out[0], {});
    // The body keeps going while its condition output is a true constant or the condition it
    // was given.
    std::optional<Tensor> again = constantOf(out[0]);
    bool bodyKeepsGoing = (again && truthOf(*again, "the body's condition output")) ||
                          out[0] == formals[1];
    condAlwaysTrue &= bodyKeepsGoing;
    std::optional<std::set<std::string>> decidedInBody;
    for (int k = 0; k < numCarried; ++k) {
      if (out[1 + k]->type() == carried[k]->type())
        continue;
      // A value the body only appends to, concat(carried, x) (a list built with torch.cat in
      // a loop): the carried value stays as it came in, x becomes a scan output, and the
      // result is the initial value followed by the entries, merged along the concat's axis.
      Value *formal = formals[2 + k];
      Op *cat = out[1 + k]->isGraphInput() ? nullptr : out[1 + k]->definingOp();
      // (Nothing else may read the list being built: not an op, not another output.)
      auto onlyAt = [&](const Value *v, size_t at) {
        for (size_t o = 0; o < out.size(); ++o)
          if (out[o] == v && o != at)
            return false;
        return true;
      };
      const bool appendOnly =
          cat && cat->kind() == OpKind::Concat && cat->numOperands() == 2 &&
          cat->operand(0) == formal && formal->uses().size() == 1 && !cat->result(0)->hasUses() &&
          onlyAt(formal, SIZE_MAX) && onlyAt(cat->result(0), static_cast<size_t>(1 + k)) &&
          cat->operand(1)->type().rank() == formal->type().rank();
      // Else a value whose dims the body decides each iteration (a slice at the iteration
      // number) but that must come back with its shape: checked each iteration, then given the
      // carried type (a shape that really changes fails the run naming the loop).
      const TensorType &want = carried[k]->type(), &got = out[1 + k]->type();
      if (!decidedInBody)
        decidedInBody = sizesDecidedIn(*g);
      bool decidedDims = !appendOnly && got.dtype == want.dtype && got.rank() == want.rank();
      for (size_t d = 0; decidedDims && d < got.dims.size(); ++d)
        decidedDims = got.dims[d] == want.dims[d] || readsAnyOf(got.dims[d], *decidedInBody);
      if (decidedDims) {
        Builder::Into into(b, *g); // (b is ctx's builder: requireAtRun builds with it too)
        Value *differ = castTo(
            b, b.value(OpKind::Not, {b.value(OpKind::Eq, {dimsOf(b, out[1 + k]), dimsOf(b, formal)})}),
            DType::I64);
        Value *same = b.value(OpKind::Eq, {reduce(b, differ, ReduceKind::Sum, {0}, false),
                                           b.scalar(DType::I64, 0)});
        out[1 + k] = requireAtRun(ctx, out[1 + k], same,
                                  body.output(1 + k).name() + "_keeps_shape",
                                  "loop-carried value " + std::to_string(k) + " ('" +
                                      body.input(2 + k).name() + "') comes back from the body "
                                      "with a shape other than " + want.str(),
                                  formal);
        continue;
      }
      if (!appendOnly)
        throw ConvertError("loop-carried value " + std::to_string(k) + " enters the body as " +
                           carried[k]->type().str() + " but leaves it as " +
                           out[1 + k]->type().str() +
                           ": values that change type or shape across iterations (other than "
                           "one the body only appends to or gives back at its shape) are not "
                           "supported in a loop run at run time yet");
      appended.push_back({k, ops::ConcatOp(*cat).axis(), out.size()});
      out.push_back(cat->operand(1));
      out[1 + k] = formal;
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    g->addOutput(out[i], static_cast<int>(i) < body.output_size()
                             ? body.output(static_cast<int>(i)).name()
                             : "appended_" + std::to_string(i));
  std::vector<TensorType> types;
  for (int k = 0; k < numCarried; ++k)
    types.push_back(carried[k]->type());
  // Scan outputs stack one entry per iteration: a known count (the trip count, a constant or a
  // formula of symbolic dims, with a condition that stays true) is their length; a condition
  // that can end the loop early (a greedy decode stopping at its end token) makes the length a
  // data-dependent size of its own, `loop_<output>`, at most the trip count (max_trips where
  // that is a constant or a formula of the input sizes, else none: early_exit).
  AttrMap attrs{{"num_carried", Attribute(static_cast<int64_t>(numCarried))}};
  const int onnxScans = numScan;
  numScan += static_cast<int>(appended.size());
  // A condition that can end the loop early with a trip count that bounds nothing before the
  // loop runs (read from data, a constant past the tensor limit -- torch's `while` gives
  // 2^63 - 1 -- or none): the scan lengths are the iterations run, their storage grown as it
  // runs (early_exit). A constant within the limit or a formula of the input sizes bounds them.
  const std::optional<int64_t> constantTrips = tripLength ? tripLength->constant() : std::nullopt;
  const bool unboundedScans =
      numScan > 0 && !condAlwaysTrue &&
      (!tripLength || (constantTrips && *constantTrips > processLimits().maxTensorElements));
  if (unboundedScans) {
    attrs["early_exit"] = Attribute(int64_t{1});
  } else if (numScan > 0) {
    // A trip count read from data: the scan length is that count (clamped at 0), a size read
    // from data before the loop runs. (The loop counts its trips from that arange's length: it
    // runs before the loop.)
    if (!tripLength && ctx.input(n, 0)) {
      Value *count = dataArange(
          ctx, maximum(b, reshapeTo(b, trips, {}), b.scalar(DType::I64, 0.0)),
          (n.output_size() > 0 ? n.output(0) : std::string("loop")) + "_trips");
      tripLength = count->type().dims[0].asExpr();
      trips = dimValue(b, count, 0);
    }
    if (!tripLength)
      throw ConvertError("the Loop has scan outputs, no trip count and a condition that stays "
                         "true: it never ends");
    if (auto m = tripLength->constant(); m && (*m < 0 || *m > processLimits().maxTensorElements))
      throw ConvertError("the Loop's trip count " + std::to_string(*m) + " is out of range");
    if (!condAlwaysTrue)
      attrs["max_trips"] = tripLength->constant() ? Attribute(*tripLength->constant())
                                                  : Attribute::dims({Dim::of(*tripLength)});
  }
  const std::set<std::string> decided = sizesDecidedIn(*g);
  for (int k = 0; k < numScan; ++k) {
    const int at = numCarried + k;
    const std::string name =
        at < n.output_size() ? n.output(at)
        : static_cast<size_t>(k - onnxScans) < appended.size()
            ? n.output(appended[static_cast<size_t>(k - onnxScans)].k) + "_appended"
            : "";
    Dim length = condAlwaysTrue ? Dim::of(*tripLength) : Dim::sym(sanitizeSymbol("loop_" + name));
    // The entry's dims as the body gives them, but a size the body decides (each iteration
    // anew): a symbol of the result's own, set from the first entry.
    std::vector<Dim> dims{length};
    const TensorType &entry = out[1 + numCarried + k]->type();
    for (size_t d = 0; d < entry.dims.size(); ++d) {
      dims.push_back(readsAnyOf(entry.dims[d], decided)
                         ? Dim::sym(ctx.uniqueSymbol(sanitizeSymbol(
                                 "loop_" + name + "_" + std::to_string(d + 1))))
                           : entry.dims[d]);
    }
    types.push_back(TensorType(entry.dtype, std::move(dims)));
  }
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(g));
  Values operands = {trips, cond};
  operands.insert(operands.end(), carried.begin(), carried.end());
  Values results = resultsOf(createRegionOp(b, OpKind::Loop, operands, std::move(regions),
                                            std::move(attrs), types));
  // Each appended-to value: the initial value, then the entries merged along the axis
  // ([L, x...] -> L moved next to the axis -> merged with it).
  for (const Appended &a : appended) {
    Value *stacked = results[static_cast<size_t>(numCarried) + (a.output - 1 - numCarried)];
    const int64_t rank = stacked->type().rank() - 1;
    if (a.axis != 0) {
      std::vector<int64_t> perm;
      for (int64_t d = 1; d <= rank; ++d) {
        if (d == a.axis + 1)
          perm.push_back(0);
        perm.push_back(d);
      }
      stacked = b.value(OpKind::Transpose, {stacked}, {{"perm", Attribute(perm)}});
    }
    // Merged to the initial value's dims but along the axis (an entry of other dims fails the
    // reshape's element count check when it runs, as the concat would; no entry gives 0 rows).
    Value *initial = results[static_cast<size_t>(a.k)];
    std::vector<Dim> merged = initial->type().dims;
    const std::vector<Dim> &dims = stacked->type().dims;
    merged[static_cast<size_t>(a.axis)] =
        Dim::of(dims[static_cast<size_t>(a.axis)].asExpr() *
                dims[static_cast<size_t>(a.axis) + 1].asExpr());
    std::vector<int64_t> sizes;
    for (const Dim &d : merged)
      if (d.isStatic())
        sizes.push_back(d.size);
    Value *entries = b.value(
        OpKind::Reshape, {stacked},
        {{"shape", sizes.size() == merged.size() ? Attribute(sizes) : Attribute::dims(merged)},
         {"allowzero", Attribute(int64_t{1})}});
    const Dim &had = initial->type().dims[static_cast<size_t>(a.axis)];
    results[static_cast<size_t>(a.k)] =
        had.isStatic() && had.size == 0
            ? entries
            : b.value(OpKind::Concat, {initial, entries}, {{"axis", Attribute(a.axis)}});
  }
  results.resize(static_cast<size_t>(numCarried + onnxScans));
  return results;
}

Values convertLoop(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  const onnx::GraphProto &body = graphAttr(n, "body");
  Values carried;
  for (int i = 2; i < n.input_size(); ++i)
    carried.push_back(requiredInput(ctx, n, i, "loop-carried value"));
  const int numCarried = static_cast<int>(carried.size());
  if (body.input_size() != 2 + numCarried)
    throw ConvertError("the body takes " + std::to_string(body.input_size()) +
                       " inputs; expected 2 + " + std::to_string(numCarried) + " loop-carried");
  const int numScan = body.output_size() - 1 - numCarried;
  if (numScan < 0)
    throw ConvertError("the body has " + std::to_string(body.output_size()) +
                       " outputs; expected at least 1 + " + std::to_string(numCarried));
  // M: the trip count; absent means no bound (then the condition must end the loop). Either
  // computed from tensor data at run time: a loop op.
  std::optional<int64_t> tripCount;
  if (ctx.input(n, 0)) {
    auto m = ctx.constantInput(n, 0);
    if (!m)
      return buildLoopOp(ctx, n, carried, numScan);
    tripCount = intOf(*m, "the trip count of Loop");
  }
  bool running = true;
  if (ctx.input(n, 1)) {
    auto c = ctx.constantInput(n, 1);
    if (!c)
      return buildLoopOp(ctx, n, carried, numScan);
    running = truthOf(*c, "the condition of Loop");
  }
  if (!tripCount && !running)
    tripCount = 0;
  // Unrolled while the body's condition stays known; a loop op once it is not (the iterations
  // unrolled so far are left dead).
  const int64_t limit = processLimits().maxOps;
  const Values initial = carried;
  std::vector<Values> scans(static_cast<size_t>(numScan));
  int64_t iter = 0;
  for (; running && (!tripCount || iter < *tripCount); ++iter) {
    if (iter >= limit) {
      if (tripCount)
        return buildLoopOp(ctx, n, initial, numScan);
      throw ConvertError("the Loop runs past " + std::to_string(limit) +
                         " iterations when unrolled, " + overLimit(&Limits::maxOps, limit));
    }
    Values in = {b.scalar(DType::I64, static_cast<double>(iter)), b.scalar(DType::Bool, 1.0)};
    in.insert(in.end(), carried.begin(), carried.end());
    Values out = ctx.inlineSubgraph(body, in, nodeLabel(n) + "/body#" + std::to_string(iter));
    std::optional<Tensor> again = constantOf(out[0]);
    if (!again)
      return buildLoopOp(ctx, n, initial, numScan);
    running = truthOf(*again, "the body's condition output");
    for (int k = 0; k < numCarried; ++k) {
      Value *next = out[1 + k];
      if (next->type().dtype != carried[k]->type().dtype)
        throw ConvertError("loop-carried value " + std::to_string(k) + " changes dtype from " +
                           std::string(dtypeName(carried[k]->type().dtype)) + " to " +
                           std::string(dtypeName(next->type().dtype)));
      carried[k] = next;
    }
    for (int k = 0; k < numScan; ++k)
      scans[k].push_back(out[1 + numCarried + k]);
  }
  Values results = carried;
  for (int k = 0; k < numScan; ++k) {
    if (scans[k].empty())
      throw ConvertError("the Loop runs no iteration, so the type of scan output " +
                         std::to_string(k) + " is unknown at import");
    results.push_back(stack(b, scans[k], 0));
  }
  return results;
}

// Scans longer than this (or of a symbolic length) run as a loop instead of unrolled.
constexpr int64_t kMaxUnrolledScan = 256;

// A Scan as a run-time `loop` over its length: the body takes the states as carried values and
// the scan inputs' slices at the step (gathered in the body, reversed for a reverse direction);
// its scan outputs stack along a new leading axis, then move to their axes (reversed first for a
// reverse direction).
Values scanAsLoop(ImportContext &ctx, const Node &n, const Values &states, const Values &scanIns,
                  const std::vector<int64_t> &inAxes, const std::vector<int64_t> &inDirs,
                  const std::vector<int64_t> &outAxes, const std::vector<int64_t> &outDirs) {
  Builder &b = ctx.builder();
  const onnx::GraphProto &body = graphAttr(n, "body");
  const Dim length = scanIns[0]->type().dims[inAxes[0]];
  Value *steps = dimValue(b, scanIns[0], inAxes[0]);
  Value *last = sub(b, steps, b.scalar(DType::I64, 1.0));
  auto g = std::make_unique<Graph>("body");
  Value *iteration = g->addInput(TensorType(DType::I64, {}), "t");
  Value *cond = g->addInput(TensorType(DType::Bool, {}), "cond");
  Values formals;
  for (size_t i = 0; i < states.size(); ++i)
    formals.push_back(g->addInput(states[i]->type(), body.input(static_cast<int>(i)).name()));
  Values out;
  {
    Builder::Into into(b, *g);
    for (size_t k = 0; k < scanIns.size(); ++k) {
      Value *t = inDirs[k] ? sub(b, last, iteration) : iteration;
      formals.push_back(b.value(OpKind::Gather, {scanIns[k], t}, {{"axis", Attribute(inAxes[k])}}));
    }
    out = ctx.convertIntoRegion(body, *g, formals, nodeLabel(n) + "/body");
  }
  if (out.size() < states.size())
    throw ConvertError("the body gives " + std::to_string(out.size()) + " outputs for " +
                       std::to_string(states.size()) + " states");
  const size_t numScanOutputs = out.size() - states.size();
  g->addOutput(cond, "cond");
  for (size_t i = 0; i < out.size(); ++i)
    g->addOutput(out[i], body.output(static_cast<int>(i)).name());
  std::vector<TensorType> types;
  for (Value *st : states)
    types.push_back(st->type());
  for (size_t k = 0; k < numScanOutputs; ++k)
    types.push_back(TensorType(out[states.size() + k]->type().dtype, {length}));
  Op *loop = createLoop(b, steps, b.scalar(DType::Bool, 1.0), states, std::move(g), types);
  Values results;
  for (size_t i = 0; i < states.size(); ++i)
    results.push_back(loop->result(static_cast<unsigned>(i)));
  for (size_t k = 0; k < numScanOutputs; ++k) {
    Value *y = loop->result(static_cast<unsigned>(states.size() + k)); // [length, item...]
    if (outDirs[k]) // entry j is step length-1-j
      y = reverseSteps(b, y, last);
    const int64_t rank = y->type().rank();
    const int64_t axis = outAxes[k] < 0 ? outAxes[k] + rank : outAxes[k];
    if (axis < 0 || axis >= rank)
      throw ConvertError("scan output axis " + std::to_string(outAxes[k]) + " is out of range");
    if (axis != 0) { // the stacked axis moves to `axis`
      std::vector<int64_t> perm;
      for (int64_t d = 1; d < rank; ++d) {
        if (static_cast<int64_t>(perm.size()) == axis)
          perm.push_back(0);
        perm.push_back(d);
      }
      if (static_cast<int64_t>(perm.size()) == axis)
        perm.push_back(0);
      y = b.value(OpKind::Transpose, {y}, {{"perm", Attribute(perm)}});
    }
    results.push_back(y);
  }
  return results;
}

Values convertScan(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  if (ctx.opset() < 9)
    throw ConvertError("Scan before opset 9 (with a batch axis and sequence_lens) is unsupported");
  const onnx::GraphProto &body = graphAttr(n, "body");
  const int64_t numScanInputs = attrInt(n, "num_scan_inputs", -1);
  const int numInputs = n.input_size();
  if (numScanInputs < 1 || numScanInputs > numInputs)
    throw ConvertError("attribute 'num_scan_inputs' is " + std::to_string(numScanInputs) +
                       " for " + std::to_string(numInputs) + " inputs");
  const int numStates = numInputs - static_cast<int>(numScanInputs);
  const int numScanOutputs = body.output_size() - numStates;
  if (body.input_size() != numInputs || numScanOutputs < 0)
    throw ConvertError("the body's inputs and outputs do not match the Scan's states and scans");
  auto listAttr = [&](const char *name, int64_t count) {
    std::vector<int64_t> v = attrInts(n, name);
    if (v.empty())
      v.assign(static_cast<size_t>(count), 0);
    if (static_cast<int64_t>(v.size()) != count)
      throw ConvertError("attribute '" + std::string(name) + "' has " + std::to_string(v.size()) +
                         " entries; expected " + std::to_string(count));
    return v;
  };
  std::vector<int64_t> inAxes = listAttr("scan_input_axes", numScanInputs);
  std::vector<int64_t> inDirs = listAttr("scan_input_directions", numScanInputs);
  std::vector<int64_t> outAxes = listAttr("scan_output_axes", numScanOutputs);
  std::vector<int64_t> outDirs = listAttr("scan_output_directions", numScanOutputs);

  Values states, scanIns;
  for (int i = 0; i < numStates; ++i)
    states.push_back(requiredInput(ctx, n, i, "initial state"));
  int64_t length = -1;
  for (int64_t k = 0; k < numScanInputs; ++k) {
    Value *x = requiredInput(ctx, n, static_cast<int>(numStates + k), "scan input");
    int64_t rank = x->type().rank();
    if (inAxes[k] < -rank || inAxes[k] >= rank)
      throw ConvertError("scan input axis " + std::to_string(inAxes[k]) + " is out of range for " +
                         x->type().str());
    inAxes[k] = inAxes[k] < 0 ? inAxes[k] + rank : inAxes[k];
    const Dim &len = x->type().dims[inAxes[k]];
    if (k > 0 && len != scanIns[0]->type().dims[inAxes[0]])
      throw ConvertError("scan inputs have lengths " + scanIns[0]->type().dims[inAxes[0]].str() +
                         " and " + len.str());
    length = len.isStatic() ? len.size : -1;
    scanIns.push_back(x);
  }
  // A symbolic or long scan runs as a loop at run time; a short static one is unrolled.
  if (length < 0 || length > kMaxUnrolledScan)
    return scanAsLoop(ctx, n, states, scanIns, inAxes, inDirs, outAxes, outDirs);
  std::vector<Values> scans(static_cast<size_t>(numScanOutputs));
  for (int64_t t = 0; t < length; ++t) {
    Values in = states;
    for (int64_t k = 0; k < numScanInputs; ++k) {
      int64_t at = inDirs[k] ? length - 1 - t : t;
      Value *slice1 = slice(b, scanIns[k], {at}, {at + 1}, {inAxes[k]});
      in.push_back(squeezeAt(b, slice1, inAxes[k]));
    }
    Values out = ctx.inlineSubgraph(body, in, nodeLabel(n) + "/body#" + std::to_string(t));
    for (int i = 0; i < numStates; ++i)
      states[i] = out[i];
    for (int k = 0; k < numScanOutputs; ++k)
      scans[k].push_back(out[numStates + k]);
  }
  Values results = states;
  for (int k = 0; k < numScanOutputs; ++k) {
    if (scans[k].empty())
      throw ConvertError("the Scan has no steps, so the type of scan output " + std::to_string(k) +
                         " is unknown at import");
    Values items = scans[k];
    if (outDirs[k])
      std::reverse(items.begin(), items.end());
    int64_t rank = items[0]->type().rank() + 1;
    int64_t axis = outAxes[k] < 0 ? outAxes[k] + rank : outAxes[k];
    if (axis < 0 || axis >= rank)
      throw ConvertError("scan output axis " + std::to_string(outAxes[k]) + " is out of range");
    results.push_back(stack(b, items, axis));
  }
  return results;
}

} // namespace

Value *dimValue(Builder &b, Value *x, int64_t axis) {
  Value *dims = b.value(OpKind::Shape, {x}, {{"start", Attribute(axis)}, {"end", Attribute(axis + 1)}});
  return reshapeTo(b, dims, {});
}

Value *reverseSteps(Builder &b, Value *stacked, Value *last) {
  const AttrMap axis0 = {{"axis", Attribute(int64_t{0})}};
  Value *index = sub(b, last, b.value(OpKind::Iota, {stacked}, axis0));
  return b.value(OpKind::Gather, {stacked, index}, axis0);
}

Op *createLoop(Builder &b, Value *trips, Value *cond, const std::vector<Value *> &carried,
               std::unique_ptr<Graph> body, const std::vector<TensorType> &types) {
  Values operands = {trips, cond};
  operands.insert(operands.end(), carried.begin(), carried.end());
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(body));
  return createRegionOp(b, OpKind::Loop, operands, std::move(regions),
                        {{"num_carried", Attribute(static_cast<int64_t>(carried.size()))}}, types);
}

void registerControlFlowConverters(ConverterTable &t) {
  t["If"] = convertIf;
  t["Loop"] = convertLoop;
  t["Scan"] = convertScan;
}

} // namespace strata::onnx_import
