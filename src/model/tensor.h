/* Model-layer data: tensors, attributes and nodes as the graph and the operators see them.
 * dtype and attribute type codes are ONNX's own numbers, so the loader maps them 1:1. */
#ifndef LC_MODEL_TENSOR_H
#define LC_MODEL_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"

#define LC_MAX_DIMS 8

typedef enum lc_dtype {
  LC_DT_UNDEFINED = 0,
  LC_DT_FLOAT = 1,
  LC_DT_UINT8 = 2,
  LC_DT_INT8 = 3,
  LC_DT_INT32 = 6,
  LC_DT_INT64 = 7,
  LC_DT_BOOL = 9,
  LC_DT_FLOAT16 = 10,
  LC_DT_DOUBLE = 11,
  LC_DT_UINT4 = 21, /* as INT4, codes 0..15 */
  LC_DT_INT4 = 22 /* two per byte, low nibble first; only as DequantizeLinear weights (model/qweight.h) */
} lc_dtype;

size_t lc_dtype_size(lc_dtype t); /* 0 if unknown */
/* ONNX element type name ("float32", "int64"); "unknown" past the ONNX list. */
const char *lc_dtype_name(lc_dtype t);

typedef struct lc_tensor {
  const char *name;
  lc_dtype dtype;
  int ndim;
  int64_t dims[LC_MAX_DIMS];
  void *data;      /* NULL until allocated / bound */
  size_t nbytes;
  const struct lc_qweight *quant; /* conv weights kept quantized (model/qweight.h), else NULL */
} lc_tensor;

/* Element count with overflow check; 0 on success. */
int lc_tensor_numel(const lc_tensor *t, size_t *n);

typedef enum lc_attr_type {
  LC_ATTR_UNDEFINED = 0,
  LC_ATTR_FLOAT = 1,
  LC_ATTR_INT = 2,
  LC_ATTR_STRING = 3,
  LC_ATTR_TENSOR = 4,
  LC_ATTR_FLOATS = 6,
  LC_ATTR_INTS = 7,
  LC_ATTR_STRINGS = 8
} lc_attr_type;

typedef struct lc_attr {
  const char *name;
  lc_attr_type type;
  float f;
  int64_t i;
  const char *s;          /* STRING: NUL-terminated copy */
  const float *floats;    /* FLOATS */
  const int64_t *ints;    /* INTS */
  size_t n;               /* count of floats / ints / strings */
  const char *const *strings;
  const lc_tensor *t;     /* TENSOR */
} lc_attr;

typedef struct lc_node {
  const char *name;
  const char *op_type;
  const char *domain;
  int n_inputs, n_outputs;
  const char **inputs;    /* "" = optional input left out */
  const char **outputs;
  int n_attrs;
  lc_attr *attrs;
} lc_node;

const lc_attr *lc_node_attr(const lc_node *n, const char *name);
int64_t lc_attr_int(const lc_node *n, const char *name, int64_t dflt);
float lc_attr_float(const lc_node *n, const char *name, float dflt);
const char *lc_attr_string(const lc_node *n, const char *name, const char *dflt);
/* INTS attribute: returns count, sets *v (NULL/0 if absent). */
size_t lc_attr_ints(const lc_node *n, const char *name, const int64_t **v);

#endif
