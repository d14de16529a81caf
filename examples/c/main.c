/* A C program that runs a model compiled ahead of time by strata.
 *
 *   strata compile models/digits/digits.onnx -o digits.so     # writes digits.so and digits.h
 *   cc main.c -I. -o classify ./digits.so -Wl,-rpath,'$ORIGIN'
 *   ./classify models/digits/digits_test_x.npy
 *
 * It builds against the header strata writes next to the library (STRATA_MODEL_HEADER names it,
 * "digits.h" by default), loads one .npy file per model input, runs the model, and prints every
 * output's shape, its first values and, for 2-D outputs, the argmax of the first rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STRATA_MODEL_HEADER
#define STRATA_MODEL_HEADER "digits.h"
#endif
#include STRATA_MODEL_HEADER

typedef struct {
  void *data;
  int dtype;
  int rank;
  int64_t shape[8];
} npy_array;

/* The numpy dtype strings this example understands (little-endian, C order). */
static int npy_dtype(const char *descr, size_t *elem) {
  static const struct { const char *descr; int dtype; size_t size; } table[] = {
      {"<f4", STRATA_F32, 4}, {"<f8", STRATA_F64, 8}, {"<i4", STRATA_I32, 4},
      {"<i8", STRATA_I64, 8}, {"|u1", STRATA_U8, 1},  {"|i1", STRATA_I8, 1},
      {"|b1", STRATA_BOOL, 1}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (strncmp(descr, table[i].descr, 3) == 0) {
      *elem = table[i].size;
      return table[i].dtype;
    }
  return -1;
}

/* Reads a version 1.x/2.x .npy file; returns 0 on success. */
static int read_npy(const char *path, npy_array *out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: cannot open %s\n", path);
    return -1;
  }
  unsigned char magic[8];
  uint32_t header_len = 0;
  int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, "\x93NUMPY", 6) == 0;
  if (ok && magic[6] == 1) {
    unsigned char len[2];
    ok = fread(len, 1, 2, f) == 2;
    header_len = len[0] | (uint32_t)len[1] << 8;
  } else if (ok) {
    unsigned char len[4];
    ok = fread(len, 1, 4, f) == 4;
    header_len = len[0] | (uint32_t)len[1] << 8 | (uint32_t)len[2] << 16 | (uint32_t)len[3] << 24;
  }
  char *header = ok && header_len < 65536 ? calloc(header_len + 1, 1) : NULL;
  ok = header && fread(header, 1, header_len, f) == header_len;
  const char *descr = ok ? strstr(header, "'descr': '") : NULL;
  const char *shape = ok ? strstr(header, "'shape': (") : NULL;
  size_t elem = 0;
  ok = descr && shape && !strstr(header, "'fortran_order': True");
  if (ok)
    out->dtype = npy_dtype(descr + 10, &elem);
  ok = ok && out->dtype >= 0;
  size_t count = 1;
  out->rank = 0;
  for (const char *p = ok ? shape + 10 : NULL; p && *p != ')' && out->rank < 8;) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p)
      break;
    out->shape[out->rank++] = d;
    count *= (size_t)d;
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  out->data = ok ? malloc(count * elem + 1) : NULL;
  ok = out->data && fread(out->data, elem, count, f) == count;
  free(header);
  fclose(f);
  if (!ok)
    fprintf(stderr, "error: %s: not a supported .npy file\n", path);
  return ok ? 0 : -1;
}

static double element(const void *data, int dtype, size_t i) {
  switch (dtype) {
  case STRATA_F32: return ((const float *)data)[i];
  case STRATA_F64: return ((const double *)data)[i];
  case STRATA_I32: return ((const int32_t *)data)[i];
  case STRATA_I64: return (double)((const int64_t *)data)[i];
  case STRATA_U8: case STRATA_BOOL: return ((const uint8_t *)data)[i];
  case STRATA_I8: return ((const int8_t *)data)[i];
  default: return 0;
  }
}

int main(int argc, char **argv) {
  strata_model *model = strata_model_create(0);
  if (!model) {
    fprintf(stderr, "error: %s\n", strata_last_error());
    return 1;
  }
  int n_in = strata_model_num_inputs(model), n_out = strata_model_num_outputs(model);
  if (argc - 1 != n_in) {
    fprintf(stderr, "usage: %s", argv[0]);
    for (int i = 0; i < n_in; ++i)
      fprintf(stderr, " %s.npy", strata_model_input_name(model, i));
    fprintf(stderr, "\n");
    strata_model_destroy(model);
    return 2;
  }
  strata_tensor inputs[16];
  npy_array arrays[16];
  for (int i = 0; i < n_in && i < 16; ++i) {
    if (read_npy(argv[i + 1], &arrays[i]) != 0) {
      strata_model_destroy(model);
      return 1;
    }
    inputs[i].data = arrays[i].data;
    inputs[i].dtype = arrays[i].dtype;
    inputs[i].rank = arrays[i].rank;
    inputs[i].shape = arrays[i].shape;
    printf("input %s: rank %d, dim 0 = %lld\n", strata_model_input_name(model, i),
           arrays[i].rank, (long long)arrays[i].shape[0]);
  }
  if (strata_model_run(model, inputs, n_in) != 0) {
    fprintf(stderr, "error: %s\n", strata_last_error());
    strata_model_destroy(model);
    return 1;
  }
  for (int o = 0; o < n_out; ++o) {
    int rank = strata_model_output_rank(model, o), dtype = strata_model_output_dtype(model, o);
    const int64_t *shape = strata_model_output_shape(model, o);
    const void *data = strata_model_output_data(model, o);
    size_t count = 1;
    printf("output %s: shape [", strata_model_output_name(model, o));
    for (int d = 0; d < rank; ++d) {
      printf("%s%lld", d ? ", " : "", (long long)shape[d]);
      count *= (size_t)shape[d];
    }
    printf("]\nfirst values:");
    for (size_t i = 0; i < count && i < 5; ++i)
      printf(" %.6g", element(data, dtype, i));
    printf("\n");
    if (rank == 2) {
      printf("argmax of the first rows:");
      for (int64_t r = 0; r < shape[0] && r < 20; ++r) {
        int64_t best = 0;
        for (int64_t c = 1; c < shape[1]; ++c)
          if (element(data, dtype, r * shape[1] + c) > element(data, dtype, r * shape[1] + best))
            best = c;
        printf(" %lld", (long long)best);
      }
      printf("\n");
    }
  }
  for (int i = 0; i < n_in; ++i)
    free(arrays[i].data);
  strata_model_destroy(model);
  return 0;
}
