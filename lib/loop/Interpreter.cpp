// The loop IR interpreter (see Interpreter.h). Vector expressions are evaluated lane by lane:
// only Ramp and Broadcast depend on the lane, and a vector store evaluates every lane's value and
// address before writing any, which is the semantics of a vector instruction.
#include "strata/loop/Interpreter.h"
#include "strata/support/Error.h"
#include "strata/support/KernelStatus.h"

#include "Arith.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Visitor.h"

#include <list>
#include <map>
#include <stdexcept>

namespace strata::loop {

namespace {

using arith::Scalar;

struct InterpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Scalar readElement(DType t, const uint8_t *p) {
  Scalar s;
  switch (t) {
#define X(e, n, ty, sz)                                                                            \
  case DType::e: {                                                                                 \
    ty v;                                                                                          \
    std::memcpy(&v, p, sizeof v);                                                                  \
    if constexpr (std::is_floating_point_v<ty>)                                                    \
      s.f = v;                                                                                     \
    else                                                                                           \
      s.i = static_cast<int64_t>(v);                                                               \
    break;                                                                                         \
  }
    STRATA_DTYPES(X)
#undef X
  }
  if (t == DType::F16)
    s.f = halfToFloat(static_cast<uint16_t>(s.i));
  if (t == DType::BF16)
    s.f = bf16ToFloat(static_cast<uint16_t>(s.i));
  return s;
}

void writeElement(DType t, uint8_t *p, Scalar s) {
  if (t == DType::F16)
    s.i = floatToHalf(static_cast<float>(s.f));
  if (t == DType::BF16)
    s.i = floatToBf16(static_cast<float>(s.f));
  switch (t) {
#define X(e, n, ty, sz)                                                                            \
  case DType::e: {                                                                                 \
    ty v;                                                                                          \
    if constexpr (std::is_floating_point_v<ty>)                                                    \
      v = static_cast<ty>(s.f);                                                                    \
    else                                                                                           \
      v = static_cast<ty>(s.i);                                                                    \
    std::memcpy(p, &v, sizeof v);                                                                  \
    break;                                                                                         \
  }
    STRATA_DTYPES(X)
#undef X
  }
}

struct View {
  uint8_t *data;
  int64_t elements; // addressable elements from data
  std::vector<int64_t> shape, strides;
};

// Statements run for their effect on the bound buffers; expressions evaluate one lane.
class Interpreter : public StmtFunctor<void(const Stmt &)>,
                    public ExprFunctor<Scalar(const Expr &, int lane)> {
public:
  void bind(const LoopFunction &f, std::vector<Tensor> &args) {
    if (args.size() != f.params.size())
      throw InterpError("@" + f.name + " takes " + std::to_string(f.params.size()) +
                        " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i) { // scalars first: buffer shapes use them
      const Param &p = f.params[i];
      if (p.isBuffer())
        continue;
      const Tensor &t = args[i];
      if (t.rank() != 0 || t.dtype() != p.scalar->dtype || !t.valid())
        throw InterpError("argument %" + p.name() + " must be a rank-0 " +
                          std::string(dtypeName(p.scalar->dtype)) + " tensor");
      Scalar s;
      if (isFloat(t.dtype()))
        s.f = t.getDouble(0);
      else
        s.i = t.getInt(0);
      vars_[p.scalar.get()] = s;
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const Param &p = f.params[i];
      if (!p.isBuffer())
        continue;
      Tensor &t = args[i];
      View v = view(*p.buffer);
      if (t.dtype() != p.buffer->dtype || t.shape() != v.shape || !t.valid())
        throw InterpError("argument %" + p.name() + " must be a " +
                          std::string(dtypeName(p.buffer->dtype)) + " tensor of shape [" +
                          shapeToString(v.shape) + "], got " + std::string(dtypeName(t.dtype())) +
                          " [" + shapeToString(t.shape()) + "]");
      v.data = static_cast<uint8_t *>(t.rawData());
      v.elements = t.numElements();
      buffers_[p.buffer.get()] = std::move(v);
    }
  }

  using ExprFunctor::visit;
  using StmtFunctor::visit;

protected:
  void visitFor(const Stmt &s) override {
    const StmtNode &n = *s;
    int64_t lo = eval(n.min, 0).i, ext = eval(n.extent, 0).i;
    for (int64_t i = 0; i < ext; ++i) {
      vars_[n.var.get()].i =
          arith::wrap(static_cast<uint64_t>(lo) + static_cast<uint64_t>(i), n.var->dtype);
      visit(n.body);
    }
    vars_.erase(n.var.get());
  }
  void visitStore(const Stmt &s) override {
    const StmtNode &n = *s;
    int lanes = n.value.type().lanes;
    std::vector<std::pair<uint8_t *, Scalar>> writes;
    for (int l = 0; l < lanes; ++l)
      writes.push_back({address(n.buffer, n.indices, l), eval(n.value, l)});
    for (auto &[p, v] : writes)
      writeElement(n.buffer->dtype, p, v);
  }
  void visitAllocate(const Stmt &s) override {
    const StmtNode &n = *s;
    View v = view(*n.buffer);
    int64_t last = 0; // highest element offset the view can address
    for (size_t d = 0; d < v.shape.size(); ++d) {
      if (v.shape[d] <= 0)
        last = -1;
      if (last >= 0)
        last += (v.shape[d] - 1) * std::max<int64_t>(v.strides[d], 0);
    }
    if (last >= (int64_t(1) << 32))
      throw InterpError("allocation of %" + n.buffer->name + " is too large");
    auto &storage = allocations_.emplace_back(
        static_cast<size_t>(last + 1) * dtypeSize(n.buffer->dtype), uint8_t(0));
    v.data = storage.data();
    v.elements = last + 1;
    buffers_[n.buffer.get()] = std::move(v);
    visit(n.body);
    buffers_.erase(n.buffer.get());
    allocations_.pop_back();
  }
  void visitIfThenElse(const Stmt &s) override {
    if (eval(s->value, 0).i)
      visit(s->body);
    else if (s->elseBody)
      visit(s->elseBody);
  }
  void visitSeq(const Stmt &s) override {
    for (const Stmt &c : s->stmts)
      visit(c);
  }

private:
  std::map<const VarNode *, Scalar> vars_;
  std::map<const BufferNode *, View> buffers_;
  std::list<std::vector<uint8_t>> allocations_;

  View view(const BufferNode &b) {
    View v{nullptr, 0, {}, {}};
    for (const Expr &e : b.shape)
      v.shape.push_back(eval(e, 0).i);
    for (const Expr &e : b.strides)
      v.strides.push_back(eval(e, 0).i);
    return v;
  }

  uint8_t *address(const Buffer &b, const std::vector<Expr> &indices, int lane) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end())
      throw InterpError("buffer %" + b->name + " is not bound");
    const View &v = it->second;
    int64_t offset = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      int64_t i = eval(indices[d], lane).i;
      if (d >= v.shape.size() || i < 0 || i >= v.shape[d])
        throw InterpError("access to %" + b->name + " out of bounds: index " + std::to_string(i) +
                          " of dimension " + std::to_string(d) + " (" + printExpr(indices[d]) +
                          ")");
      offset += i * v.strides[d];
    }
    if (offset < 0 || offset >= v.elements)
      throw InterpError("access to %" + b->name + " at element offset " + std::to_string(offset) +
                        " is outside its storage");
    return v.data + offset * static_cast<int64_t>(dtypeSize(b->dtype));
  }

  // The value of lane `lane` of e.
  Scalar eval(const Expr &e, int lane) { return visit(e, lane); }

  Scalar visitIntImm(const Expr &e, int) override { return {e->intValue, 0}; }
  Scalar visitFloatImm(const Expr &e, int) override { return {0, e->floatValue}; }
  Scalar visitVar(const Expr &e, int) override {
    auto it = vars_.find(e->var.get());
    if (it == vars_.end())
      throw InterpError("variable %" + e->var->name + " is not bound");
    return it->second;
  }
  Scalar visitLoad(const Expr &e, int lane) override {
    return readElement(e->buffer->dtype, address(e->buffer, e->operands, lane));
  }
  Scalar visitNot(const Expr &e, int lane) override { return {!eval(e->operands[0], lane).i, 0}; }
  Scalar visitSelect(const Expr &e, int lane) override {
    const std::vector<Expr> &ops = e->operands;
    return eval(eval(ops[0], lane).i ? ops[1] : ops[2], lane);
  }
  Scalar visitCast(const Expr &e, int lane) override {
    const Expr &x = e->operands[0];
    return arith::castScalar(eval(x, lane), x.type().dtype, e.type().dtype);
  }
  Scalar visitCall(const Expr &e, int lane) override {
    const ExprNode &n = *e;
    const std::vector<Expr> &ops = n.operands;
    double a[3] = {0, 0, 0};
    for (size_t i = 0; i < ops.size() && i < 3; ++i)
      a[i] = eval(ops[i], lane).f;
    if (!isFloat(n.type.dtype)) { // abs of an integer
      int64_t v = eval(ops[0], lane).i;
      return {
          arith::wrap(static_cast<uint64_t>(v < 0 ? -static_cast<uint64_t>(v) : v), n.type.dtype),
          0};
    }
    return {0, arith::intrinsic(n.intrinsic, a, n.type.dtype)};
  }
  Scalar visitRamp(const Expr &e, int lane) override {
    uint64_t base = static_cast<uint64_t>(eval(e->operands[0], 0).i);
    uint64_t stride = static_cast<uint64_t>(eval(e->operands[1], 0).i);
    return {arith::wrap(base + stride * static_cast<uint64_t>(lane), e.type().dtype), 0};
  }
  Scalar visitBroadcast(const Expr &e, int) override { return eval(e->operands[0], 0); }
  // The reference fails the evaluation at the first failing check, where generated code goes on
  // with index 0 and fails the run after the kernel: both report the same message.
  Scalar visitCheckIndex(const Expr &e, int lane) override {
    int64_t v = eval(e->operands[0], lane).i, size = eval(e->operands[1], lane).i;
    if (v < -size || v >= size)
      throw InterpError(indexErrorMessage(e->site, v, -size, size));
    return {v < 0 ? v + size : v, 0};
  }
  Scalar visitBinary(const Expr &e, int lane) override {
    const std::vector<Expr> &ops = e->operands;
    Scalar a = eval(ops[0], lane), b = eval(ops[1], lane);
    DType t = ops[0].type().dtype;
    if (isFloat(t)) {
      double r = arith::floatBinary(e.kind(), a.f, b.f, t);
      return isComparison(e.kind()) ? Scalar{r != 0, 0} : Scalar{0, r};
    }
    std::optional<int64_t> r = arith::intBinary(e.kind(), a.i, b.i, t);
    if (!r)
      throw InterpError("integer division by zero or overflow in " + printExpr(e));
    return {*r, 0};
  }
};

} // namespace

llvm::Error evaluate(const LoopFunction &f, std::vector<Tensor> &args) {
  try {
    Interpreter in;
    in.bind(f, args);
    if (f.body)
      in.visit(f.body);
    return llvm::Error::success();
  } catch (const InterpError &e) {
    return makeError("@" + f.name + ": " + e.what());
  }
}

} // namespace strata::loop
