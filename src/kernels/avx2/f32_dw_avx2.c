/* Depthwise kernels, AVX2 + FMA: NCHW rows vectorized over output columns (stride 1 and 2),
 * NHWC pixels vectorized over channels. Tails use masked loads so nothing past the caller's
 * row width or channel count is read. */
#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"
#include "kernels/scalar/scalar_kernels.h"

/* 8 outputs of tap (ky, kx) from q = row + ox*sw + kx*dw; cnt = number of valid outputs (1..8). */
LC_AI __m256 load_taps(const float *q, size_t sw, size_t cnt) {
  if (sw == 1) return cnt == 8 ? _mm256_loadu_ps(q) : _mm256_maskload_ps(q, lc_avx2_mask(cnt));
  /* Stride 2: even elements of q[0..15]; only q[0 .. 2*cnt-2] are needed. */
  __m256 lo, hi;
  if (cnt == 8 + 1) { /* full vector and q[15] is known to be in bounds */
    lo = _mm256_loadu_ps(q);
    hi = _mm256_loadu_ps(q + 8);
  } else {
    const size_t e = 2 * cnt - 1;
    lo = _mm256_maskload_ps(q, lc_avx2_mask(e < 8 ? e : 8));
    hi = e > 8 ? _mm256_maskload_ps(q + 8, lc_avx2_mask(e - 8)) : _mm256_setzero_ps();
  }
  return lc_avx2_even(lo, hi);
}

/* One block of outputs [ox, ox+cnt); cnt == 9 means "8 outputs, full-width loads allowed". */
LC_AI void dw_row_block(size_t ox, size_t cnt, size_t kh, size_t kw, size_t sw, size_t dw,
                        const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                        const lc_avx2_act *act, __m256 bias) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = in_rows[ky] + ox * sw;
    const float *wr = w + ky * kw;
    size_t kx = 0;
    /* Two chains halve the FMA latency bound for small kernels. */
    for (; kx + 1 < kw; kx += 2) {
      acc0 = _mm256_fmadd_ps(load_taps(row + kx * dw, sw, cnt), _mm256_broadcast_ss(wr + kx), acc0);
      acc1 = _mm256_fmadd_ps(load_taps(row + (kx + 1) * dw, sw, cnt), _mm256_broadcast_ss(wr + kx + 1), acc1);
    }
    if (kx < kw) acc0 = _mm256_fmadd_ps(load_taps(row + kx * dw, sw, cnt), _mm256_broadcast_ss(wr + kx), acc0);
  }
  const size_t nout = cnt > 8 ? 8 : cnt;
  const float *res = p->final && p->residual ? p->residual + ox : NULL;
  lc_avx2_epilogue(_mm256_add_ps(acc0, acc1), out + ox, NULL, bias, res, p, act, lc_avx2_mask(nout), nout < 8);
}

/* Four blocks of 8 outputs [ox, ox+32): each weight broadcast feeds four vectors and the eight
 * chains (two per vector, as dw_row_block: the same bits) hide the FMA latency (5x5 192@40: one
 * block ran at 4 cycles per FMA). Stride 2 needs an output after the block (full 16-float loads). */
LC_AI void dw_row_block4(size_t ox, size_t kh, size_t kw, size_t sw, size_t dw, const float *const *in_rows,
                         const float *w, float *out, const lc_gemm_params *p, const lc_avx2_act *act, __m256 bias) {
  const size_t cnt = sw == 1 ? 8 : 9; /* load_taps' full-vector forms */
  __m256 a0[4], a1[4];
  for (int v = 0; v < 4; v++) a0[v] = a1[v] = _mm256_setzero_ps();
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = in_rows[ky] + ox * sw;
    const float *wr = w + ky * kw;
    size_t kx = 0;
    for (; kx + 1 < kw; kx += 2) {
      const __m256 w0 = _mm256_broadcast_ss(wr + kx), w1 = _mm256_broadcast_ss(wr + kx + 1);
      const float *q0 = row + kx * dw, *q1 = row + (kx + 1) * dw;
      for (size_t v = 0; v < 4; v++) {
        a0[v] = _mm256_fmadd_ps(load_taps(q0 + 8 * v * sw, sw, cnt), w0, a0[v]);
        a1[v] = _mm256_fmadd_ps(load_taps(q1 + 8 * v * sw, sw, cnt), w1, a1[v]);
      }
    }
    if (kx < kw) {
      const __m256 w0 = _mm256_broadcast_ss(wr + kx);
      const float *q0 = row + kx * dw;
      for (size_t v = 0; v < 4; v++) a0[v] = _mm256_fmadd_ps(load_taps(q0 + 8 * v * sw, sw, cnt), w0, a0[v]);
    }
  }
  const float *res = p->final && p->residual ? p->residual + ox : NULL;
  for (size_t v = 0; v < 4; v++)
    lc_avx2_epilogue(_mm256_add_ps(a0[v], a1[v]), out + ox + 8 * v, NULL, bias, res ? res + 8 * v : NULL, p, act,
                     _mm256_setzero_si256(), 0);
}

/* All output blocks of a row; inlined with constant kh/kw/sw for 3x3 so that the taps unroll and the
 * weight broadcasts leave the loop (ow 56, GFLOP/s: s1 22.6 -> 29.1, s2 14.9 -> 20.2). */
LC_AI void dw_row_all(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw, const float *const *in_rows,
                      const float *w, float *out, const lc_gemm_params *p, const lc_avx2_act *act, __m256 bias) {
  size_t ox = 0;
  if (sw == 1) {
    for (; ox + 32 <= ow; ox += 32) dw_row_block4(ox, kh, kw, 1, dw, in_rows, w, out, p, act, bias);
    for (; ox + 8 <= ow; ox += 8) dw_row_block(ox, 8, kh, kw, 1, dw, in_rows, w, out, p, act, bias);
    if (ox < ow) dw_row_block(ox, ow - ox, kh, kw, 1, dw, in_rows, w, out, p, act, bias);
  } else {
    /* Full 16-float loads stay inside the row only while another output exists after the block. */
    for (; ox + 33 <= ow; ox += 32) dw_row_block4(ox, kh, kw, 2, dw, in_rows, w, out, p, act, bias);
    for (; ox + 9 <= ow; ox += 8) dw_row_block(ox, 9, kh, kw, 2, dw, in_rows, w, out, p, act, bias);
    if (ox < ow) dw_row_block(ox, ow - ox, kh, kw, 2, dw, in_rows, w, out, p, act, bias);
  }
}

void lc_f32_dw_row_avx2(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                        const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p) {
  if (sw != 1 && sw != 2) {
    lc_f32_dw_row_scalar(ow, kh, kw, sw, dw, in_rows, w, out, p);
    return;
  }
  const lc_avx2_act act = lc_avx2_act_init(p);
  const __m256 bias = _mm256_set1_ps(p->bias ? p->bias[0] : 0.0f);
  if (kh == 3 && kw == 3 && sw == 1) dw_row_all(ow, 3, 3, 1, dw, in_rows, w, out, p, &act, bias);
  else if (kh == 3 && kw == 3) dw_row_all(ow, 3, 3, 2, dw, in_rows, w, out, p, &act, bias);
  else dw_row_all(ow, kh, kw, sw, dw, in_rows, w, out, p, &act, bias);
}

/* Channels [ch, ch + 8*nv); the last vector has cnt lanes (masked if < 8, only with nv == 1). */
LC_AI void dw_pixel_block(size_t ch, size_t cnt, const int nv, size_t c, size_t taps,
                          const float *const *in_ptrs, const float *w, float *out, const lc_gemm_params *p,
                          const lc_avx2_act *act) {
  const int masked = cnt < 8;
  const __m256i mask = lc_avx2_mask(cnt);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (size_t t = 0; t < taps; t++) {
    if (!in_ptrs[t]) continue;
    const float *x = in_ptrs[t] + ch;
    const float *wt = w + t * c + ch;
    if (masked) {
      acc0 = _mm256_fmadd_ps(_mm256_maskload_ps(x, mask), _mm256_maskload_ps(wt, mask), acc0);
    } else if (nv == 1) {
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(wt), acc0);
    } else {
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(wt), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_loadu_ps(wt + 8), acc1);
      acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), _mm256_loadu_ps(wt + 16), acc2);
      acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), _mm256_loadu_ps(wt + 24), acc3);
    }
  }
  const int fin = p->final;
  const __m256 acc[4] = {acc0, acc1, acc2, acc3};
  for (int v = 0; v < nv; v++) {
    const size_t o = ch + 8 * (size_t)v;
    lc_avx2_epilogue(acc[v], out + o, fin && p->bias ? p->bias + o : NULL, _mm256_setzero_ps(),
                     fin && p->residual ? p->residual + o : NULL, p, act, mask, masked);
  }
}

void lc_f32_dw_pixel_avx2(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,
                          const lc_gemm_params *p) {
  const lc_avx2_act act = lc_avx2_act_init(p);
  size_t ch = 0;
  for (; ch + 32 <= c; ch += 32) dw_pixel_block(ch, 8, 4, c, taps, in_ptrs, w, out, p, &act);
  for (; ch + 8 <= c; ch += 8) dw_pixel_block(ch, 8, 1, c, taps, in_ptrs, w, out, p, &act);
  if (ch < c) dw_pixel_block(ch, c - ch, 1, c, taps, in_ptrs, w, out, p, &act);
}
