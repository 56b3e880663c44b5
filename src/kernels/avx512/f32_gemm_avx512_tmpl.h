/* Body of an f32 GEMM microkernel with zmm registers, MR x (16 * NV). Included by the kernel file
 * with LC_MR (rows), LC_NV (1, 2 or 3 zmm per row) and LC_FN (function name) defined, so that
 * several tiles can be measured from one source. The third vector's code is compiled only for
 * LC_NV 3 (LC_V3), and with LC_TAIL1 defined the kernel takes one column more (n <= 16 NV + 1:
 * column 16 NV as one ymm of the MR rows, A's column loaded whole; LC_T1): the NV 2 kernels are
 * the code they were. */
#include "kernels/avx512/avx512_common.h"

#define LC_NR (16 * LC_NV)
#define LC_CAT_(a, b) a##b
#define LC_CAT(a, b) LC_CAT_(a, b)
#define LC_ROWS LC_CAT(LC_ROWS_, LC_MR)
#define LC_ROWS_4(X) X(0) X(1) X(2) X(3)
#define LC_ROWS_6(X) LC_ROWS_4(X) X(4) X(5)
#define LC_ROWS_8(X) LC_ROWS_6(X) X(6) X(7)
#define LC_ROWS_10(X) LC_ROWS_8(X) X(8) X(9)
#define LC_ROWS_12(X) LC_ROWS_10(X) X(10) X(11)
#define LC_ROWS_14(X) LC_ROWS_12(X) X(12) X(13)
#define LC_ROWS_16(X) LC_ROWS_14(X) X(14) X(15)
#define LC_ROWS_24(X) LC_ROWS_16(X) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
#define LC_ROWS_28(X) LC_ROWS_24(X) X(24) X(25) X(26) X(27)
#ifdef LC_TAIL1
#define LC_T1(...) __VA_ARGS__
#else
#define LC_T1(...)
#endif
#if LC_NV == 3
#define LC_V3(x) x
#define LC_NACC 3
#else
#define LC_V3(x)
#define LC_NACC 2
#endif

/* acc[i][v] += A(i, :) * B(:, 16v..16v+15). Rows >= m read row m-1 (ao), results dropped. */
LC_AI void LC_CAT(LC_FN, _loop)(size_t k, const float *a, const size_t *ao, size_t cs_a, const float *b,
                                size_t rs_b, __mmask16 mlo, __mmask16 mhi, __mmask16 m3, const int masked,
                                const void *pf, size_t pf_step, __m512 acc[LC_MR][LC_NACC] LC_T1(, const int tail, __mmask8 tm,
                                                                                 __m256 *tacc)) {
  (void)m3;
  LC_T1(__m256 ct = _mm256_setzero_ps();)
#define LC_DECL(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps(); const size_t o##i = ao[i]; \
  LC_V3(__m512 c##i##c = _mm512_setzero_ps();)
  LC_ROWS(LC_DECL)
#undef LC_DECL
#pragma GCC unroll 4
  for (size_t kk = 0; kk < k; kk++) {
    const float *bk = b + kk * rs_b;
    const float *ak = a + kk * cs_a;
    __m512 b0, b1 = _mm512_setzero_ps();
    LC_V3(__m512 b2;)
    if (masked) {
      b0 = _mm512_maskz_loadu_ps(mlo, bk);
      /* With n <= 16 (mhi = 0) bk + 16 may lie past the end of B: integer math keeps that legal C;
       * a zero-mask load touches no memory. */
      if (LC_NV >= 2) b1 = _mm512_maskz_loadu_ps(mhi, (const float *)((uintptr_t)bk + 16 * sizeof(float)));
      LC_V3(b2 = _mm512_maskz_loadu_ps(m3, (const float *)((uintptr_t)bk + 32 * sizeof(float)));)
    } else {
      b0 = _mm512_loadu_ps(bk);
      if (LC_NV >= 2) b1 = _mm512_loadu_ps(bk + 16);
      LC_V3(b2 = _mm512_loadu_ps(bk + 32);)
    }
    /* an address, not an object: integer math keeps a line past the caller's block legal C */
    if (pf) _mm_prefetch((const char *)((uintptr_t)pf + pf_step * kk), _MM_HINT_T1);
    /* the extra column: A's column of MR rows (rows >= m masked) times B(kk, LC_NR) */
    LC_T1(if (tail) ct = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(tm, ak), _mm256_set1_ps(bk[LC_NR]), ct);)
#define LC_ROW(i)                                                      \
  {                                                                    \
    const __m512 av = _mm512_set1_ps(ak[o##i]);                        \
    c##i##a = _mm512_fmadd_ps(av, b0, c##i##a);                        \
    if (LC_NV >= 2) c##i##b = _mm512_fmadd_ps(av, b1, c##i##b);        \
    LC_V3(c##i##c = _mm512_fmadd_ps(av, b2, c##i##c);)                 \
  }
    LC_ROWS(LC_ROW)
#undef LC_ROW
  }
#define LC_OUT(i) acc[i][0] = c##i##a; acc[i][1] = c##i##b; LC_V3(acc[i][2] = c##i##c;)
  LC_ROWS(LC_OUT)
  LC_T1(if (tail) *tacc = ct;)
#undef LC_OUT
}

#if LC_MR == 8 && LC_NV == 2 && !defined(LC_TAIL1)
#define LC_SLOOP 1
/* The same sums for 8 rows evenly rs apart (NHWC pixels: the direct and 1x1 routes read A in
 * place). Two row pointers and two strides address all eight rows (p0 + rs x {0, 1, 2, 4},
 * p0 + 3rs x {1, 2}, p4 + {rs, 3rs}, p4 = p0 + 4rs): with eight row offsets GCC ran short of
 * registers, kept four in xmm registers and moved each back once per k (vmovq: a port 0 uop, so
 * 20 uops for Intel's two FMA ports per 16 FMAs). */
LC_AI void LC_CAT(LC_FN, _sloop)(size_t k, const float *a, size_t rs, size_t cs_a, const float *b, size_t rs_b,
                                 __mmask16 mlo, __mmask16 mhi, const int masked, const void *pf, size_t pf_step,
                                 __m512 acc[LC_MR][LC_NACC]) {
  const size_t RS = rs * sizeof(float), R3 = 3 * RS, CS = cs_a * sizeof(float);
  const char *p0 = (const char *)a, *p4 = p0 + 4 * RS;
#define LC_DECL(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
  LC_ROWS(LC_DECL)
#undef LC_DECL
#pragma GCC unroll 4
  for (size_t kk = 0; kk < k; kk++) {
    const float *bk = b + kk * rs_b;
    __m512 b0, b1;
    if (masked) {
      b0 = _mm512_maskz_loadu_ps(mlo, bk);
      b1 = _mm512_maskz_loadu_ps(mhi, (const float *)((uintptr_t)bk + 16 * sizeof(float)));
    } else {
      b0 = _mm512_loadu_ps(bk);
      b1 = _mm512_loadu_ps(bk + 16);
    }
    if (pf) _mm_prefetch((const char *)((uintptr_t)pf + pf_step * kk), _MM_HINT_T1);
#define LC_SROW(i, addr)                                               \
  {                                                                    \
    const __m512 av = _mm512_set1_ps(*(const float *)(addr));          \
    c##i##a = _mm512_fmadd_ps(av, b0, c##i##a);                        \
    c##i##b = _mm512_fmadd_ps(av, b1, c##i##b);                        \
  }
    LC_SROW(0, p0) LC_SROW(1, p0 + RS) LC_SROW(2, p0 + 2 * RS) LC_SROW(3, p0 + R3)
    LC_SROW(4, p4) LC_SROW(5, p4 + RS) LC_SROW(6, p0 + 2 * R3) LC_SROW(7, p4 + R3)
#undef LC_SROW
    p0 += CS, p4 += CS;
  }
#define LC_OUT(i) acc[i][0] = c##i##a; acc[i][1] = c##i##b;
  LC_ROWS(LC_OUT)
#undef LC_OUT
}
#endif

static void LC_CAT(LC_FN, _store_row)(__m512 v0, __m512 v1, size_t i, size_t n, float *cr,
                                      const lc_gemm_params *p, const lc_avx512_act *act) {
  const int fin = p->final;
  const float *res = fin && p->residual ? p->residual + i * p->rs_res : NULL;
  const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias : NULL;
  const __m512 brow = fin && p->bias && p->bias_per_row ? _mm512_set1_ps(p->bias[i]) : _mm512_setzero_ps();
  lc_avx512_epilogue(v0, cr, bcol, brow, res, p, act, lc_avx512_mask(n < 16 ? n : 16));
  if (LC_NV >= 2 && n > 16)
    lc_avx512_epilogue(v1, cr + 16, bcol ? bcol + 16 : NULL, brow, res ? res + 16 : NULL, p, act,
                       lc_avx512_mask(LC_NV == 3 && n > 32 ? 16 : n - 16));
}

#if LC_NV == 3
/* Columns 32 .. n - 1 of row i (n > 32): the third vector. */
static void LC_CAT(LC_FN, _store_v3)(__m512 v, size_t i, size_t n, float *cr, const lc_gemm_params *p,
                                     const lc_avx512_act *act) {
  const int fin = p->final;
  const float *res = fin && p->residual ? p->residual + i * p->rs_res + 32 : NULL;
  const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias + 32 : NULL;
  const __m512 brow = fin && p->bias && p->bias_per_row ? _mm512_set1_ps(p->bias[i]) : _mm512_setzero_ps();
  lc_avx512_epilogue(v, cr + 32, bcol, brow, res, p, act, lc_avx512_mask(n - 32));
}
#endif

#ifdef LC_TAIL1
/* Column LC_NR of row i (the extra column): the vector epilogue on one lane. */
static void LC_CAT(LC_FN, _store_t1)(float v, size_t i, float *cr, const lc_gemm_params *p,
                                     const lc_avx512_act *act) {
  const int fin = p->final;
  const float *res = fin && p->residual ? p->residual + i * p->rs_res + LC_NR : NULL;
  const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias + LC_NR : NULL;
  const __m512 brow = fin && p->bias && p->bias_per_row ? _mm512_set1_ps(p->bias[i]) : _mm512_setzero_ps();
  lc_avx512_epilogue(_mm512_set1_ps(v), cr + LC_NR, bcol, brow, res, p, act, 1);
}
#endif

#ifdef LC_FINAL_FAST
/* The final epilogue with the activation fixed at compile time (LC_FINAL_FAST, the table's
 * f32_gemm_final): C (+)= acc, the row's bias, the activation, when there is no residual, no post
 * affine and the bias is per row or absent. The generic path tests accumulate, final, bias,
 * residual and the activation per vector: 11-12 % of an 8x32 call at k = 64 on a Xeon (146 vs
 * 165 GFLOP/s). Same operations in the same order as lc_avx512_epilogue, so the same bits. A
 * function of its own: inside the GEMM every variant tried moved F(2x2)'s memory-bound calls at
 * 256-512 channels by 2-17 % (code placement), though they never take it. */
LC_AI void LC_CAT(LC_FN, _store_fast)(__m512 acc[LC_MR][LC_NACC], size_t m, size_t n, float *c, size_t rs_c,
                                      const lc_gemm_params *p, const lc_avx512_act *a, const int act) {
  const __mmask16 m0 = lc_avx512_mask(n < 16 ? n : 16);
#if LC_NV == 3
  const __mmask16 m1 = lc_avx512_mask(n > 32 ? 16 : n > 16 ? n - 16 : 0), m2 = lc_avx512_mask(n > 32 ? n - 32 : 0);
#else
  const __mmask16 m1 = lc_avx512_mask(n > 16 ? n - 16 : 0);
#endif
  const int accum = p->accumulate;
  lc_avx512_act ca = *a;
  ca.act = act;
  for (size_t i = 0; i < m; i++) {
    float *cr = c + i * rs_c;
    __m512 v0 = acc[i][0], v1 = acc[i][1];
    if (accum) v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
    if (p->bias) v0 = _mm512_add_ps(v0, _mm512_set1_ps(p->bias[i]));
    _mm512_mask_storeu_ps(cr, m0, lc_avx512_act_only(v0, &ca));
    if (LC_NV >= 2 && n > 16) {
      if (accum) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
      if (p->bias) v1 = _mm512_add_ps(v1, _mm512_set1_ps(p->bias[i]));
      _mm512_mask_storeu_ps(cr + 16, m1, lc_avx512_act_only(v1, &ca));
    }
#if LC_NV == 3
    if (n > 32) {
      __m512 v2 = acc[i][2];
      if (accum) v2 = _mm512_add_ps(v2, _mm512_maskz_loadu_ps(m2, cr + 32));
      if (p->bias) v2 = _mm512_add_ps(v2, _mm512_set1_ps(p->bias[i]));
      _mm512_mask_storeu_ps(cr + 32, m2, lc_avx512_act_only(v2, &ca));
    }
#endif
  }
}
#endif

void LC_FN(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a, const float *b, size_t rs_b,
           float *c, size_t rs_c, const lc_gemm_params *p) {
#define LC_IDX(i) i,
  static const size_t packed_ao[LC_MR] = {LC_ROWS(LC_IDX)};
#undef LC_IDX
  __m512 acc[LC_MR][LC_NACC];
  size_t ao[LC_MR];
  if (m == 0 || n == 0) return;
  if (m > LC_MR) m = LC_MR;
#ifdef LC_TAIL1
  if (n > LC_NR) {
    if (rs_a != 1) { /* A's column not contiguous: the extra column as a tile of its own (routes pass packed A) */
      lc_gemm_params q = *p;
      if (q.bias && !q.bias_per_row) q.bias += LC_NR;
      if (q.residual) q.residual += LC_NR;
      LC_FN(m, LC_NR, k, a, rs_a, cs_a, b, rs_b, c, rs_c, p);
      LC_FN(m, 1, k, a, rs_a, cs_a, b + LC_NR, rs_b, c + LC_NR, rs_c, &q);
      return;
    }
    const __mmask8 tm = (__mmask8)((1u << m) - 1u);
    __m256 ct;
    for (size_t i = 0; i < LC_MR; i++) ao[i] = i < m ? i : m - 1;
    if (m == LC_MR) LC_CAT(LC_FN, _loop)(k, a, packed_ao, cs_a, b, rs_b, 0, 0, 0, 0, p->pf, p->pf_step, acc, 1, tm, &ct);
    else LC_CAT(LC_FN, _loop)(k, a, ao, cs_a, b, rs_b, 0, 0, 0, 0, p->pf, p->pf_step, acc, 1, tm, &ct);
    float tv[8];
    _mm256_storeu_ps(tv, ct);
    const lc_avx512_act tact = lc_avx512_act_init(p);
    for (size_t i = 0; i < m; i++) LC_CAT(LC_FN, _store_t1)(tv[i], i, c + i * rs_c, p, &tact);
    n = LC_NR; /* then the first LC_NR columns are stored as a full tile's */
    goto store;
  }
#else
  if (n > LC_NR) n = LC_NR;
#endif
  for (size_t i = 0; i < LC_MR; i++) ao[i] = (i < m ? i : m - 1) * rs_a;
  if (n == LC_NR) {
    if (m == LC_MR && rs_a == 1) LC_CAT(LC_FN, _loop)(k, a, packed_ao, cs_a, b, rs_b, 0, 0, 0, 0, p->pf, p->pf_step, acc LC_T1(, 0, 0, NULL));
#ifdef LC_SLOOP
    else if (m == LC_MR) LC_CAT(LC_FN, _sloop)(k, a, rs_a, cs_a, b, rs_b, 0, 0, 0, p->pf, p->pf_step, acc);
#endif
    else LC_CAT(LC_FN, _loop)(k, a, ao, cs_a, b, rs_b, 0, 0, 0, 0, p->pf, p->pf_step, acc LC_T1(, 0, 0, NULL));
  } else {
#ifdef LC_SLOOP
    if (m == LC_MR && rs_a != 1) {
      LC_CAT(LC_FN, _sloop)(k, a, rs_a, cs_a, b, rs_b, lc_avx512_mask(n < 16 ? n : 16),
                            lc_avx512_mask(n > 16 ? n - 16 : 0), 1, p->pf, p->pf_step, acc);
      goto sloop_done;
    }
#endif
#if LC_NV == 3
    LC_CAT(LC_FN, _loop)(k, a, ao, cs_a, b, rs_b, lc_avx512_mask(n < 16 ? n : 16),
                         lc_avx512_mask(n > 32 ? 16 : n > 16 ? n - 16 : 0), lc_avx512_mask(n > 32 ? n - 32 : 0), 1,
                         p->pf, p->pf_step, acc LC_T1(, 0, 0, NULL));
#else
    LC_CAT(LC_FN, _loop)(k, a, ao, cs_a, b, rs_b, lc_avx512_mask(n < 16 ? n : 16),
                         lc_avx512_mask(n > 16 ? n - 16 : 0), 0, 1, p->pf, p->pf_step, acc LC_T1(, 0, 0, NULL));
#endif
  }
#ifdef LC_SLOOP
sloop_done:;
#endif
  LC_T1(store:;)
  const lc_avx512_act act = lc_avx512_act_init(p);
#ifdef LC_FINAL_FAST
  if (p->final && !p->residual && !p->post && (!p->bias || p->bias_per_row)) {
#define LC_FAST(f) LC_CAT(LC_FN, _store_fast)(acc, m, n, c, rs_c, p, &act, f)
    switch (p->act) {
      case 0: LC_FAST(0); return;
      case 1: LC_FAST(1); return;
      case 2: LC_FAST(2); return;
      case 3: LC_FAST(3); return;
      case 4: LC_FAST(4); return;
      default: break;
    }
#undef LC_FAST
  }
#endif
  for (size_t i = 0; i < m; i++) {
    LC_CAT(LC_FN, _store_row)(acc[i][0], acc[i][1], i, n, c + i * rs_c, p, &act);
#if LC_NV == 3
    if (n > 32) LC_CAT(LC_FN, _store_v3)(acc[i][2], i, n, c + i * rs_c, p, &act);
#endif
  }
}

#undef LC_NR
#undef LC_ROWS
#undef LC_V3
#undef LC_T1
#undef LC_NACC
#undef LC_SLOOP
