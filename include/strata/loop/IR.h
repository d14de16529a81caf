// The loop IR: Halide/TVM-TIR shaped loop nests over buffers, the rung between fused graph kernels
// and LLVM IR (design and text format in docs/loop-ir.md).
//
// Nodes are immutable and shared by reference counting (std::shared_ptr<const ...>), so passes
// rebuild only the path they change and share the rest; the graph of nodes is acyclic, so nothing
// leaks. Variables and buffers are identified by their node's address, never by name: names are
// for printing only (the verifier rejects duplicates so the printed text is unambiguous).
#pragma once
#include "strata/support/DType.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::loop {

// A scalar dtype or a vector of `lanes` of them.
struct Type {
  DType dtype = DType::I64;
  int lanes = 1;
  bool isVector() const { return lanes > 1; }
  Type element() const { return {dtype, 1}; }
  Type withLanes(int n) const { return {dtype, n}; }
  bool operator==(const Type &) const = default;
};
std::string typeName(Type t); // "f32", "i64x4"

// X(enumerator, text name, arity)
#define STRATA_LOOP_INTRINSICS(X)                                                                  \
  X(Abs, "abs", 1)                                                                                 \
  X(Atan, "atan", 1)                                                                               \
  X(Ceil, "ceil", 1)                                                                               \
  X(Cos, "cos", 1)                                                                                 \
  X(Erf, "erf", 1)                                                                                 \
  X(Exp, "exp", 1)                                                                                 \
  X(Floor, "floor", 1)                                                                             \
  X(Fma, "fma", 3)                                                                                 \
  X(Log, "log", 1)                                                                                 \
  X(Pow, "pow", 2)                                                                                 \
  X(Round, "round", 1)                                                                             \
  X(Sigmoid, "sigmoid", 1)                                                                         \
  X(Sin, "sin", 1)                                                                                 \
  X(Sqrt, "sqrt", 1)                                                                               \
  X(Tanh, "tanh", 1)

enum class Intrinsic : uint8_t {
#define X(e, n, a) e,
  STRATA_LOOP_INTRINSICS(X)
#undef X
};
std::string_view intrinsicName(Intrinsic i);
int intrinsicArity(Intrinsic i);
std::optional<Intrinsic> lookupIntrinsic(std::string_view name);

enum class ExprKind : uint8_t {
  IntImm,   // intValue (bool constants are IntImm of dtype bool)
  FloatImm, // floatValue, already rounded to the dtype
  Var,      // var
  Load,     // buffer[operands...]; lanes = lanes of the (vector) indices
  // Binary: operands {a, b} of one type. Div/Mod truncate (C semantics) on integers; Mod on floats
  // is C fmod. FloorDiv and FloorMod round toward negative infinity and are what index math uses.
  Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,
  // Bitwise: {a, b} integers of one type, on the two's-complement bit pattern. Shifts are
  // logical (zero fill, also for signed types); an amount read unsigned >= the bit width gives 0.
  BitAnd, BitOr, BitXor, Shl, Shr,
  EQ, NE, LT, LE, GT, GE, // {a, b} -> bool with a's lanes
  And, Or,                // {a, b} bool
  Not,                    // {a} bool
  Select,                 // {cond, t, f}; cond has 1 lane or t's lanes
  Cast,                   // {x} -> type.dtype with x's lanes
  Call,                   // intrinsic(operands...)
  Ramp,                   // {base, stride} scalar ints -> base + stride * lane, type.lanes lanes
  Broadcast,              // {value} scalar -> type.lanes copies
  // {value, size}: an index read from data into an axis of `size` (a scalar of value's integer
  // dtype), ONNX style: value in [-size, size) gives value, plus size when negative; any other
  // value gives 0, after recording in the run's status that the check `site` failed (the run
  // then fails naming the site, the value and the range). No access through it leaves a buffer.
  CheckIndex,
};
std::string_view exprKindName(ExprKind k);
bool isBinaryArith(ExprKind k); // Add..Max
bool isComparison(ExprKind k);  // EQ..GE
bool isBitwise(ExprKind k);     // BitAnd..Shr

struct VarNode {
  std::string name;
  DType dtype;
};
using Var = std::shared_ptr<const VarNode>;
Var makeVar(std::string name, DType dtype = DType::I64);

struct ExprNode;
struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;

// A handle to an immutable expression node (null when default-constructed).
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  const ExprNode *get() const { return node_.get(); }
  const ExprNode *operator->() const { return node_.get(); }
  const ExprNode &operator*() const { return *node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool same(const Expr &o) const { return node_ == o.node_; } // pointer identity
  ExprKind kind() const;
  Type type() const;
  // The value of an integer (or bool) constant, if this is one.
  std::optional<int64_t> asInt() const;
  std::optional<double> asFloat() const;

private:
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprKind kind{};
  Type type{};
  int64_t intValue = 0;
  double floatValue = 0;
  Var var{};                    // Var
  Buffer buffer{};              // Load
  Intrinsic intrinsic{};      // Call
  std::vector<Expr> operands; // see ExprKind
  std::string site;           // CheckIndex: what is checked, e.g. `gather (node "g"): axis 0`
};

enum class MemoryScope : uint8_t { Global, Local, Shared };
std::string_view memoryScopeName(MemoryScope s);

// A typed n-d view of memory: element (i0, ..., ik) lives at sum(i_d * strides[d]) elements from
// the base. Shape and strides are i64 expressions over constants and the function's scalar params.
struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  std::vector<Expr> strides;
  MemoryScope scope;
  size_t rank() const { return shape.size(); }
};
// Row-major strides for `shape`, built deterministically ([4, n, 8] -> [n * 8, 8, 1]) so that the
// printer can omit them and the parser rebuilds the same expressions.
std::vector<Expr> contiguousStrides(const std::vector<Expr> &shape);
// `strides` empty means contiguous.
Buffer makeBuffer(std::string name, DType dtype, std::vector<Expr> shape,
                  std::vector<Expr> strides = {}, MemoryScope scope = MemoryScope::Global);
bool hasContiguousStrides(const BufferNode &b);

// --- expression builders. They compute the node's type from the operands but check nothing;
// the verifier reports ill-typed trees (so a parser can build first and diagnose after).
Expr intImm(int64_t v, DType t = DType::I64);
Expr floatImm(double v, DType t = DType::F32); // rounds v to t
Expr boolImm(bool v);
Expr var(const Var &v);
Expr load(const Buffer &b, std::vector<Expr> indices);
Expr binary(ExprKind k, Expr a, Expr b); // arithmetic, bitwise, comparison, And/Or
Expr logicalNot(Expr a);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(DType t, Expr x);
Expr call(Intrinsic i, std::vector<Expr> args);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
Expr checkIndex(Expr value, Expr size, std::string site);
// The same node kind and payload with new operands (types recomputed). Returns `e` itself when
// every operand is pointer-identical, so unchanged subtrees stay shared.
Expr withOperands(const Expr &e, std::vector<Expr> operands);

inline Expr operator+(Expr a, Expr b) { return binary(ExprKind::Add, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return binary(ExprKind::Sub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return binary(ExprKind::Mul, std::move(a), std::move(b)); }
inline Expr min(Expr a, Expr b) { return binary(ExprKind::Min, std::move(a), std::move(b)); }
inline Expr max(Expr a, Expr b) { return binary(ExprKind::Max, std::move(a), std::move(b)); }

// Structural equality: same kinds, types, payloads; variables and buffers by identity.
bool equal(const Expr &a, const Expr &b);

// --- statements ---------------------------------------------------------------------------------
enum class StmtKind : uint8_t { For, Store, Allocate, IfThenElse, Seq };
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, GpuBlock, GpuThread };
std::string_view forKindName(ForKind k);
std::optional<ForKind> lookupForKind(std::string_view name);

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtKind kind{};
  Var var{};                   // For: the loop index, ranging over [min, min + extent)
  Expr min{}, extent{};          // For
  ForKind forKind{};         // For
  Buffer buffer;             // Store target; Allocate: the buffer allocated for `body`
  std::vector<Expr> indices; // Store
  Expr value;                // Store: the stored value; IfThenElse: the condition
  Stmt body;                 // For, Allocate, IfThenElse (then branch)
  Stmt elseBody;             // IfThenElse, may be null
  std::vector<Stmt> stmts;   // Seq
};

Stmt forLoop(Var v, Expr min, Expr extent, ForKind kind, Stmt body);
Stmt store(Buffer b, std::vector<Expr> indices, Expr value);
Stmt allocate(Buffer b, Stmt body);
Stmt ifThenElse(Expr cond, Stmt thenBody, Stmt elseBody = nullptr);
// Flattens nested sequences; a sequence of one statement is that statement.
Stmt seq(std::vector<Stmt> stmts);

// --- functions ----------------------------------------------------------------------------------
enum class ParamRole : uint8_t { Scalar, In, Out, InOut };

struct Param {
  ParamRole role;
  Var scalar;    // role == Scalar
  Buffer buffer; // otherwise
  bool isBuffer() const { return role != ParamRole::Scalar; }
  const std::string &name() const { return isBuffer() ? buffer->name : scalar->name; }
};

// --- nest annotations: what lowering knows about the loops it emitted
// ----------------------------- Facts of the algorithm, never decisions: lowering states them, the
// default schedule reads them to choose its steps (docs/loop-ir.md, "Nest annotations"). Keyed by
// loop variable name; a schedule step that removes or renames a loop drops the annotations of the
// loops that are gone.
enum class LoopRole : uint8_t {
  Parallel,  // an output dimension: distinct iterations write distinct elements, read none of them
  Reduction, // iterations accumulate into the same elements, in order
};
std::string_view loopRoleName(LoopRole r);
std::optional<LoopRole> lookupLoopRole(std::string_view name);

// A loop nest as lowering emitted it, recorded at its outermost loop.
struct NestInfo {
  std::string op;             // the graph op the nest computes ("conv", "matmul", "kernel", ...)
  int64_t work = -1;          // its multiply-adds (scalar operations), -1: count the loops instead
  bool registerTiled = false; // a micro-kernel whose loop structure is final: unrolled register
                              // tiles with constant accumulator indices; only parallelism is open
  bool operator==(const NestInfo &) const = default;
};

struct LoopAnnotations {
  std::map<std::string, LoopRole> roles; // loop variable -> its role
  std::map<std::string, NestInfo> nests; // outermost loop variable of a nest -> the nest
  const LoopRole *roleOf(const std::string &loop) const {
    auto it = roles.find(loop);
    return it == roles.end() ? nullptr : &it->second;
  }
  const NestInfo *nestAt(const std::string &loop) const {
    auto it = nests.find(loop);
    return it == nests.end() ? nullptr : &it->second;
  }
  bool empty() const { return roles.empty() && nests.empty(); }
};

// A kernel: loops over buffer parameters, with scalar parameters for symbolic extents.
struct LoopFunction {
  std::string name;
  std::vector<Param> params;
  Stmt body;
  LoopAnnotations notes;
  void addScalar(Var v) { params.push_back({ParamRole::Scalar, std::move(v), nullptr}); }
  void addBuffer(Buffer b, ParamRole role) { params.push_back({role, nullptr, std::move(b)}); }
};
// Drops the annotations of loops no longer in f.body (after a step removed or renamed them).
void pruneAnnotations(LoopFunction &f);

} // namespace strata::loop
