/* Block-quantized weight matrices (int8 / int4) and the GEMV that reads them.
 * Layout, conventions and error bounds: docs/quantization.md.
 *
 * A matrix has n rows (output channels) of k values; k = taps * kc, ordered (tap, channel).
 * A block is `block` consecutive channels of ONE tap; the last block of each tap holds the
 * remaining kc % block channels (if any). block 0 = one block spanning the whole row.
 * A weight is w = q * scale + offset (offset 0 when symmetric), q the signed code:
 *   q8: one int8 per weight; q4: nibble u = q + 8, two per byte, element 2i in the LOW nibble.
 * Every block starts on a byte boundary. Weights stay quantized: kernels dequantize in registers. */
#ifndef LC_QUANT_H
#define LC_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"

typedef struct lc_qmatrix {
  lc_weight_format format; /* LC_WEIGHTS_Q8, LC_WEIGHTS_Q4 or LC_WEIGHTS_F32 (plain copy) */
  int asym;
  size_t n, k, kc;         /* rows, row length, channels per tap (k % kc == 0) */
  size_t block;            /* effective block length (block 0 -> kc = k) */
  /* Derived geometry. */
  size_t taps, bpt, tail;  /* taps per row, blocks per tap, length of the last block of a tap */
  size_t nb;               /* blocks per row = taps * bpt */
  size_t block_bytes, tail_bytes, row_bytes; /* code bytes: full block, last block, one row */
  uint8_t *codes;          /* n * row_bytes (+ slack so 32-byte loads never leave the buffer) */
  float *scales;           /* n * nb */
  float *offsets;          /* n * nb, NULL when symmetric */
  unsigned borrowed;       /* LC_QM_* arrays that belong to someone else (lc_qmatrix_wrap): not freed */
} lc_qmatrix;

enum { LC_QM_CODES = 1u, LC_QM_SCALES = 2u /* scales and offsets */ };

typedef struct lc_quant_spec {
  lc_weight_format format;
  int block;        /* 16, 32, 64, 128, 256 or 0 (one block per row) */
  int asym;
  size_t kc;        /* channels per tap; 0 = k (a plain matrix) */
  int clip_search;  /* 1: per block, try a few clipping ranges and keep the lowest squared error */
} lc_quant_spec;

/* Quantizes w[n][k]. NaN/Inf weights are rejected (the message names the row and column). */
lc_status lc_quantize(const float *w, size_t n, size_t k, const lc_quant_spec *spec, lc_qmatrix *out);

/* Same, with the rows supplied one at a time by row_fn(ctx, r, k, row) (e.g. gathered from OIHW
 * conv weights), so no fp32 copy of the whole matrix is ever made. */
typedef void (*lc_qrow_fn)(void *ctx, size_t r, size_t k, float *row);
lc_status lc_quantize_rows(size_t n, size_t k, const lc_quant_spec *spec, lc_qrow_fn row_fn, void *ctx,
                           lc_qmatrix *out);

/* Builds a matrix from codes already quantized elsewhere: q[n][k] signed codes (one int8 per
 * weight, q4 in [-8, 7]), scales[n][nb] and, if spec->asym, offsets[n][nb]; the counts passed
 * must equal n * nb (see lc_qmatrix_blocks). Everything is validated and copied. */
lc_status lc_qmatrix_from_codes(size_t n, size_t k, const lc_quant_spec *spec, const int8_t *q, size_t q_count,
                                const float *scales, size_t scale_count, const float *offsets,
                                size_t offset_count, lc_qmatrix *out);

/* Same, with the codes of row r supplied by row_fn(ctx, r, k, row) one row at a time (e.g. decoded
 * from a model file), so no int8 copy of the whole matrix is made. */
typedef void (*lc_qcode_row_fn)(void *ctx, size_t r, size_t k, int8_t *row);
lc_status lc_qmatrix_from_code_rows(size_t n, size_t k, const lc_quant_spec *spec, lc_qcode_row_fn row_fn,
                                    void *ctx, const float *scales, size_t scale_count, const float *offsets,
                                    size_t offset_count, lc_qmatrix *out);

/* A matrix over arrays that stay where they are (a mapped model file, a model's arena), nothing
 * copied: codes already in the matrix's layout (rows of row_bytes; q4 nibbles biased by +8, block
 * starts on byte boundaries), readable for LC_QSLACK bytes past the last row; scales[n][nb] and
 * offsets (NULL unless spec->asym). Scales are validated as lc_qmatrix_from_codes does; codes need
 * no check (every byte / nibble is a code of the range). The arrays must outlive the matrix. */
lc_status lc_qmatrix_wrap(size_t n, size_t k, const lc_quant_spec *spec, const uint8_t *codes, const float *scales,
                          const float *offsets, lc_qmatrix *out);
/* Code bytes of one row of this shape in the matrix's layout (0 if the spec is invalid). */
size_t lc_qmatrix_row_bytes(size_t k, const lc_quant_spec *spec);

/* Blocks per row for this shape (0 if the spec is invalid). */
size_t lc_qmatrix_blocks(size_t k, const lc_quant_spec *spec);
/* The geometry (kc, block, bpt, tail, nb, bytes) of an n x k matrix of this spec, no arrays. */
lc_status lc_qmatrix_layout(size_t n, size_t k, const lc_quant_spec *spec, lc_qmatrix *out);
void lc_qmatrix_free(lc_qmatrix *m);
/* Deep copy (benchmarks cycle through copies so the weights come from DRAM). */
lc_status lc_qmatrix_clone(const lc_qmatrix *src, lc_qmatrix *dst);
/* Bytes a GEMV reads: codes + scales + offsets (no slack). */
size_t lc_qmatrix_bytes(const lc_qmatrix *m);

/* dst[r][j] = W[row0 + r][k0 + j] in fp32, r < nrows, j < klen, row stride ld (floats). */
lc_status lc_dequant_rows(const lc_qmatrix *m, size_t row0, size_t nrows, size_t k0, size_t klen, float *dst,
                          size_t ld);
/* Same with the dequantizers of kernel table k (kernels/registry.h): a conv passes its context's. */
struct lc_kernels;
lc_status lc_dequant_rows_with(const struct lc_kernels *k, const lc_qmatrix *m, size_t row0, size_t nrows, size_t k0,
                               size_t klen, float *dst, size_t ld);

typedef enum lc_qgemv_mode {
  LC_QGEMV_ACCURATE = 0, /* fp32 activations, weights dequantized exactly in registers */
  LC_QGEMV_INT8 = 1      /* activations quantized per block to int8, integer dot products */
} lc_qgemv_mode;

typedef struct lc_qgemv_opts {
  lc_qgemv_mode mode;
  int threads;  /* <= 1: the caller's thread only; else split over n with pthreads */
  lc_isa isa;   /* kernel table as lc_kernels_clamp (kernels/registry.h) picks it: AUTO = the best here */
  struct lc_pool *pool; /* optional (util/threadpool.h): run on these threads instead of starting some */
} lc_qgemv_opts;

/* y[i][j] = sum_k x[i][k] * W[j][k] (+ bias[j]), i < m, j < n. x row stride ldx, y row stride ldy. */
lc_status lc_qgemv(const lc_qmatrix *w, size_t m, const float *x, size_t ldx, const float *bias, float *y,
                   size_t ldy, const lc_qgemv_opts *opts);

/* Name of the kernel set lc_qgemv would use ("scalar", "avx2", "avx512vnni"). */
const char *lc_qgemv_isa_name(const lc_qgemv_opts *opts);

#endif
