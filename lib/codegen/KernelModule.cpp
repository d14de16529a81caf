#include "strata/codegen/KernelModule.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"

namespace strata::codegen {

llvm::Error emitKernelModule(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                             const CodegenOptions &opts, llvm::StringRef tableName) {
  llvm::LLVMContext &ctx = m.getContext();
  std::vector<llvm::Constant *> entries;
  for (const loop::LoopFunction &f : kernels) {
    if (auto fn = emitLoopFunction(f, m, opts); !fn)
      return llvm::createStringError("kernel @" + f.name + ": " + llvm::toString(fn.takeError()));
    llvm::Function *packed = m.getFunction(f.name + "_packed");
    if (!packed)
      return llvm::createStringError("kernel @" + f.name + ": no packed trampoline");
    entries.push_back(packed);
  }
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *tableTy = llvm::ArrayType::get(ptrTy, entries.size());
  new llvm::GlobalVariable(m, tableTy, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableTy, entries), tableName);
  return llvm::Error::success();
}

} // namespace strata::codegen
