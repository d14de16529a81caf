// The C API of AOT libraries (include/strata/strata_model.h), linked into every library that
// `strata compile -o model.so` writes. The compiled object next to it defines the plan text, the
// kernel table and the weights (lib/driver/Aot.cpp names them); this file turns them into an
// Executor. Only the strata_* API functions are exported.
#include "strata/strata_model.h"

#include "strata/runtime/Executor.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#define STRATA_API extern "C" __attribute__((visibility("default")))

extern "C" {
extern const char strata_aot_plan[];
extern const uint8_t strata_aot_weights[];
extern void (*const strata_aot_kernels[])(void **);
extern const int64_t strata_aot_sizes[2]; // kernel table entries, weight bytes
}

using namespace strata;
using namespace strata::runtime;

// The state of runs: an executor context and the storage of its last run's outputs.
struct strata_context {
  const strata_model *model = nullptr;
  std::unique_ptr<RunContext> run;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<std::vector<int64_t>> outputShapes;
  bool lastRunOk = false; // outputs are readable only after a successful run
};

struct strata_model {
  std::unique_ptr<Executor> exec;
  strata_context own; // strata_model_run's
};

namespace {

thread_local std::string lastError;

int fail(const std::string &msg) {
  lastError = msg;
  return -1;
}

const PlanTensor *tensor(const strata_model *m, bool input, int index) {
  if (!m) {
    fail("null model");
    return nullptr;
  }
  const auto &list = input ? m->exec->plan().inputs : m->exec->plan().outputs;
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    fail(std::string(input ? "input" : "output") + " index " + std::to_string(index) +
         " out of range");
    return nullptr;
  }
  return &list[index];
}

const PlanDim *dimOf(const strata_model *m, bool input, int index, int dim) {
  const PlanTensor *t = tensor(m, input, index);
  if (!t)
    return nullptr;
  if (dim < 0 || static_cast<size_t>(dim) >= t->dims.size()) {
    fail("dim " + std::to_string(dim) + " out of range");
    return nullptr;
  }
  return &t->dims[dim];
}

} // namespace

STRATA_API int strata_abi_version(void) { return STRATA_ABI_VERSION; }
STRATA_API const char *strata_last_error(void) { return lastError.c_str(); }

STRATA_API strata_model *strata_model_create(int num_threads) {
  try {
    Plan plan;
    if (Status s =
            parseLibraryPlan(strata_aot_plan, strata_aot_sizes[0], strata_aot_sizes[1], plan)) {
      fail("corrupt model library: " + s.message());
      return nullptr;
    }
    std::vector<KernelFn> kernels(strata_aot_kernels, strata_aot_kernels + plan.numKernels);
    auto m = std::make_unique<strata_model>();
    m->exec = std::make_unique<Executor>(std::move(plan), std::move(kernels), strata_aot_weights,
                                         num_threads < 0 ? 0u : static_cast<unsigned>(num_threads));
    m->own.model = m.get();
    m->own.run = std::make_unique<RunContext>(*m->exec);
    return m.release();
  } catch (const std::exception &e) {
    fail(std::string("cannot create the model: ") + e.what());
    return nullptr;
  }
}

STRATA_API void strata_model_destroy(strata_model *m) { delete m; }

STRATA_API int strata_model_num_inputs(const strata_model *m) {
  return m ? static_cast<int>(m->exec->plan().inputs.size()) : fail("null model");
}
STRATA_API int strata_model_num_outputs(const strata_model *m) {
  return m ? static_cast<int>(m->exec->plan().outputs.size()) : fail("null model");
}
STRATA_API const char *strata_model_input_name(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, true, i);
  return t ? t->name.c_str() : nullptr;
}
STRATA_API const char *strata_model_output_name(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, false, i);
  return t ? t->name.c_str() : nullptr;
}
STRATA_API int strata_model_input_dtype(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, true, i);
  return t ? static_cast<int>(t->dtype) : -1;
}
STRATA_API int strata_model_output_dtype(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, false, i);
  return t ? static_cast<int>(t->dtype) : -1;
}
STRATA_API int strata_model_input_rank(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, true, i);
  return t ? static_cast<int>(t->dims.size()) : -1;
}
STRATA_API int strata_model_output_rank(const strata_model *m, int i) {
  const PlanTensor *t = tensor(m, false, i);
  return t ? static_cast<int>(t->dims.size()) : -1;
}
STRATA_API int strata_model_input_decides_sizes(const strata_model *m, int i) {
  if (!tensor(m, true, i))
    return -1;
  const auto &from = m->exec->plan().sizeInputs;
  return std::find(from.begin(), from.end(), static_cast<int64_t>(i)) != from.end() ? 1 : 0;
}
STRATA_API int64_t strata_model_input_dim(const strata_model *m, int i, int d) {
  const PlanDim *dim = dimOf(m, true, i, d);
  return dim && dim->isStatic() ? dim->size : -1;
}
STRATA_API int64_t strata_model_output_dim(const strata_model *m, int i, int d) {
  const PlanDim *dim = dimOf(m, false, i, d);
  return dim && dim->isStatic() ? dim->size : -1;
}
STRATA_API const char *strata_model_input_dim_name(const strata_model *m, int i, int d) {
  const PlanDim *dim = dimOf(m, true, i, d);
  return dim && !dim->isStatic() ? m->exec->plan().symbols[dim->symbol].c_str() : nullptr;
}
STRATA_API const char *strata_model_output_dim_name(const strata_model *m, int i, int d) {
  const PlanDim *dim = dimOf(m, false, i, d);
  return dim && !dim->isStatic() ? m->exec->plan().symbols[dim->symbol].c_str() : nullptr;
}

namespace {

// Runs in c; outputs go to c's own buffers, or where `allocate` says when it is given.
int runIn(strata_context *c, const strata_tensor *inputs, int num_inputs,
          strata_output_allocator allocate = nullptr, void *user = nullptr) {
  const Executor &exec = *c->model->exec;
  c->lastRunOk = false;
  if (num_inputs < 0 || (num_inputs > 0 && !inputs))
    return fail("no inputs given");
  try {
    std::vector<DType> dtypes;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<const void *> data;
    for (int i = 0; i < num_inputs; ++i) {
      const strata_tensor &t = inputs[i];
      if (t.dtype < STRATA_F32 || t.dtype > STRATA_BOOL)
        return fail("input " + std::to_string(i) + ": unknown dtype " + std::to_string(t.dtype));
      if (t.rank < 0 || (t.rank > 0 && !t.shape))
        return fail("input " + std::to_string(i) + ": bad rank or shape");
      dtypes.push_back(static_cast<DType>(t.dtype));
      shapes.emplace_back(t.shape, t.shape + t.rank);
      data.push_back(t.data);
    }
    if (Status s = exec.bind(*c->run, dtypes, shapes))
      return fail(s.message());
    for (int i = 0; i < num_inputs; ++i) {
      int64_t n = 1;
      for (int64_t d : shapes[i])
        n *= d;
      if (n > 0 && !data[i])
        return fail("input " + std::to_string(i) + ": null data");
    }
    const Plan &plan = exec.plan();
    if (allocate) { // the caller's memory, at the shapes the run produces
      auto give = [&](size_t o, const std::vector<int64_t> &shape) {
        return allocate(user, static_cast<int>(o), static_cast<int32_t>(plan.outputs[o].dtype),
                        static_cast<int32_t>(shape.size()), shape.data());
      };
      if (Status s = exec.run(*c->run, data.data(), give))
        return fail(s.message());
      return 0; // nothing kept: lastRunOk stays false
    }
    c->outputs.resize(plan.outputs.size());
    c->outputShapes.resize(plan.outputs.size());
    auto keep = [&](size_t o, const std::vector<int64_t> &shape) -> void * {
      size_t bytes = dtypeSize(plan.outputs[o].dtype);
      for (int64_t d : shape)
        bytes *= static_cast<size_t>(d);
      c->outputShapes[o] = shape;
      c->outputs[o].resize(std::max<size_t>(bytes, 1));
      return c->outputs[o].data();
    };
    if (Status s = exec.run(*c->run, data.data(), keep))
      return fail(s.message());
    c->lastRunOk = true;
    return 0;
  } catch (const std::exception &e) {
    return fail(std::string("run failed: ") + e.what());
  }
}

// Output i of c's last run, after checking c, i and that the run succeeded.
bool readable(const strata_context *c, int i) {
  if (!c) {
    fail("null context");
    return false;
  }
  if (!tensor(c->model, false, i))
    return false;
  if (!c->lastRunOk) {
    fail("the last run did not succeed");
    return false;
  }
  return true;
}

} // namespace

STRATA_API int strata_model_run(strata_model *m, const strata_tensor *inputs, int num_inputs) {
  return m ? runIn(&m->own, inputs, num_inputs) : fail("null model");
}

STRATA_API int strata_model_run_into(strata_model *m, const strata_tensor *inputs, int num_inputs,
                                     strata_output_allocator allocate, void *user) {
  if (!m)
    return fail("null model");
  if (!allocate)
    return fail("null allocator");
  return runIn(&m->own, inputs, num_inputs, allocate, user);
}

STRATA_API const void *strata_model_output_data(const strata_model *m, int i) {
  return m ? strata_context_output_data(&m->own, i) : (fail("null model"), nullptr);
}

STRATA_API const int64_t *strata_model_output_shape(const strata_model *m, int i) {
  return m ? strata_context_output_shape(&m->own, i) : (fail("null model"), nullptr);
}

STRATA_API int64_t strata_model_arena_bytes(const strata_model *m) {
  return m ? m->own.run->arenaBytes() : fail("null model");
}

STRATA_API strata_context *strata_context_create(const strata_model *m) {
  if (!m) {
    fail("null model");
    return nullptr;
  }
  try {
    auto c = std::make_unique<strata_context>();
    c->model = m;
    c->run = std::make_unique<RunContext>(*m->exec);
    return c.release();
  } catch (const std::exception &e) {
    fail(std::string("cannot create a context: ") + e.what());
    return nullptr;
  }
}

STRATA_API void strata_context_destroy(strata_context *c) { delete c; }

STRATA_API int strata_context_run(strata_context *c, const strata_tensor *inputs, int num_inputs) {
  return c ? runIn(c, inputs, num_inputs) : fail("null context");
}

STRATA_API int strata_context_run_into(strata_context *c, const strata_tensor *inputs,
                                       int num_inputs, strata_output_allocator allocate,
                                       void *user) {
  if (!c)
    return fail("null context");
  if (!allocate)
    return fail("null allocator");
  return runIn(c, inputs, num_inputs, allocate, user);
}

STRATA_API const void *strata_context_output_data(const strata_context *c, int i) {
  return readable(c, i) ? c->outputs[i].data() : nullptr;
}

STRATA_API const int64_t *strata_context_output_shape(const strata_context *c, int i) {
  return readable(c, i) ? c->outputShapes[i].data() : nullptr;
}

STRATA_API int64_t strata_context_arena_bytes(const strata_context *c) {
  return c ? c->run->arenaBytes() : fail("null context");
}

STRATA_API int strata_model_set_limit(strata_model *m, const char *name, int64_t value) {
  if (!m)
    return fail("null model");
  const LimitInfo *info = name ? findLimit(name) : nullptr;
  if (!info)
    return fail("unknown limit '" + std::string(name ? name : "(null)") + "'");
  if (!info->runTime)
    return fail(std::string("limit ") + info->name + " is fixed when the model is compiled");
  if (!m->exec->setLimit(info->field, value))
    return fail(std::string("limit ") + info->name + " must be non-negative, got " +
                std::to_string(value));
  return 0;
}

STRATA_API int64_t strata_model_limit(const strata_model *m, const char *name) {
  if (!m)
    return fail("null model");
  const LimitInfo *info = name ? findLimit(name) : nullptr;
  if (!info)
    return fail("unknown limit '" + std::string(name ? name : "(null)") + "'");
  if (info->field == &Limits::maxArenaBytes)
    return m->exec->maxArenaBytes();
  if (info->field == &Limits::maxTensorElements)
    return m->exec->maxTensorElements();
  return fail(std::string("limit ") + info->name + " is fixed when the model is compiled");
}
