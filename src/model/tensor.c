/* Tensor and attribute helpers shared by the graph and the operators. */
#include "model/tensor.h"

#include <string.h>

#include "util/checked.h"

size_t lc_dtype_size(lc_dtype t) {
  switch (t) {
    case LC_DT_FLOAT: case LC_DT_INT32: return 4;
    case LC_DT_UINT8: case LC_DT_INT8: case LC_DT_BOOL: return 1;
    case LC_DT_INT64: case LC_DT_DOUBLE: return 8;
    case LC_DT_FLOAT16: return 2;
    default: return 0;
  }
}

const char *lc_dtype_name(lc_dtype t) {
  static const char *const names[] = {"undefined", "float32", "uint8",  "int8",    "uint16",    "int16",
                                      "int32",     "int64",   "string", "bool",    "float16",   "float64",
                                      "uint32",    "uint64",  "complex64", "complex128", "bfloat16"};
  if (t == LC_DT_INT4) return "int4";
  if (t == LC_DT_UINT4) return "uint4";
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

int lc_tensor_numel(const lc_tensor *t, size_t *n) {
  if (!t || t->ndim < 0 || t->ndim > LC_MAX_DIMS) return -1;
  return lc_mul_n(n, t->ndim, t->dims) ? 0 : -1;
}

const lc_attr *lc_node_attr(const lc_node *n, const char *name) {
  if (!n || !name) return NULL;
  for (int i = 0; i < n->n_attrs; i++)
    if (n->attrs[i].name && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
  return NULL;
}

int64_t lc_attr_int(const lc_node *n, const char *name, int64_t dflt) {
  const lc_attr *a = lc_node_attr(n, name);
  return a && a->type == LC_ATTR_INT ? a->i : dflt;
}

float lc_attr_float(const lc_node *n, const char *name, float dflt) {
  const lc_attr *a = lc_node_attr(n, name);
  return a && a->type == LC_ATTR_FLOAT ? a->f : dflt;
}

const char *lc_attr_string(const lc_node *n, const char *name, const char *dflt) {
  const lc_attr *a = lc_node_attr(n, name);
  return a && a->type == LC_ATTR_STRING && a->s ? a->s : dflt;
}

size_t lc_attr_ints(const lc_node *n, const char *name, const int64_t **v) {
  const lc_attr *a = lc_node_attr(n, name);
  if (!a || a->type != LC_ATTR_INTS) {
    if (v) *v = NULL;
    return 0;
  }
  if (v) *v = a->ints;
  return a->n;
}
