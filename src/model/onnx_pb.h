/* ONNX loader: a strict protobuf wire-format decoder for the handful of ONNX messages we run
 * (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto).
 * Nodes and initializers come out as the model layer's own lc_node / lc_tensor, so the graph
 * code never sees protobuf. docs/onnx.md explains why we decode ourselves. */
#ifndef LC_MODEL_ONNX_PB_H
#define LC_MODEL_ONNX_PB_H

#include <stddef.h>
#include <stdint.h>

#include "model/tensor.h"
#include "util/arena.h"

/* Limits that bound what a hostile file can make us allocate or walk. Every count is also
 * bounded by the bytes it occupies, so allocation stays O(file size). */
#define LC_ONNX_MAX_STRING (1u << 16)
#define LC_ONNX_MAX_COUNT (1 << 24)


typedef struct lc_onnx_value_info {
  const char *name;
  lc_dtype dtype;          /* UNDEFINED when the type is not a tensor or not given */
  int has_shape;
  int ndim;
  int64_t dims[LC_MAX_DIMS];       /* -1 where the dim is symbolic or unknown */
  const char *dim_param[LC_MAX_DIMS]; /* symbol name or NULL */
} lc_onnx_value_info;

typedef struct lc_onnx_mapping lc_onnx_mapping;

/* One opset_import entry (domain "" is the default domain). */
typedef struct lc_onnx_opset {
  const char *domain;
  int64_t version;
  struct lc_onnx_opset *next;
} lc_onnx_opset;

typedef struct lc_onnx_model {
  int64_t ir_version;
  int64_t opset;           /* version of the default ("" / "ai.onnx") domain, 0 if absent */
  lc_onnx_opset *opsets;   /* every opset_import entry, last first */
  int n_nodes, n_inits, n_inputs, n_outputs, n_value_info;
  lc_node *nodes;
  lc_tensor *inits;        /* data always set (zero-copy into the file where aligned) */
  lc_onnx_value_info *inputs, *outputs, *value_info;
  lc_arena arena;
  /* private: backing storage of the file and external data */
  void *file_map;
  size_t file_len;
  int file_owned;          /* 1 = lc_malloc copy, 0 = mmap */
  lc_onnx_mapping *maps;
} lc_onnx_model;

/* Loads a model file; external data files are resolved relative to the model's directory. */
lc_status lc_onnx_load_file(const char *path, lc_onnx_model **out);
/* Loads from memory (copied). External data is refused: there is no directory to resolve it in. */
lc_status lc_onnx_load_buffer(const void *buf, size_t len, lc_onnx_model **out);
void lc_onnx_free(lc_onnx_model *m);
/* Large misaligned raw_data is copied to aligned memory only when first needed: call this before
 * reading the data of a tensor the loader returned (a no-op for everything else). */
void lc_onnx_ensure(lc_onnx_model *m, const void *p);
/* The bytes a copy p will be filled from while lc_onnx_ensure has not run yet (unaligned), else
 * NULL: a reader that needs them once (weight folding) reads them there instead. */
const void *lc_onnx_source(const lc_onnx_model *m, const void *p);
/* Gives back the memory behind n bytes of tensor data at p once nothing reads them: pages of the
 * mapped file or external data are dropped (they read back from the file if touched again), a
 * large misaligned copy is freed. Anything else (arena, buffer copies) is left alone. */
void lc_onnx_release(lc_onnx_model *m, const void *p, size_t n);
/* Bytes readable past p + n in the mapping that holds [p, p + n) (a kernel may load past a
 * tensor's end); 0 for copies and unknown pointers. */
size_t lc_onnx_readable_after(const lc_onnx_model *m, const void *p, size_t n);

#endif
