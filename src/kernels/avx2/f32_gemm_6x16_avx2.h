/* The AVX2 6x16 GEMM's k loop and generic store, shared by lc_f32_gemm_6x16_avx2 and its final-epilogue twin. */
#ifndef LC_F32_GEMM_6X16_AVX2_H
#define LC_F32_GEMM_6X16_AVX2_H

#include <stdint.h>

#include "kernels/avx2/avx2_common.h"

#define MR 6
#define NR 16
/* B prefetch distance in k steps (one 64-byte line per step). Packed B in L2: no effect.
 * In-place B (1x1 conv, rs_b = 3136, k = 256, B in L3): none 73, 4: 79, 8: 83, 16: 81, 32: 80
 * GFLOP/s. The AVX-512 kernel showed no gain (104 either way) and has none. */
#define PF_K 8

/* acc[i][v] += A(i, :) * B(:, 8v..8v+7). ao[i] is the offset of row i of A (rows >= m repeat
 * row m-1, so they read valid memory and their results are dropped). nv = 1 or 2 B vectors;
 * masked: B is read with maskload (n < 16), never past column n. */
LC_AI void gemm_loop(size_t k, const float *a, const size_t *ao, size_t cs_a, const float *b, size_t rs_b,
                     __m256i mlo, __m256i mhi, const int nv, const int masked, __m256 acc[MR][2]) {
  /* Named accumulators: GCC keeps them in registers, an indexed array it spills. */
  __m256 c0a = _mm256_setzero_ps(), c0b = c0a, c1a = c0a, c1b = c0a, c2a = c0a, c2b = c0a;
  __m256 c3a = c0a, c3b = c0a, c4a = c0a, c4b = c0a, c5a = c0a, c5b = c0a;
  const size_t o1 = ao[1], o2 = ao[2], o3 = ao[3], o4 = ao[4], o5 = ao[5];
#pragma GCC unroll 4
  for (size_t kk = 0; kk < k; kk++) {
    const float *bk = b + kk * rs_b;
    const float *ak = a + kk * cs_a;
    __m256 b0, b1 = _mm256_setzero_ps();
    if (masked) {
      b0 = _mm256_maskload_ps(bk, mlo);
      if (nv == 2) b1 = _mm256_maskload_ps(bk + 8, mhi);
    } else {
      b0 = _mm256_loadu_ps(bk);
      b1 = _mm256_loadu_ps(bk + 8);
      /* Integer address math: a prefetch past the end of B is harmless but may not be formed as
       * an out-of-object pointer in C. */
      _mm_prefetch((const char *)((uintptr_t)bk + PF_K * rs_b * sizeof(float)), _MM_HINT_T0);
    }
#define LC_ROW(ca, cb, off)                                   \
  do {                                                        \
    const __m256 av = _mm256_broadcast_ss(ak + (off));        \
    ca = _mm256_fmadd_ps(av, b0, ca);                         \
    if (nv == 2) cb = _mm256_fmadd_ps(av, b1, cb);            \
  } while (0)
    LC_ROW(c0a, c0b, 0);
    LC_ROW(c1a, c1b, o1);
    LC_ROW(c2a, c2b, o2);
    LC_ROW(c3a, c3b, o3);
    LC_ROW(c4a, c4b, o4);
    LC_ROW(c5a, c5b, o5);
#undef LC_ROW
  }
  acc[0][0] = c0a, acc[0][1] = c0b, acc[1][0] = c1a, acc[1][1] = c1b, acc[2][0] = c2a, acc[2][1] = c2b;
  acc[3][0] = c3a, acc[3][1] = c3b, acc[4][0] = c4a, acc[4][1] = c4b, acc[5][0] = c5a, acc[5][1] = c5b;
}

/* acc = A B for m <= MR rows and n <= NR columns (m, n >= 1). */
LC_AI void gemm_acc(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a, const float *b,
                    size_t rs_b, __m256 acc[MR][2]) {
  static const size_t packed_ao[MR] = {0, 1, 2, 3, 4, 5};
  size_t ao[MR];
  for (size_t i = 0; i < MR; i++) ao[i] = (i < m ? i : m - 1) * rs_a;
  if (n == NR) {
    const __m256i none = _mm256_setzero_si256();
    if (m == MR && rs_a == 1) gemm_loop(k, a, packed_ao, cs_a, b, rs_b, none, none, 2, 0, acc);
    else gemm_loop(k, a, ao, cs_a, b, rs_b, none, none, 2, 0, acc);
  } else if (n > 8) {
    gemm_loop(k, a, ao, cs_a, b, rs_b, lc_avx2_mask(8), lc_avx2_mask(n - 8), 2, 1, acc);
  } else {
    gemm_loop(k, a, ao, cs_a, b, rs_b, lc_avx2_mask(n), _mm256_setzero_si256(), 1, 1, acc);
  }
}

/* Epilogue and store of one row of C (n columns). */
static inline void store_row(__m256 v0, __m256 v1, size_t i, size_t n, float *cr, const lc_gemm_params *p,
                      const lc_avx2_act *act) {
  const int fin = p->final;
  const float *res = fin && p->residual ? p->residual + i * p->rs_res : NULL;
  const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias : NULL;
  const __m256 brow = fin && p->bias && p->bias_per_row ? _mm256_set1_ps(p->bias[i]) : _mm256_setzero_ps();
  if (n == NR) {
    lc_avx2_epilogue(v0, cr, bcol, brow, res, p, act, _mm256_setzero_si256(), 0);
    lc_avx2_epilogue(v1, cr + 8, bcol ? bcol + 8 : NULL, brow, res ? res + 8 : NULL, p, act,
                     _mm256_setzero_si256(), 0);
    return;
  }
  lc_avx2_epilogue(v0, cr, bcol, brow, res, p, act, lc_avx2_mask(n < 8 ? n : 8), 1);
  if (n > 8)
    lc_avx2_epilogue(v1, cr + 8, bcol ? bcol + 8 : NULL, brow, res ? res + 8 : NULL, p, act,
                     lc_avx2_mask(n - 8), 1);
}

#endif
