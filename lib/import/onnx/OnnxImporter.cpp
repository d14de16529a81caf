// The ONNX import driver: reads and validates a model, checks up front that every op is
// supported, creates graph inputs and constants, converts node by node through the converter
// table, folds constant subgraphs as it goes, and finishes with dead-code removal and the verifier.
#include "strata/import/OnnxImporter.h"
#include "strata/support/CrashContext.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include "Converter.h"
#include "ShapeValues.h"
#include "strata/graph/Specialize.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/interp/Interpreter.h"

#include "google/protobuf/io/coded_stream.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <climits>
#include <queue>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace strata {
namespace {

using namespace onnx_import;

// An import failure; the message is completed with the file name at the API boundary.
// Thrown inside the importer, turned into an llvm::Error at importOnnxFile.
struct ImportFailure : std::runtime_error {
  explicit ImportFailure(const std::string &message) : ImportFailure(Diagnostic::error(message)) {}
  explicit ImportFailure(Diagnostic d) : std::runtime_error(d.message), diag(std::move(d)) {}
  Diagnostic diag;
};

// Opsets 1-6 are accepted because the ops strata supports mean the same there, except for the
// legacy `broadcast` attribute of binary ops, which convertNode rejects.
constexpr int64_t kMinOpset = 1, kMaxOpset = 21;

bool isDefaultDomain(const std::string &d) { return d.empty() || d == "ai.onnx"; }

// Parses a whole-file protobuf message with the 2 GiB limit protobuf allows.
bool parseMessage(const llvm::MemoryBuffer &buf, google::protobuf::MessageLite &msg) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(buf.getBufferStart()),
      static_cast<int>(buf.getBufferSize()));
  in.SetTotalBytesLimit(INT_MAX);
  return msg.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

std::unique_ptr<llvm::MemoryBuffer> readWholeFile(const std::string &path, const char *what) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    throw ImportFailure(std::string("cannot read ") + what + ": " + buf.getError().message());
  if ((*buf)->getBufferSize() >= static_cast<size_t>(INT_MAX))
    throw ImportFailure(std::string("not a valid ") + what +
                        " (larger than the 2 GiB protobuf limit; use external data)");
  return std::move(*buf);
}

// Inputs that must be known at import time, by ONNX op type and opset: the candidates for
// ImportOptions::specializableInputs.
std::vector<int> staticInputPositions(const onnx::NodeProto &node, int64_t opset) {
  const std::string &op = node.op_type();
  if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "OneHot" || op == "Trilu" ||
      op == "CumSum")
    return {1};
  if (op == "ConstantOfShape")
    return {0};
  // An If's condition is not among them: a run-time one makes an `if` op. A Loop's trip count
  // and condition are when it has scan outputs, whose length a run-time loop must know before it
  // runs (ControlFlow.cpp); without them the loop runs at run time.
  if (op == "Loop") {
    for (const auto &a : node.attribute())
      if (a.name() == "body" && a.has_g() &&
          a.g().output_size() > 1 + std::max(0, node.input_size() - 2))
        return {0, 1};
    return {};
  }
  if (op == "Range")
    return {0, 1, 2};
  if (op == "Slice" && opset >= 10)
    return {1, 2, 3, 4};
  if (op == "Pad" && opset >= 11)
    return {1, 3};
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "Split" || op == "ReduceSum") && opset >= 13)
    return {1};
  if (op.rfind("Reduce", 0) == 0 && opset >= 18)
    return {1};
  if (op == "TopK" && opset >= 10)
    return {1};
  if (op == "NonMaxSuppression")
    return {2, 3, 4};
  if (op == "Resize")
    return {1, 2, 3};
  if (op == "Upsample" && opset >= 9)
    return {1};
  if (op == "Dropout" && opset >= 12)
    return {1, 2};
  if (op == "ReverseSequence" || op == "HannWindow" || op == "HammingWindow" ||
      op == "BlackmanWindow")
    return {op == "ReverseSequence" ? 1 : 0};
  return {};
}

std::string typeCategory(const onnx::TypeProto &t) {
  switch (t.value_case()) {
  case onnx::TypeProto::kSequenceType: return "a sequence";
  case onnx::TypeProto::kMapType: return "a map";
  case onnx::TypeProto::kOptionalType: return "an optional";
  case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
  case onnx::TypeProto::kOpaqueType: return "an opaque";
  default: return "no";
  }
}

class Importer final : public ImportContext {
  // Shape values known as formulas: at most this many elements (shapes are short).
  static constexpr int64_t kMaxSymbolicElements = 16;

public:
  Importer(std::string path, const ImportOptions &opts)
      : path_(std::move(path)), opts_(opts), graph_(std::make_unique<Graph>("main")),
        builder_(*graph_) {
    llvm::StringRef dir = llvm::sys::path::parent_path(path_);
    dir_ = dir.empty() ? "." : dir.str();
  }

  ImportResult run() {
    loadModel();
    registerElementwiseConverters(table_);
    registerActivationConverters(table_);
    registerNNConverters(table_);
    registerReductionConverters(table_);
    registerDataMovementConverters(table_);
    registerMiscConverters(table_);
    registerLossConverters(table_);
    registerRecurrentConverters(table_);
    registerControlFlowConverters(table_);
    registerQuantizationConverters(table_);

    const onnx::GraphProto &g = model_.graph();
    if (g.node_size() > limits_.maxOps)
      throw ImportFailure("the graph has " + std::to_string(g.node_size()) + " nodes, " +
                          overLimit(&Limits::maxOps, limits_.maxOps));
    nodeNames_.reserve(g.node_size());
    for (int i = 0; i < g.node_size(); ++i)
      nodeNames_.push_back(g.node(i).name().empty() ? g.node(i).op_type() + "_" + std::to_string(i)
                                                    : g.node(i).name());
    // Unsupported ops first: a model of only, say, training-domain ops is best told so.
    checkUnsupportedOps();
    readOpset();
    sortNodes();
    checkDefinitions();
    checkConstantBytes();
    collectInitializers();
    createInputs();
    for (int i = 0; i < g.node_size(); ++i)
      convertNode(i);
    createOutputs();
    removeDeadOps();
    if (llvm::Error e = verifyGraph(*graph_))
      throw ImportFailure("imported graph does not verify: " + llvm::toString(std::move(e)));
    std::vector<OnnxNode> nodes;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &node = g.node(i);
      nodes.push_back({nodeNames_[i],
                       node.op_type(),
                       {node.input().begin(), node.input().end()},
                       {node.output().begin(), node.output().end()}});
    }
    return ImportResult{std::move(graph_), std::move(specialized_), std::move(nodes)};
  }

  OnnxInterface interface() {
    loadModel();
    readOpset();
    collectInitializers();
    OnnxInterface out;
    std::unordered_set<std::string> needed = namesNeededStatically();
    for (const auto &vi : model_.graph().input())
      if (!initializers_.count(vi.name())) {
        out.inputs.emplace_back(vi.name(), inputType(vi));
        const TensorType &type = out.inputs.back().second;
        if (needed.count(vi.name()) &&
            (!type.isStatic() || numElements(type.staticShape()) <= kMaxValueInputElements))
          out.valueInputs.push_back(vi.name());
      }
    for (const auto &o : model_.graph().output()) {
      TensorType type;
      try {
        type = inputType(o);
      } catch (const ImportFailure &) { // no usable declared type: the run tells
      }
      out.outputs.emplace_back(o.name(), type);
    }
    return out;
  }

  // --- ImportContext ---
  Builder &builder() override { return builder_; }
  int64_t opset() const override { return opset_; }
  const std::string &modelDir() const override { return dir_; }

  Value *input(const onnx::NodeProto &node, int i) override {
    if (i < 0 || i >= node.input_size() || node.input(i).empty())
      return nullptr;
    return lookup(node.input(i));
  }

  std::optional<Tensor> constantInput(const onnx::NodeProto &node, int i) override {
    if (i < 0 || i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    const std::string &name = node.input(i);
    if (const Tensor *t = knownTensor(name))
      return *t;
    Value *v = lookup(name);
    if (Op *def = v->definingOp(); def && def->kind() == OpKind::Constant)
      return def->attr("value").getTensor();
    // Shape arithmetic whose every element came out constant (the batch dim of a tensor whose
    // other dims are symbolic; the exporter's test whether a squeezed dim is 1).
    if (auto it = symbolic_.find(v); it != symbolic_.end())
      return constantOfElements(v->type(), it->second);
    return std::nullopt;
  }

  std::optional<std::vector<SymExpr>> symbolicInput(const onnx::NodeProto &node, int i) override {
    if (i < 0 || i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    Value *v = lookup(node.input(i));
    if (auto it = symbolic_.find(v); it != symbolic_.end())
      return it->second;
    std::optional<Tensor> t = constantInput(node, i);
    if (!t || !(isInteger(t->dtype()) || t->dtype() == DType::Bool) ||
        t->numElements() > kMaxSymbolicElements)
      return std::nullopt;
    std::vector<SymExpr> r;
    for (int64_t e = 0; e < t->numElements(); ++e)
      r.push_back(SymExpr(t->getInt(e)));
    return r;
  }

  std::optional<SymExpr> elementFormula(const Value *v, int64_t i) override {
    return onnx_import::elementFormula(v, i, [&](const Value *w) -> std::optional<std::vector<SymExpr>> {
      if (auto it = symbolic_.find(w); it != symbolic_.end())
        return it->second;
      if (const Op *def = w->isGraphInput() ? nullptr : w->definingOp();
          def && def->kind() == OpKind::Constant && def->attr("value").getTensor().numElements() <=
                                                        kMaxSymbolicElements) {
        std::vector<SymExpr> r;
        const Tensor &t = def->attr("value").getTensor();
        for (int64_t e = 0; e < t.numElements(); ++e)
          r.push_back(SymExpr(t.getInt(e)));
        return r;
      }
      return std::nullopt;
    });
  }

  bool knownNonNegative(const SymExpr &e) const override {
    return e.provablyNonNegative() || dimFormulas_.count(e) != 0;
  }

  std::optional<std::pair<Value *, int64_t>> dimWitness(const SymExpr &size) override {
    auto has = [&](Value *v) -> std::optional<std::pair<Value *, int64_t>> {
      for (size_t d = 0; d < v->type().dims.size(); ++d)
        if (!v->type().dims[d].isStatic() && v->type().dims[d].expr == size)
          return std::pair{v, static_cast<int64_t>(d)};
      return std::nullopt;
    };
    for (Value *in : graph_->inputs())
      if (auto w = has(in))
        return w;
    // A tensor computed so far with that dim (an unpadded feature map whose size a later slice
    // crops back to), the latest first; its elements are not read.
    Graph &current = builder().graph();
    for (Value *in : current.inputs())
      if (auto w = has(in))
        return w;
    std::vector<Op *> ops = current.opList();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      for (unsigned r = 0; r < (*it)->numResults(); ++r)
        if (auto w = has((*it)->result(r)))
          return w;
    return std::nullopt;
  }

private:
  // Shape arithmetic on symbolic dims, element by element, for small integer tensors of static
  // shape (elements in row-major order): records the formulas of `results` when `node`
  // computes them from shape values (Shape of a tensor with symbolic dims, then Gather, Concat,
  // Unsqueeze, Squeeze, Cast, Identity, Slice, Reshape, Transpose of such tensors (torch's
  // F.pad reorders its pads as a [n, 2] matrix), ReduceProd/Sum/Min/Max of all of one, + - * /,
  // Mod and Min/Max). Reshape, Expand, Pad and Resize then read their shape from it
  // (symbolicInput), so `x.view(x.size(0), -1)` imports with symbolic dims.
  void propagateSymbolic(const onnx::NodeProto &node, const std::vector<Value *> &results) {
    if (results.empty() || !results[0] || !results[0]->type().isStatic())
      return;
    Value *out = results[0];
    if (Op *def = out->definingOp(); def && def->kind() == OpKind::Constant)
      return; // folded: constantInput knows it
    const std::string &type = node.op_type();
    auto in = [&](int i) { return symbolicInput(node, i); };
    auto anySymbolic = [&] {
      for (int i = 0; i < node.input_size(); ++i)
        if (!node.input(i).empty() && (symbolic_.count(lookup(node.input(i))) ||
                                       symbolicFloat_.count(lookup(node.input(i)))))
          return true;
      return false;
    };
    const DType dt = out->type().dtype;
    if (dt == DType::F32 || dt == DType::F64) {
      if (anySymbolic())
        propagateFloat(node, out, dt == DType::F64);
      return;
    }
    if (!(isInteger(dt) || dt == DType::Bool))
      return;
    std::optional<std::vector<SymExpr>> r;
    try {
      if (Op *def = out->definingOp(); def && def->kind() == OpKind::Shape) {
        // The shape op the Shape converter made for symbolic dims (its range normalized).
        const ops::ShapeOp shapeOp(*def);
        r.emplace();
        for (int64_t d = shapeOp.start(); d < shapeOp.end(); ++d) {
          r->push_back(def->operand(0)->type().dims[static_cast<size_t>(d)].asExpr());
          dimFormulas_.insert(r->back());
        }
      } else if (!anySymbolic()) {
        return;
      } else if (type == "Cast" && symbolicFloat_.count(lookup(node.input(0)))) {
        if (dt != DType::I64) // bool is x != 0, narrower integers have ranges: not modelled
          return;
        r.emplace(); // a float size back to an integer (toward zero, as Cast does)
        for (const SymFloatRef &f : symbolicFloat_.at(lookup(node.input(0))))
          r->push_back(SymExpr::fromFloat(f));
      } else {
        r = integerShapeValues(*this, node, out->type(), in,
                               [&](const SymExpr &e) { dimFormulas_.insert(e); });
        if (!r)
          return;
      }
    } catch (const SymExprError &) {
      return; // formulas past what SymExpr keeps: the value stays run-time data only
    }
    if (r && static_cast<int64_t>(r->size()) <= kMaxSymbolicElements &&
        out->type().staticNumElements() == static_cast<int64_t>(r->size()))
      symbolic_[out] = std::move(*r);
  }

  // Float elements computed from shape values (floatShapeValues), kept for a Cast back.
  void propagateFloat(const onnx::NodeProto &node, Value *out, bool wide) {
    auto floats = [&](int i) -> std::optional<std::vector<SymFloatRef>> {
      if (i >= node.input_size() || node.input(i).empty())
        return std::nullopt;
      Value *v = lookup(node.input(i));
      if (auto it = symbolicFloat_.find(v); it != symbolicFloat_.end())
        return it->second;
      std::optional<Tensor> t = constantInput(node, i);
      return t && t->numElements() <= kMaxSymbolicElements ? floatElements(*t) : std::nullopt;
    };
    try {
      auto r = floatShapeValues(node, wide, floats, [&](int i) { return symbolicInput(node, i); });
      if (r && static_cast<int64_t>(r->size()) <= kMaxSymbolicElements &&
          out->type().staticNumElements() == static_cast<int64_t>(r->size()))
        symbolicFloat_[out] = std::move(*r);
    } catch (const SymExprError &) {
      // past what SymFloat keeps (widths that differ, a huge expression): run-time data only
    }
  }

  void loadModel() {
    auto buf = readWholeFile(path_, "ONNX model");
    if (buf->getBufferSize() == 0)
      throw ImportFailure("not a valid ONNX model (empty file)");
    if (!parseMessage(*buf, model_))
      throw ImportFailure("not a valid ONNX model (protobuf parse failed: truncated or corrupt)");
    if (!model_.has_graph())
      throw ImportFailure("not a valid ONNX model (no graph)");
  }

  void readOpset() {
    bool found = false;
    for (const auto &os : model_.opset_import()) {
      if (isDefaultDomain(os.domain())) {
        opset_ = os.version();
        found = true;
      }
    }
    if (!found)
      throw ImportFailure("model imports no default-domain (ai.onnx) opset");
    if (opset_ < kMinOpset || opset_ > kMaxOpset)
      throw ImportFailure("unsupported opset " + std::to_string(opset_) + " (supported: " +
                          std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  }

  // Every unsupported op type, with the nodes using it, in one error.
  void checkUnsupportedOps() {
    const onnx::GraphProto &g = model_.graph();
    std::vector<std::pair<std::string, std::vector<std::string>>> missing;
    std::unordered_map<std::string, size_t> index;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &n = g.node(i);
      bool known = isDefaultDomain(n.domain()) && table_.count(n.op_type());
      if (known)
        continue;
      std::string key = isDefaultDomain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
      auto [it, fresh] = index.emplace(key, missing.size());
      if (fresh)
        missing.push_back({key, {}});
      missing[it->second].second.push_back(nodeNames_[i]);
    }
    if (missing.empty())
      return;
    std::string msg = "unsupported ONNX ops: ";
    for (size_t k = 0; k < missing.size(); ++k) {
      auto &[op, nodes] = missing[k];
      msg += (k ? ", " : "") + op + " (nodes: ";
      constexpr size_t kShown = 8;
      for (size_t j = 0; j < nodes.size() && j < kShown; ++j)
        msg += (j ? ", " : "") + nodes[j];
      if (nodes.size() > kShown)
        msg += ", and " + std::to_string(nodes.size() - kShown) + " more";
      msg += ")";
    }
    throw ImportFailure(msg);
  }

  // Exporters do not always write nodes in topological order (ONNX Runtime accepts such files):
  // order them by their data dependences, keeping the file's order wherever it is valid, so a
  // sorted graph stays exactly as written. Names nothing defines are left for checkDefinitions to
  // report; a cycle is an error naming the nodes on it.
  void sortNodes() {
    onnx::GraphProto &g = *model_.mutable_graph();
    const int n = g.node_size();
    std::unordered_set<std::string> external; // defined before any node runs
    for (const auto &t : g.initializer())
      external.insert(t.name());
    for (const auto &in : g.input())
      external.insert(in.name());
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
      for (const auto &o : g.node(i).output())
        if (!o.empty() && !external.count(o))
          producer.try_emplace(o, i);
    std::vector<int> waitsOn(n, 0);
    std::vector<std::vector<int>> users(n);
    for (int i = 0; i < n; ++i) {
      // Subgraphs (If branches, Loop and Scan bodies) read enclosing names too.
      std::vector<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
      outerNamesRead(g.node(i), reads);
      for (const auto &in : reads)
        if (auto it = in.empty() ? producer.end() : producer.find(in); it != producer.end()) {
          ++waitsOn[i];
          users[it->second].push_back(i);
        }
    }
    // Kahn's algorithm, always taking the earliest ready node of the file.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < n; ++i)
      if (waitsOn[i] == 0)
        ready.push(i);
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int u : users[i])
        if (--waitsOn[u] == 0)
          ready.push(u);
    }
    if (static_cast<int>(order.size()) < n)
      throw ImportFailure(cycleError(waitsOn, producer));
    bool sorted = true;
    for (int i = 0; i < n && sorted; ++i)
      sorted = order[i] == i;
    if (sorted)
      return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    std::vector<std::string> names;
    for (int i : order) {
      *nodes.Add() = std::move(*g.mutable_node(i));
      names.push_back(std::move(nodeNames_[i]));
    }
    g.mutable_node()->Swap(&nodes);
    nodeNames_ = std::move(names);
  }

  // Names the subgraphs of `node` read from enclosing scopes (their nodes' inputs that the subgraph
  // neither takes as an input or initializer nor defines), appended to `out`.
  static void outerNamesRead(const onnx::NodeProto &node, std::vector<std::string> &out) {
    for (const auto &a : node.attribute()) {
      std::vector<const onnx::GraphProto *> graphs;
      if (a.has_g())
        graphs.push_back(&a.g());
      for (const auto &g : a.graphs())
        graphs.push_back(&g);
      for (const onnx::GraphProto *g : graphs) {
        std::unordered_set<std::string> local;
        for (const auto &in : g->input())
          local.insert(in.name());
        for (const auto &t : g->initializer())
          local.insert(t.name());
        for (const auto &inner : g->node())
          for (const auto &o : inner.output())
            local.insert(o);
        std::vector<std::string> reads;
        for (const auto &inner : g->node()) {
          reads.insert(reads.end(), inner.input().begin(), inner.input().end());
          outerNamesRead(inner, reads);
        }
        for (const auto &o : g->output())
          reads.push_back(o.name());
        for (std::string &r : reads)
          if (!r.empty() && !local.count(r))
            out.push_back(std::move(r));
      }
    }
  }

  // The nodes that still wait after sorting include a cycle: walk from the first of them to a
  // waiting producer of one of its inputs until a node repeats.
  Diagnostic cycleError(const std::vector<int> &waitsOn,
                        const std::unordered_map<std::string, int> &producer) const {
    const onnx::GraphProto &g = model_.graph();
    int at = 0;
    while (waitsOn[at] == 0)
      ++at;
    std::vector<int> path;
    std::vector<int> seenAt(g.node_size(), -1);
    while (seenAt[at] < 0) {
      seenAt[at] = static_cast<int>(path.size());
      path.push_back(at);
      int next = -1;
      for (const auto &in : g.node(at).input())
        if (auto it = in.empty() ? producer.end() : producer.find(in);
            it != producer.end() && waitsOn[it->second] > 0) {
          next = it->second;
          break;
        }
      if (next < 0) // cannot happen: a waiting node waits on a waiting producer
        return Diagnostic::error("the graph's nodes wait on each other (a cycle)");
      at = next;
    }
    // path[seenAt[at]..] is the cycle, each node feeding the one before it: print it as data
    // flows, from `at` round to itself.
    auto quoted = [&](int i) { return "\"" + nodeNames_[i] + "\""; };
    std::string text = quoted(at);
    for (size_t k = path.size() - 1; k > static_cast<size_t>(seenAt[at]); --k)
      text += " -> " + quoted(path[k]);
    text += " -> " + quoted(at);
    return Diagnostic::error("the graph has a cycle: " + text)
        .at(g.node(at).op_type(), nodeNames_[at]);
  }

  // Every tensor name is defined once and before its use.
  void checkDefinitions() {
    const onnx::GraphProto &g = model_.graph();
    if (g.sparse_initializer_size() > 0)
      throw ImportFailure("sparse initializers are unsupported (tensor '" +
                          g.sparse_initializer(0).values().name() + "')");
    std::unordered_set<std::string> defined, producedLater;
    for (const auto &t : g.initializer())
      if (!defined.insert(t.name()).second)
        throw ImportFailure("initializer '" + t.name() + "' is defined twice");
    std::unordered_set<std::string> inputNames;
    for (const auto &in : g.input()) {
      if (!inputNames.insert(in.name()).second)
        throw ImportFailure("graph input '" + in.name() + "' is declared twice");
      defined.insert(in.name()); // an input may share its name with an initializer (a default)
    }
    for (const auto &n : g.node())
      for (const auto &o : n.output())
        if (!o.empty())
          producedLater.insert(o);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &n = g.node(i);
      auto fail = [&](const std::string &msg) {
        throw ImportFailure(Diagnostic::error(msg).at(n.op_type(), nodeNames_[i]));
      };
      for (const auto &in : n.input()) {
        if (in.empty() || defined.count(in))
          continue;
        if (producedLater.count(in))
          fail("input '" + in + "' is used before the node producing it (graph not sorted)");
        fail("input '" + in + "' is not a graph input, initializer or node output");
      }
      for (const auto &o : n.output())
        if (!o.empty() && !defined.insert(o).second)
          fail("output '" + o + "' is already defined");
    }
    for (const auto &out : g.output())
      if (!defined.count(out.name()))
        throw ImportFailure("graph output '" + out.name() + "' is not defined by any node");
  }

  // The bytes every initializer and Constant node declares, before any is read or mapped: a
  // model claiming terabytes of weights is refused here, not by the allocator.
  void checkConstantBytes() {
    const onnx::GraphProto &g = model_.graph();
    int64_t total = 0;
    auto add = [&](const onnx::TensorProto &t) {
      auto dt = dtypeFromOnnx(t.data_type());
      Shape shape(t.dims().begin(), t.dims().end());
      int64_t elems = numElements(shape), size = dt ? static_cast<int64_t>(dtypeSize(*dt)) : 1;
      int64_t bytes = elems > INT64_MAX / size ? INT64_MAX : elems * size;
      total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes;
      if (total > limits_.maxConstantBytes)
        throw ImportFailure("the model's constants declare " + saturatedCountText(total) +
                            " bytes (at tensor '" + t.name() + "'), " +
                            overLimit(&Limits::maxConstantBytes, limits_.maxConstantBytes));
    };
    for (const auto &t : g.initializer())
      add(t);
    for (const auto &n : g.node())
      for (const auto &a : n.attribute())
        if (a.has_t())
          add(a.t());
  }

  void collectInitializers() {
    onnx::GraphProto *g = model_.mutable_graph();
    for (int i = 0; i < g->initializer_size(); ++i)
      initializers_[g->initializer(i).name()] = g->mutable_initializer(i);
  }

  // The tensor behind an initializer or specialized input, decoded on first use.
  const Tensor *knownTensor(const std::string &name) {
    if (auto it = tensors_.find(name); it != tensors_.end())
      return &it->second;
    auto it = initializers_.find(name);
    if (it == initializers_.end())
      return nullptr;
    Tensor t;
    try {
      t = takeTensorFromProto(*it->second, dir_);
    } catch (const ConvertError &e) {
      throw ImportFailure(std::string("initializer: ") + e.what());
    }
    return &tensors_.emplace(name, std::move(t)).first->second;
  }

  Value *lookup(const std::string &name) {
    auto it = values_.find(name);
    if (it != values_.end()) {
      if (!it->second)
        throw ConvertError("input '" + name + "' is an optional output its producer did not create");
      return it->second;
    }
    if (const Tensor *t = knownTensor(name)) {
      // Materialize initializers only where a converter uses them as values.
      Value *v = builder_.constant(*t);
      v->setName(name);
      values_[name] = v;
      return v;
    }
    throw ConvertError("input '" + name + "' is not defined");
  }

  TensorType inputType(const onnx::ValueInfoProto &vi) {
    std::string what = "graph input '" + vi.name() + "'";
    if (!vi.has_type())
      throw ImportFailure(what + " has no type");
    if (vi.type().value_case() != onnx::TypeProto::kTensorType)
      throw ImportFailure(what + " has " + typeCategory(vi.type()) +
                          " type; only tensors are supported");
    const auto &tt = vi.type().tensor_type();
    auto dt = dtypeFromOnnx(tt.elem_type());
    if (!dt)
      throw ImportFailure(what + " has unsupported element type " +
                          (onnx::TensorProto::DataType_IsValid(tt.elem_type())
                               ? onnx::TensorProto::DataType_Name(
                                     static_cast<onnx::TensorProto::DataType>(tt.elem_type()))
                               : std::to_string(tt.elem_type())));
    if (!tt.has_shape())
      throw ImportFailure(what + " has no shape (unknown rank is unsupported)");
    if (tt.shape().dim_size() > limits_.maxRank)
      throw ImportFailure(what + " has rank " + std::to_string(tt.shape().dim_size()) + ", " +
                          overLimit(&Limits::maxRank, limits_.maxRank));
    std::vector<Dim> dims;
    Shape known; // the static dims: the input has at least this many elements
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        int64_t v = d.dim_value();
        if (v < 0)
          throw ImportFailure(what + " has negative dim " + std::to_string(v));
        known.push_back(v);
        if (v > limits_.maxTensorElements)
          throw ImportFailure(what + " has dim " + std::to_string(v) + ", " +
                              overLimit(&Limits::maxTensorElements, limits_.maxTensorElements));
        if (int64_t n = numElements(known); n > limits_.maxTensorElements)
          throw ImportFailure(what + " has " + std::to_string(n) + " elements or more, " +
                              overLimit(&Limits::maxTensorElements, limits_.maxTensorElements));
        dims.push_back(Dim(v));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        dims.push_back(Dim::sym(sanitizeSymbol(d.dim_param())));
      } else {
        dims.push_back(Dim::sym("unk" + std::to_string(unknownDims_++)));
      }
    }
    return TensorType(*dt, std::move(dims));
  }

  // Names whose values some node needs statically, following producers back to the graph
  // inputs (a Shape or Size node only needs its operand's type, so the walk stops there).
  std::unordered_set<std::string> namesNeededStatically() {
    const onnx::GraphProto &g = model_.graph();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto &o : g.node(i).output())
        producer[o] = i;
    std::unordered_set<std::string> needed;
    std::vector<std::string> work;
    for (const auto &n : g.node())
      for (int pos : staticInputPositions(n, opset_))
        if (pos < n.input_size() && !n.input(pos).empty() && needed.insert(n.input(pos)).second)
          work.push_back(n.input(pos));
    while (!work.empty()) {
      std::string name = std::move(work.back());
      work.pop_back();
      auto it = producer.find(name);
      if (it == producer.end())
        continue;
      const onnx::NodeProto &p = g.node(it->second);
      if (p.op_type() == "Shape" || p.op_type() == "Size")
        continue;
      for (const auto &in : p.input())
        if (!in.empty() && needed.insert(in).second)
          work.push_back(in);
    }
    return needed;
  }

  void createInputs() {
    const onnx::GraphProto &g = model_.graph();
    std::unordered_set<std::string> needed;
    if (!opts_.specializableInputs.empty())
      needed = namesNeededStatically();
    for (const auto &vi : g.input()) {
      if (initializers_.count(vi.name()))
        continue; // an initializer: a constant, not an input
      TensorType type = inputType(vi);
      if (auto shape = opts_.inputShapes.find(vi.name()); shape != opts_.inputShapes.end())
        type = atShape(vi.name(), type, shape->second);
      auto spec = opts_.specializableInputs.find(vi.name());
      if (spec != opts_.specializableInputs.end() && needed.count(vi.name())) {
        specialize(vi.name(), type, spec->second);
        continue;
      }
      Value *v = graph_->addInput(type, vi.name());
      values_[vi.name()] = v;
    }
  }

  // `declared` at the run-time shape `shape` (ImportOptions::inputShapes).
  TensorType atShape(const std::string &name, const TensorType &declared, const Shape &shape) {
    std::string what = "input '" + name + "'";
    if (static_cast<int64_t>(shape.size()) != declared.rank())
      throw ImportFailure(what + ": expected rank " + std::to_string(declared.rank()) + ", got " +
                          std::to_string(shape.size()) + " (shape [" + shapeToString(shape) + "])");
    std::vector<Dim> dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0 || shape[d] > limits_.maxTensorElements)
        throw ImportFailure(what + ": dim " + std::to_string(d) + " of size " +
                            std::to_string(shape[d]) + " is out of range");
      if (declared.dims[d].isStatic() && declared.dims[d].size != shape[d])
        throw ImportFailure(what + ": expected dim " + std::to_string(d) + " = " +
                            std::to_string(declared.dims[d].size) + ", got " +
                            std::to_string(shape[d]));
      dims.push_back(Dim(shape[d]));
    }
    std::optional<int64_t> n = shape::checkedProduct(shape);
    if (!n || *n > limits_.maxTensorElements)
      throw ImportFailure(what + " of shape [" + shapeToString(shape) + "] has too many elements, " +
                          overLimit(&Limits::maxTensorElements, limits_.maxTensorElements));
    return declared.withDims(std::move(dims));
  }

  void specialize(const std::string &name, const TensorType &type, const Tensor &value) {
    std::string what = "specialized input '" + name + "'";
    if (value.dtype() != type.dtype)
      throw ImportFailure(what + " is " + std::string(dtypeName(value.dtype())) +
                          " but the model declares " + type.str());
    bool fits = value.rank() == type.rank();
    for (int64_t d = 0; fits && d < type.rank(); ++d)
      fits = !type.dims[d].isStatic() || type.dims[d].size == value.shape()[d];
    if (!fits)
      throw ImportFailure(what + " has shape " + shapeToString(value.shape()) +
                          " but the model declares " + type.str());
    tensors_.emplace(name, value);
    specialized_.push_back(name);
  }

  void convertNode(int index) { convertNodeProto(model_.graph().node(index), nodeNames_[index]); }

  // Converts a subgraph (an If branch, a Loop or Scan body) in place: its inputs bound to
  // `inputs`, its initializers as constants, its nodes converted in order into the current graph
  // (names of enclosing scopes resolve as usual), and its outputs returned. The names it defines
  // shadow enclosing ones only while it is converted, so a loop unrolls by calling it once per
  // iteration.
  std::vector<Value *> inlineSubgraph(const onnx::GraphProto &body,
                                      const std::vector<Value *> &inputs,
                                      const std::string &where) override {
    if (inlineDepth_ + 1 > limits_.maxRegionDepth)
      throw ConvertError("subgraphs nest " +
                         overLimit(&Limits::maxRegionDepth, limits_.maxRegionDepth));
    if (static_cast<int>(inputs.size()) != body.input_size())
      throw ConvertError("subgraph '" + body.name() + "' takes " +
                         std::to_string(body.input_size()) + " inputs, given " +
                         std::to_string(inputs.size()));
    // Counted as they are inlined (walking the graph each time would be quadratic); with the
    // graph's own nodes this bounds what unrolling can create.
    inlinedNodes_ += body.node_size() + body.input_size() + 1;
    if (inlinedNodes_ + model_.graph().node_size() > limits_.maxOps)
      throw ConvertError("unrolling subgraph '" + body.name() + "' grows the graph " +
                         overLimit(&Limits::maxOps, limits_.maxOps));
    ++inlineDepth_;
    std::unordered_map<std::string, Value *> saved; // the enclosing bindings it shadows
    auto bind = [&](const std::string &name, Value *v) {
      if (name.empty())
        return;
      if (!saved.count(name)) {
        auto it = values_.find(name);
        saved[name] = it == values_.end() ? kUnbound : it->second;
      }
      values_[name] = v;
    };
    std::string loc = builder_.location();
    std::string prefix = namePrefix_;
    namePrefix_ = where + "/";
    std::vector<Value *> outputs;
    try {
      for (int i = 0; i < body.input_size(); ++i)
        bind(body.input(i).name(), inputs[i]);
      for (const auto &t : body.initializer())
        bind(t.name(), builder_.constant(tensorFromProto(t, dir_)));
      for (int i = 0; i < body.node_size(); ++i) {
        const onnx::NodeProto &n = body.node(i);
        if (!isDefaultDomain(n.domain()) || !table_.count(n.op_type()))
          throw ImportFailure(Diagnostic::error("unsupported ONNX op " + n.op_type() + " in " +
                                                where)
                                  .at(n.op_type(), n.name().empty() ? n.op_type() : n.name()));
        std::vector<std::string> shadowed(n.output().begin(), n.output().end());
        for (const std::string &o : shadowed)
          if (!o.empty() && !saved.count(o)) {
            auto it = values_.find(o);
            saved[o] = it == values_.end() ? kUnbound : it->second;
          }
        convertNodeProto(n, where + "/" + (n.name().empty() ? n.op_type() + "_" + std::to_string(i)
                                                            : n.name()));
      }
      for (const auto &out : body.output())
        outputs.push_back(lookup(out.name()));
    } catch (...) {
      restore(saved);
      --inlineDepth_;
      builder_.setLocation(loc);
      namePrefix_ = prefix;
      throw;
    }
    restore(saved);
    --inlineDepth_;
    builder_.setLocation(loc);
    namePrefix_ = prefix;
    return outputs;
  }

  // Converts a subgraph into `region` (an if branch, a loop body), built apart from the graph:
  // its inputs bound to `inputs` (values of `region`), its nodes converted into it. Names of
  // enclosing scopes resolve to their values outside the region (ControlFlow.h's
  // captureOuterValues closes it afterwards). Every name bound meanwhile is forgotten after,
  // initializers materialized inside included.
  std::vector<Value *> convertIntoRegion(const onnx::GraphProto &body, Graph &region,
                                         const std::vector<Value *> &inputs,
                                         const std::string &where) override {
    const auto values = values_;
    Builder::Into into(builder_, region);
    std::vector<Value *> outputs;
    try {
      outputs = inlineSubgraph(body, inputs, where);
    } catch (...) {
      values_ = values;
      throw;
    }
    values_ = values;
    return outputs;
  }

  void restore(const std::unordered_map<std::string, Value *> &saved) {
    for (const auto &[name, v] : saved) {
      if (v == kUnbound)
        values_.erase(name);
      else
        values_[name] = v;
    }
  }

  void convertNodeProto(const onnx::NodeProto &node, const std::string &name) {
    builder_.setLocation(name);
    auto ops = builder_.graph().ops(); // the main graph, or a region being built
    bool wasEmpty = ops.size() == 0;
    auto mark = wasEmpty ? ops.end() : Graph::OpRange::iterator{std::prev(ops.end().it)};
    std::vector<Value *> results;
    try {
      if (opset_ < 7 && attrInt(node, "broadcast", 0) != 0)
        throw ConvertError("legacy broadcasting (opset < 7, broadcast=1) is unsupported");
      results = table_.at(node.op_type())(*this, node);
      std::vector<Op *> created;
      for (auto it = wasEmpty ? ops.begin() : ++mark; it != ops.end(); ++it)
        created.push_back(&*it);
      auto replaced = foldConstants(created);
      for (Value *&v : results)
        if (auto r = replaced.find(v); r != replaced.end())
          v = r->second;
    } catch (const ImportFailure &) {
      throw;
    } catch (const std::exception &e) {
      throw ImportFailure(Diagnostic::error(e.what()).at(node.op_type(), name));
    }
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string &out = node.output(k);
      if (out.empty())
        continue;
      Value *v = k < static_cast<int>(results.size()) ? results[k] : nullptr;
      if (v && v->name().empty())
        v->setName(namePrefix_ + out); // names in an unrolled body carry its iteration
      values_[out] = v;
    }
    propagateSymbolic(node, results);
  }

  // Replaces each new op whose operands are all constants by constants of its results, so
  // shape arithmetic (Shape -> Gather -> Concat -> Reshape) becomes static.
  std::unordered_map<Value *, Value *> foldConstants(const std::vector<Op *> &created) {
    std::unordered_map<Value *, Value *> replaced;
    if (!opts_.foldConstants)
      return replaced;
    for (Op *op : created) {
      if (op->kind() == OpKind::Constant || op->numOperands() == 0 || op->numRegions() > 0)
        continue;
      std::vector<Tensor> operands;
      for (Value *v : op->operands()) {
        Op *def = v->definingOp();
        if (!def || def->kind() != OpKind::Constant)
          break;
        operands.push_back(def->attr("value").getTensor());
      }
      if (operands.size() != op->numOperands())
        continue;
      bool small = true;
      for (unsigned r = 0; r < op->numResults(); ++r) {
        auto n = op->result(r)->type().staticNumElements();
        small &= n && *n <= opts_.foldElementLimit;
      }
      if (!small)
        continue;
      auto values = evaluateOp(*op, operands);
      if (!values) {
        // Leave it to run time; the interpreter reports the problem there.
        llvm::consumeError(values.takeError());
        continue;
      }
      builder_.setInsertBefore(op);
      for (unsigned r = 0; r < op->numResults(); ++r) {
        Value *c = builder_.constant((*values)[r]);
        c->setName(op->result(r)->name());
        op->result(r)->replaceAllUsesWith(c);
        replaced[op->result(r)] = c;
      }
      builder_.setInsertBefore(nullptr);
      builder_.graph().eraseOp(op);
    }
    return replaced;
  }

  void createOutputs() {
    for (const auto &out : model_.graph().output()) {
      if (out.has_type() && out.type().value_case() != onnx::TypeProto::kTensorType &&
          out.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
        throw ImportFailure("graph output '" + out.name() + "' has " + typeCategory(out.type()) +
                            " type; only tensors are supported");
      Value *v;
      try {
        v = lookup(out.name());
      } catch (const ConvertError &e) {
        throw ImportFailure("graph output '" + out.name() + "': " + e.what());
      }
      graph_->addOutput(v, out.name());
    }
  }

  // Folding and lazily unused results leave dead ops; drop them (users before producers).
  void removeDeadOps() {
    std::unordered_set<Value *> outputs;
    for (unsigned i = 0; i < graph_->numOutputs(); ++i)
      outputs.insert(graph_->output(i));
    std::vector<Op *> ops = graph_->opList();
    const std::map<std::string, int64_t> mentions = symbolMentions(*graph_);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op *op = *it;
      bool dead = true;
      for (unsigned r = 0; r < op->numResults() && dead; ++r)
        dead = !op->result(r)->hasUses() && !outputs.count(op->result(r));
      // (A data-dependent size other values mention stays defined: x[x > 0].shape[0].)
      if (dead && !definesMentionedSize(*op, mentions))
        graph_->eraseOp(op);
    }
  }

  std::string path_, dir_;
  const ImportOptions &opts_;
  const Limits limits_ = processLimits();
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  ConverterTable table_;
  std::unique_ptr<Graph> graph_;
  Builder builder_;
  std::vector<std::string> nodeNames_;
  std::unordered_map<std::string, onnx::TensorProto *> initializers_;
  std::unordered_map<std::string, Tensor> tensors_;  // decoded initializers, specialized inputs
  std::unordered_map<std::string, Value *> values_;  // ONNX name -> value (null: not produced)
  std::unordered_map<const Value *, std::vector<SymExpr>> symbolic_; // see propagateSymbolic
  std::unordered_map<const Value *, std::vector<SymFloatRef>> symbolicFloat_; // propagateFloat
  // Formulas Shape read off a tensor's dims, and sizes computed from them: >= 0 when bound (the
  // plan checks every dim), even where no sign rule proves it (a padded size w + mod(-w, 7)).
  std::set<SymExpr> dimFormulas_;
  // Marks a name a subgraph shadowed that had no binding before it (restored by erasing it).
  inline static Value *const kUnbound = reinterpret_cast<Value *>(uintptr_t{1});
  int64_t inlineDepth_ = 0;
  int64_t inlinedNodes_ = 0; // nodes (and bound inputs) of subgraphs converted inline so far
  std::string namePrefix_; // "Loop_3/body#2/" while a subgraph is converted inline
  std::vector<std::string> specialized_;
  int unknownDims_ = 0;
};

llvm::Error fileError(const std::string &path, const std::string &msg) {
  return makeError(Diagnostic::error(msg).inFile(path));
}

} // namespace

llvm::Expected<ImportResult> importOnnxFile(const std::string &path, const ImportOptions &opts) {
  setCrashContext("importing " + path);
  try {
    Importer importer(path, opts);
    return importer.run();
  } catch (const ImportFailure &e) {
    return makeError(Diagnostic(e.diag).inFile(path));
  } catch (const std::exception &e) { // e.g. bad_alloc: still an error, never a crash
    return fileError(path, std::string("import failed: ") + e.what());
  }
}

llvm::Expected<OnnxInterface> readOnnxInterface(const std::string &path) {
  try {
    Importer importer(path, ImportOptions{});
    return importer.interface();
  } catch (const ImportFailure &e) {
    return makeError(Diagnostic(e.diag).inFile(path));
  } catch (const std::exception &e) {
    return fileError(path, std::string("reading the interface failed: ") + e.what());
  }
}

bool OnnxInterface::hasSymbolicInput() const {
  for (const auto &in : inputs)
    if (!in.second.isStatic())
      return true;
  return false;
}

std::optional<OnnxInterface> perShapeInterface(const std::string &path) {
  auto interface = readOnnxInterface(path);
  if (!interface) {
    llvm::consumeError(interface.takeError());
    return std::nullopt;
  }
  if (!interface->hasSymbolicInput() && interface->valueInputs.empty())
    return std::nullopt;
  return std::move(*interface);
}

llvm::Expected<std::unique_ptr<Graph>>
importOnnxFileAtShapes(const std::string &path, const std::vector<std::string> &inputs,
                       const std::vector<Shape> &shapes,
                       const std::map<std::string, Tensor> &values) {
  ImportOptions opts;
  for (size_t i = 0; i < inputs.size() && i < shapes.size(); ++i)
    opts.inputShapes[inputs[i]] = shapes[i];
  opts.specializableInputs = values;
  auto imported = importOnnxFile(path, opts);
  if (!imported)
    return imported.takeError();
  return std::move(imported->graph);
}

llvm::Expected<Tensor> readTensorProtoFile(const std::string &path, std::string *name) {
  try {
    auto buf = readWholeFile(path, "TensorProto");
    onnx::TensorProto proto;
    if (buf->getBufferSize() == 0 || !parseMessage(*buf, proto))
      throw ImportFailure("not a valid TensorProto (empty, truncated or corrupt)");
    if (name)
      *name = proto.name();
    llvm::StringRef dir = llvm::sys::path::parent_path(path);
    return takeTensorFromProto(proto, dir.empty() ? "." : dir.str());
  } catch (const std::exception &e) {
    return fileError(path, e.what());
  }
}

} // namespace strata
