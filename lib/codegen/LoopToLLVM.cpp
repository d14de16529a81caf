// Loop IR statements, memory accesses and the function frame -> LLVM IR (see LoopToLLVM.h and
// docs/codegen.md), and the optimization pipeline.
#include "LoopEmitter.h"
#include "strata/support/Error.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace strata::codegen {

using loop::Expr;
using loop::ExprKind;
using loop::ForKind;
using loop::StmtKind;

void LoopEmitter::bindBuffer(const loop::BufferNode *b, llvm::Value *base) {
  BufInfo info{base, {}};
  for (const Expr &s : b->strides)
    info.strides.push_back(toI64(expr(s), s.type().dtype));
  bufs_[b] = std::move(info);
}

// offset = sum(index_d * stride_d). A vector access whose lanes advance by exactly one element
// (ramps and broadcasts with constant steps summing to 1) is contiguous: one vector load/store at
// the first lane's address. Anything else becomes a vector of pointers (gather/scatter).
llvm::Value *LoopEmitter::address(const loop::Buffer &b, const std::vector<Expr> &indices,
                                  int lanes, int lane, bool &contiguous) {
  contiguous = false;
  auto it = bufs_.find(b.get());
  if (it == bufs_.end()) {
    error = "buffer %" + b->name + " is not bound";
    return llvm::PoisonValue::get(b_.getPtrTy());
  }
  const BufInfo &info = it->second;
  llvm::Type *elem = storageType(b->dtype);
  if (lanes > 1 && lane < 0) {
    int64_t step = 0;
    bool known = true;
    for (size_t d = 0; d < indices.size(); ++d) {
      const Expr &ix = indices[d];
      if (ix.type().lanes == 1 || ix.kind() == ExprKind::Broadcast)
        continue;
      auto rs = ix.kind() == ExprKind::Ramp ? ix->operands[1].asInt() : std::nullopt;
      auto bs = b->strides[d].asInt();
      if (!rs || !bs) {
        known = false;
        break;
      }
      step += *rs * *bs;
    }
    if (known && step == 1) {
      contiguous = true;
      llvm::Value *off = b_.getInt64(0);
      for (size_t d = 0; d < indices.size(); ++d) {
        const Expr &ix = indices[d];
        const Expr &scalar = ix.type().lanes == 1 ? ix : ix->operands[0]; // ramp/broadcast base
        off = b_.CreateAdd(off, b_.CreateMul(toI64(expr(scalar), scalar.type().dtype), info.strides[d]));
      }
      return b_.CreateGEP(elem, info.base, off);
    }
    llvm::Value *off = llvm::Constant::getNullValue(llvm::FixedVectorType::get(b_.getInt64Ty(), lanes));
    for (size_t d = 0; d < indices.size(); ++d) {
      llvm::Value *ix = toI64(expr(indices[d]), indices[d].type().dtype);
      if (!ix->getType()->isVectorTy())
        ix = b_.CreateVectorSplat(lanes, ix);
      off = b_.CreateAdd(off, b_.CreateMul(ix, b_.CreateVectorSplat(lanes, info.strides[d])));
    }
    return b_.CreateGEP(elem, info.base, off);
  }
  llvm::Value *off = b_.getInt64(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    int l = indices[d].type().lanes > 1 ? std::max(lane, 0) : -1;
    off = b_.CreateAdd(off, b_.CreateMul(toI64(expr(indices[d], l), indices[d].type().dtype),
                                         info.strides[d]));
  }
  return b_.CreateGEP(elem, info.base, off);
}

llvm::Value *LoopEmitter::load(const Expr &e, int lane) {
  DType t = e->buffer->dtype;
  int lanes = e.type().lanes;
  llvm::Type *elem = storageType(t);
  bool contiguous = false;
  llvm::Value *p = address(e->buffer, e->operands, lanes, lane, contiguous);
  if (lanes == 1 || lane >= 0)
    return toReg(b_.CreateAlignedLoad(elem, p, elemAlign(t)), t);
  auto *vt = llvm::FixedVectorType::get(elem, lanes);
  if (contiguous)
    return toReg(b_.CreateAlignedLoad(vt, p, elemAlign(t)), t);
  return toReg(b_.CreateMaskedGather(vt, p, elemAlign(t)), t);
}

void LoopEmitter::store(const loop::StmtNode &s) {
  DType t = s.buffer->dtype;
  int lanes = s.value.type().lanes;
  // All lanes' values and addresses are computed before any is written, as in the interpreter.
  llvm::Value *v = toStorage(expr(s.value), t);
  bool contiguous = false;
  llvm::Value *p = address(s.buffer, s.indices, lanes, -1, contiguous);
  if (lanes > 1 && !contiguous)
    b_.CreateMaskedScatter(v, p, elemAlign(t)); // lanes are written in order: the last wins
  else
    b_.CreateAlignedStore(v, p, elemAlign(t));
}

// Serial loops whose bodies have more LLVM instructions than this are not offered to LLVM's loop
// vectorizer (see forLoop).
constexpr size_t kMaxAutoVectorizedInstructions = 2000;

// for v in [min, min + extent): a bottom-tested loop over a counter in v's type.
void LoopEmitter::forLoop(const loop::StmtNode &s) {
  if (s.forKind == ForKind::GpuBlock || s.forKind == ForKind::GpuThread) {
    error = "for %" + s.var->name + ": " + std::string(loop::forKindName(s.forKind)) +
            " loops need a GPU target";
    return;
  }
  if (s.forKind == ForKind::Parallel && !inParallel)
    return parallelLoop(s);
  bool sgn = isSigned(s.var->dtype);
  llvm::Value *lo = expr(s.min), *ext = expr(s.extent);
  llvm::Value *zero = llvm::Constant::getNullValue(ext->getType());
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *body = llvm::BasicBlock::Create(ctx_, "for." + s.var->name, fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "for." + s.var->name + ".end", fn_);
  b_.CreateCondBr(sgn ? b_.CreateICmpSLT(zero, ext) : b_.CreateICmpULT(zero, ext), body, exit);
  b_.SetInsertPoint(body);
  llvm::PHINode *iv = b_.CreatePHI(ext->getType(), 2, s.var->name + ".iv");
  iv->addIncoming(zero, pre);
  llvm::Value *v = b_.CreateAdd(lo, iv, s.var->name);
  vars[s.var.get()] = v;
  stmt(s.body);
  vars.erase(s.var.get());
  llvm::Value *next = b_.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1));
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::Value *more = sgn ? b_.CreateICmpSLT(next, ext) : b_.CreateICmpULT(next, ext);
  llvm::BranchInst *latch = b_.CreateCondBr(more, body, exit);
  // Loop kinds become hints to LLVM's loop passes: `vectorized` asks the loop vectorizer (explicit
  // widening of a scalar body into vector IR is the schedule's job), `unrolled` asks for full
  // unrolling. Nested `parallel` loops (inside an outlined body) run serially here.
  // A serial loop with a huge body (a long fused chain) is kept from LLVM's loop vectorizer,
  // whose cost on it grows faster than linearly (a 4,000-op chain: seconds) for no gain: the
  // schedule already chose not to vectorize it.
  bool hugeBody = false;
  if (s.forKind == ForKind::Serial) {
    size_t instructions = body->size();
    for (auto it = std::next(exit->getIterator()); it != fn_->end(); ++it)
      instructions += it->size();
    hugeBody = instructions > kMaxAutoVectorizedInstructions;
  }
  const char *hint = s.forKind == ForKind::Vectorized ? "llvm.loop.vectorize.enable"
                     : s.forKind == ForKind::Unrolled ? "llvm.loop.unroll.full"
                     : hugeBody                       ? "llvm.loop.vectorize.enable"
                                                      : nullptr;
  if (hint) {
    llvm::SmallVector<llvm::Metadata *, 2> ops{nullptr};
    if (s.forKind == ForKind::Vectorized || hugeBody)
      ops.push_back(llvm::MDNode::get(
          ctx_, {llvm::MDString::get(ctx_, hint),
                 llvm::ConstantAsMetadata::get(hugeBody ? b_.getFalse() : b_.getTrue())}));
    else
      ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, hint)}));
    llvm::MDNode *loopID = llvm::MDNode::getDistinct(ctx_, ops);
    loopID->replaceOperandWith(0, loopID);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loopID);
  }
  b_.SetInsertPoint(exit);
}

// An outermost `parallel` loop: its body becomes an internal function
//   body(ptr base..., value..., i64 begin, i64 end)
// running iterations [begin, end), reached through a trampoline body.tramp(closure, begin, end)
// that strata_parallel_for (ThreadPool.h) calls; the closure is a stack struct of the bound
// variables' values, the loop's min and each bound buffer's base pointer and strides. Constants
// (the usual strides, extents) are not captured but rebuilt in the body, so the vectorizer still
// sees unit strides; buffer pointers are `noalias` parameters of the body (when the function's
// are), which the inliner turns into alias scopes inside the trampoline.
void LoopEmitter::parallelLoop(const loop::StmtNode &s) {
  llvm::Value *lo = expr(s.min);
  llvm::Value *ext = toI64(expr(s.extent), s.var->dtype);
  // What the body needs: every value, with constants kept apart.
  std::vector<llvm::Value *> captured; // non-constant values, in capture order
  auto capture = [&](llvm::Value *v) -> int {
    if (llvm::isa<llvm::Constant>(v))
      return -1;
    captured.push_back(v);
    return static_cast<int>(captured.size() - 1);
  };
  struct Slot {
    llvm::Value *constant;
    int index;
  };
  auto slot = [&](llvm::Value *v) { return Slot{v, capture(v)}; };
  Slot loSlot = slot(lo);
  std::vector<std::pair<const loop::VarNode *, Slot>> varSlots;
  for (auto &[v, val] : vars)
    varSlots.push_back({v, slot(val)});
  Slot statusSlot = slot(status);
  std::vector<const loop::BufferNode *> capBufs;
  std::vector<std::vector<Slot>> strideSlots;
  std::vector<llvm::Value *> bases;
  for (auto &[buf, info] : bufs_) {
    capBufs.push_back(buf);
    bases.push_back(info.base);
    std::vector<Slot> st;
    for (llvm::Value *v : info.strides)
      st.push_back(slot(v));
    strideSlots.push_back(std::move(st));
  }

  llvm::Type *i64 = b_.getInt64Ty(), *ptr = b_.getPtrTy();
  // The body proper: bases, captured values, begin, end.
  std::vector<llvm::Type *> params(bases.size(), ptr);
  for (llvm::Value *v : captured)
    params.push_back(v->getType());
  params.push_back(i64);
  params.push_back(i64);
  auto *bodyFn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                        llvm::Function::InternalLinkage,
                                        fn_->getName() + ".par." + s.var->name, m_);
  bodyFn->addFnAttr(llvm::Attribute::NoUnwind);
  if (opts_.noalias)
    for (size_t i = 0; i < bases.size(); ++i)
      bodyFn->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  LoopEmitter sub(m_, bodyFn, opts_);
  sub.inParallel = true;
  llvm::IRBuilder<> &sb = sub.builder();
  sb.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", bodyFn));
  const size_t firstValue = bases.size();
  auto value = [&](const Slot &sl) -> llvm::Value * {
    return sl.index < 0 ? sl.constant : bodyFn->getArg(firstValue + sl.index);
  };
  llvm::Value *subLo = value(loSlot);
  sub.status = value(statusSlot);
  for (auto &[v, sl] : varSlots)
    sub.vars[v] = value(sl);
  for (size_t i = 0; i < capBufs.size(); ++i) {
    BufInfo info{bodyFn->getArg(static_cast<unsigned>(i)), {}};
    for (const Slot &sl : strideSlots[i])
      info.strides.push_back(value(sl));
    sub.bufs_[capBufs[i]] = std::move(info);
  }
  // for i in [begin, end): var = min + i, in the variable's type. begin < end always holds.
  llvm::Value *begin = bodyFn->getArg(bodyFn->arg_size() - 2);
  llvm::Value *end = bodyFn->getArg(bodyFn->arg_size() - 1);
  llvm::BasicBlock *pre = sb.GetInsertBlock();
  auto *loopBB = llvm::BasicBlock::Create(ctx_, "for." + s.var->name, bodyFn);
  auto *exitBB = llvm::BasicBlock::Create(ctx_, "for." + s.var->name + ".end", bodyFn);
  sb.CreateBr(loopBB);
  sb.SetInsertPoint(loopBB);
  llvm::PHINode *iv = sb.CreatePHI(i64, 2, s.var->name + ".iv");
  iv->addIncoming(begin, pre);
  llvm::Value *ivT = sb.CreateIntCast(iv, subLo->getType(), false);
  sub.vars[s.var.get()] = sb.CreateAdd(subLo, ivT, s.var->name);
  sub.stmt(s.body);
  llvm::Value *next = sb.CreateAdd(iv, sb.getInt64(1));
  iv->addIncoming(next, sb.GetInsertBlock());
  sb.CreateCondBr(sb.CreateICmpSLT(next, end), loopBB, exitBB);
  sb.SetInsertPoint(exitBB);
  sb.CreateRetVoid();
  if (!sub.error.empty() && error.empty())
    error = sub.error;

  // The closure the trampoline unpacks: bases, then captured values.
  std::vector<llvm::Type *> fields(bases.size(), ptr);
  for (llvm::Value *v : captured)
    fields.push_back(v->getType());
  auto *closureTy = llvm::StructType::get(ctx_, fields);
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  llvm::AllocaInst *closure = entry.CreateAlloca(closureTy, nullptr, s.var->name + ".closure");
  for (size_t i = 0; i < bases.size(); ++i)
    b_.CreateStore(bases[i], b_.CreateStructGEP(closureTy, closure, i));
  for (size_t i = 0; i < captured.size(); ++i)
    b_.CreateStore(captured[i], b_.CreateStructGEP(closureTy, closure, firstValue + i));

  auto *trampTy = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
  auto *tramp = llvm::Function::Create(trampTy, llvm::Function::InternalLinkage,
                                       bodyFn->getName() + ".tramp", m_);
  tramp->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> tb(llvm::BasicBlock::Create(ctx_, "entry", tramp));
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < fields.size(); ++i)
    args.push_back(tb.CreateLoad(fields[i], tb.CreateStructGEP(closureTy, tramp->getArg(0), i)));
  args.push_back(tramp->getArg(1));
  args.push_back(tramp->getArg(2));
  tb.CreateCall(bodyFn, args);
  tb.CreateRetVoid();

  llvm::FunctionCallee pfor = m_.getOrInsertFunction(
      "strata_parallel_for", llvm::FunctionType::get(b_.getVoidTy(), {i64, ptr, ptr}, false));
  b_.CreateCall(pfor, {ext, tramp, closure});
}

// Local buffers of constant size up to 64 KiB live on the stack (alloca in the entry block);
// others are malloc'ed for the body and freed after. Both start zeroed, like the interpreter's.
void LoopEmitter::allocate(const loop::StmtNode &s) {
  const loop::BufferNode &buf = *s.buffer;
  uint64_t esize = dtypeSize(buf.dtype);
  // elements = 1 + sum((shape_d - 1) * max(stride_d, 0)), or 0 when a dimension is empty.
  llvm::Value *last = b_.getInt64(0), *empty = b_.getFalse();
  int64_t constLast = 0;
  bool constSize = true, anyEmpty = false;
  for (size_t d = 0; d < buf.rank(); ++d) {
    auto sh = buf.shape[d].asInt(), st = buf.strides[d].asInt();
    if (sh && st) {
      anyEmpty |= *sh <= 0;
      constLast += (*sh - 1) * std::max<int64_t>(*st, 0);
    } else {
      constSize = false;
    }
    llvm::Value *shape = toI64(expr(buf.shape[d]), buf.shape[d].type().dtype);
    llvm::Value *stride = toI64(expr(buf.strides[d]), buf.strides[d].type().dtype);
    empty = b_.CreateOr(empty, b_.CreateICmpSLE(shape, b_.getInt64(0)));
    llvm::Value *pos = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, stride, b_.getInt64(0));
    last = b_.CreateAdd(last, b_.CreateMul(b_.CreateSub(shape, b_.getInt64(1)), pos));
  }
  llvm::Value *elements = b_.CreateSelect(empty, b_.getInt64(0), b_.CreateAdd(last, b_.getInt64(1)));
  llvm::Value *bytes = b_.CreateMul(elements, b_.getInt64(esize));
  llvm::Align align(64);
  llvm::Value *base = nullptr;
  bool onStack = buf.scope != loop::MemoryScope::Global && constSize &&
                 (anyEmpty ? 0 : (constLast + 1)) * static_cast<int64_t>(esize) <= 65536;
  if (onStack) {
    uint64_t n = static_cast<uint64_t>(std::max<int64_t>(anyEmpty ? 1 : constLast + 1, 1));
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    auto *a = entry.CreateAlloca(llvm::ArrayType::get(storageType(buf.dtype), n), nullptr, buf.name);
    a->setAlignment(align);
    base = a;
  } else {
    llvm::FunctionCallee mallocFn = m_.getOrInsertFunction(
        "malloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
    base = b_.CreateCall(mallocFn, {b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, bytes,
                                                             b_.getInt64(1))},
                         buf.name);
    align = llvm::Align(16); // malloc's guarantee on x86-64
  }
  // A failed malloc (a run-time size past what memory holds) reports through the run's status
  // and skips the body: the run fails with an error, nothing writes through a null pointer.
  llvm::BasicBlock *end = nullptr;
  if (!onStack && status) {
    auto *fail = llvm::BasicBlock::Create(ctx_, "alloc.fail", fn_);
    auto *ok = llvm::BasicBlock::Create(ctx_, "alloc.ok", fn_);
    end = llvm::BasicBlock::Create(ctx_, "alloc.end", fn_);
    b_.CreateCondBr(b_.CreateIsNull(base), fail, ok,
                    llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
    b_.SetInsertPoint(fail);
    llvm::FunctionCallee report = m_.getOrInsertFunction(
        "strata_alloc_error", llvm::FunctionType::get(b_.getVoidTy(),
                                                      {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty()},
                                                      false));
    std::string site = fn_->getName().str() + ": local " + buf.name;
    b_.CreateCall(report, {status, b_.CreateGlobalString(site, "alloc.site", 0, &m_), bytes});
    b_.CreateBr(end);
    b_.SetInsertPoint(ok);
  }
  b_.CreateMemSet(base, b_.getInt8(0), bytes, align);
  bindBuffer(&buf, base);
  stmt(s.body);
  bufs_.erase(&buf);
  if (!onStack) {
    llvm::FunctionCallee freeFn = m_.getOrInsertFunction(
        "free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
    b_.CreateCall(freeFn, {base});
  }
  if (end) {
    b_.CreateBr(end);
    b_.SetInsertPoint(end);
  }
}

void LoopEmitter::ifThenElse(const loop::StmtNode &s) {
  llvm::Value *c = expr(s.value);
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
  auto *elseBB = s.elseBody ? llvm::BasicBlock::Create(ctx_, "if.else", fn_) : nullptr;
  auto *merge = llvm::BasicBlock::Create(ctx_, "if.end", fn_);
  b_.CreateCondBr(c, thenBB, elseBB ? elseBB : merge);
  b_.SetInsertPoint(thenBB);
  stmt(s.body);
  b_.CreateBr(merge);
  if (elseBB) {
    b_.SetInsertPoint(elseBB);
    stmt(s.elseBody);
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
}

void LoopEmitter::visitSeq(const loop::Stmt &s) {
  for (const loop::Stmt &c : s->stmts)
    stmt(c);
}

llvm::Expected<llvm::Function *> emitLoopFunction(const loop::LoopFunction &f, llvm::Module &m,
                                                  const CodegenOptions &opts) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *fn = nullptr;
  {
    LoopEmitter types(m, nullptr, opts);
    std::vector<llvm::Type *> params;
    for (const loop::Param &p : f.params)
      params.push_back(p.isBuffer() ? llvm::PointerType::get(ctx, 0) : types.regType(p.scalar->dtype));
    params.push_back(llvm::PointerType::get(ctx, 0)); // the run's KernelStatus
    auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
    fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, f.name, m);
  }
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  LoopEmitter em(m, fn, opts);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  em.builder().SetInsertPoint(entry);
  em.status = fn->getArg(static_cast<unsigned>(f.params.size()));
  em.status->setName("status");
  for (size_t i = 0; i < f.params.size(); ++i) { // scalars first: strides may use them
    const loop::Param &p = f.params[i];
    fn->getArg(i)->setName(p.name());
    if (!p.isBuffer())
      em.vars[p.scalar.get()] = fn->getArg(i);
  }
  for (size_t i = 0; i < f.params.size(); ++i) {
    const loop::Param &p = f.params[i];
    if (!p.isBuffer())
      continue;
    if (opts.noalias)
      fn->addParamAttr(i, llvm::Attribute::NoAlias);
    uint64_t align = opts.bufferAlign ? opts.bufferAlign : dtypeSize(p.buffer->dtype);
    fn->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(align)));
    if (p.role == loop::ParamRole::In)
      fn->addParamAttr(i, llvm::Attribute::ReadOnly);
    em.bindBuffer(p.buffer.get(), fn->getArg(i));
  }
  em.stmt(f.body);
  em.builder().CreateRetVoid();
  if (!em.error.empty()) {
    fn->eraseFromParent();
    return makeError("@" + f.name + ": " + em.error);
  }

  // name_packed(ptr args): args[i] is buffer i's data pointer or a pointer to scalar i; the last
  // entry, args[params], points to the run's KernelStatus.
  auto *packedTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {llvm::PointerType::get(ctx, 0)}, false);
  auto *packed = llvm::Function::Create(packedTy, llvm::Function::ExternalLinkage, f.name + "_packed", m);
  packed->addFnAttr(llvm::Attribute::NoUnwind);
  LoopEmitter pe(m, packed, opts);
  llvm::IRBuilder<> &b = pe.builder();
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Value *slot = b.CreateConstGEP1_64(b.getPtrTy(), packed->getArg(0), i);
    llvm::Value *p = b.CreateLoad(b.getPtrTy(), slot);
    if (f.params[i].isBuffer()) {
      args.push_back(p);
    } else {
      DType t = f.params[i].scalar->dtype;
      args.push_back(pe.toReg(b.CreateLoad(pe.storageType(t), p), t));
    }
  }
  args.push_back(b.CreateLoad(
      b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), packed->getArg(0), f.params.size())));
  b.CreateCall(fn, args);
  b.CreateRetVoid();

  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyFunction(*fn, &os) || llvm::verifyFunction(*packed, &os))
    return makeError( // a code generation bug (phase "internal", docs/cli.md)
        Diagnostic::error("@" + f.name + ": invalid LLVM IR generated: " + msg)
            .inPhase("internal"));
  return fn;
}

namespace {

// The llvm-pass fault: the last store of a float (or float vector) value in `fn` stores the value
// plus 1 instead.
void addOneToLastFloatStore(llvm::Function &fn) {
  llvm::StoreInst *last = nullptr;
  for (llvm::BasicBlock &bb : fn)
    for (llvm::Instruction &inst : bb)
      if (auto *st = llvm::dyn_cast<llvm::StoreInst>(&inst))
        if (st->getValueOperand()->getType()->getScalarType()->isFloatTy())
          last = st;
  if (!last)
    return;
  llvm::IRBuilder<> b(last);
  llvm::Value *one = llvm::ConstantFP::get(last->getValueOperand()->getType(), 1.0);
  last->setOperand(0, b.CreateFAdd(last->getValueOperand(), one));
}

} // namespace

void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, int optLevel,
                    const CodegenOptions &opts) {
  m.setTargetTriple(tm.getTargetTriple().str());
  m.setDataLayout(tm.createDataLayout());
  for (llvm::Function &fn : m) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", tm.getTargetCPU());
    if (!tm.getTargetFeatureString().empty())
      fn.addFnAttr("target-features", tm.getTargetFeatureString());
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  // The bisection gate: optional passes past the limit are skipped (required ones always run).
  // The logs may be shared by modules optimized on several threads.
  llvm::PassInstrumentationCallbacks pic;
  int64_t invocations = 0;
  static std::mutex logMutex;
  auto unitOf = [](const llvm::Any &ir) -> std::string {
    if (const auto *fn = llvm::any_cast<const llvm::Function *>(&ir))
      return (*fn)->getName().str();
    if (const auto *lp = llvm::any_cast<const llvm::Loop *>(&ir))
      return (*lp)->getHeader()->getParent()->getName().str() + " (loop)";
    return "module";
  };
  if (opts.llvmPassLimit >= 0 || opts.llvmPassLog)
    pic.registerShouldRunOptionalPassCallback([&](llvm::StringRef pass, llvm::Any ir) {
      if (opts.llvmPassLog) {
        std::lock_guard<std::mutex> lock(logMutex);
        opts.llvmPassLog->push_back(pass.str() + " on " + unitOf(ir));
      }
      return opts.llvmPassLimit < 0 || invocations++ < opts.llvmPassLimit;
    });
  // A pass that preserved every analysis changed nothing; pass managers and adaptors only
  // forward to the passes they hold, and analysis invalidation changes no IR.
  if (opts.llvmPassChanges)
    pic.registerAfterPassCallback(
        [&](llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses &pa) {
          if (pa.areAllPreserved() || pass.contains("PassManager") || pass.contains("Adaptor") ||
              pass.contains("Proxy") || pass.starts_with("InvalidateAnalysisPass") ||
              pass.starts_with("RequireAnalysisPass"))
            return;
          std::lock_guard<std::mutex> lock(logMutex);
          opts.llvmPassChanges->push_back(pass.str() + " on " + unitOf(ir));
        });
  if (!opts.faultAfterPass.empty())
    pic.registerAfterPassCallback(
        [&](llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses &) {
          if (pass != opts.faultAfterPass)
            return;
          const llvm::Function *fn = nullptr;
          if (const auto *f = llvm::any_cast<const llvm::Function *>(&ir))
            fn = *f;
          else if (const auto *lp = llvm::any_cast<const llvm::Loop *>(&ir))
            fn = (*lp)->getHeader()->getParent();
          if (fn && !fn->getName().ends_with("_packed"))
            addOneToLastFloatStore(const_cast<llvm::Function &>(*fn));
        });
  llvm::PassBuilder pb(&tm, pto, std::nullopt, &pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

} // namespace strata::codegen
