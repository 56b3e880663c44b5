/* Internal to src/quant: prepared activations, kernel signatures and the format table. */
#ifndef LC_QKERNELS_H
#define LC_QKERNELS_H

#include "quant/quant.h"

/* Activations laid out block by block like the weights, each block padded with zeros to a
 * multiple of LC_QCHUNK so kernels run whole chunks (codes past a block are read but multiplied
 * by zero; they are always finite). Inside a q4 chunk the order is the nibble order of 16 code
 * bytes: positions 0..15 = elements 0,2,..,30 (low nibbles), 16..31 = elements 1,3,..,31 --
 * except for lc_qgemv_q4_int8_avx512vnni, which widens nibbles in place and wants natural order. */
#define LC_QCHUNK 32
/* Slack after the codes so a chunk load at the end of the last block stays in the buffer. */
#define LC_QSLACK 128

typedef struct lc_qact {
  size_t m;
  size_t row_len;       /* padded elements per activation row */
  const float *xf;      /* accurate mode: m * row_len */
  const int8_t *xq;     /* int8 mode: m * row_len */
  const float *xs;      /* int8 mode: m * nb activation scales */
  const int32_t *isum;  /* int8 mode: m * nb sums of the int8 codes */
  const float *xsum;    /* m * nb: accurate: sum of x; int8: xs * isum (for the offset fold) */
  const int32_t *ibias; /* split128 layout only: m * row_len / 8 int32 lanes, see below */
  const uint8_t *xt;    /* bcast layout only (see lc_qprep_bcast): x + 128 in tiles of 16 rows, or NULL */
  const float *xst;     /* bcast layout only: xs in tiles of 16 rows */
} lc_qact;

/* q4 int8 layout of the AVX-512 kernel when every block is full and 16, 32, 64 or a multiple of
 * 128 long: a row's codes are then one run of nibbles in natural order, read 64 bytes (128
 * weights) at a time. Activations come in groups of 128 (even elements, then odd: the low and
 * high nibbles of 64 code bytes), row_len = k rounded up to 128. vpdpbusd lane j of a group
 * covers weights 8j..8j+7; ibias holds -8 * sum(xq) of a block in its first lane (0 elsewhere),
 * so starting each lane there removes the +8 of the stored nibble exactly, in int32. */
static inline int lc_q4_split128(const lc_qmatrix *w) {
  size_t l = w->block;
  return w->format == LC_WEIGHTS_Q4 && w->tail == l && (l == 16 || l == 32 || l == 64 || l % 128 == 0);
}

/* y[i * ldy + j] = row j of W times activation row i, for j in [n0, n1), all i < a->m. No bias. */
typedef void (*lc_qgemv_kernel)(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                size_t ldy);

/* One row per format (indexed by lc_weight_format); the kernels per ISA are in kernels/registry.h. */
typedef struct lc_qformat {
  const char *name;
  int bits;
  int qmin, qmax;          /* signed code range */
  int qmax_sym;            /* symmetric quantization uses [-qmax_sym, qmax_sym] */
  void (*pack)(const int8_t *q, size_t len, uint8_t *block_codes);
} lc_qformat;

/* Decodes elements [j0, j0 + len) of one block into fp32: w = q * scale + offset (fused). */
typedef void (*lc_dequant_fn)(const uint8_t *block_codes, size_t j0, size_t len, float scale, float offset,
                              float *dst);

extern const lc_qformat lc_qformats[3];

static inline size_t lc_qblock_bytes(int bits, size_t len) { return (len * (size_t)bits + 7) / 8; }
static inline size_t lc_qpad(size_t len) { return (len + LC_QCHUNK - 1) / LC_QCHUNK * LC_QCHUNK; }

/* Kernels (kernels/registry.c lists them per ISA). */
void lc_qgemv_q4_accurate_scalar(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_accurate_scalar(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q4_int8_scalar(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_int8_scalar(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_f32_accurate_scalar(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q4_accurate_avx2(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_accurate_avx2(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q4_int8_avx2(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_int8_avx2(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_f32_accurate_avx2(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q4_int8_avx512vnni(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_int8_avx512vnni(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q4_accurate_avx512(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);
void lc_qgemv_q8_accurate_avx512(const lc_qmatrix *, const lc_qact *, size_t, size_t, float *, size_t);

/* int8 activation preparation of one row (x: k floats) in the split128 layout (deinterleave 0:
 * natural order, for lc_qprep_bcast). */
void lc_qprep_split128_avx512(const lc_qmatrix *w, const float *x, int8_t *xq, float *xs, int32_t *isum,
                              float *xsum, int32_t *ibias, int deinterleave);

/* Many activation rows (>= LC_QBCAST_M) on the AVX-512 q4 int8 kernel: lanes are activation rows,
 * weights are broadcast 4 at a time, so a vpdpbusd does 64 useful products with no reduction.
 * xt: tiles of 16 rows, per 4 k values 16 rows x 4 bytes of xq + 128 (unsigned); rows past m are
 * x = 0. xst: per tile and block, 16 activation scales. xq: m natural rows, row stride ld. */
#define LC_QBCAST_M 16
void lc_qprep_bcast(const lc_qmatrix *w, size_t m, const int8_t *xq, size_t ld, const float *xs, uint8_t *xt,
                    float *xst);
/* Rows [n0, n1) of the q4 int8 GEMV on that layout (a->xt set). */
void lc_qgemv_q4_bcast_avx512(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y, size_t ldy);

/* Dequantization (lc_dequant_fn), per format and ISA; f32 is a plain copy. */
void lc_dequant_f32(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
void lc_dequant_q8_scalar(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
void lc_dequant_q4_scalar(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
void lc_dequant_q4_avx2(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
void lc_dequant_q8_avx2(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
/* AVX-512F (the avx512vnni table): the same values. */
void lc_dequant_q4_avx512(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);
void lc_dequant_q8_avx512(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst);

/* Walks a row's blocks in order: code bytes and padded activation elements of block i of a tap. */
static inline size_t lc_qblock_len(const lc_qmatrix *m, size_t i) { return i == m->bpt - 1 ? m->tail : m->block; }
static inline size_t lc_qblock_nbytes(const lc_qmatrix *m, size_t i) {
  return i == m->bpt - 1 ? m->tail_bytes : m->block_bytes;
}

/* Where element kk of a row lies: its block (the index into scales / offsets) is *block; returns
 * the offset in the row of the byte holding its code (Q4: its nibble's byte). */
static inline size_t lc_qcode_byte(const lc_qmatrix *m, size_t kk, size_t *block) {
  size_t t = kk / m->kc, c = kk % m->kc, i = c / m->block, e = c % m->block;
  *block = t * m->bpt + i;
  return t * ((m->bpt - 1) * m->block_bytes + m->tail_bytes) + i * m->block_bytes +
         (m->format == LC_WEIGHTS_Q4 ? e / 2 : e);
}

/* A 16-row group of the Q8/Q4 Winograd weight kernels at row element kk (kernels/wino.h): p[i] =
 * the code byte of row row0 + i (NULL from `rows` on); when its block is not *held, the block's
 * scales and offsets in sv / ov (0 from `rows` on), *held updated, and 1 returned. */
static inline int lc_qgroup_at(const lc_qmatrix *m, size_t kk, size_t row0, size_t rows, const uint8_t *p[16],
                               size_t *held, float sv[16], float ov[16]) {
  size_t b, off = lc_qcode_byte(m, kk, &b);
  for (size_t k = 0; k < 16; k++) p[k] = k < rows ? m->codes + (row0 + k) * m->row_bytes + off : NULL;
  if (*held == b) return 0;
  *held = b;
  for (size_t k = 0; k < 16; k++) sv[k] = k < rows ? m->scales[(row0 + k) * m->nb + b] : 0.0f;
  for (size_t k = 0; k < 16; k++) ov[k] = k < rows && m->offsets ? m->offsets[(row0 + k) * m->nb + b] : 0.0f;
  return 1;
}

/* Σ offset[b] * xsum[b] over a row's blocks (the asymmetric fold). */
static inline float lc_qoffset_fold(const float *off, const float *xsum, size_t nb) {
  float s = 0.0f;
  for (size_t b = 0; b < nb; b++) s += off[b] * xsum[b];
  return s;
}

#endif
