/* Q8/Q4 GEMM with int8 activations (the i8gemm conv route, conv/route_i8gemm.c).
 * C[r][p] (+)= sum over blocks b of  ws[r][b] * xs[b][p] * sum_k q[r][k] * xq[k][p]  (+ wo[r][b] * xsum[b][p])
 * for r < mr weight rows and p < np pixels (a table's tile: 4 x 16, or 8 x 32 from two 16-pixel panels). Activations are quantized per pixel and per weight block
 * (amax / 127, round to nearest even, codes in [-127, 127]); the dot product of a block is exact in
 * int32, then one float FMA per block. Layouts (every block padded to whole quads of 4 k values):
 *   weights: per row, the blocks' codes one byte each, natural order, row stride ldw bytes;
 *            Q4: u = q + 8 (unsigned, the +8 folded out with -8 * isum), Q8: the signed code.
 *   activations: per quad, 16 pixels x 4 codes (64 bytes); per block 16 scales, code sums, xs * sums.
 * Conventions as the GEMV's int8 mode (quant/gemv.c), except the rounding (here the SIMD one). */
#ifndef LC_QUANT_I8GEMM_H
#define LC_QUANT_I8GEMM_H

#include <stddef.h>
#include <stdint.h>

#define LC_I8_MR 4      /* rows of the 4 x 16 tiles */
#define LC_I8_NR 16     /* pixels of an activation panel */
#define LC_I8_MR_MAX 8  /* rows of the widest tile (lc_kernels.i8mr) */

typedef struct lc_i8blocks {
  size_t nb;            /* blocks in the run */
  const uint32_t *nq;   /* quads per block */
  const uint32_t *len;  /* elements per block (<= 4 * nq) */
} lc_i8blocks;

typedef struct lc_i8act {
  const int8_t *xq;     /* [quads][16][4] */
  const float *xs;      /* [nb][16] */
  const int32_t *isum;  /* [nb][16] */
  const float *xsum;    /* [nb][16] */
} lc_i8act;

/* Weight rows [0, mr) of the run: codes at w + r * ldw, scales at ws + r * lds (block b at [b]),
 * offsets likewise (NULL: symmetric). C element (r, p) at c[r * ldc + p], r < mr, p < np written;
 * acc 0 overwrites, 1 adds. Pixels 16..31 (32-wide tiles, np > 16) come from the panel whose
 * arrays lie apan bytes after a's. */
typedef void (*lc_i8gemm_fn)(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw,
                             const float *ws, const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c,
                             size_t ldc, int acc);

/* Quantizes one panel of 16 pixels: x[k * ldx + p] fp32 (the run's k values, blocks back to back,
 * length sum of len[]), into a (its arrays sized for the run). */
typedef void (*lc_i8prep_fn)(const lc_i8blocks *bl, const float *x, size_t ldx, int8_t *xq, float *xs, int32_t *isum,
                             float *xsum);

void lc_i8gemm_q4_4x16_scalar(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                              const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
void lc_i8gemm_q8_4x16_scalar(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                              const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
void lc_i8prep_16_scalar(const lc_i8blocks *, const float *, size_t, int8_t *, float *, int32_t *, float *);
void lc_i8gemm_q4_4x16_avx2(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                            const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
void lc_i8gemm_q8_4x16_avx2(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                            const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
void lc_i8prep_16_avx2(const lc_i8blocks *, const float *, size_t, int8_t *, float *, int32_t *, float *);
/* n columns of one input row of a channel block (len channels ld floats apart) quantized as
 * lc_i8prep_fn does, for the i8gemm planes (conv/i8planes.h): quad q's codes at codes + q * pix. */
typedef void (*lc_i8fill_fn)(const float *src, size_t ld, size_t len, size_t n, uint32_t *codes, size_t pix,
                             float *xs, int32_t *isum, float *xsum);
void lc_i8fill_avx512(const float *, size_t, size_t, size_t, uint32_t *, size_t, float *, int32_t *, float *);
/* Where the 16 pixels of a planes panel lie in their plane (conv/i8planes.c): runs of lanes whose
 * pixels are `step` apart; lane i of run s reads at[s] + step * i (at may be negative: the run's
 * frame starts before its first lane). Lanes in no run (past the panel's pixels) read as 0. */
typedef struct lc_i8runs {
  int n, step;
  uint16_t lanes[16];   /* lanes of run s */
  uint16_t load[16][2]; /* step 2: the elements at + 0..31 run s reads (else unused) */
  int64_t at[16];
  int32_t off[16];      /* every lane's offset (0 past the runs), for other steps or many runs */
} lc_i8runs;
/* For rows r < n and panels j < npan: dst[j * dpan + r * ldd + i] = src[r * ld + lane i's offset in
 * ru[j]] for lanes i < 16 (4-byte values: the planes' codes and scales), 0 for lanes in no run. */
typedef void (*lc_i8gather_fn)(const uint32_t *src, size_t ld, size_t n, const lc_i8runs *ru, size_t npan,
                               uint32_t *dst, size_t ldd, size_t dpan);
void lc_i8gather_avx512(const uint32_t *, size_t, size_t, const lc_i8runs *, size_t, uint32_t *, size_t, size_t);
void lc_i8gemm_q4_8x32_avx512vnni(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                                  const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
/* Q8 in this tile takes its codes as u = q + 128 (lc_i8gemm_q8_biased). */
void lc_i8gemm_q8_8x32_avx512vnni(const lc_i8blocks *, size_t, size_t, const uint8_t *, size_t, const float *,
                                  const float *, size_t, const lc_i8act *, size_t, float *, size_t, int);
static inline int lc_i8gemm_q8_biased(lc_i8gemm_fn f) { return f == lc_i8gemm_q8_8x32_avx512vnni; }

#endif
