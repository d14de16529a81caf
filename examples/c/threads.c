/* Many threads serving one model compiled ahead of time by strata: each thread runs through a
 * strata_context of its own (ABI 2), while the model's weights and code are shared.
 *
 *   strata compile models/digits/digits.onnx -o digits.so
 *   cc threads.c -I. -o serve ./digits.so -lpthread -Wl,-rpath,'$ORIGIN'
 *   ./serve 8 200        # threads, runs per thread
 *
 * Thread t binds every symbolic dim to t + 1 (a different batch per thread), runs its context
 * again and again on inputs of its own, and compares every output byte for byte with what the
 * model's own context gave for the same inputs before the threads started. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STRATA_MODEL_HEADER
#define STRATA_MODEL_HEADER "digits.h"
#endif
#include STRATA_MODEL_HEADER

#define MAX_IO 16

static size_t dtype_size(int dtype) {
  switch (dtype) {
  case STRATA_F64:
  case STRATA_I64:
  case STRATA_U64:
    return 8;
  case STRATA_F32:
  case STRATA_I32:
  case STRATA_U32:
    return 4;
  case STRATA_F16:
  case STRATA_BF16:
  case STRATA_I16:
  case STRATA_U16:
    return 2;
  default:
    return 1;
  }
}

typedef struct {
  int index, runs, failures;
  strata_model *model;
  int64_t shapes[MAX_IO][8];
  void *data[MAX_IO];
  strata_tensor inputs[MAX_IO];
  void *expected[MAX_IO];
  size_t expected_bytes[MAX_IO];
} job;

/* Inputs of thread `index`: symbolic dims = index + 1, floats 0.01 * k + index, other dtypes 0. */
static int make_inputs(job *j) {
  int n = strata_model_num_inputs(j->model);
  for (int i = 0; i < n && i < MAX_IO; ++i) {
    int rank = strata_model_input_rank(j->model, i), dtype = strata_model_input_dtype(j->model, i);
    size_t count = 1;
    for (int d = 0; d < rank && d < 8; ++d) {
      int64_t size = strata_model_input_dim(j->model, i, d);
      j->shapes[i][d] = size < 0 ? j->index + 1 : size;
      count *= (size_t)j->shapes[i][d];
    }
    j->data[i] = calloc(count + 1, dtype_size(dtype));
    if (!j->data[i])
      return -1;
    if (dtype == STRATA_F32)
      for (size_t k = 0; k < count; ++k)
        ((float *)j->data[i])[k] = 0.01f * (float)(k % 100) + (float)j->index;
    j->inputs[i] = (strata_tensor){j->data[i], dtype, rank, j->shapes[i]};
  }
  return n;
}

static size_t output_bytes(const strata_model *m, int o, const int64_t *shape) {
  size_t bytes = dtype_size(strata_model_output_dtype(m, o));
  for (int d = 0; d < strata_model_output_rank(m, o); ++d)
    bytes *= (size_t)shape[d];
  return bytes;
}

static void *serve(void *arg) {
  job *j = arg;
  strata_context *ctx = strata_context_create(j->model);
  if (!ctx) {
    fprintf(stderr, "thread %d: %s\n", j->index, strata_last_error());
    j->failures = j->runs;
    return NULL;
  }
  int n_in = strata_model_num_inputs(j->model), n_out = strata_model_num_outputs(j->model);
  for (int r = 0; r < j->runs; ++r) {
    if (strata_context_run(ctx, j->inputs, n_in) != 0) {
      fprintf(stderr, "thread %d run %d: %s\n", j->index, r, strata_last_error());
      ++j->failures;
      continue;
    }
    for (int o = 0; o < n_out; ++o) {
      const int64_t *shape = strata_context_output_shape(ctx, o);
      size_t bytes = output_bytes(j->model, o, shape);
      if (bytes != j->expected_bytes[o] ||
          memcmp(strata_context_output_data(ctx, o), j->expected[o], bytes) != 0) {
        ++j->failures;
        break;
      }
    }
  }
  strata_context_destroy(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 8, runs = argc > 2 ? atoi(argv[2]) : 200;
  if (threads < 1 || threads > 64 || runs < 1) {
    fprintf(stderr, "usage: %s [threads 1-64] [runs per thread]\n", argv[0]);
    return 2;
  }
  strata_model *model = strata_model_create(0);
  if (!model) {
    fprintf(stderr, "error: %s\n", strata_last_error());
    return 1;
  }
  job *jobs = calloc((size_t)threads, sizeof(job));
  int status = 0;
  for (int t = 0; t < threads && status == 0; ++t) {
    job *j = &jobs[t];
    j->index = t;
    j->runs = runs;
    j->model = model;
    int n_in = make_inputs(j);
    /* The reference: the model's own context, one run, before any thread starts. */
    if (n_in < 0 || strata_model_run(model, j->inputs, n_in) != 0) {
      fprintf(stderr, "error: %s\n", strata_last_error());
      status = 1;
      break;
    }
    for (int o = 0; o < strata_model_num_outputs(model) && o < MAX_IO; ++o) {
      size_t bytes = output_bytes(model, o, strata_model_output_shape(model, o));
      j->expected[o] = malloc(bytes + 1);
      memcpy(j->expected[o], strata_model_output_data(model, o), bytes);
      j->expected_bytes[o] = bytes;
    }
  }
  pthread_t ids[64];
  for (int t = 0; t < threads && status == 0; ++t)
    pthread_create(&ids[t], NULL, serve, &jobs[t]);
  int failures = 0;
  for (int t = 0; t < threads && status == 0; ++t) {
    pthread_join(ids[t], NULL);
    failures += jobs[t].failures;
  }
  if (status == 0)
    printf("%d threads x %d runs on one model: %d outputs differ from the single-threaded runs\n",
           threads, runs, failures);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < MAX_IO; ++i) {
      free(jobs[t].data[i]);
      free(jobs[t].expected[i]);
    }
  free(jobs);
  strata_model_destroy(model);
  return status ? status : failures ? 1 : 0;
}
