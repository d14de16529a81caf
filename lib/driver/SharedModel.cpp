#include "strata/driver/SharedModel.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/Sanitizers.h"

#include "strata/strata_model.h"

#include <cstring>
#include <dlfcn.h>

namespace strata::driver {


struct SharedModel::Api {
#define STRATA_API_FUNCTIONS(X)                                                                    \
  X(strata_abi_version)                                                                            \
  X(strata_last_error)                                                                             \
  X(strata_model_create)                                                                           \
  X(strata_model_destroy)                                                                          \
  X(strata_model_num_inputs)                                                                       \
  X(strata_model_num_outputs)                                                                      \
  X(strata_model_input_name)                                                                       \
  X(strata_model_output_name)                                                                      \
  X(strata_model_input_dtype)                                                                      \
  X(strata_model_output_dtype)                                                                     \
  X(strata_model_input_rank)                                                                       \
  X(strata_model_output_rank)                                                                      \
  X(strata_model_input_dim)                                                                        \
  X(strata_model_output_dim)                                                                       \
  X(strata_model_input_dim_name)                                                                   \
  X(strata_model_output_dim_name)                                                                  \
  X(strata_model_run)                                                                              \
  X(strata_model_output_data)                                                                      \
  X(strata_model_output_shape)                                                                     \
  X(strata_model_arena_bytes)
#define X(name) decltype(&::name) name = nullptr;
  STRATA_API_FUNCTIONS(X)
#undef X
};

namespace {} // namespace

llvm::Expected<std::unique_ptr<SharedModel>> SharedModel::open(const std::string &path,
                                                               unsigned threads) {
  std::unique_ptr<SharedModel> m(new SharedModel());
  m->path_ = path;
  // A path without a slash would be searched in the library path: make it explicit.
  std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  m->handle_ = ::dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_)
    return makeError(path + ": cannot load: " + ::dlerror());
  m->api_ = std::make_unique<Api>();
#define X(name)                                                                                    \
  m->api_->name = reinterpret_cast<decltype(&::name)>(::dlsym(m->handle_, #name));                \
  if (!m->api_->name)                                                                              \
    return makeError(path + ": not a strata model library (no symbol " #name ")");
  STRATA_API_FUNCTIONS(X)
#undef X
  const Api &a = *m->api_;
  // Versions only add functions: every library from version 1 up to this header's runs through
  // the version-1 functions used here.
  if (int v = a.strata_abi_version(); v < 1 || v > STRATA_ABI_VERSION)
    return makeError(path + ": library ABI version " + std::to_string(v) + ", expected 1 to " +
                     std::to_string(STRATA_ABI_VERSION));
  if (a.strata_abi_version() >= 4) {
    m->runInto_ = ::dlsym(m->handle_, "strata_model_run_into");
    if (!m->runInto_)
      return makeError(path + ": not a strata model library (no symbol strata_model_run_into)");
  }
  strata_model *model = a.strata_model_create(static_cast<int>(threads));
  if (!model)
    return makeError(path + ": " + a.strata_last_error());
  m->model_ = model;
  // The process's run-time limits (`strata run --limit`) apply to the library too; libraries
  // before ABI 3 keep the defaults they were built with.
  if (a.strata_abi_version() >= 3) {
    using SetLimit = int (*)(strata_model *, const char *, int64_t);
    auto setLimit = reinterpret_cast<SetLimit>(::dlsym(m->handle_, "strata_model_set_limit"));
    if (!setLimit)
      return makeError(path + ": not a strata model library (no symbol strata_model_set_limit)");
    const Limits limits = processLimits();
    for (const LimitInfo &l : limitTable())
      if (l.runTime && setLimit(model, l.name, limits.*l.field) != 0)
        return makeError(path + ": " + a.strata_last_error());
  }
  auto describe = [&](bool input, int i) {
    IOSpec s;
    s.name = input ? a.strata_model_input_name(model, i) : a.strata_model_output_name(model, i);
    s.type.dtype = static_cast<DType>(input ? a.strata_model_input_dtype(model, i)
                                            : a.strata_model_output_dtype(model, i));
    int rank = input ? a.strata_model_input_rank(model, i) : a.strata_model_output_rank(model, i);
    for (int d = 0; d < rank; ++d) {
      int64_t size = input ? a.strata_model_input_dim(model, i, d)
                           : a.strata_model_output_dim(model, i, d);
      const char *sym = input ? a.strata_model_input_dim_name(model, i, d)
                              : a.strata_model_output_dim_name(model, i, d);
      s.type.dims.push_back(sym ? Dim::sym(sym) : Dim(size));
    }
    return s;
  };
  using DecidesSizes = int (*)(const strata_model *, int);
  DecidesSizes decides = nullptr;
  if (a.strata_abi_version() >= 5) {
    decides = reinterpret_cast<DecidesSizes>(
        ::dlsym(m->handle_, "strata_model_input_decides_sizes"));
    if (!decides)
      return makeError(path + ": not a strata model library (no symbol "
                              "strata_model_input_decides_sizes)");
  }
  for (int i = 0, n = a.strata_model_num_inputs(model); i < n; ++i) {
    m->inputs_.push_back(describe(true, i));
    m->inputs_.back().decidesSizes = decides && decides(model, i) == 1;
  }
  for (int i = 0, n = a.strata_model_num_outputs(model); i < n; ++i)
    m->outputs_.push_back(describe(false, i));
  return m;
}

SharedModel::~SharedModel() {
  if (model_)
    api_->strata_model_destroy(static_cast<strata_model *>(model_));
#if !defined(STRATA_ADDRESS_SANITIZER)
  // Under AddressSanitizer the library stays mapped: the libstdc++ linked into it allocates its
  // 72 KB exception emergency pool when loaded and never frees it, so unloading would make
  // LeakSanitizer report that pool (from an unknown module) as strata's leak.
  if (handle_)
    ::dlclose(handle_);
#endif
}

llvm::Expected<std::vector<Tensor>> SharedModel::run(const std::vector<Tensor> &inputs) {
  const Api &a = *api_;
  auto *model = static_cast<strata_model *>(model_);
  std::vector<strata_tensor> views;
  for (const Tensor &t : inputs)
    views.push_back({t.rawData(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.rank()),
                     t.shape().data()});
  if (a.strata_model_run(model, views.data(), static_cast<int>(views.size())) != 0)
    return makeError(std::string("aot: ") + a.strata_last_error());
  std::vector<Tensor> outputs;
  try {
    for (size_t o = 0; o < outputs_.size(); ++o) {
      const int64_t *shape = a.strata_model_output_shape(model, static_cast<int>(o));
      Shape s(shape, shape + outputs_[o].type.rank());
      Tensor t(outputs_[o].type.dtype, s);
      if (size_t n = t.byteSize())
        std::memcpy(t.rawData(), a.strata_model_output_data(model, static_cast<int>(o)), n);
      outputs.push_back(std::move(t));
    }
  } catch (const std::exception &e) { // the library's limits may exceed this process's
    return makeError(std::string("aot: output: ") + e.what());
  }
  return outputs;
}

llvm::Error SharedModel::runInto(const std::vector<Tensor> &inputs,
                                 const OutputAllocator &allocate) {
  if (!runInto_) { // an older library: its buffers, copied once
    auto outs = run(inputs);
    if (!outs)
      return outs.takeError();
    for (size_t o = 0; o < outs->size(); ++o) {
      const Tensor &t = (*outs)[o];
      auto at = allocate(o, t.dtype(), t.shape());
      if (!at)
        return at.takeError();
      if (size_t n = t.byteSize())
        std::memcpy(*at, t.rawData(), n);
    }
    return llvm::Error::success();
  }
  std::vector<strata_tensor> views;
  for (const Tensor &t : inputs)
    views.push_back({t.rawData(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.rank()),
                     t.shape().data()});
  struct Call {
    const OutputAllocator *allocate;
    llvm::Error error = llvm::Error::success();
  } call{&allocate};
  auto trampoline = [](void *user, int index, int32_t dtype, int32_t rank,
                       const int64_t *shape) -> void * {
    auto *c = static_cast<Call *>(user);
    auto at = (*c->allocate)(static_cast<size_t>(index), static_cast<DType>(dtype),
                             std::vector<int64_t>(shape, shape + rank));
    if (!at) {
      c->error = at.takeError();
      return nullptr;
    }
    return *at;
  };
  auto runInto = reinterpret_cast<decltype(&::strata_model_run_into)>(runInto_);
  int rc = runInto(static_cast<strata_model *>(model_), views.data(),
                   static_cast<int>(views.size()), trampoline, &call);
  if (call.error)
    return std::move(call.error);
  if (rc != 0)
    return makeError(std::string("aot: ") + api_->strata_last_error());
  return llvm::Error::success();
}

int64_t SharedModel::arenaBytes() const {
  return api_->strata_model_arena_bytes(static_cast<strata_model *>(model_));
}

} // namespace strata::driver
