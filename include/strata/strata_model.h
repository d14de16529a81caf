/* The C API of a model compiled ahead of time by `strata compile MODEL.onnx -o model.so`
 * (docs/runtime.md, "AOT libraries"). Every such library exports exactly these functions; the
 * header `strata compile` writes next to the library holds this text plus the model's interface.
 *
 * Stable ABI, version 5: functions are only ever added (version 2 added the strata_context_*
 * functions, version 3 strata_model_set_limit and strata_model_limit, version 4 the *_run_into
 * functions, version 5 strata_model_input_decides_sizes); a library reports its
 * version through strata_abi_version(). Errors: functions
 * returning int give 0 on success and -1 on error, those returning pointers give NULL;
 * strata_last_error() then describes the error (per thread). */
#ifndef STRATA_MODEL_H
#define STRATA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_ABI_VERSION 5

/* Element types (the values strata_model_*_dtype return). */
typedef enum strata_dtype {
  STRATA_F32 = 0,
  STRATA_F16 = 1,
  STRATA_BF16 = 2,
  STRATA_F64 = 3,
  STRATA_I8 = 4,
  STRATA_I16 = 5,
  STRATA_I32 = 6,
  STRATA_I64 = 7,
  STRATA_U8 = 8,
  STRATA_U16 = 9,
  STRATA_U32 = 10,
  STRATA_U64 = 11,
  STRATA_BOOL = 12
} strata_dtype;

/* An input for strata_model_run: dense row-major data of `dtype` with `rank` dims. */
typedef struct strata_tensor {
  const void *data;
  int32_t dtype; /* a strata_dtype */
  int32_t rank;
  const int64_t *shape;
} strata_tensor;

typedef struct strata_model strata_model;
typedef struct strata_context strata_context;

int strata_abi_version(void);
/* The message of the last failed call on this thread ("" if none). */
const char *strata_last_error(void);

/* Loads the model embedded in this library. num_threads: threads for parallel loops, 0 = one per
 * core. Several models may exist at once. strata_model_run uses the model's own context, so it
 * must not be called by two threads at a time on one model; threads that share a model each
 * run through a strata_context of their own. */
strata_model *strata_model_create(int num_threads);
void strata_model_destroy(strata_model *model);

/* The interface. A dim that is symbolic (bound at run time) reads as -1 and has a name. */
int strata_model_num_inputs(const strata_model *model);
int strata_model_num_outputs(const strata_model *model);
const char *strata_model_input_name(const strata_model *model, int index);
const char *strata_model_output_name(const strata_model *model, int index);
int strata_model_input_dtype(const strata_model *model, int index);
int strata_model_output_dtype(const strata_model *model, int index);
int strata_model_input_rank(const strata_model *model, int index);
int strata_model_output_rank(const strata_model *model, int index);
int64_t strata_model_input_dim(const strata_model *model, int index, int dim);
int64_t strata_model_output_dim(const strata_model *model, int index, int dim);
const char *strata_model_input_dim_name(const strata_model *model, int index, int dim);
const char *strata_model_output_dim_name(const strata_model *model, int index, int dim);

/* Checks every input (count, dtype, rank, dims, symbols consistent across inputs) before any
 * kernel runs, then runs the model. Outputs live in the model until the next run or destroy. */
int strata_model_run(strata_model *model, const strata_tensor *inputs, int num_inputs);
const void *strata_model_output_data(const strata_model *model, int index);
/* The output's shape after the last successful run (strata_model_output_rank dims). */
const int64_t *strata_model_output_shape(const strata_model *model, int index);
/* Bytes of intermediate memory (the arena) the last run used. */
int64_t strata_model_arena_bytes(const strata_model *model);

/* ABI 2. A context holds the state of runs (bound dims, the arena, the outputs) apart from the
 * model, whose weights and code all its contexts share read-only. One context is used by one
 * thread at a time; contexts of one model run concurrently, and their parallel loops share the
 * model's threads. Destroy every context before its model. */
strata_context *strata_context_create(const strata_model *model);
void strata_context_destroy(strata_context *context);
/* As strata_model_run, in this context: outputs live in the context until its next run. */
int strata_context_run(strata_context *context, const strata_tensor *inputs, int num_inputs);
const void *strata_context_output_data(const strata_context *context, int index);
const int64_t *strata_context_output_shape(const strata_context *context, int index);
int64_t strata_context_arena_bytes(const strata_context *context);

/* ABI 3. Run-time limits (docs/cli.md, "Limits"), checked before a run allocates anything:
 * "max-tensor-elements" bounds every input and output, "max-arena-bytes" the intermediate memory
 * of one run (it grows with symbolic dims). A run beyond one fails with an error naming it.
 * They start at the documented defaults and apply to the model and all its contexts; set them
 * before runs start. strata_model_set_limit returns -1 for another name (the other limits are
 * fixed when the model is compiled) or a negative value; strata_model_limit gives the current
 * value of either, -1 for another name. */
int strata_model_set_limit(strata_model *model, const char *name, int64_t value);
int64_t strata_model_limit(const strata_model *model, const char *name);

/* ABI 4. Runs with each output written where the caller says, with no copy: once the inputs are
 * checked, allocate(user, index, dtype, rank, shape) is called for every output in order and
 * returns memory for it (its dtype's size times the product of shape bytes; any pointer when
 * that is 0), or NULL to stop the run, which then fails naming the output. The memory is the
 * caller's before and after. Such a run leaves nothing in the model or context to read with the
 * *_output_data / *_output_shape functions. */
typedef void *(*strata_output_allocator)(void *user, int index, int32_t dtype, int32_t rank,
                                         const int64_t *shape);
int strata_model_run_into(strata_model *model, const strata_tensor *inputs, int num_inputs,
                          strata_output_allocator allocate, void *user);
int strata_context_run_into(strata_context *context, const strata_tensor *inputs, int num_inputs,
                            strata_output_allocator allocate, void *user);

/* ABI 5. 1 when sizes are read from input `index`'s values when the model runs (a Reshape's
 * shape, a Loop's trip count given as an input): the caller must give its real values, which
 * decide output shapes; 0 when only its dims matter or it is plain data; -1 on a bad index. */
int strata_model_input_decides_sizes(const strata_model *model, int index);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_MODEL_H */
