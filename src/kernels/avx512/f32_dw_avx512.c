/* Depthwise kernels, AVX-512: as the AVX2 ones with 16 lanes; tails use mask registers, so
 * nothing past the caller's row width or channel count is read. */
#include "kernels/avx512/avx512_common.h"
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/scalar/scalar_kernels.h"

/* 16 outputs from q = row + ox*sw + kx*dw; cnt = valid outputs (1..16), 17 = 16 with full loads. */
LC_AI __m512 load_taps(const float *q, size_t sw, size_t cnt) {
  if (sw == 1) return cnt == 16 ? _mm512_loadu_ps(q) : _mm512_maskz_loadu_ps(lc_avx512_mask(cnt), q);
  __m512 lo, hi;
  if (cnt == 16 + 1) {
    lo = _mm512_loadu_ps(q);
    hi = _mm512_loadu_ps(q + 16);
  } else {
    const size_t e = 2 * cnt - 1; /* only q[0 .. 2*cnt-2] are needed */
    lo = _mm512_maskz_loadu_ps(lc_avx512_mask(e < 16 ? e : 16), q);
    hi = e > 16 ? _mm512_maskz_loadu_ps(lc_avx512_mask(e - 16), q + 16) : _mm512_setzero_ps();
  }
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_permutex2var_ps(lo, even, hi);
}

LC_AI void dw_row_block(size_t ox, size_t cnt, size_t kh, size_t kw, size_t sw, size_t dw,
                        const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                        const lc_avx512_act *act, __m512 bias) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = in_rows[ky] + ox * sw;
    const float *wr = w + ky * kw;
    size_t kx = 0;
    for (; kx + 1 < kw; kx += 2) {
      acc0 = _mm512_fmadd_ps(load_taps(row + kx * dw, sw, cnt), _mm512_set1_ps(wr[kx]), acc0);
      acc1 = _mm512_fmadd_ps(load_taps(row + (kx + 1) * dw, sw, cnt), _mm512_set1_ps(wr[kx + 1]), acc1);
    }
    if (kx < kw) acc0 = _mm512_fmadd_ps(load_taps(row + kx * dw, sw, cnt), _mm512_set1_ps(wr[kx]), acc0);
  }
  const size_t nout = cnt > 16 ? 16 : cnt;
  const float *res = p->final && p->residual ? p->residual + ox : NULL;
  lc_avx512_epilogue(_mm512_add_ps(acc0, acc1), out + ox, NULL, bias, res, p, act, lc_avx512_mask(nout));
}

/* All output blocks of a row; inlined with constant kh/kw/sw for 3x3 so that the taps unroll and the
 * weight broadcasts leave the loop (ow 56, GFLOP/s: s1 26.0 -> 30.4, s2 18.1 -> 21.1). */
LC_AI void dw_row_all(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw, const float *const *in_rows,
                      const float *w, float *out, const lc_gemm_params *p, const lc_avx512_act *act, __m512 bias) {
  size_t ox = 0;
  if (sw == 1) {
    for (; ox + 16 <= ow; ox += 16) dw_row_block(ox, 16, kh, kw, 1, dw, in_rows, w, out, p, act, bias);
    if (ox < ow) dw_row_block(ox, ow - ox, kh, kw, 1, dw, in_rows, w, out, p, act, bias);
  } else {
    /* Full 32-float loads stay inside the row only while another output exists after the block. */
    for (; ox + 17 <= ow; ox += 16) dw_row_block(ox, 17, kh, kw, 2, dw, in_rows, w, out, p, act, bias);
    if (ox < ow) dw_row_block(ox, ow - ox, kh, kw, 2, dw, in_rows, w, out, p, act, bias);
  }
}

/* Window kernels: a vector of outputs reads, per tap row, two (stride 1) or four (stride 2) input
 * vectors; every tap is then a lane shift (valignd) of that window instead of an unaligned load.
 * Unaligned 64-byte loads cross a cache line and were the bound: 3x3 s1 rows went from ~21 to
 * ~60-80 GFLOP/s. Shifts need immediates, so kw and dw are constants here (3 and 5, dw 1). The sums
 * run in the same order as dw_row_block (even kx into acc0, odd into acc1, ky-major). */

/* Full unrolling turns the shift counts into immediates and keeps the windows in registers. */
#define LC_UNROLL _Pragma("GCC unroll 8")

/* Lanes [k, k + 16) of the 32-lane window lo:hi; k is a constant after inlining. */
LC_AI __m512 window(__m512 lo, __m512 hi, int k) {
#define LC_ALIGN_CASE(n) \
  case n: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), n));
  switch (k) {
    case 0: return lo;
    LC_ALIGN_CASE(1) LC_ALIGN_CASE(2) LC_ALIGN_CASE(3) LC_ALIGN_CASE(4)
    default: return hi;
  }
#undef LC_ALIGN_CASE
}

/* Floats [off, off + 16) of row, zero past its first len floats (none read there). */
LC_AI __m512 load_avail(const float *row, size_t off, size_t len) {
  if (off + 16 <= len) return _mm512_loadu_ps(row + off);
  return off >= len ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(lc_avx512_mask(len - off), row + off);
}

/* Even and odd lanes of the 32 floats lo:hi. */
LC_AI void deinterleave(__m512 lo, __m512 hi, __m512 *ev, __m512 *od) {
  const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  *ev = _mm512_permutex2var_ps(lo, ie, hi);
  *od = _mm512_permutex2var_ps(lo, io, hi);
}

/* Sums of one block from its windows: a[ky] (stride 1: input lo, hi; stride 2: even lo, even hi,
 * odd lo, odd hi). */
LC_AI __m512 window_sum(const int K, const int S, const __m512 *a, const float *w) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  LC_UNROLL for (int ky = 0; ky < K; ky++) {
    const __m512 *v = a + ky * 2 * S;
    LC_UNROLL for (int kx = 0; kx < K; kx++) {
      __m512 x = S == 1 ? window(v[0], v[1], kx) : (kx % 2 ? window(v[2], v[3], kx / 2) : window(v[0], v[1], kx / 2));
      __m512 wt = _mm512_set1_ps(w[ky * K + kx]);
      if (kx % 2) acc1 = _mm512_fmadd_ps(x, wt, acc1);
      else acc0 = _mm512_fmadd_ps(x, wt, acc0);
    }
  }
  return _mm512_add_ps(acc0, acc1);
}

/* K x K taps, stride S (1 or 2), dilation 1. The second half of each row's window is carried to
 * the next block, so a block loads one (S 1) or two (S 2) vectors per tap row; loads past the row's
 * readable floats are masked (zeros feed only lanes past ow). */
LC_AI void dw_row_window(size_t ow, const int K, const int S, const float *const *in_rows, const float *w, float *out,
                         const lc_gemm_params *p, const lc_avx512_act *act, __m512 bias) {
  const size_t len = (ow - 1) * (size_t)S + (size_t)K; /* readable floats of each row */
  const float *res = p->final ? p->residual : NULL;
  __m512 a[2 * 2 * 5];
  LC_UNROLL for (int ky = 0; ky < K; ky++) {
    __m512 *v = a + ky * 2 * S;
    if (S == 1) v[0] = load_avail(in_rows[ky], 0, len);
    else deinterleave(load_avail(in_rows[ky], 0, len), load_avail(in_rows[ky], 16, len), &v[0], &v[2]);
  }
  for (size_t ox = 0; ox < ow; ox += 16) {
    const size_t nx = (ox + 16) * (size_t)S;
    LC_UNROLL for (int ky = 0; ky < K; ky++) {
      __m512 *v = a + ky * 2 * S;
      if (S == 1) v[1] = load_avail(in_rows[ky], nx, len);
      else deinterleave(load_avail(in_rows[ky], nx, len), load_avail(in_rows[ky], nx + 16, len), &v[1], &v[3]);
    }
    const __mmask16 m = ow - ox < 16 ? lc_avx512_mask(ow - ox) : 0xFFFF;
    lc_avx512_epilogue(window_sum(K, S, a, w), out + ox, NULL, bias, res ? res + ox : NULL, p, act, m);
    LC_UNROLL for (int ky = 0; ky < K; ky++) {
      __m512 *v = a + ky * 2 * S;
      v[0] = v[1];
      if (S == 2) v[2] = v[3];
    }
  }
}

/* 16 floats of the padded row V[j] = row[j - pl] (zero outside [0, iw)) from j = ox; ox is a
 * multiple of 16 and pl < 16, so only the first block starts left of the row. */
LC_AI __m512 vrow16(const float *row, size_t ox, size_t pl, size_t iw) {
  if (ox >= pl) {
    size_t s = ox - pl;
    if (s >= iw) return _mm512_setzero_ps();
    return s + 16 <= iw ? _mm512_loadu_ps(row + s) : _mm512_maskz_loadu_ps(lc_avx512_mask(iw - s), row + s);
  }
  const __m512i x = _mm512_castps_si512(iw >= 16 ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(lc_avx512_mask(iw), row));
  const __m512i z = _mm512_setzero_si512();
  switch (pl) { /* lanes up by pl, zeros below: alignr needs an immediate */
    case 1: return _mm512_castsi512_ps(_mm512_alignr_epi32(x, z, 15));
    case 2: return _mm512_castsi512_ps(_mm512_alignr_epi32(x, z, 14));
    case 3: return _mm512_castsi512_ps(_mm512_alignr_epi32(x, z, 13));
    default: return _mm512_castsi512_ps(_mm512_alignr_epi32(x, z, 12));
  }
}

/* dw_row_window on unpadded rows, R output rows from S (R - 1) + K input rows, each loaded once
 * for all of them: the padding is masked loads and a lane shift. */
LC_AI void dw_row_unpadded(size_t ow, const int S, const int R, size_t ors, const int K, size_t pl, size_t iw,
                           const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                           const lc_avx512_act *act, __m512 bias) {
  const float *res = p->final ? p->residual : NULL;
  const int NI = S * (R - 1) + K;
  __m512 a[2 * 2 * 8];
  LC_UNROLL for (int i = 0; i < NI; i++) {
    __m512 *v = a + i * 2 * S;
    if (S == 1) v[0] = vrow16(in_rows[i], 0, pl, iw);
    else deinterleave(vrow16(in_rows[i], 0, pl, iw), vrow16(in_rows[i], 16, pl, iw), &v[0], &v[2]);
  }
  for (size_t ox = 0; ox < ow; ox += 16) {
    const size_t nx = (ox + 16) * (size_t)S;
    LC_UNROLL for (int i = 0; i < NI; i++) {
      __m512 *v = a + i * 2 * S;
      if (S == 1) v[1] = vrow16(in_rows[i], nx, pl, iw);
      else deinterleave(vrow16(in_rows[i], nx, pl, iw), vrow16(in_rows[i], nx + 16, pl, iw), &v[1], &v[3]);
    }
    const __mmask16 m = ow - ox < 16 ? lc_avx512_mask(ow - ox) : 0xFFFF;
    LC_UNROLL for (int r = 0; r < R; r++)
      lc_avx512_epilogue(window_sum(K, S, a + S * r * 2 * S, w), out + r * ors + ox, NULL, bias,
                         res ? res + r * ors + ox : NULL, p, act, m);
    LC_UNROLL for (int i = 0; i < NI; i++) {
      __m512 *v = a + i * 2 * S;
      v[0] = v[1];
      if (S == 2) v[2] = v[3];
    }
  }
}

/* One function per (stride, rows, kernel), as the AVX2 kernel's: inlined into one entry point in a
 * loop, clang's ASan + UBSan build of this file took 4.3 minutes against 1.6. */
typedef void (*dw_rows_fn)(size_t ow, size_t ors, size_t pl, size_t iw, const float *const *ir, const float *w,
                           float *o, const lc_gemm_params *p, const lc_avx512_act *act, const __m512 *bias);
#define LC_DW_ROWS(S, R, K)                                                                                  \
  static void dw_rows_##S##_##R##_##K(size_t ow, size_t ors, size_t pl, size_t iw, const float *const *ir,   \
                                      const float *w, float *o, const lc_gemm_params *p,                     \
                                      const lc_avx512_act *act, const __m512 *bias) {                        \
    dw_row_unpadded(ow, S, R, ors, K, pl, iw, ir, w, o, p, act, *bias);                                     \
  }
LC_DW_UNPADDED_GROUPS(LC_DW_ROWS)
#undef LC_DW_ROWS

/* Row groups as the AVX2 kernel's: the whole of a plane in one call. */
void lc_f32_dw_row_unpadded_avx512(size_t ow, size_t rows, size_t ors, size_t s, size_t k, size_t pl, size_t iw,
                                   const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p) {
  static const dw_rows_fn s1k3[3] = {dw_rows_1_1_3, dw_rows_1_2_3, dw_rows_1_4_3},
                          s1k5[3] = {dw_rows_1_1_5, dw_rows_1_2_5, dw_rows_1_4_5},
                          s2k3[2] = {dw_rows_2_1_3, dw_rows_2_2_3};
  const lc_avx512_act act = lc_avx512_act_init(p);
  const __m512 bias = _mm512_set1_ps(p->bias ? p->bias[0] : 0.0f);
  lc_gemm_params q = *p;
  for (size_t r = 0; r < rows;) {
    const size_t nr = lc_dw_group_rows(s, k, r, rows);
    const int ri = nr == 4 ? 2 : nr == 2 ? 1 : 0;
    const dw_rows_fn f = s == 1 ? (k == 3 ? s1k3 : s1k5)[ri] : k == 3 ? s2k3[ri] : dw_rows_2_1_5;
    q.residual = p->residual ? p->residual + r * ors : NULL;
    f(ow, ors, pl, iw, in_rows + r * s, w, out + r * ors, &q, &act, &bias);
    r += nr;
  }
}

void lc_f32_dw_row_avx512(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                          const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p) {
  if (sw != 1 && sw != 2) {
    lc_f32_dw_row_scalar(ow, kh, kw, sw, dw, in_rows, w, out, p);
    return;
  }
  const lc_avx512_act act = lc_avx512_act_init(p);
  const __m512 bias = _mm512_set1_ps(p->bias ? p->bias[0] : 0.0f);
  if (kh == kw && dw == 1 && (kw == 3 || kw == 5)) {
    if (kw == 3 && sw == 1) dw_row_window(ow, 3, 1, in_rows, w, out, p, &act, bias);
    else if (kw == 3) dw_row_window(ow, 3, 2, in_rows, w, out, p, &act, bias);
    else if (sw == 1) dw_row_window(ow, 5, 1, in_rows, w, out, p, &act, bias);
    else dw_row_window(ow, 5, 2, in_rows, w, out, p, &act, bias);
  } else if (kh == 3 && kw == 3 && sw == 1) {
    dw_row_all(ow, 3, 3, 1, dw, in_rows, w, out, p, &act, bias);
  } else if (kh == 3 && kw == 3) {
    dw_row_all(ow, 3, 3, 2, dw, in_rows, w, out, p, &act, bias);
  } else {
    dw_row_all(ow, kh, kw, sw, dw, in_rows, w, out, p, &act, bias);
  }
}

/* Channels [ch, ch + 16*nv); the last vector has cnt lanes. */
LC_AI void dw_pixel_block(size_t ch, size_t cnt, const int nv, size_t c, size_t taps,
                          const float *const *in_ptrs, const float *w, float *out, const lc_gemm_params *p,
                          const lc_avx512_act *act) {
  const __mmask16 mask = lc_avx512_mask(cnt);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (size_t t = 0; t < taps; t++) {
    if (!in_ptrs[t]) continue;
    const float *x = in_ptrs[t] + ch;
    const float *wt = w + t * c + ch;
    if (nv == 1) {
      acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, x), _mm512_maskz_loadu_ps(mask, wt), acc0);
    } else {
      acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x), _mm512_loadu_ps(wt), acc0);
      acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 16), _mm512_loadu_ps(wt + 16), acc1);
      acc2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 32), _mm512_loadu_ps(wt + 32), acc2);
      acc3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 48), _mm512_loadu_ps(wt + 48), acc3);
    }
  }
  const int fin = p->final;
  const __m512 acc[4] = {acc0, acc1, acc2, acc3};
  for (int v = 0; v < nv; v++) {
    const size_t o = ch + 16 * (size_t)v;
    lc_avx512_epilogue(acc[v], out + o, fin && p->bias ? p->bias + o : NULL, _mm512_setzero_ps(),
                       fin && p->residual ? p->residual + o : NULL, p, act, nv == 1 ? mask : 0xFFFF);
  }
}

void lc_f32_dw_pixel_avx512(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,
                            const lc_gemm_params *p) {
  const lc_avx512_act act = lc_avx512_act_init(p);
  size_t ch = 0;
  for (; ch + 64 <= c; ch += 64) dw_pixel_block(ch, 16, 4, c, taps, in_ptrs, w, out, p, &act);
  for (; ch < c; ch += 16) dw_pixel_block(ch, c - ch < 16 ? c - ch : 16, 1, c, taps, in_ptrs, w, out, p, &act);
}
