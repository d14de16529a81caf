// AOT output: module with kernels + plan + weights, then assembly/object/shared library.
#include "strata/driver/Aot.h"
#include "strata/support/Error.h"

#include "strata/codegen/KernelModule.h"
#include "strata/codegen/Target.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

#include "StrataModelHeader.inc"

namespace strata::driver {

using namespace strata::runtime;

namespace {

// Every defined symbol hidden: the runtime archive's strata_* API is all the library exports.
void hideSymbols(llvm::Module &m) {
  for (llvm::GlobalValue &gv : m.global_values())
    if (!gv.hasLocalLinkage() && (!gv.isDeclaration() || gv.getName().ends_with("_packed")))
      gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
}

// The kernel table (declaring the kernels unless `withKernels`), the plan text and (unless
// `withWeights` is false) the weights.
llvm::Error buildModule(const Program &prog, llvm::Module &m, bool withKernels, bool withWeights) {
  llvm::LLVMContext &ctx = m.getContext();
  codegen::CodegenOptions co;
  co.noalias = true;
  if (withKernels) {
    if (llvm::Error err = codegen::emitKernelModule(prog.kernels, m, co, "strata_aot_kernels"))
      return err;
  } else {
    codegen::emitKernelTable(prog.kernels, m, "strata_aot_kernels");
  }
  std::string planText = printPlan(prog.plan);
  auto *plan = llvm::ConstantDataArray::getString(ctx, planText, /*AddNull=*/true);
  new llvm::GlobalVariable(m, plan->getType(), true, llvm::GlobalValue::ExternalLinkage, plan,
                           "strata_aot_plan");
  int64_t bytes = std::max<int64_t>(prog.plan.weightsBytes, 64);
  auto *weightsTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), bytes);
  llvm::Constant *init = nullptr;
  if (withWeights)
    init = llvm::ConstantDataArray::getRaw(
        llvm::StringRef(reinterpret_cast<const char *>(prog.weights.get()), bytes), bytes,
        llvm::Type::getInt8Ty(ctx));
  auto *weights = new llvm::GlobalVariable(m, weightsTy, true, llvm::GlobalValue::ExternalLinkage,
                                           init, "strata_aot_weights");
  weights->setAlignment(llvm::Align(64));
  // The table's length and the weights' size, apart from the plan that also states them: the
  // C API checks one against the other (parseLibraryPlan).
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *sizesTy = llvm::ArrayType::get(i64, 2);
  new llvm::GlobalVariable(
      m, sizesTy, true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantArray::get(sizesTy, {llvm::ConstantInt::get(i64, prog.kernels.size()),
                                         llvm::ConstantInt::get(i64, bytes)}),
      "strata_aot_sizes");
  hideSymbols(m);
  return llvm::Error::success();
}

// File outputs are written to a temporary next to `path` and renamed into place once complete,
// so a failed or interrupted write never leaves a partial file at `path` ("-" is stdout).
std::string stagingPath(const std::string &path) {
  return path == "-" ? path : path + ".tmp." + std::to_string(::getpid());
}
llvm::Error commitStaged(const std::string &staged, const std::string &path) {
  if (staged == path)
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::rename(staged, path)) {
    llvm::sys::fs::remove(staged);
    return makeError("cannot write " + path + ": " + ec.message());
  }
  return llvm::Error::success();
}

// Writes `path` (staged, see above). A plain stream rather than ToolOutputFile: that
// registers the file for removal on signals, which installs LLVM's signal handlers and an
// alternate signal stack on the calling thread (worker threads here; ASan then fails to unmap
// the stack when the thread exits).
llvm::Error emitMachineCode(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType type,
                            const std::string &path) {
  std::error_code ec;
  llvm::Error err = llvm::Error::success();
  const std::string staged = stagingPath(path);
  {
    llvm::raw_fd_ostream out(staged, ec,
                             type == llvm::CodeGenFileType::AssemblyFile ? llvm::sys::fs::OF_Text
                                                                         : llvm::sys::fs::OF_None);
    if (ec)
      return makeError("cannot write " + path + ": " + ec.message());
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, out, nullptr, type)) {
      err = makeError("the target cannot emit this file type");
    } else {
      pm.run(m);
      out.flush();
      if (out.has_error()) {
        out.clear_error();
        err = makeError("cannot write " + path);
      }
    }
  }
  if (err) {
    if (staged != "-")
      llvm::sys::fs::remove(staged);
    return err;
  }
  return commitStaged(staged, path);
}

llvm::Error linkSharedLibrary(const std::vector<std::string> &objects, const std::string &archive,
                              const std::string &out, const std::string &soname) {
  const char *cxxEnv = std::getenv("CXX");
  std::string cxxName = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  auto cxx = llvm::sys::findProgramByName(cxxName);
  if (!cxx)
    return makeError("cannot find the C++ compiler '" + cxxName + "' to link " + out);
  // The C++ runtime is linked in statically so the library needs nothing beyond libc; a version
  // script keeps the exported symbols to the strata_* API.
  std::string script = out + ".exports";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return makeError("cannot write " + script + ": " + ec.message());
    os << "{ global: strata_*; local: *; };\n";
  }
  std::vector<std::string> args = {*cxx,
                                   "-shared",
                                   "-o",
                                   out,
                                   // Every member: nothing in the objects references the API.
                                   "-Wl,--whole-archive",
                                   archive,
                                   "-Wl,--no-whole-archive",
                                   "-static-libstdc++",
                                   "-static-libgcc",
                                   "-Wl,-S", // no debug info: the archive's is of no use to users
                                   "-Wl,--version-script=" + script,
                                   "-Wl,-soname," + soname,
                                   "-lm",
                                   "-lpthread"};
  args.insert(args.begin() + 4, objects.begin(), objects.end());
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string errMsg;
  std::string log = out + ".link.log";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  int rc = llvm::sys::ExecuteAndWait(*cxx, argRefs, std::nullopt, redirects, 0, 0, &errMsg);
  std::string output;
  if (auto buf = llvm::MemoryBuffer::getFile(log))
    output = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(log);
  llvm::sys::fs::remove(script);
  if (rc != 0)
    return makeError("linking " + out + " failed (" + *cxx + " exit " + std::to_string(rc) + "): " +
                     (errMsg.empty() ? output : errMsg));
  return llvm::Error::success();
}

} // namespace

llvm::Error writeAot(const Program &prog, AotOptions opts, AotOutput kind, const std::string &path) {
  auto spec = codegen::resolveTarget(opts.target);
  if (!spec)
    return spec.takeError();
  auto tm = codegen::createTargetMachine(*spec);
  if (!tm)
    return tm.takeError();
  bool textual = kind == AotOutput::LLVM || kind == AotOutput::Asm;
  if (kind != AotOutput::SharedLibrary) {
    // One module: readable text, or one object file.
    llvm::LLVMContext ctx;
    llvm::Module m("strata_model", ctx);
    if (llvm::Error err = buildModule(prog, m, /*withKernels=*/true, !textual))
      return err;
    codegen::optimizeModule(m, **tm, opts.optLevel);
    if (kind == AotOutput::LLVM) {
      std::error_code ec;
      const std::string staged = stagingPath(path);
      {
        llvm::raw_fd_ostream os(staged, ec, llvm::sys::fs::OF_Text);
        if (ec)
          return makeError("cannot write " + path + ": " + ec.message());
        m.print(os, nullptr);
        os.flush();
        if (os.has_error()) {
          os.clear_error();
          if (staged != "-")
            llvm::sys::fs::remove(staged);
          return makeError("cannot write " + path);
        }
      }
      return commitStaged(staged, path);
    }
    return emitMachineCode(m, **tm,
                           kind == AotOutput::Asm ? llvm::CodeGenFileType::AssemblyFile
                                                  : llvm::CodeGenFileType::ObjectFile,
                           path);
  }

  std::string archive = opts.runtimeArchive;
  if (archive.empty()) {
    const char *env = std::getenv("STRATA_AOT_RT");
    archive = env && *env ? env : STRATA_AOT_RT_PATH;
  }
  if (!llvm::sys::fs::exists(archive))
    return makeError("runtime archive " + archive + " not found (set STRATA_AOT_RT)");
  // A library: kernels optimized and compiled to objects on every core, one module per thread,
  // plus one object with the table, plan and weights. Objects and library go to temporary names
  // first: an error leaves nothing at `path`.
  codegen::CodegenOptions co;
  co.noalias = true;
  auto parts = codegen::buildKernelModules(prog.kernels, co, *spec, opts.optLevel);
  if (!parts)
    return parts.takeError();
  std::vector<std::string> objects;
  for (size_t i = 0; i < parts->size(); ++i)
    objects.push_back(path + ".tmp." + std::to_string(i) + ".o");
  objects.push_back(path + ".tmp.o");
  std::vector<std::string> errors(objects.size());
  auto emitPart = [&](size_t i) {
    codegen::KernelModule &km = (*parts)[i];
    hideSymbols(*km.module);
    auto partTm = codegen::createTargetMachine(*spec);
    llvm::Error err = partTm ? emitMachineCode(*km.module, **partTm,
                                               llvm::CodeGenFileType::ObjectFile, objects[i])
                             : partTm.takeError();
    if (err)
      errors[i] = llvm::toString(std::move(err));
  };
  std::vector<std::thread> workers;
  for (size_t i = 1; i < parts->size(); ++i)
    workers.emplace_back(emitPart, i);
  if (!parts->empty())
    emitPart(0);
  {
    llvm::LLVMContext ctx;
    llvm::Module m("strata_model", ctx);
    llvm::Error err = buildModule(prog, m, /*withKernels=*/false, /*withWeights=*/true);
    if (!err) {
      codegen::optimizeModule(m, **tm, 0);
      err = emitMachineCode(m, **tm, llvm::CodeGenFileType::ObjectFile, objects.back());
    }
    if (err)
      errors.back() = llvm::toString(std::move(err));
  }
  for (std::thread &t : workers)
    t.join();
  std::string library = path + ".tmp";
  llvm::Error err = llvm::Error::success();
  for (const std::string &e : errors)
    if (!e.empty() && !err)
      err = makeError(e);
  if (!err)
    err = linkSharedLibrary(objects, archive, library, llvm::sys::path::filename(path).str());
  for (const std::string &o : objects)
    llvm::sys::fs::remove(o);
  if (!err)
    if (std::error_code ec = llvm::sys::fs::rename(library, path))
      err = makeError("cannot write " + path + ": " + ec.message());
  if (err)
    llvm::sys::fs::remove(library);
  return err;
}

llvm::Error writeLibraryWithHeader(const Program &prog, const AotOptions &opts,
                                   const std::string &path) {
  if (llvm::Error err = writeAot(prog, opts, AotOutput::SharedLibrary, path))
    return err;
  llvm::SmallString<256> header(path);
  llvm::sys::path::replace_extension(header, ".h");
  const std::string headerPath(header), staged = stagingPath(headerPath);
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(staged, ec, llvm::sys::fs::OF_Text);
    if (!ec) {
      os << aotHeader(prog.plan, llvm::sys::path::filename(path).str());
      os.flush();
      if (os.has_error()) {
        os.clear_error();
        ec = std::make_error_code(std::errc::io_error);
      }
    }
  }
  llvm::Error err = ec ? makeError("cannot write " + headerPath + ": " + ec.message())
                       : commitStaged(staged, headerPath);
  if (err) {
    llvm::sys::fs::remove(staged);
    llvm::sys::fs::remove(path);
  }
  return err;
}

std::string aotHeader(const Plan &plan, const std::string &libraryName) {
  std::string h = "/* Generated by `strata compile` for " + libraryName +
                  ". The model's interface:\n";
  auto describe = [&](const char *what, const std::vector<PlanTensor> &ts) {
    for (size_t i = 0; i < ts.size(); ++i) {
      std::string dims;
      for (const PlanDim &d : ts[i].dims)
        dims += (dims.empty() ? "" : ", ") +
                (d.isStatic() ? std::to_string(d.size) : plan.symbols[d.symbol]);
      h += fmt::format(" *   {} {} '{}': {} [{}]\n", what, i, ts[i].name, dtypeName(ts[i].dtype),
                       dims);
    }
  };
  describe("input", plan.inputs);
  describe("output", plan.outputs);
  h += " * Symbolic dims (names above) are bound by the inputs of each run. */\n";
  h += "#ifndef STRATA_GENERATED_MODEL_H\n#define STRATA_GENERATED_MODEL_H\n\n";
  h += kStrataModelHeader;
  h += fmt::format("\n#define STRATA_MODEL_NUM_INPUTS {}\n#define STRATA_MODEL_NUM_OUTPUTS {}\n",
                   plan.inputs.size(), plan.outputs.size());
  h += "\n#endif /* STRATA_GENERATED_MODEL_H */\n";
  return h;
}

} // namespace strata::driver
