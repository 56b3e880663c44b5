/* Microkernel contracts (signatures and epilogue). The tables that name one kernel per family and
 * ISA are in kernels/registry.h; the routes in src/conv drive them. */
#ifndef LC_KERNELS_H
#define LC_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Epilogue of a GEMM tile or depthwise row. Applied in this order:
 *   v = acc (+ C if accumulate) ; if (final) { v += bias ; v += residual ; v = act(v) }
 * bias: NULL, or per row (bias[i]) or per column (bias[j]) of the tile, already offset.
 * residual: NULL, or a tile with the same shape as C, row stride rs_res (fusion of a residual Add). */
typedef struct lc_gemm_params {
  int accumulate;          /* 1: add A*B to what C holds (split-K chunks after the first) */
  int final;               /* 1: apply bias, residual and activation after this chunk */
  const float *bias;
  int bias_per_row;        /* 1: bias[i], 0: bias[j] */
  const float *residual;
  size_t rs_res;
  int act;                 /* lc_activation; 5 (PRelu) only where a route indexes slope itself */
  float act_min, act_max, act_alpha;
  int post;                /* 1: then y = y * post_mul + post_add (lc_conv_desc) */
  float post_mul, post_add;
  /* act 5: the slopes of the call's channels, slope[k] for the k-th channel of the caller's vector
   * (wino_bias_act) or lc_apply_act_ch's ch; the GEMM kernels never see act 5. */
  const float *slope;
  /* Not NULL: at step kk of k the AVX-512 kernels prefetch the cache line at pf + pf_step kk bytes
   * into L2: the caller's next B block, fetched while this call computes from cache (others ignore
   * it). pf_step <= 64: every line from pf on, some more than once (the caller spreads a block's
   * lines over its calls). */
  const void *pf;
  size_t pf_step;
} lc_gemm_params;

/* C[m x n] (+)= A[m x k] * B[k x n], m <= mr, n <= nr of the table.
 *   A element (i, kk) at a[i * rs_a + kk * cs_a]  (packed: rs_a = 1, cs_a = mr)
 *   B element (kk, j) at b[kk * rs_b + j]         (packed: rs_b = nr); only j < n is read
 *   C element (i, j)  at c[i * rs_c + j]          only i < m, j < n is written
 * k may be 0 (then C = 0 or C unchanged, before the epilogue). */
typedef void (*lc_f32_gemm_fn)(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                               const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p);

/* Depthwise 2-D conv of one channel plane (NCHW), one output row:
 *   out[ox] = sum_{ky,kx} in_rows[ky][ox*sw + kx*dw] * w[ky*kw + kx]
 * in_rows[ky] points to the (already padded or zero) input row for tap row ky, at column 0 of a
 * padded row, i.e. the caller provides rows of width >= (ow-1)*sw + (kw-1)*dw + 1.
 * Epilogue: per-channel bias (scalar *bias or NULL), residual row or NULL, activation. */
typedef void (*lc_f32_dw_row_fn)(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                                 const float *const *in_rows, const float *w, float *out,
                                 const lc_gemm_params *p);

/* Depthwise NCHW, stride s (1 or 2), dilation 1, k x k taps (k 3 or 5), rows (any count) output rows
 * straight from the unpadded input: in_rows[0 .. s * (rows - 1) + k) hold iw floats each (a row of
 * zeros for padding rows), read as padded rows V_i[j] = in_rows[i][j - pl] (zero outside [0, iw)),
 * pl < k; output row r at out + r * ors: out[ox] = sum V_{s*r + ky}[s*ox + kx] * w[ky*k + kx].
 * Epilogue as lc_f32_dw_row_fn's (a residual at the output's offsets). */
typedef void (*lc_f32_dw_row_unpadded_fn)(size_t ow, size_t rows, size_t ors, size_t s, size_t k, size_t pl,
                                          size_t iw, const float *const *in_rows, const float *w, float *out,
                                          const lc_gemm_params *p);
/* The implementations' row groups: (stride, rows, kernel) of each, and the rows of the group that
 * starts at output row r of `rows` (4 at stride 1, 2 at 3x3 stride 2, else 1; what is left). The
 * AVX2 kernel takes larger stride-2 groups of its own (f32_dw_unpadded_avx2.c). */
#define LC_DW_UNPADDED_GROUPS(X) \
  X(1, 1, 3) X(1, 2, 3) X(1, 4, 3) X(1, 1, 5) X(1, 2, 5) X(1, 4, 5) X(2, 1, 3) X(2, 2, 3) X(2, 1, 5)
static inline size_t lc_dw_group_rows(size_t s, size_t k, size_t r, size_t rows) {
  return s == 1 && r + 3 < rows ? 4 : (s == 1 || k == 3) && r + 1 < rows ? 2 : 1;
}

/* Depthwise NCHW on up to 8 channels at once through a channel-interleaved, zero-padded tile
 * (lc_f32_dw_c8_fn): planes in + c * ihw (ih x iw) to out + c * ohw (oh x ow), c < nch (1..8);
 * padded rows hp = (oh-1)*sh + (kh-1)*dh + 1 and columns wp = (ow-1)*sw + (kw-1)*dw + 1, input
 * pixel (y, x) at padded (y + pt, x + pl); w: nch x kh*kw taps; bias: nch values or NULL. The sums
 * and the epilogue (bias, then ep's activation 0..4 and post affine; no residual) are
 * lc_f32_dw_row_fn's, so the same bits. ws (any alignment): (hp * wp + ow + kh * kw + 1) * 8 floats. */
typedef struct lc_dw_c8_args {
  const float *in, *w, *bias;
  float *out, *ws;
  size_t nch, ihw, ohw, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, hp, wp;
  const lc_gemm_params *ep;
} lc_dw_c8_args;
typedef void (*lc_f32_dw_c8_fn)(const lc_dw_c8_args *a);

/* Depthwise NHWC, one output pixel, all channels of a group of c channels:
 *   out[ch] = sum_t in_ptrs[t][ch] * w[t * c + ch]     (in_ptrs[t] NULL = padding tap)
 * bias per channel (bias[ch]) or NULL. */
typedef void (*lc_f32_dw_pixel_fn)(size_t c, size_t taps, const float *const *in_ptrs, const float *w,
                                   float *out, const lc_gemm_params *p);

/* dst[j] = src[j * stride] for j < n (im2col packing of strided convs). Never reads past
 * src[(n - 1) * stride]. */
typedef void (*lc_f32_gather_fn)(float *dst, const float *src, size_t n, size_t stride);

/* Three stride-2 gathers of one row at column offsets 0, 1, 2 (a 3x3 stride-2 conv's kx taps):
 * d0[j] = s[2j], d1[j] = s[2j + 1], d2[j] = s[2j + 2], j < n. Never reads past s[2n]. */
typedef void (*lc_f32_gather3_s2_fn)(float *d0, float *d1, float *d2, const float *s, size_t n);

/* Stride-2 gathers of a block of input rows with their padding (taprows): for r < rows, x < n and
 * t < 3 (t = 0 alone when d1 is NULL; d1 and d2 are NULL or not together),
 *   dt[r * drs + x] = src[r * srs + col] with col = 2x + t + x0 when 0 <= col < iw, else 0.
 * Reads src[r * srs + col] for 0 <= col < iw only. */
typedef void (*lc_f32_gather_s2_rows_fn)(float *d0, float *d1, float *d2, size_t drs, const float *src, size_t srs,
                                         size_t rows, size_t n, ptrdiff_t x0, size_t iw);

/* Small-K conv rows (the few-channel stem route): C[m x n] = sum_kk w[kk * LC_ROWCONV_MR + i] * rows[kk][x0 + j],
 * m <= LC_ROWCONV_MR, n <= LC_ROWCONV_NR; c element (i, j) at c[i * rs_c + j], only i < m, j < n written.
 * rows[kk] may be read up to x0 + round_up(n, 16) - 1 (whole vectors; the caller pads). Epilogue as the GEMM's
 * (bias per row). */
#define LC_ROWCONV_MR 4
/* 64: the AVX-512 kernel's 4 x 16 lanes; the AVX2 kernel covers it in chunks of 24 */
#define LC_ROWCONV_NR 64
typedef void (*lc_f32_rowconv_fn)(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0,
                                  float *c, size_t rs_c, const lc_gemm_params *p);

/* Prototypes of one ISA folder's f32 kernels: lc_f32_{dw_row,dw_pixel,gather}_<isa> and the GEMM,
 * whose name gives its tile. */
#define LC_F32_KERNEL_DECLS(gemm, isa)                                                                       \
  void gemm(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a, const float *b, size_t rs_b, \
            float *c, size_t rs_c, const lc_gemm_params *p);                                                 \
  void lc_f32_dw_row_##isa(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw, const float *const *in_rows,  \
                           const float *w, float *out, const lc_gemm_params *p);                             \
  void lc_f32_dw_pixel_##isa(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,    \
                             const lc_gemm_params *p);                                                       \
  void lc_f32_gather_##isa(float *dst, const float *src, size_t n, size_t stride)

/* Activation of one value (scalar tails and reference). */
static inline float lc_act_only(float v, const lc_gemm_params *p) {
  switch (p->act) {
    case 1: return v > 0.0f ? v : 0.0f;
    case 2: return v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
    case 3: return v < 0.0f ? p->act_alpha * v : v;
    case 4: {
      float t = v / 6.0f + 0.5f;
      t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
      return v * t;
    }
    default: return v;
  }
}

/* The activation, then the post affine (a mul and an add: no contraction in C11 mode). */
static inline float lc_apply_act(float v, const lc_gemm_params *p) {
  v = lc_act_only(v, p);
  return p->post ? v * p->post_mul + p->post_add : v;
}

/* PRelu: v < 0 ? s * v : v, the factor's bits picked by v's sign bit with integer masks: gcc 12
 * kept a branch per value for any select here (under trapping math), 5-9x slower on random signs,
 * and vectorizes this. -0.0 and NaN come out as the same values. */
static inline float lc_prelu(float v, float s) {
  uint32_t u, sb, fb, m;
  const float one = 1.0f;
  float f;
  memcpy(&u, &v, sizeof u);
  memcpy(&sb, &s, sizeof sb);
  memcpy(&fb, &one, sizeof fb);
  m = 0u - (u >> 31);
  fb = (sb & m) | (fb & ~m);
  memcpy(&f, &fb, sizeof f);
  return v * f;
}

/* The same for channel ch of p->slope when the activation is PRelu (5). */
static inline float lc_apply_act_ch(float v, const lc_gemm_params *p, size_t ch) {
  if (p->act == 5) {
    v = lc_prelu(v, p->slope[ch]);
    return p->post ? v * p->post_mul + p->post_add : v;
  }
  return lc_apply_act(v, p);
}

#endif
