// Deep copies of graphs and ops (see Clone.h).
#include "strata/graph/Clone.h"

#include <cassert>

namespace strata {

namespace {

void cloneBody(const Graph &from, Graph &into, ValueMap &map) {
  for (const Value *in : from.inputs())
    map[in] = into.addInput(in->type(), in->name());
  for (const Op &op : from.ops())
    cloneOp(into, op, map);
  for (unsigned i = 0; i < from.numOutputs(); ++i) {
    auto it = map.find(from.output(i));
    into.addOutput(it == map.end() ? nullptr : it->second, from.outputName(i));
  }
}

} // namespace

Op *cloneOp(Graph &into, const Op &op, ValueMap &map) {
  std::vector<Value *> operands;
  for (const Value *v : op.operands()) {
    auto it = map.find(v);
    assert(it != map.end() && "operand defined outside the cloned scope");
    operands.push_back(it->second);
  }
  std::vector<TensorType> types;
  for (unsigned i = 0; i < op.numResults(); ++i)
    types.push_back(op.result(i)->type());
  Op *copy = into.createOp(op.kind(), operands, types, op.attrs());
  copy->setLocation(op.location());
  for (unsigned i = 0; i < op.numResults(); ++i) {
    copy->result(i)->setName(op.result(i)->name());
    map[op.result(i)] = copy->result(i);
  }
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    Graph &region = copy->addRegion();
    region.setName(op.region(r).name());
    cloneBody(op.region(r), region, map);
  }
  return copy;
}

std::unique_ptr<Graph> cloneGraph(const Graph &g, ValueMap *map) {
  auto copy = std::make_unique<Graph>(g.name());
  ValueMap local;
  cloneBody(g, *copy, map ? *map : local);
  return copy;
}

} // namespace strata
