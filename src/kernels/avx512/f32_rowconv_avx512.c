/* Small-K conv rows for the few-channel stem route, AVX-512: 4 output channels x 64 pixels (16 zmm
 * accumulators). The AVX2 kernel's scheme (pixels are the lanes, a row pointer per k, the 4
 * weights per k broadcast) at twice the width and 4 vectors per channel: on a core with two
 * 512-bit FMA units the AVX2 form reached 50 GFLOP/s on the 3->64 stem at 112 px (Xeon, 84 is
 * its ymm peak), a third of the zmm peak. Each output is the same fma chain over k in order as
 * in the AVX2 kernel, and the epilogue the same operations, so the bits match the AVX2 table's. */
#include "kernels/avx512/avx512_common.h"
#include "kernels/avx512/avx512_kernels.h"

#define MR LC_ROWCONV_MR

/* Stores 16 lanes of row i at column j (lanes past n masked); the fast path (no accumulate, no
 * residual, act a compile-time constant) adds the row's bias and applies the activation. */
LC_AI void put(__m512 v, float *c, size_t i, size_t j, size_t n, const lc_gemm_params *p, const lc_avx512_act *a,
               const int act, const int general) {
  const size_t left = n - j;
  const __mmask16 m = lc_avx512_mask(left < 16 ? left : 16);
  if (general) {
    const int fin = p->final;
    const float *res = fin && p->residual ? p->residual + i * p->rs_res + j : NULL;
    const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias + j : NULL;
    const __m512 brow = fin && p->bias && p->bias_per_row ? _mm512_set1_ps(p->bias[i]) : _mm512_setzero_ps();
    lc_avx512_epilogue(v, c, bcol, brow, res, p, a, m);
    return;
  }
  if (p->bias) v = _mm512_add_ps(v, _mm512_set1_ps(p->bias[i]));
  lc_avx512_act ca = *a;
  ca.act = act;
  _mm512_mask_storeu_ps(c, m, lc_avx512_apply_act(v, &ca));
}

/* nv = vectors of 16 pixels (1..4), a compile-time constant at each call. */
LC_AI void rowconv_tile(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                        size_t rs_c, const lc_gemm_params *p, const int nv, const int act, const int general) {
  __m512 acc[MR][4];
  for (int i = 0; i < MR; i++)
    for (int v = 0; v < 4; v++) acc[i][v] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (size_t kk = 0; kk < k; kk++) {
    const float *r = rows[kk] + x0, *wk = w + kk * MR;
    __m512 b[4];
    for (int v = 0; v < 4; v++) b[v] = v < nv ? _mm512_loadu_ps(r + 16 * v) : _mm512_setzero_ps();
    for (int i = 0; i < MR; i++) {
      const __m512 av = _mm512_set1_ps(wk[i]);
      for (int v = 0; v < 4; v++)
        if (v < nv) acc[i][v] = _mm512_fmadd_ps(av, b[v], acc[i][v]);
    }
  }
  const lc_avx512_act a = lc_avx512_act_init(p);
  for (size_t i = 0; i < MR; i++) {
    if (i >= m) break;
    float *cr = c + i * rs_c;
    for (int v = 0; v < nv; v++)
      if ((size_t)(16 * v) < n) put(acc[i][v], cr + 16 * v, i, (size_t)(16 * v), n, p, &a, act, general);
  }
}

#define LC_TILE(nv, act, general) rowconv_tile(m, n, k, w, rows, x0, c, rs_c, p, nv, act, general)
#define LC_ACTS(nv)                          \
  switch (p->act) {                          \
    case 0: LC_TILE(nv, 0, 0); return;       \
    case 1: LC_TILE(nv, 1, 0); return;       \
    case 2: LC_TILE(nv, 2, 0); return;       \
    case 3: LC_TILE(nv, 3, 0); return;       \
    default: LC_TILE(nv, 4, 0); return;      \
  }

void lc_f32_rowconv_avx512(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0,
                           float *c, size_t rs_c, const lc_gemm_params *p) {
  if (m == 0 || n == 0) return;
  if (m > MR) m = MR;
  if (n > LC_ROWCONV_NR) n = LC_ROWCONV_NR;
  const int nv = (int)((n + 15) / 16);
  if (p->final && !p->accumulate && !p->residual && (!p->bias || p->bias_per_row) && (unsigned)p->act <= 4) {
    /* the stem's tiles: bias per channel, a fixed activation */
    if (nv == 4) LC_ACTS(4);
    if (nv == 3) LC_ACTS(3);
    if (nv == 2) LC_ACTS(2);
    LC_ACTS(1);
  }
  if (nv == 4) LC_TILE(4, 0, 1);
  else if (nv == 3) LC_TILE(3, 0, 1);
  else if (nv == 2) LC_TILE(2, 0, 1);
  else LC_TILE(1, 0, 1);
}
