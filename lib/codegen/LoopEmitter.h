// Private to lib/codegen: the state of emitting one LoopFunction as LLVM IR. Expressions are in
// LoopToLLVMExpr.cpp, statements and the function frame in LoopToLLVM.cpp.
//
// Value representation ("register types"): bool is i1, integers their width (signedness lives in
// the loop IR type and picks the instruction), f32 float, f64 double, and f16/bf16 are held as an
// f32 value already rounded to the narrow type, re-rounded after every operation exactly like the
// interpreter. Memory ("storage types") holds bool as i8, f16 as half, bf16 as i16.
#pragma once
#include "strata/codegen/LoopToLLVM.h"
#include "strata/loop/Visitor.h"

#include "llvm/IR/IRBuilder.h"

#include <string>
#include <unordered_map>

namespace strata::codegen {

// Expressions become values at the builder's insert point; statements, the control flow and
// memory operations that run them.
class LoopEmitter : loop::ExprFunctor<llvm::Value *(const loop::Expr &, int lane)>,
                    loop::StmtFunctor<void(const loop::Stmt &)> {
public:
  LoopEmitter(llvm::Module &m, llvm::Function *fn, const CodegenOptions &opts)
      : m_(m), ctx_(m.getContext()), b_(ctx_), fn_(fn), opts_(opts) {}

  // Whole value of `e` (a vector when it has lanes > 1), or with lane >= 0 the scalar value of
  // that lane alone (used where lanes must be evaluated separately, e.g. guarded selects).
  llvm::Value *expr(const loop::Expr &e, int lane = -1) { return visit(e, lane); }
  void stmt(const loop::Stmt &s) { visit(s); }

  llvm::Type *storageType(DType t);
  llvm::Type *regType(DType t);
  llvm::Type *regType(loop::Type t);
  llvm::Value *toReg(llvm::Value *stored, DType t);   // storage -> register (vector-aware)
  llvm::Value *toStorage(llvm::Value *reg, DType t);  // register -> storage
  // Binds a buffer to a base pointer, computing its strides as i64 values at the insert point.
  void bindBuffer(const loop::BufferNode *b, llvm::Value *base);

  llvm::IRBuilder<> &builder() { return b_; }
  std::unordered_map<const loop::VarNode *, llvm::Value *> vars;
  std::string error; // first unsupported construct; emission continues but the result is void
  bool inParallel = false; // emitting an outlined parallel body: nested parallel loops run serially
  llvm::Value *status = nullptr; // the run's KernelStatus (the function's last parameter)

private:
  struct BufInfo {
    llvm::Value *base;
    std::vector<llvm::Value *> strides; // i64
  };
  llvm::Module &m_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_;
  CodegenOptions opts_;
  std::unordered_map<const loop::BufferNode *, BufInfo> bufs_;

  using ExprFunctor::visit;
  using StmtFunctor::visit;
  llvm::Value *visitIntImm(const loop::Expr &e, int lane) override;
  llvm::Value *visitFloatImm(const loop::Expr &e, int lane) override;
  llvm::Value *visitVar(const loop::Expr &e, int lane) override;
  llvm::Value *visitLoad(const loop::Expr &e, int lane) override { return load(e, lane); }
  llvm::Value *visitBinary(const loop::Expr &e, int lane) override;
  llvm::Value *visitNot(const loop::Expr &e, int lane) override;
  llvm::Value *visitSelect(const loop::Expr &e, int lane) override;
  llvm::Value *visitCast(const loop::Expr &e, int lane) override;
  llvm::Value *visitCall(const loop::Expr &e, int lane) override;
  llvm::Value *visitRamp(const loop::Expr &e, int lane) override;
  llvm::Value *visitBroadcast(const loop::Expr &e, int lane) override;
  llvm::Value *visitCheckIndex(const loop::Expr &e, int lane) override;
  void visitFor(const loop::Stmt &s) override { forLoop(*s); }
  void visitStore(const loop::Stmt &s) override { store(*s); }
  void visitAllocate(const loop::Stmt &s) override { allocate(*s); }
  void visitIfThenElse(const loop::Stmt &s) override { ifThenElse(*s); }
  void visitSeq(const loop::Stmt &s) override;

  llvm::Value *roundTo(llvm::Value *v, DType t); // f16/bf16 rounding of an f32 register value
  llvm::Value *binary(const loop::Expr &e, llvm::Value *a, llvm::Value *b);
  llvm::Value *intDivision(loop::ExprKind k, llvm::Value *a, llvm::Value *b, DType t);
  llvm::Value *castValue(llvm::Value *v, DType from, DType to);
  llvm::Value *call(const loop::Expr &e, std::vector<llvm::Value *> args);
  llvm::Value *libmCall(llvm::StringRef name, llvm::Value *x);
  llvm::Value *guardedSelect(const loop::Expr &e, int lane);
  llvm::Value *toI64(llvm::Value *v, DType t);
  // Address of an access: a scalar pointer (lane >= 0 or scalar access), or for a vector access
  // either the first element's pointer with contiguous = true or a vector of pointers.
  llvm::Value *address(const loop::Buffer &b, const std::vector<loop::Expr> &indices, int lanes,
                       int lane, bool &contiguous);
  llvm::Value *load(const loop::Expr &e, int lane);
  void store(const loop::StmtNode &s);
  void forLoop(const loop::StmtNode &s);
  void parallelLoop(const loop::StmtNode &s);
  void allocate(const loop::StmtNode &s);
  void ifThenElse(const loop::StmtNode &s);
  llvm::Align elemAlign(DType t) { return llvm::Align(dtypeSize(t)); }
};

} // namespace strata::codegen
