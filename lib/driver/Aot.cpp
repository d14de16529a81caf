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
#include "llvm/Support/raw_ostream.h"

#include "lld/Common/Driver.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fmt/format.h>
#include <link.h>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "StrataModelHeader.inc"

LLD_HAS_DRIVER(elf)

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
llvm::Error buildModule(const Program &prog, llvm::Module &m, bool withKernels, bool withWeights,
                        const std::vector<size_t> *shared = nullptr) {
  llvm::LLVMContext &ctx = m.getContext();
  codegen::CodegenOptions co;
  co.noalias = true;
  if (withKernels) {
    if (llvm::Error err = codegen::emitKernelModule(prog.kernels, m, co, "strata_aot_kernels"))
      return err;
  } else {
    codegen::emitKernelTable(prog.kernels, m, "strata_aot_kernels", shared);
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

// An ELF64 x86-64 relocatable object holding `size` bytes at `data` as the 64-byte aligned
// global `symbol` in a read-only section of its own. The weights go into the library this way
// rather than as an LLVM constant: building and emitting a 100 MB constant through LLVM (hashed,
// copied into the IR, then into MC's fragments) took ~1 s for resnet50; this is one write.
llvm::Error writeDataObject(const std::string &path, const uint8_t *data, uint64_t size,
                            llvm::StringRef symbol) {
  const std::string strtab = std::string(1, '\0') + symbol.str() + '\0';
  static constexpr char kSectionNames[] = "\0.rodata.strata_weights\0.symtab\0.strtab\0.shstrtab";
  const std::string shstrtab(kSectionNames, sizeof kSectionNames); // with the final NUL
  const uint64_t dataOffset = 64; // right after the header, 64-byte aligned
  const uint64_t symtabOffset = (dataOffset + size + 7) / 8 * 8;
  const uint64_t symtabSize = 2 * sizeof(Elf64_Sym);
  const uint64_t strtabOffset = symtabOffset + symtabSize;
  const uint64_t shstrtabOffset = strtabOffset + strtab.size();
  const uint64_t shOffset = (shstrtabOffset + shstrtab.size() + 7) / 8 * 8;

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
  eh.e_type = ET_REL;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = shOffset;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;

  Elf64_Sym syms[2]{};
  syms[1].st_name = 1;
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
  syms[1].st_shndx = 1;
  syms[1].st_size = size;

  Elf64_Shdr sh[5]{};
  sh[1].sh_name = 1; // .rodata.strata_weights
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_flags = SHF_ALLOC;
  sh[1].sh_offset = dataOffset;
  sh[1].sh_size = size;
  sh[1].sh_addralign = 64;
  sh[2].sh_name = 24; // .symtab
  sh[2].sh_type = SHT_SYMTAB;
  sh[2].sh_offset = symtabOffset;
  sh[2].sh_size = symtabSize;
  sh[2].sh_link = 3;
  sh[2].sh_info = 1; // the first global symbol
  sh[2].sh_addralign = 8;
  sh[2].sh_entsize = sizeof(Elf64_Sym);
  sh[3].sh_name = 32; // .strtab
  sh[3].sh_type = SHT_STRTAB;
  sh[3].sh_offset = strtabOffset;
  sh[3].sh_size = strtab.size();
  sh[3].sh_addralign = 1;
  sh[4].sh_name = 40; // .shstrtab
  sh[4].sh_type = SHT_STRTAB;
  sh[4].sh_offset = shstrtabOffset;
  sh[4].sh_size = shstrtab.size();
  sh[4].sh_addralign = 1;

  const std::string staged = stagingPath(path);
  std::error_code ec;
  {
    llvm::raw_fd_ostream out(staged, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError("cannot write " + path + ": " + ec.message());
    auto pad = [&out](uint64_t to) {
      while (static_cast<uint64_t>(out.tell()) < to)
        out << '\0';
    };
    out.write(reinterpret_cast<const char *>(&eh), sizeof eh);
    pad(dataOffset);
    out.write(reinterpret_cast<const char *>(data), size);
    pad(symtabOffset);
    out.write(reinterpret_cast<const char *>(syms), sizeof syms);
    out << strtab << shstrtab;
    pad(shOffset);
    out.write(reinterpret_cast<const char *>(sh), sizeof sh);
    out.flush();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(staged);
      return makeError("cannot write " + path);
    }
  }
  return commitStaged(staged, path);
}

// The C library objects a library links against, as this process loaded them: libc, libm and
// the dynamic loader (__tls_get_addr). Found through the loaded objects rather than a search path,
// so no compiler or development package is needed on the machine.
struct SystemLibraries {
  std::string libc, libm, loader;
};

SystemLibraries loadedSystemLibraries() {
  SystemLibraries libs;
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        auto *l = static_cast<SystemLibraries *>(data);
        llvm::StringRef path(info->dlpi_name ? info->dlpi_name : "");
        llvm::StringRef name = llvm::sys::path::filename(path);
        if (name.starts_with("libc.so.") && l->libc.empty())
          l->libc = path.str();
        else if (name.starts_with("libm.so.") && l->libm.empty())
          l->libm = path.str();
        else if (name.starts_with("ld-linux") && l->loader.empty())
          l->loader = path.str();
        return 0;
      },
      &libs);
  return libs;
}

// LLD's driver keeps global state: one link at a time.
std::mutex &linkerMutex() {
  static std::mutex m;
  return m;
}

// Links with LLD in this process (no compiler or linker on the machine needed): the objects and
// the runtime object (the runtime, its C API and the static C++ runtime, prelinked by the build)
// into a library that needs only libc and libm; a version script exports the strata_* API only.
llvm::Error linkSharedLibrary(const std::vector<std::string> &objects, const std::string &runtime,
                              const std::string &out, const std::string &soname) {
  SystemLibraries libs = loadedSystemLibraries();
  if (libs.libc.empty() || libs.libm.empty())
    return makeError("linking " + out + ": cannot find the libc and libm this process loaded");
  std::string script = out + ".exports";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return makeError("cannot write " + script + ": " + ec.message());
    os << "{ global: strata_*; local: *; };\n";
  }
  std::vector<std::string> args = {"ld.lld",
                                   "-shared",
                                   "-o",
                                   out,
                                   "--eh-frame-hdr",
                                   "--hash-style=gnu",
                                   "--build-id",
                                   "-z",
                                   "relro",
                                   "-z",
                                   "now",
                                   "--strip-debug", // the runtime's debug info is of no use
                                   "--version-script=" + script,
                                   "-soname",
                                   soname};
  args.insert(args.end(), objects.begin(), objects.end());
  args.push_back(runtime);
  args.push_back("--as-needed");
  for (const std::string *lib : {&libs.libm, &libs.libc, &libs.loader})
    if (!lib->empty())
      args.push_back(*lib);
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::string messages;
  lld::Result result{1, true};
  {
    std::lock_guard<std::mutex> lock(linkerMutex());
    llvm::raw_string_ostream outs(messages), errs(messages);
    result = lld::lldMain(argv, outs, errs, {{lld::Gnu, &lld::elf::link}});
  }
  llvm::sys::fs::remove(script);
  if (result.retCode != 0 || !result.canRunAgain) {
    llvm::sys::fs::remove(out);
    return makeError("linking " + out + " failed (lld): " + llvm::StringRef(messages).trim().str());
  }
  return llvm::Error::success();
}

// The runtime object (lib/CMakeLists.txt, strata_aot_rt.o): $STRATA_AOT_RT, else next to the
// code of this process, found relative to the binary or extension that holds it: lib/strata/ of
// an installed prefix (bin/strata, lib/python3/dist-packages/strata/_strata*.so) or lib/ of the
// build tree (bin/strata, python/strata/_strata*.so).
std::string locateCode() {
  static char marker;
  Dl_info info;
  struct link_map *map = nullptr;
  if (dladdr1(&marker, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) && map &&
      map->l_name && *map->l_name) {
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(map->l_name, real))
      return std::string(real);
  }
  return llvm::sys::fs::getMainExecutable(nullptr, &marker);
}

// Resolved when the binary or extension is loaded, before its user can change directory.
const std::string kCodeLocation = locateCode();

// The first existing of: `explicitPath`, $STRATA_AOT_RT, the candidates next to the code; every
// path looked at goes to `tried`. Empty when none exists.
std::string findRuntimeObject(const std::string &explicitPath, std::vector<std::string> &tried) {
  auto found = [&](const std::string &path) {
    tried.push_back(path);
    return llvm::sys::fs::exists(path);
  };
  if (!explicitPath.empty())
    return found(explicitPath) ? explicitPath : "";
  if (const char *env = std::getenv("STRATA_AOT_RT"); env && *env)
    return found(env) ? env : "";
  llvm::SmallString<256> dir(kCodeLocation);
  llvm::sys::path::remove_filename(dir);
  for (int up = 0; up < 5 && !dir.empty(); ++up) {
    for (const char *rel : {"lib/strata/strata_aot_rt.o", "lib/strata_aot_rt.o"}) {
      llvm::SmallString<256> candidate(dir);
      llvm::sys::path::append(candidate, rel);
      if (found(std::string(candidate)))
        return std::string(candidate);
    }
    llvm::sys::path::remove_filename(dir);
  }
  return "";
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

  std::vector<std::string> tried;
  const std::string runtime = findRuntimeObject(opts.runtimeObject, tried);
  if (runtime.empty()) {
    std::string where;
    for (const std::string &t : tried)
      where += (where.empty() ? "" : ", ") + t;
    return makeError("runtime object strata_aot_rt.o not found (looked at: " +
                     (where.empty() ? std::string("nothing") : where) +
                     "; set STRATA_AOT_RT to its path)");
  }
  // A library: kernels optimized and compiled to objects on every core, one module per thread,
  // plus one object with the table, plan and weights. Objects and library go to temporary names
  // first: an error leaves nothing at `path`.
  codegen::CodegenOptions co;
  co.noalias = true;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  AotTimings timings;
  Clock::time_point phase = Clock::now();
  // Kernels with the same loop IR share one function (codegen::sharedKernels).
  std::vector<size_t> shared = codegen::sharedKernels(prog.kernels);
  auto parts = codegen::buildKernelModules(prog.kernels, co, *spec, opts.optLevel, 0, &shared);
  if (!parts)
    return parts.takeError();
  timings.optimizeMs = ms(phase);
  phase = Clock::now();
  std::vector<std::string> objects;
  for (size_t i = 0; i < parts->size(); ++i)
    objects.push_back(path + ".tmp." + std::to_string(i) + ".o");
  objects.push_back(path + ".tmp.o");
  std::vector<std::string> errors(objects.size());
  const std::string weightsObject = path + ".tmp.weights.o";
  objects.push_back(weightsObject); // written with the model's object (errors.back())
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
    // The table and plan through LLVM; the weights written as an object of their own.
    llvm::LLVMContext ctx;
    llvm::Module m("strata_model", ctx);
    llvm::Error err = buildModule(prog, m, /*withKernels=*/false, /*withWeights=*/false, &shared);
    if (!err) {
      codegen::optimizeModule(m, **tm, 0);
      err = emitMachineCode(m, **tm, llvm::CodeGenFileType::ObjectFile, objects[parts->size()]);
    }
    if (!err) {
      // At least 64 bytes, as buildModule declares them.
      uint8_t small[64] = {};
      const uint8_t *data = prog.weights.get();
      uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(prog.plan.weightsBytes, 0));
      if (bytes < sizeof small) {
        if (bytes && data)
          std::memcpy(small, data, bytes);
        data = small;
        bytes = sizeof small;
      }
      err = writeDataObject(weightsObject, data, bytes, "strata_aot_weights");
    }
    if (err)
      errors.back() = llvm::toString(std::move(err));
  }
  for (std::thread &t : workers)
    t.join();
  timings.codegenMs = ms(phase);
  phase = Clock::now();
  std::string library = path + ".tmp";
  llvm::Error err = llvm::Error::success();
  for (const std::string &e : errors)
    if (!e.empty() && !err)
      err = makeError(e);
  if (!err)
    err = linkSharedLibrary(objects, runtime, library, llvm::sys::path::filename(path).str());
  timings.linkMs = ms(phase);
  if (opts.timings)
    *opts.timings = timings;
  for (const std::string &o : objects)
    llvm::sys::fs::remove(o);
  if (!err)
    if (std::error_code ec = llvm::sys::fs::rename(library, path))
      err = makeError("cannot write " + path + ": " + ec.message());
  if (err)
    llvm::sys::fs::remove(library);
  return err;
}

const std::string &codeLocation() { return kCodeLocation; }

llvm::Error compileLibrary(Graph &g, const CompileOptions &opts, const std::string &path,
                           bool withHeader) {
  auto po = programOptions(opts);
  if (!po)
    return po.takeError();
  auto prog = buildProgram(g, *po);
  if (!prog)
    return prog.takeError();
  AotOptions ao;
  ao.target = opts.target;
  ao.optLevel = opts.optLevel;
  return withHeader ? writeLibraryWithHeader(*prog, ao, path)
                    : writeAot(*prog, ao, AotOutput::SharedLibrary, path);
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
