#include "strata/graph/Graph.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace strata {

static void removeUse(std::vector<Use> &uses, Use u) {
  auto it = std::find(uses.begin(), uses.end(), u);
  assert(it != uses.end() && "use list out of sync");
  uses.erase(it);
}

void Value::replaceAllUsesWith(Value *other) {
  if (other == this)
    return;
  // Copy first: setOperand mutates our use list.
  std::vector<Use> uses = uses_;
  for (const Use &u : uses)
    u.user->setOperand(u.operandIndex, other);
  auto outs = outputUses_;
  for (auto &[g, idx] : outs)
    g->setOutput(idx, other);
}

void Op::setOperand(unsigned i, Value *v) {
  Value *old = operands_[i];
  if (old == v)
    return;
  if (old)
    removeUse(old->uses_, {this, i});
  operands_[i] = v;
  if (v)
    v->uses_.push_back({this, i});
}

void Op::addOperand(Value *v) {
  operands_.push_back(v);
  if (v)
    v->uses_.push_back({this, static_cast<unsigned>(operands_.size() - 1)});
}

const Attribute &Op::attr(std::string_view n) const {
  auto it = attrs_.find(std::string(n));
  if (it == attrs_.end())
    throw std::out_of_range("op '" + std::string(opName()) + "' has no attribute '" +
                            std::string(n) + "'");
  return it->second;
}

Graph &Op::addRegion() {
  regions_.push_back(std::make_unique<Graph>("region", this));
  return *regions_.back();
}

Graph &Op::adoptRegion(std::unique_ptr<Graph> g) {
  g->parentOp_ = this;
  regions_.push_back(std::move(g));
  return *regions_.back();
}

Graph::~Graph() {
  // Drop all operand references first so destruction order does not matter.
  for (auto &op : ops_)
    for (unsigned i = 0; i < op->numOperands(); ++i)
      op->operands_[i] = nullptr;
}

Value *Graph::addInput(TensorType type, std::string name) {
  inputs_.push_back(std::unique_ptr<Value>(
      new Value(std::move(type), nullptr, static_cast<unsigned>(inputs_.size()), this)));
  inputs_.back()->setName(std::move(name));
  return inputs_.back().get();
}

std::vector<Value *> Graph::inputs() const {
  std::vector<Value *> v;
  for (auto &i : inputs_)
    v.push_back(i.get());
  return v;
}

void Graph::addOutput(Value *v, std::string name) {
  outputs_.push_back(v);
  outputNames_.push_back(std::move(name));
  if (v)
    v->outputUses_.push_back({this, static_cast<unsigned>(outputs_.size() - 1)});
}

void Graph::setOutput(unsigned i, Value *v) {
  if (Value *old = outputs_[i]) {
    auto &ou = old->outputUses_;
    ou.erase(std::find(ou.begin(), ou.end(), std::make_pair(this, i)));
  }
  outputs_[i] = v;
  if (v)
    v->outputUses_.push_back({this, i});
}

Op *Graph::createOp(OpKind kind, const std::vector<Value *> &operands,
                    const std::vector<TensorType> &resultTypes, AttrMap attrs, Op *before) {
  std::unique_ptr<Op> op(new Op(kind, this));
  Op *raw = op.get();
  raw->operands_.resize(operands.size(), nullptr);
  for (unsigned i = 0; i < operands.size(); ++i)
    raw->setOperand(i, operands[i]);
  for (unsigned i = 0; i < resultTypes.size(); ++i)
    raw->results_.push_back(std::unique_ptr<Value>(new Value(resultTypes[i], raw, i, nullptr)));
  raw->attrs_ = std::move(attrs);
  auto pos = before ? before->self_ : ops_.end();
  raw->self_ = ops_.insert(pos, std::move(op));
  return raw;
}

// Drops every operand use held by ops in `g` and its nested regions.
static void dropAllUses(Graph &g) {
  for (Op *op : g.opList()) {
    for (unsigned i = 0; i < op->numOperands(); ++i)
      op->setOperand(i, nullptr);
    for (unsigned r = 0; r < op->numRegions(); ++r)
      dropAllUses(op->region(r));
  }
}

void Graph::eraseOp(Op *op) {
  assert(op->parent_ == this);
  // Region ops may use values of enclosing graphs; their uses must go before the op does.
  for (unsigned r = 0; r < op->numRegions(); ++r)
    dropAllUses(op->region(r));
  for (auto &r : op->results_) {
    (void)r;
    assert(!r->hasUses() && r->outputUses_.empty() && "erasing an op whose results are used");
  }
  for (unsigned i = 0; i < op->numOperands(); ++i)
    op->setOperand(i, nullptr);
  ops_.erase(op->self_);
}

void Graph::moveBefore(Op *op, Op *before) {
  assert(op->parent_ == this && before->parent_ == this);
  ops_.splice(before->self_, ops_, op->self_);
}

std::vector<Op *> Graph::opList() const {
  std::vector<Op *> v;
  v.reserve(ops_.size());
  for (auto &o : ops_)
    v.push_back(o.get());
  return v;
}

size_t Graph::numOpsRecursive() const {
  size_t n = 0;
  for (auto &o : ops_) {
    ++n;
    for (unsigned r = 0; r < o->numRegions(); ++r)
      n += o->region(r).numOpsRecursive();
  }
  return n;
}

Diagnostic diagnose(const Op &op, std::string message) {
  Diagnostic d = Diagnostic::error(std::move(message));
  d.op = std::string(op.opName());
  if (!op.location().empty())
    d.node = op.location();
  else if (op.numResults() > 0)
    d.value = op.result(0)->name();
  return d;
}

} // namespace strata
