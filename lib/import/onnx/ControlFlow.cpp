// ONNX If, Loop and Scan, resolved at import: an If whose condition is known there (a constant,
// or computed from static shapes, as it is when a model is imported at its input shapes) becomes
// the ops of its taken branch; a Loop whose trip count is known and whose condition stays a
// constant is unrolled; a Scan is unrolled over its (static) scan axis. Each body is converted
// inline once per iteration (ImportContext::inlineSubgraph), so every later rung sees plain ops.
// Control flow decided by tensor data at run time is refused with the reason: it needs region
// ops run by the executor, which do not exist yet.
#include "Decompose.h"
#include "strata/support/Limits.h"

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

Values convertIf(ImportContext &ctx, const Node &n) {
  std::optional<Tensor> cond = ctx.constantInput(n, 0);
  if (!cond)
    throw ConvertError("the condition of If is computed from tensor data at run time; strata "
                       "resolves an If only when its condition is known at import (a constant, or "
                       "computed from static shapes): run-time control flow is not supported yet");
  bool taken = truthOf(*cond, "the condition of If");
  const char *branch = taken ? "then_branch" : "else_branch";
  Values out = ctx.inlineSubgraph(graphAttr(n, branch), {}, nodeLabel(n) + "/" + branch);
  if (static_cast<int>(out.size()) != n.output_size())
    throw ConvertError(std::string(branch) + " has " + std::to_string(out.size()) +
                       " outputs but the If node has " + std::to_string(n.output_size()));
  return out;
}

Values convertLoop(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  const onnx::GraphProto &body = graphAttr(n, "body");
  // M: the trip count; absent means no bound (then the condition must end the loop).
  std::optional<int64_t> tripCount;
  if (ctx.input(n, 0)) {
    auto m = ctx.constantInput(n, 0);
    if (!m)
      throw ConvertError("the trip count of Loop is computed from tensor data at run time; strata "
                         "unrolls a Loop only when its trip count is known at import: run-time "
                         "control flow is not supported yet");
    tripCount = intOf(*m, "the trip count of Loop");
  }
  bool running = true;
  if (ctx.input(n, 1)) {
    auto c = ctx.constantInput(n, 1);
    if (!c)
      throw ConvertError("the condition of Loop is computed from tensor data at run time: run-time "
                         "control flow is not supported yet");
    running = truthOf(*c, "the condition of Loop");
  }
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
  if (!tripCount && !running)
    tripCount = 0;
  const int64_t limit = processLimits().maxOps;
  std::vector<Values> scans(static_cast<size_t>(numScan));
  int64_t iter = 0;
  for (; running && (!tripCount || iter < *tripCount); ++iter) {
    if (iter >= limit)
      throw ConvertError("the Loop runs past " + std::to_string(limit) +
                         " iterations when unrolled, " + overLimit(&Limits::maxOps, limit));
    Values in = {b.scalar(DType::I64, static_cast<double>(iter)), b.scalar(DType::Bool, 1.0)};
    in.insert(in.end(), carried.begin(), carried.end());
    Values out = ctx.inlineSubgraph(body, in, nodeLabel(n) + "/body#" + std::to_string(iter));
    std::optional<Tensor> again = constantOf(out[0]);
    if (!again)
      throw ConvertError("the body's condition output is computed from tensor data at run time; "
                         "strata unrolls a Loop only when it stays known at import: run-time "
                         "control flow is not supported yet");
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
    int64_t len = staticDim(x, inAxes[k], "the scanned axis");
    if (length >= 0 && len != length)
      throw ConvertError("scan inputs have lengths " + std::to_string(length) + " and " +
                         std::to_string(len));
    length = len;
    scanIns.push_back(x);
  }
  if (length > processLimits().maxOps)
    throw ConvertError("a Scan of " + std::to_string(length) + " steps unrolls to a graph " +
                       overLimit(&Limits::maxOps, processLimits().maxOps));
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

void registerControlFlowConverters(ConverterTable &t) {
  t["If"] = convertIf;
  t["Loop"] = convertLoop;
  t["Scan"] = convertScan;
}

} // namespace strata::onnx_import
