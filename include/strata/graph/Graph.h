// The graph IR core: SSA values, ops with typed attributes and nested regions, and graphs.
//
// Every value is defined exactly once: by an op result or as a graph (region) input. Each value
// keeps the list of (op, operand index) pairs that use it, so replacing a value is local.
#pragma once
#include "strata/graph/Attribute.h"
#include "strata/graph/Type.h"
#include "strata/support/Diagnostic.h"

#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Op kinds come from the op definitions (OpTable.def).
enum class OpKind : uint16_t {
#define OP(e, ...) e,
#include "strata/graph/OpTable.def"
  NumKinds
};

// Op groups (OpTable.def explains each); every rung asks these rather than listing ops.
enum OpTrait : uint32_t {
  T_NONE = 0,
  T_ELEMENTWISE = 1u << 0,
  T_COMMUTATIVE = 1u << 1,
  T_INDEX_MAP = 1u << 2,
  T_LAYOUT = 1u << 3,
  T_ANCHOR = 1u << 4,
  T_REDUCTION = 1u << 5,
  T_STRUCTURED = 1u << 6,
};

// How an elementwise op types its operands and result (OpTable.def); Custom: its shape function.
enum class DTypeRule : uint8_t {
  Custom,
  FloatSame,
  NumericSame,
  IntOrBoolSame,
  IntegerSame,
  FloatToBool,
  SameToBool,
  PowBase,
  Select,
  CastTo,
};

// What an attribute's value must satisfy beyond its kind (the normal form the verifier checks).
enum class AttrForm : uint8_t {
  Plain,
  Flag,   // an int that is 0 or 1
  Axis,   // an int in [0, rank of operand 0)
  Axes,   // ints, strictly increasing, in [0, rank of operand 0)
  Enum,   // a string among `enumTexts`
  Layout, // a channel layout string (Layout.h)
  Dim,    // one dim: an int when static, else a dims list of that one symbolic entry
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  AttrForm form = AttrForm::Plain;
  bool optional = false;
  std::vector<std::string_view> enumTexts; // AttrForm::Enum
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int minOperands;
  int maxOperands; // -1: variadic
  int numResults;  // -1: variadic
  uint32_t traits;
  DTypeRule dtypeRule;
  std::vector<AttrSpec> attrs;
  std::vector<std::string> onnxOps; // ONNX op types mapping one-to-one onto this op
  const AttrSpec *findAttr(std::string_view n) const;
  bool has(OpTrait t) const { return (traits & t) != 0; }
};

const OpInfo &opInfo(OpKind kind);
const OpInfo *lookupOp(std::string_view name);
size_t numOpKinds();
inline bool hasTrait(OpKind kind, OpTrait t) { return opInfo(kind).has(t); }

class Op;
class Graph;

struct Use {
  Op *user;
  unsigned operandIndex;
  bool operator==(const Use &o) const { return user == o.user && operandIndex == o.operandIndex; }
};

class Value {
public:
  const TensorType &type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  // Name hint (ONNX tensor name or parsed name); may be empty. Printers make names unique.
  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  Op *definingOp() const { return def_; }       // null for graph inputs
  unsigned resultIndex() const { return index_; }
  Graph *ownerGraph() const { return graph_; }  // graph whose input this is (null for results)
  bool isGraphInput() const { return def_ == nullptr; }

  const std::vector<Use> &uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  bool isGraphOutput() const { return !outputUses_.empty(); }
  // Redirects every use of this value (operands and graph outputs) to `other`.
  void replaceAllUsesWith(Value *other);

private:
  friend class Op;
  friend class Graph;
  Value(TensorType t, Op *def, unsigned index, Graph *g)
      : type_(std::move(t)), def_(def), graph_(g), index_(index) {}
  TensorType type_;
  std::string name_;
  Op *def_;
  Graph *graph_;
  unsigned index_;
  std::vector<Use> uses_;
  // Graph outputs referencing this value (graph, output index), kept so RAUW updates them.
  std::vector<std::pair<Graph *, unsigned>> outputUses_;
};

class Op {
public:
  OpKind kind() const { return kind_; }
  const OpInfo &info() const { return opInfo(kind_); }
  std::string_view opName() const { return info().name; }
  bool hasTrait(OpTrait t) const { return info().has(t); }

  unsigned numOperands() const { return static_cast<unsigned>(operands_.size()); }
  Value *operand(unsigned i) const { return operands_[i]; }
  const std::vector<Value *> &operands() const { return operands_; }
  void setOperand(unsigned i, Value *v);
  // Appends an operand (a region op's new capture: its regions get the input binding it).
  void addOperand(Value *v);

  unsigned numResults() const { return static_cast<unsigned>(results_.size()); }
  Value *result(unsigned i = 0) const { return results_[i].get(); }

  const AttrMap &attrs() const { return attrs_; }
  bool hasAttr(std::string_view n) const { return attrs_.count(std::string(n)) != 0; }
  // Generic access, for code that handles every op alike (printer, CSE); an op's own attributes
  // are read through its typed accessors (Ops.h: ops::SliceOp(op).starts()).
  const Attribute &attr(std::string_view n) const; // throws std::out_of_range if absent
  void setAttr(std::string n, Attribute a) { attrs_[std::move(n)] = std::move(a); }
  void removeAttr(std::string_view n) { attrs_.erase(std::string(n)); }

  // Where this op came from (e.g. ONNX node name), for error messages; not printed by default.
  const std::string &location() const { return loc_; }
  void setLocation(std::string l) { loc_ = std::move(l); }

  // Nested graphs owned by this op (fused kernels, later control flow).
  unsigned numRegions() const { return static_cast<unsigned>(regions_.size()); }
  Graph &region(unsigned i) const { return *regions_[i]; }
  Graph &addRegion();
  // Makes `g` (built apart, as the importer builds a branch before its op exists) a region.
  Graph &adoptRegion(std::unique_ptr<Graph> g);

  Graph *parentGraph() const { return parent_; }

private:
  friend class Graph;
  Op(OpKind k, Graph *parent) : kind_(k), parent_(parent) {}
  OpKind kind_;
  Graph *parent_;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrMap attrs_;
  std::vector<std::unique_ptr<Graph>> regions_;
  std::string loc_;
  std::list<std::unique_ptr<Op>>::iterator self_;
};

// A graph: typed inputs, ops in a topological order, and named outputs. Also used for regions.
class Graph {
public:
  explicit Graph(std::string name = "main", Op *parentOp = nullptr)
      : name_(std::move(name)), parentOp_(parentOp) {}
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  Op *parentOp() const { return parentOp_; }

  Value *addInput(TensorType type, std::string name = "");
  unsigned numInputs() const { return static_cast<unsigned>(inputs_.size()); }
  Value *input(unsigned i) const { return inputs_[i].get(); }
  std::vector<Value *> inputs() const;

  // Outputs are (value, name) pairs; the name is the external (e.g. ONNX) output name.
  void addOutput(Value *v, std::string name);
  unsigned numOutputs() const { return static_cast<unsigned>(outputs_.size()); }
  Value *output(unsigned i) const { return outputs_[i]; }
  const std::string &outputName(unsigned i) const { return outputNames_[i]; }
  void setOutput(unsigned i, Value *v);

  // Creates an op at the end of the graph (or before `before`). Result types are given; use
  // Builder for creation with type inference.
  Op *createOp(OpKind kind, const std::vector<Value *> &operands,
               const std::vector<TensorType> &resultTypes, AttrMap attrs = {},
               Op *before = nullptr);
  // Removes an op whose results are unused (asserts otherwise) and drops its operand uses.
  void eraseOp(Op *op);
  // Moves `op` to just before `before` (both in this graph).
  void moveBefore(Op *op, Op *before);

  using OpList = std::list<std::unique_ptr<Op>>;
  // Iterate ops: for (Op &op : graph.ops()) ...
  class OpRange {
  public:
    struct iterator {
      OpList::const_iterator it;
      Op &operator*() const { return **it; }
      Op *operator->() const { return it->get(); }
      iterator &operator++() { ++it; return *this; }
      bool operator!=(const iterator &o) const { return it != o.it; }
      bool operator==(const iterator &o) const { return it == o.it; }
    };
    explicit OpRange(const OpList &l) : l_(l) {}
    iterator begin() const { return {l_.begin()}; }
    iterator end() const { return {l_.end()}; }
    size_t size() const { return l_.size(); }
  private:
    const OpList &l_;
  };
  OpRange ops() const { return OpRange(ops_); }
  size_t numOps() const { return ops_.size(); }
  // Snapshot of op pointers: safe to iterate while erasing.
  std::vector<Op *> opList() const;

  // Counts ops recursively (including nested regions).
  size_t numOpsRecursive() const;

private:
  friend class Value;
  friend class Op;
  std::string name_;
  Op *parentOp_;
  std::vector<std::unique_ptr<Value>> inputs_;
  std::vector<Value *> outputs_;
  std::vector<std::string> outputNames_;
  OpList ops_;
};

// A diagnostic naming `op`: its op name and node (its location), else its first result's name.
Diagnostic diagnose(const Op &op, std::string message);

} // namespace strata
