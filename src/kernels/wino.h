/* Winograd F(2x2, 3x3) transforms used by src/conv/route_winograd.c. Adds and subtracts only (no
 * FMA contraction), so every version gives bitwise the same result; the C bodies below are compiled
 * once per ISA folder (wino_scalar.c for the baseline, wino_avx2.c with AVX2) and vectorized by gcc.
 * Transform index xi = 4 * row + column of the 4x4 transformed tile. */
#ifndef LC_KERNELS_WINO_H
#define LC_KERNELS_WINO_H

#include <stddef.h>

#include "kernels/kernels.h"

/* Most tiles (NCHW) or channels (NHWC) one call handles: bounds the local buffers. */
#define LC_WINO_SEG 64

typedef struct lc_wino_kernels {
  /* B^T d B of n <= SEG tiles side by side (NCHW): rows[r] is input row r from the first tile's
   * column, 2n + 2 values (tile k reads rows[r][2k .. 2k+3]); writes dst[xi * xs + k]. */
  void (*in_tiles)(size_t n, const float *const rows[4], float *dst, size_t xs);
  /* B^T d B of one tile for n <= SEG channels (NHWC): src[r*4+x] points at the channels of input
   * pixel (r, x); writes dst[xi * xs + k]. */
  void (*in_channels)(size_t n, const float *const src[16], float *dst, size_t xs);
  /* A^T M A of one tile for n <= SEG channels: m[xi * xs + k] -> y[dy * 2 + dx][k], then bias
   * (bv[k] per channel, else *b, else none) and the activation of p. */
  void (*out)(size_t n, const float *m, size_t xs, const float *bv, const float *b, const lc_gemm_params *p,
              float y[4][LC_WINO_SEG]);
  /* dst[k] = k in [lo, hi) ? src[k] : 0 for k < w: an input row with its padding (NCHW). A call, not
   * an inlined memcpy: gcc inlined the route's copies as `rep movsq`, 12% of a 64-channel 56x56 run
   * (perf), 3% as this loop. */
  void (*pad_row)(float *dst, const float *src, size_t lo, size_t hi, size_t w);
  /* U = G g G^T for n input channels j of noc <= nr <= SEG output channels i: g(i, tap t, j) at
   * d[i * ldr + t * ldt + j * ldj]; writes u[xi * xs + j * nr + i], zeros for noc <= i < nr. Every
   * version (and lc_wino_qweights_avx512) does the same fp32 operations: fp32 and Q8/Q4 convs on the
   * same weight values get the same bits. */
  void (*weights)(size_t noc, size_t nr, size_t n, const float *d, size_t ldr, size_t ldt, size_t ldj, float *u,
                  size_t xs);
  /* F(4x4, 3x3) (route_winograd4.c), the same operations in both layouts (same bits):
   * in_tiles4: B^T d B of n <= SEG tiles side by side (NCHW): rows[r] is input row r from the first
   * tile's column, 4n + 2 values (tile k reads rows[r][4k .. 4k+5]); writes dst[xi * xs + k].
   * in_channels4: of one tile for n <= SEG channels (NHWC): src[r*6+x] points at the channels of
   * input pixel (r, x); writes out[xi][k].
   * out4: A^T M A of one tile for n <= SEG channels, m[xi * xs + k] -> y[dy * 4 + dx][k], then bias
   * (bv[k], or none) and the activation of p. */
  void (*in_tiles4)(size_t n, const float *const rows[6], float *dst, size_t xs);
  void (*in_channels4)(size_t n, const float *const src[36], float out[36][LC_WINO_SEG]);
  void (*out4)(size_t n, const float *m, size_t xs, const float *bv, const lc_gemm_params *p,
               float y[16][LC_WINO_SEG]);
  /* weights4: F(4x4)'s U = G g G^T, arguments and layout as weights (36 xi planes); the fp32
   * operations of LC_WINO4_QTILE, so fp32 and Q8/Q4 weights of the same values get the same bits. */
  void (*weights4)(size_t noc, size_t nr, size_t n, const float *d, size_t ldr, size_t ldt, size_t ldj, float *u,
                   size_t xs);
} lc_wino_kernels;

extern const lc_wino_kernels lc_wino_scalar;
extern const lc_wino_kernels lc_wino_avx2; /* needs AVX2 */
struct lc_qmatrix;
/* The same transform on Q8/Q4 weights, dequantized in registers (w = fma(q, scale, offset), as
 * lc_dequant_rows): rows row0.. row0 + noc of m (K ordered (tap, ic), 9 taps), channels
 * [ic0, ic0 + n) with ic0 % 16 == 0; nr % 16 == 0; lc_wino_qweights_ok(m); f4: F(4x4)'s
 * (weights4), else F(2x2)'s (weights). The AVX-512 version needs AVX-512 F/BW/DQ/VL, the AVX2 one
 * AVX2 + FMA. */
void lc_wino_qweights_avx512(const struct lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n,
                             float *u, size_t xs, int f4);
void lc_wino_qweights_avx2(const struct lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n,
                           float *u, size_t xs, int f4);
/* 1 when no 16-channel group of a tap crosses a block and Q4 groups start on a byte (registry.c:
 * plain C, shared by both). */
int lc_wino_qweights_ok(const struct lc_qmatrix *m);

/* For the Q8/Q4 kernels: U rows of one input channel from its 9 dequantized taps x (a vector of
 * output channels each), the fp32 operations of wino_weights; V the vector type, P the intrinsic
 * prefix (_mm256, _mm512). */
#define LC_WINO_QTILE(name, V, P)                                                                     \
  static inline void name(const V x[9], float *o, size_t xs) {                                        \
    const V one = P##_set1_ps(1.0f), half = P##_set1_ps(0.5f), quarter = P##_set1_ps(0.25f);          \
    V t[4][3];                                                                                        \
    for (int c = 0; c < 3; c++) {                                                                     \
      V a = P##_add_ps(x[c], x[6 + c]);                                                               \
      t[0][c] = x[c];                                                                                 \
      t[1][c] = P##_add_ps(a, x[3 + c]);                                                              \
      t[2][c] = P##_sub_ps(a, x[3 + c]);                                                              \
      t[3][c] = x[6 + c];                                                                             \
    }                                                                                                 \
    for (int r = 0; r < 4; r++) {                                                                     \
      V b = P##_add_ps(t[r][0], t[r][2]), s0 = r == 0 || r == 3 ? one : half;                         \
      V s1 = r == 0 || r == 3 ? half : quarter;                                                       \
      float *p = o + (size_t)(4 * r) * xs;                                                            \
      P##_storeu_ps(p, P##_mul_ps(s0, t[r][0]));                                                      \
      P##_storeu_ps(p + xs, P##_mul_ps(s1, P##_add_ps(b, t[r][1])));                                  \
      P##_storeu_ps(p + 2 * xs, P##_mul_ps(s1, P##_sub_ps(b, t[r][1])));                              \
      P##_storeu_ps(p + 3 * xs, P##_mul_ps(s0, t[r][2]));                                             \
    }                                                                                                 \
  }

/* F(4x4): G = diag(LC_WINO4_F) E with E integer (rows 1 0 0, 1 1 1, 1 -1 1, 1 2 4, 1 -2 4, 0 0 1).
 * U = E g E^T in fp32, columns then rows, each E as s = a + c, p = a + 4c, then s +- b, p +- 2b:
 * the products by 2 and 4 are exact, so a fused multiply-add gives the same bits; then one multiply
 * by (float)(F[r] * F[s]): up to 6 roundings (4 sums, the scale and its product; test_wino_qweights). */
#define LC_WINO4_F {0.25, -1.0 / 6.0, -1.0 / 6.0, 1.0 / 24.0, 1.0 / 24.0, 1.0}

#define LC_WINO4_QE(V, P, a, b, c, e)                                                                  \
  do {                                                                                                \
    V s_ = P##_add_ps(a, c), p_ = P##_add_ps(a, P##_mul_ps(P##_set1_ps(4.0f), c));                    \
    V b2_ = P##_mul_ps(P##_set1_ps(2.0f), b);                                                         \
    e[0] = a, e[1] = P##_add_ps(s_, b), e[2] = P##_sub_ps(s_, b);                                     \
    e[3] = P##_add_ps(p_, b2_), e[4] = P##_sub_ps(p_, b2_), e[5] = c;                                 \
  } while (0)

/* F(4x4)'s U rows of one input channel from its 9 dequantized taps x (as LC_WINO_QTILE). */
#define LC_WINO4_QTILE(name, V, P)                                                                    \
  static inline void name(const V x[9], float *o, size_t xs) {                                        \
    static const double f[6] = LC_WINO4_F;                                                            \
    V t[3][6], e[6];                                                                                  \
    for (int c = 0; c < 3; c++) LC_WINO4_QE(V, P, x[c], x[3 + c], x[6 + c], t[c]);                   \
    for (int r = 0; r < 6; r++) {                                                                     \
      LC_WINO4_QE(V, P, t[0][r], t[1][r], t[2][r], e);                                                \
      for (int s = 0; s < 6; s++)                                                                     \
        P##_storeu_ps(o + (size_t)(6 * r + s) * xs, P##_mul_ps(P##_set1_ps((float)(f[r] * f[s])), e[s])); \
    }                                                                                                 \
  }

#endif

#ifdef LC_WINO_TEMPLATE
/* The transforms. Unit-stride loops with one store stream each, over local arrays where possible,
 * so the vectorizer needs no alias checks. */

static void wino_sub(float *restrict d, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t k = 0; k < n; k++) d[k] = a[k] - b[k];
}
static void wino_add(float *restrict d, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t k = 0; k < n; k++) d[k] = a[k] + b[k];
}

/* Column pass: h[r][x] holds input row r after the row pass. */
static void wino_in_cols(size_t n, float h[4][4][LC_WINO_SEG], float *dst, size_t xs) {
  for (int x = 0; x < 4; x++) {
    wino_sub(dst + (size_t)(0 + x) * xs, h[0][x], h[2][x], n);
    wino_add(dst + (size_t)(4 + x) * xs, h[1][x], h[2][x], n);
    wino_sub(dst + (size_t)(8 + x) * xs, h[2][x], h[1][x], n);
    wino_sub(dst + (size_t)(12 + x) * xs, h[1][x], h[3][x], n);
  }
}

static void wino_in_tiles(size_t n, const float *const rows[4], float *dst, size_t xs) {
  float h[4][4][LC_WINO_SEG];
  for (int r = 0; r < 4; r++) {
    const float *s = rows[r];
    for (size_t k = 0; k < n; k++) {
      float d0 = s[2 * k], d1 = s[2 * k + 1], d2 = s[2 * k + 2], d3 = s[2 * k + 3];
      h[r][0][k] = d0 - d2;
      h[r][1][k] = d1 + d2;
      h[r][2][k] = d2 - d1;
      h[r][3][k] = d1 - d3;
    }
  }
  wino_in_cols(n, h, dst, xs);
}

static void wino_in_channels(size_t n, const float *const src[16], float *dst, size_t xs) {
  float h[4][4][LC_WINO_SEG];
  for (int r = 0; r < 4; r++) {
    const float *s0 = src[r * 4], *s1 = src[r * 4 + 1], *s2 = src[r * 4 + 2], *s3 = src[r * 4 + 3];
    for (size_t k = 0; k < n; k++) {
      h[r][0][k] = s0[k] - s2[k];
      h[r][1][k] = s1[k] + s2[k];
      h[r][2][k] = s2[k] - s1[k];
      h[r][3][k] = s1[k] - s3[k];
    }
  }
  wino_in_cols(n, h, dst, xs);
}

/* The switch sits outside the loops so each loop vectorizes. */
static void wino_bias_act(float *y, size_t n, const float *bv, const float *b, const lc_gemm_params *p) {
  if (bv)
    for (size_t k = 0; k < n; k++) y[k] += bv[k];
  else if (b)
    for (size_t k = 0; k < n; k++) y[k] += *b;
  switch (p->act) {
    case 0: break;
    case 1:
      for (size_t k = 0; k < n; k++) y[k] = y[k] > 0.0f ? y[k] : 0.0f;
      break;
    case 2: {
      float lo = p->act_min, hi = p->act_max;
      for (size_t k = 0; k < n; k++) y[k] = y[k] < lo ? lo : (y[k] > hi ? hi : y[k]);
      break;
    }
    case 5: /* PRelu: y[k] is channel k of the caller's panel, as bv[k] */
      for (size_t k = 0; k < n; k++) y[k] = lc_prelu(y[k], p->slope[k]);
      break;
    default:
      for (size_t k = 0; k < n; k++) y[k] = lc_apply_act(y[k], p);
      return; /* post included */
  }
  if (p->post)
    for (size_t k = 0; k < n; k++) y[k] = y[k] * p->post_mul + p->post_add;
}

static void wino_out(size_t n, const float *m, size_t xs, const float *bv, const float *b, const lc_gemm_params *p,
                     float y[4][LC_WINO_SEG]) {
  float t0[4][LC_WINO_SEG], t1[4][LC_WINO_SEG];
  for (int r = 0; r < 4; r++) {
    const float *a = m + (size_t)(r * 4) * xs, *b1 = a + xs, *c2 = b1 + xs, *d3 = c2 + xs;
    for (size_t k = 0; k < n; k++) {
      t0[r][k] = a[k] + b1[k] + c2[k];
      t1[r][k] = b1[k] - c2[k] - d3[k];
    }
  }
  for (size_t k = 0; k < n; k++) {
    y[0][k] = t0[0][k] + t0[1][k] + t0[2][k];
    y[1][k] = t1[0][k] + t1[1][k] + t1[2][k];
    y[2][k] = t0[1][k] - t0[2][k] - t0[3][k];
    y[3][k] = t1[1][k] - t1[2][k] - t1[3][k];
  }
  for (int v = 0; v < 4; v++) wino_bias_act(y[v], n, bv, b, p);
}

static void wino_pad_row(float *dst, const float *src, size_t lo, size_t hi, size_t w) {
  for (size_t k = 0; k < lo; k++) dst[k] = 0.0f;
  for (size_t k = lo; k < hi; k++) dst[k] = src[k];
  for (size_t k = hi; k < w; k++) dst[k] = 0.0f;
}

/* Rows 1-2 and columns 1-2 of G carry a factor 1/2: the sums are formed without it and scaled at
 * the end (exact: powers of two). fp32, in this order in every version: a = g0 + g2 and
 * t1,2 = a +- g1 per column, then the same per row: up to 4 roundings (the tests' bound counts them). */
static void wino_weights(size_t noc, size_t nr, size_t n, const float *d, size_t ldr, size_t ldt, size_t ldj,
                         float *u, size_t xs) {
  static const float f[4] = {1.0f, 0.5f, 0.5f, 1.0f};
  for (size_t j = 0; j < n; j++) {
    float g[9][LC_WINO_SEG], t[4][3][LC_WINO_SEG];
    for (int k = 0; k < 9; k++) {
      const float *s = d + (size_t)k * ldt + j * ldj;
      for (size_t i = 0; i < noc; i++) g[k][i] = s[i * ldr];
      for (size_t i = noc; i < nr; i++) g[k][i] = 0.0f;
    }
    for (int c = 0; c < 3; c++)
      for (size_t i = 0; i < nr; i++) {
        float a = g[c][i] + g[6 + c][i];
        t[0][c][i] = g[c][i];
        t[1][c][i] = a + g[3 + c][i];
        t[2][c][i] = a - g[3 + c][i];
        t[3][c][i] = g[6 + c][i];
      }
    float *o = u + j * nr;
    for (int r = 0; r < 4; r++) {
      float *o0 = o + (size_t)(4 * r) * xs, *o1 = o0 + xs, *o2 = o1 + xs, *o3 = o2 + xs;
      float s0 = f[r], s1 = 0.5f * f[r];
      for (size_t i = 0; i < nr; i++) {
        float b = t[r][0][i] + t[r][2][i];
        o0[i] = s0 * t[r][0][i];
        o1[i] = s1 * (b + t[r][1][i]);
        o2[i] = s1 * (b - t[r][1][i]);
        o3[i] = s0 * t[r][2][i];
      }
    }
  }
}

/* F(4x4) B^T (points 0, +-1, +-2, +-1/2) over six vectors of w values, one store stream per output
 * (restrict: no alias checks, so it vectorizes). Down the rows first, then along them, in both
 * layouts (the same bits). */
static void wino4_bt6(size_t w, const float *r0, const float *r1, const float *r2, const float *r3, const float *r4,
                      const float *r5, float *restrict o0, float *restrict o1, float *restrict o2, float *restrict o3,
                      float *restrict o4, float *restrict o5) {
  for (size_t c = 0; c < w; c++) {
    float a0 = r0[c], a1 = r1[c], a2 = r2[c], a3 = r3[c], a4 = r4[c], a5 = r5[c];
    o0[c] = 4.0f * a0 - 5.0f * a2 + a4;
    o1[c] = -4.0f * (a1 + a2) + (a3 + a4);
    o2[c] = 4.0f * (a1 - a2) + (a4 - a3);
    o3[c] = 2.0f * (a3 - a1) + (a4 - a2);
    o4[c] = 2.0f * (a1 - a3) + (a4 - a2);
    o5[c] = 4.0f * a1 - 5.0f * a3 + a5;
  }
}
/* a[0..5] -> o[i * os + c] */
static void wino4_bt(size_t w, const float *const a[6], float *o, size_t os) {
  wino4_bt6(w, a[0], a[1], a[2], a[3], a[4], a[5], o, o + os, o + 2 * os, o + 3 * os, o + 4 * os, o + 5 * os);
}

/* NCHW: the row pass runs once per input column (adjacent tiles share two); the pass along the
 * rows reads every fourth value through four phase arrays, so both vectorize. */
static void wino4_in_tiles(size_t n, const float *const rows[6], float *dst, size_t xs) {
  float t[6][4 * LC_WINO_SEG + 2], ph[4][LC_WINO_SEG + 1];
  wino4_bt(4 * n + 2, rows, &t[0][0], 4 * LC_WINO_SEG + 2);
  const float *a[6] = {ph[0], ph[1], ph[2], ph[3], ph[0] + 1, ph[1] + 1};
  for (int i = 0; i < 6; i++) {
    for (size_t k = 0; k <= n; k++) {
      ph[0][k] = t[i][4 * k];
      ph[1][k] = t[i][4 * k + 1];
    }
    for (size_t k = 0; k < n; k++) {
      ph[2][k] = t[i][4 * k + 2];
      ph[3][k] = t[i][4 * k + 3];
    }
    wino4_bt(n, a, dst + (size_t)(6 * i) * xs, xs);
  }
}

static void wino4_in_channels(size_t n, const float *const src[36], float out[36][LC_WINO_SEG]) {
  float t[6][6][LC_WINO_SEG]; /* [transformed row][column][channel] */
  for (int x = 0; x < 6; x++) {
    const float *r[6] = {src[x], src[6 + x], src[12 + x], src[18 + x], src[24 + x], src[30 + x]};
    wino4_bt(n, r, &t[0][x][0], 6 * LC_WINO_SEG);
  }
  for (int i = 0; i < 6; i++) {
    const float *a[6] = {t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5]};
    wino4_bt(n, a, out[6 * i], LC_WINO_SEG);
  }
}

/* A^T of F(4x4) on one line of 6 values (a[j * st + k], k < n) into 4 (o0..o3 [k]). */
static inline void wino4_at(size_t n, const float *a, size_t st, float *o0, float *o1, float *o2, float *o3) {
  const float *a0 = a, *a1 = a + st, *a2 = a + 2 * st, *a3 = a + 3 * st, *a4 = a + 4 * st, *a5 = a + 5 * st;
  for (size_t k = 0; k < n; k++) {
    float s12 = a1[k] + a2[k], d12 = a1[k] - a2[k], s34 = a3[k] + a4[k], d34 = a3[k] - a4[k];
    o0[k] = a0[k] + s12 + s34;
    o1[k] = d12 + 2.0f * d34;
    o2[k] = s12 + 4.0f * s34;
    o3[k] = d12 + 8.0f * d34 + a5[k];
  }
}

static void wino4_out(size_t n, const float *m, size_t xs, const float *bv, const lc_gemm_params *p,
                      float y[16][LC_WINO_SEG]) {
  float t[24][LC_WINO_SEG]; /* 4 rows x 6 columns */
  for (int x = 0; x < 6; x++)
    wino4_at(n, m + (size_t)x * xs, 6 * xs, t[x], t[6 + x], t[12 + x], t[18 + x]);
  for (int r = 0; r < 4; r++) wino4_at(n, t[6 * r], LC_WINO_SEG, y[4 * r], y[4 * r + 1], y[4 * r + 2], y[4 * r + 3]);
  for (int v = 0; v < 16; v++) wino_bias_act(y[v], n, bv, NULL, p);
}

/* One E pass (LC_WINO4_QE) over n values. */
static void wino4_e(size_t n, const float *a, const float *b, const float *c, float e[6][LC_WINO_SEG]) {
  for (size_t k = 0; k < n; k++) {
    float s = a[k] + c[k], p = a[k] + 4.0f * c[k], b2 = 2.0f * b[k];
    e[0][k] = a[k];
    e[1][k] = s + b[k];
    e[2][k] = s - b[k];
    e[3][k] = p + b2;
    e[4][k] = p - b2;
    e[5][k] = c[k];
  }
}

static void wino4_weights(size_t noc, size_t nr, size_t n, const float *d, size_t ldr, size_t ldt, size_t ldj,
                          float *u, size_t xs) {
  static const double f[6] = LC_WINO4_F;
  for (size_t j = 0; j < n; j++) {
    float g[9][LC_WINO_SEG], t[3][6][LC_WINO_SEG], e[6][LC_WINO_SEG];
    for (int k = 0; k < 9; k++) {
      const float *s = d + (size_t)k * ldt + j * ldj;
      for (size_t i = 0; i < noc; i++) g[k][i] = s[i * ldr];
      for (size_t i = noc; i < nr; i++) g[k][i] = 0.0f;
    }
    for (int c = 0; c < 3; c++) wino4_e(nr, g[c], g[3 + c], g[6 + c], t[c]);
    for (int r = 0; r < 6; r++) {
      wino4_e(nr, t[0][r], t[1][r], t[2][r], e);
      for (int s = 0; s < 6; s++) {
        float sc = (float)(f[r] * f[s]), *o = u + (size_t)(6 * r + s) * xs + j * nr;
        for (size_t i = 0; i < nr; i++) o[i] = sc * e[s][i];
      }
    }
  }
}

#define LC_WINO_TABLE                                                                                           \
  {wino_in_tiles, wino_in_channels, wino_out, wino_pad_row, wino_weights, wino4_in_tiles, wino4_in_channels, \
   wino4_out, wino4_weights}
#endif
