// The graph verifier: SSA dominance, use-list consistency, arity, attributes and result types,
// recursively through regions. Stops at the first problem and reports it as one line:
//   verifier: op 'add' (node "Add_3"): operand 1 has dtype i64 but operand 0 has f32
#include "strata/graph/Verifier.h"
#include "strata/graph/ControlFlow.h"
#include "strata/graph/Kernel.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"

#include "TypeInferenceImpl.h"

#include <algorithm>
#include <unordered_set>

namespace strata {

namespace {

// Thrown inside the verifier, returned as an llvm::Error by verifyGraph.
struct VerifyError {
  Diagnostic diag;
};

std::string valueLabel(const Value *v) {
  if (!v->name().empty())
    return "%" + v->name();
  if (v->isGraphInput())
    return "input " + std::to_string(v->resultIndex());
  return "result " + std::to_string(v->resultIndex()) + " of '" +
         std::string(v->definingOp()->opName()) + "'";
}

std::string graphLabel(const Graph &g) {
  std::string s = "graph '" + g.name() + "'";
  if (g.parentOp())
    s += " (region of op '" + std::string(g.parentOp()->opName()) + "')";
  return s;
}

[[noreturn]] void opError(const Op &op, const std::string &why) {
  throw VerifyError{diagnose(op, why).inPhase("verifier")};
}

[[noreturn]] void graphError(const Graph &g, const std::string &why) {
  throw VerifyError{Diagnostic::error(graphLabel(g) + ": " + why).inPhase("verifier")};
}

// Result-type rule: a declared result type must equal the inferred one exactly (dtype, every
// dim including symbol names, device), with one exception: where inference had to invent a
// fresh symbol (reshape's -1 absorbing symbolic dims with a ratio), any symbolic dim is
// accepted, since a pass may have renamed or unified that symbol. A static size is not
// accepted there, as nothing could check it. The constant op's result may carry any device
// (placement passes move constants); its dtype and shape must match its tensor.
bool dimMatches(const Dim &declared, const Dim &inferred, const infer::Inferred &inf) {
  if (declared == inferred)
    return true;
  if (inferred.isStatic() || declared.isStatic())
    return false;
  // A formula over fresh symbols is as free as they are.
  std::set<std::string> used;
  inferred.expr.collectSymbols(used);
  for (const std::string &s : used)
    if (inf.freshSymbols.count(s))
      return true;
  return false;
}

bool typeMatches(const Op &op, const TensorType &declared, const TensorType &inferred,
                 const infer::Inferred &inf) {
  if (declared.dtype != inferred.dtype || declared.rank() != inferred.rank())
    return false;
  if (declared.device != inferred.device && op.kind() != OpKind::Constant)
    return false;
  for (int64_t d = 0; d < declared.rank(); ++d)
    if (!dimMatches(declared.dims[d], inferred.dims[d], inf))
      return false;
  return true;
}

class GraphVerifier {
public:
  void verify(const Graph &g) {
    checkNames(g);
    for (unsigned i = 0; i < g.numInputs(); ++i) {
      const Value *in = g.input(i);
      if (!in->isGraphInput() || in->ownerGraph() != &g || in->resultIndex() != i)
        graphError(g, "input " + std::to_string(i) + " does not record this graph as its owner");
      checkUsesPointBack(g, nullptr, in);
      visible_.insert(in);
    }

    // Every value this graph defines, to tell "used before its definition" from "undefined".
    std::unordered_set<const Value *> definedHere;
    for (const Op &op : g.ops())
      for (unsigned r = 0; r < op.numResults(); ++r)
        definedHere.insert(op.result(r));

    for (const Op &op : g.ops()) {
      verifyOp(g, op, definedHere);
      for (unsigned r = 0; r < op.numRegions(); ++r) {
        const Graph &region = op.region(r);
        if (region.parentOp() != &op)
          opError(op, "region " + std::to_string(r) + " does not record this op as its parent");
        if (op.kind() == OpKind::Kernel || isControlFlow(op)) {
          verifyClosedRegion(region);
          continue;
        }
        verify(region);
      }
      for (unsigned r = 0; r < op.numResults(); ++r)
        visible_.insert(op.result(r));
    }

    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      const Value *out = g.output(i);
      if (!out)
        graphError(g, "output " + std::to_string(i) + " (\"" + g.outputName(i) + "\") is null");
      if (!visible_.count(out))
        graphError(g, "output " + std::to_string(i) + " (\"" + g.outputName(i) + "\") " +
                          valueLabel(out) + " is not defined in this graph or an enclosing one");
    }

    // Leaving this graph: its values are no longer in scope for the enclosing graph.
    for (const Value *in : g.inputs())
      visible_.erase(in);
    for (const Value *v : definedHere)
      visible_.erase(v);
  }

private:
  // Values in scope at the current point: inputs and earlier results of this graph and of the
  // enclosing graphs (up to the op owning the region).
  std::unordered_set<const Value *> visible_;
  // Values of graphs enclosing a kernel region: in lexical scope but not usable, since a kernel
  // is closed (everything it reads comes through its operands).
  std::unordered_set<const Value *> hiddenByKernel_;

  // A kernel's region sees nothing of the enclosing graphs.
  void verifyClosedRegion(const Graph &region) {
    std::unordered_set<const Value *> outer;
    outer.swap(visible_);
    std::unordered_set<const Value *> hiddenBefore = hiddenByKernel_;
    hiddenByKernel_.insert(outer.begin(), outer.end());
    verify(region);
    hiddenByKernel_.swap(hiddenBefore);
    visible_.swap(outer);
  }

  // kernel: one region whose inputs take the operand types and whose outputs give the result
  // types; its attributes record a consistent fusion decision (Kernel.h).
  void verifyKernel(const Op &op, const std::vector<TensorType> &operandTypes) {
    if (llvm::Error err = checkAttributes(op.kind(), op.attrs()))
      opError(op, llvm::toString(std::move(err)));
    if (op.numRegions() != 1)
      opError(op, "has " + std::to_string(op.numRegions()) + " regions; a kernel has exactly one");
    const Graph &region = op.region(0);
    if (auto plan = kernelPlan(op); !plan)
      opError(op, "fusion decision: " + llvm::toString(plan.takeError()));
    if (region.numInputs() != operandTypes.size())
      opError(op, "has " + std::to_string(operandTypes.size()) + " operands but its region has " +
                      std::to_string(region.numInputs()) + " inputs");
    for (unsigned i = 0; i < region.numInputs(); ++i)
      if (region.input(i)->type() != operandTypes[i])
        opError(op, "region input " + std::to_string(i) + " has type " +
                        region.input(i)->type().str() + " but operand " + std::to_string(i) +
                        " has " + operandTypes[i].str());
    if (region.numOutputs() != op.numResults())
      opError(op, "has " + std::to_string(op.numResults()) + " results but its region has " +
                      std::to_string(region.numOutputs()) + " outputs");
    for (unsigned i = 0; i < region.numOutputs(); ++i)
      if (region.output(i) && region.output(i)->type() != op.result(i)->type())
        opError(op, "result " + std::to_string(i) + " has type " + op.result(i)->type().str() +
                        " but region output " + std::to_string(i) + " has " +
                        region.output(i)->type().str());
  }

  void checkNames(const Graph &g) {
    std::unordered_set<std::string> names;
    auto check = [&](const Value *v) {
      if (!v->name().empty() && !names.insert(v->name()).second)
        graphError(g, "value name %" + v->name() + " is used more than once");
    };
    for (unsigned i = 0; i < g.numInputs(); ++i)
      check(g.input(i));
    for (const Op &op : g.ops())
      for (unsigned r = 0; r < op.numResults(); ++r)
        check(op.result(r));
  }

  // Every recorded use of `v` must be an operand slot that holds `v`.
  static void checkUsesPointBack(const Graph &g, const Op *def, const Value *v) {
    for (const Use &u : v->uses()) {
      bool ok = u.user && u.operandIndex < u.user->numOperands() &&
                u.user->operand(u.operandIndex) == v;
      if (ok)
        continue;
      std::string why = "use list of " + valueLabel(v) + " names " +
                        (u.user ? "operand " + std::to_string(u.operandIndex) + " of op '" +
                                      std::string(u.user->opName()) + "'"
                                : std::string("a null op")) +
                        ", which does not hold it";
      if (def)
        opError(*def, why);
      graphError(g, why);
    }
  }

  void verifyOp(const Graph &g, const Op &op,
                const std::unordered_set<const Value *> &definedHere) {
    if (op.parentGraph() != &g)
      opError(op, "does not record " + graphLabel(g) + " as its parent");
    const OpInfo &info = op.info();

    // Operands: present, dominated by their definitions, and recorded in use lists.
    std::vector<TensorType> operandTypes;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Value *v = op.operand(i);
      std::string slot = "operand " + std::to_string(i);
      if (!v)
        opError(op, slot + " is null");
      if (!visible_.count(v)) {
        if (hiddenByKernel_.count(v))
          opError(op, slot + " (" + valueLabel(v) +
                          ") comes from outside the enclosing kernel; a kernel region is closed "
                          "(pass the value as a kernel operand)");
        if (definedHere.count(v))
          opError(op, slot + " (" + valueLabel(v) +
                          ") is used before its definition (or forms a cycle)");
        opError(op, slot + " (" + valueLabel(v) +
                        ") is not defined in this graph or an enclosing one");
      }
      size_t recorded = std::count(v->uses().begin(), v->uses().end(), Use{const_cast<Op *>(&op), i});
      if (recorded != 1)
        opError(op, slot + " (" + valueLabel(v) + ") is recorded " + std::to_string(recorded) +
                        " times in its value's use list; expected once");
      operandTypes.push_back(v->type());
    }

    for (unsigned r = 0; r < op.numResults(); ++r) {
      const Value *res = op.result(r);
      if (res->definingOp() != &op || res->resultIndex() != r)
        opError(op, "result " + std::to_string(r) + " does not record this op as its definition");
      checkUsesPointBack(g, &op, res);
    }
    if (op.kind() == OpKind::Kernel) {
      verifyKernel(op, operandTypes);
      return;
    }
    if (isControlFlow(op)) {
      if (llvm::Error err = checkAttributes(op.kind(), op.attrs()))
        opError(op, llvm::toString(std::move(err)));
      if (op.numOperands() < static_cast<unsigned>(info.minOperands))
        opError(op, "has " + std::to_string(op.numOperands()) + " operands; expected at least " +
                        std::to_string(info.minOperands));
      if (llvm::Error err = checkControlFlow(op))
        opError(op, llvm::toString(std::move(err)));
      return;
    }
    if (static_cast<int>(op.numResults()) != info.numResults)
      opError(op, "has " + std::to_string(op.numResults()) + " results; expected " +
                      std::to_string(info.numResults));

    // Arity, attributes and operand compatibility all come from inference.
    infer::Inferred inferred;
    try {
      inferred = infer::inferDetailed(op.kind(), operandTypes, op.attrs());
    } catch (const infer::InferError &e) {
      opError(op, e.what());
    }
    for (unsigned r = 0; r < op.numResults(); ++r) {
      const TensorType &declared = op.result(r)->type();
      const TensorType &expected = inferred.types[r];
      if (!typeMatches(op, declared, expected, inferred))
        opError(op, "result " + std::to_string(r) + " has type " + declared.str() +
                        " but inference gives " + expected.str());
    }
  }
};

} // namespace

// The graph-wide limits (support/Limits.h): ops, region depth, constant bytes and the rank and
// size of graph inputs (op results are checked by type inference). Walked before the structural
// checks, whose recursion must not meet a hostile nesting depth first.
class LimitChecker {
public:
  explicit LimitChecker(const Limits &limits) : limits_(limits) {}

  void check(const Graph &g, int64_t depth) {
    if (depth > limits_.maxRegionDepth)
      graphError(g, "regions nested " + std::to_string(depth) + " deep, " +
                        overLimit(&Limits::maxRegionDepth, limits_.maxRegionDepth));
    for (const Value *in : g.inputs())
      checkType(g, in->type(), "input '" + in->name() + "'");
    for (const Op &op : g.ops()) {
      if (++ops_ > limits_.maxOps)
        graphError(g, "has more than " + std::to_string(limits_.maxOps) + " ops, " +
                          overLimit(&Limits::maxOps, limits_.maxOps));
      if (op.kind() == OpKind::Constant && op.hasAttr("value")) {
        const Tensor &t = op.attr("value").getTensor();
        const void *key = t.buffer() ? static_cast<const void *>(t.buffer().get()) : &op;
        if (counted_.insert(key).second)
          constantBytes_ += static_cast<int64_t>(t.byteSize());
        if (constantBytes_ > limits_.maxConstantBytes)
          opError(op, "constants total " + std::to_string(constantBytes_) + " bytes, " +
                          overLimit(&Limits::maxConstantBytes, limits_.maxConstantBytes));
      }
      for (unsigned r = 0; r < op.numRegions(); ++r)
        check(op.region(r), depth + 1);
    }
  }

private:
  void checkType(const Graph &g, const TensorType &t, const std::string &what) {
    if (t.rank() > limits_.maxRank)
      graphError(g, what + " has rank " + std::to_string(t.rank()) + ", " +
                        overLimit(&Limits::maxRank, limits_.maxRank));
    Shape known;
    for (const Dim &d : t.dims)
      if (d.isStatic())
        known.push_back(d.size);
    if (int64_t n = numElements(known); n > limits_.maxTensorElements)
      graphError(g, what + " " + t.str() + " " + tooManyElements(n, limits_.maxTensorElements));
  }

  const Limits &limits_;
  int64_t ops_ = 0, constantBytes_ = 0;
  std::unordered_set<const void *> counted_;
};

llvm::Error verifyGraph(const Graph &g) {
  try {
    const Limits limits = processLimits();
    LimitChecker(limits).check(g, 0);
    GraphVerifier().verify(g);
    return llvm::Error::success();
  } catch (const VerifyError &e) {
    return makeError(e.diag);
  }
}

} // namespace strata
