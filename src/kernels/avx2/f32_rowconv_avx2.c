/* Small-K conv rows for the few-channel stem route: 4 output channels x 24 pixels (12 ymm
 * accumulators). Pixels are the vector lanes, read from a row pointer per k (the padded,
 * stride-phased input rows the route builds), so no patch panel is packed; the 4 weights per k
 * are broadcast. 4 channels fit the stems' 16/32/64 outputs with no dead rows (6x16 wasted 2 of
 * 66 rows at 64 channels and 4 of 36 at 32). */
#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

#define MR LC_ROWCONV_MR
#define NR 24 /* this kernel's tile; a call's LC_ROWCONV_NR columns are covered in chunks of NR */

/* Stores 8 lanes of row i at column j; the full-tile fast path (no accumulate, no residual, act a
 * compile-time constant) keeps the 12 accumulators in registers. */
LC_AI void put(__m256 v, float *c, size_t i, size_t j, size_t n, const lc_gemm_params *p, const lc_avx2_act *a,
               const int act, const int general, const int full) {
  const size_t left = n - j;
  if (general) {
    const int fin = p->final;
    const float *res = fin && p->residual ? p->residual + i * p->rs_res + j : NULL;
    const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias + j : NULL;
    const __m256 brow = fin && p->bias && p->bias_per_row ? _mm256_set1_ps(p->bias[i]) : _mm256_setzero_ps();
    lc_avx2_epilogue(v, c, bcol, brow, res, p, a, lc_avx2_mask(left < 8 ? left : 8), left < 8);
    return;
  }
  if (p->bias) v = _mm256_add_ps(v, _mm256_set1_ps(p->bias[i]));
  lc_avx2_act ca = *a;
  ca.act = act;
  v = lc_avx2_apply_act(v, &ca);
  if (full) _mm256_storeu_ps(c, v);
  else lc_avx2_store_n(c, v, left);
}

/* nv = vectors of 8 pixels (1..3), a compile-time constant at each call. */
LC_AI void rowconv_tile(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                        size_t rs_c, const lc_gemm_params *p, const int nv, const int act, const int general,
                        const int full) {
  __m256 c0a = _mm256_setzero_ps(), c0b = c0a, c0c = c0a, c1a = c0a, c1b = c0a, c1c = c0a;
  __m256 c2a = c0a, c2b = c0a, c2c = c0a, c3a = c0a, c3b = c0a, c3c = c0a;
  /* The next tile's output lines, fetched while this one computes: the stems' outputs (3-13 MB)
   * miss L2, and perf put the stall on the stores after the tile's (see docs/benchmarks.md, stop
   * 34). Its first and last float: at the stems' widths its 96 bytes span 2 lines. Integer address
   * math: past the last tile the lines lie beyond the row (a hint, no fault). */
  for (size_t i = 0; i < MR; i++) {
    const uintptr_t next = (uintptr_t)(c + i * rs_c) + NR * sizeof(float);
    _mm_prefetch((const char *)next, _MM_HINT_T0);
    _mm_prefetch((const char *)(next + (NR - 1) * sizeof(float)), _MM_HINT_T0);
  }
#pragma GCC unroll 3
  for (size_t kk = 0; kk < k; kk++) {
    const float *r = rows[kk] + x0, *wk = w + kk * MR;
    const __m256 b0 = _mm256_loadu_ps(r);
    const __m256 b1 = nv >= 2 ? _mm256_loadu_ps(r + 8) : b0;
    const __m256 b2 = nv >= 3 ? _mm256_loadu_ps(r + 16) : b0;
#define LC_ROW(ca, cb, cc, i)                               \
  do {                                                      \
    const __m256 av = _mm256_broadcast_ss(wk + (i));        \
    ca = _mm256_fmadd_ps(av, b0, ca);                       \
    if (nv >= 2) cb = _mm256_fmadd_ps(av, b1, cb);          \
    if (nv >= 3) cc = _mm256_fmadd_ps(av, b2, cc);          \
  } while (0)
    LC_ROW(c0a, c0b, c0c, 0);
    LC_ROW(c1a, c1b, c1c, 1);
    LC_ROW(c2a, c2b, c2c, 2);
    LC_ROW(c3a, c3b, c3c, 3);
#undef LC_ROW
  }
  const lc_avx2_act a = lc_avx2_act_init(p);
#define LC_PUT(ca, cb, cc, i)                                                  \
  do {                                                                         \
    if (m > (i)) {                                                             \
      float *cr = c + (i) * rs_c;                                              \
      put(ca, cr, i, 0, n, p, &a, act, general, full);                         \
      if (nv >= 2) put(cb, cr + 8, i, 8, n, p, &a, act, general, full);        \
      if (nv >= 3) put(cc, cr + 16, i, 16, n, p, &a, act, general, full);      \
    }                                                                          \
  } while (0)
  LC_PUT(c0a, c0b, c0c, 0);
  LC_PUT(c1a, c1b, c1c, 1);
  LC_PUT(c2a, c2b, c2c, 2);
  LC_PUT(c3a, c3b, c3c, 3);
#undef LC_PUT
}

/* full (n == NR): every store a whole vector, no lane count tested */
#define LC_TILE(nv, act, general, full) \
  rowconv_tile(m, (full) ? NR : n, k, w, rows, x0, c, rs_c, p, nv, act, general, full)

static void rowconv_chunk(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                          size_t rs_c, const lc_gemm_params *p) {
  const int nv = n > 16 ? 3 : n > 8 ? 2 : 1;
  if (p->final && !p->accumulate && !p->residual && (!p->bias || p->bias_per_row) && (unsigned)p->act <= 4) {
    /* the stem's tiles: bias per channel, a fixed activation */
#define LC_ACTS(nv, full)                     \
  switch (p->act) {                           \
    case 0: LC_TILE(nv, 0, 0, full); return;  \
    case 1: LC_TILE(nv, 1, 0, full); return;  \
    case 2: LC_TILE(nv, 2, 0, full); return;  \
    case 3: LC_TILE(nv, 3, 0, full); return;  \
    default: LC_TILE(nv, 4, 0, full); return; \
  }
    if (n == NR) LC_ACTS(3, 1);
    if (nv == 3) LC_ACTS(3, 0);
    if (nv == 2) LC_ACTS(2, 0);
    LC_ACTS(1, 0);
#undef LC_ACTS
  }
  if (nv == 3) LC_TILE(3, 0, 1, 0);
  else if (nv == 2) LC_TILE(2, 0, 1, 0);
  else LC_TILE(1, 0, 1, 0);
}

void lc_f32_rowconv_avx2(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                         size_t rs_c, const lc_gemm_params *p) {
  if (m == 0 || n == 0) return;
  if (m > MR) m = MR;
  if (n > LC_ROWCONV_NR) n = LC_ROWCONV_NR;
  const int cols = p->residual || (p->bias && !p->bias_per_row);
  for (size_t j = 0; j < n; j += NR) {
    /* the chunk's columns of a per-column bias and of the residual; the stem's calls have neither,
     * so p goes through uncopied */
    lc_gemm_params q;
    const lc_gemm_params *pc = p;
    if (cols) {
      q = *p;
      if (q.bias && !q.bias_per_row) q.bias += j;
      if (q.residual) q.residual += j;
      pc = &q;
    }
    rowconv_chunk(m, n - j < NR ? n - j : NR, k, w, rows, x0 + j, c + j, rs_c, pc);
  }
}
