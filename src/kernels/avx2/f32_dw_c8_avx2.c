/* Depthwise NCHW on 8 channels at once (the depthwise route's C8 variant), AVX2: the 8 planes are
 * transposed into one zero-padded tile of pixels of 8 channels (c8: [row][col][8]), so every tap is
 * one aligned vector and padding, tails and strides need no masks or lane shuffles; the outputs are
 * transposed back row by row with the epilogue. Rows of 7-28 px spent most of the row kernels' time
 * at their edges and tails (a Zen 3: ~28 cycles an output vector at 14 px against ~7 inside a row);
 * the transposes cost about as much as the products, so wider rows keep the row kernels.
 * The sums are dw_row_block's: ky-major, even kx in one chain and odd kx in another, then added, so
 * every variant of the route gives the same bits. */
#include <stdint.h>
#include <string.h>

#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

/* In place: r0..r7 become the columns of the 8 x 8 block they were the rows of. Named variables:
 * with an array GCC kept the block on the stack and turned its stores into a rep movs. */
#define LC_T8(r0, r1, r2, r3, r4, r5, r6, r7)                                                            \
  do {                                                                                                   \
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);                      \
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);                      \
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);                      \
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);                      \
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);            \
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);            \
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);            \
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);            \
    r0 = _mm256_permute2f128_ps(u0, u4, 0x20), r1 = _mm256_permute2f128_ps(u1, u5, 0x20);                \
    r2 = _mm256_permute2f128_ps(u2, u6, 0x20), r3 = _mm256_permute2f128_ps(u3, u7, 0x20);                \
    r4 = _mm256_permute2f128_ps(u0, u4, 0x31), r5 = _mm256_permute2f128_ps(u1, u5, 0x31);                \
    r6 = _mm256_permute2f128_ps(u2, u6, 0x31), r7 = _mm256_permute2f128_ps(u3, u7, 0x31);                \
  } while (0)

/* Input row y of the nch planes, columns [0, n), to tile row t at column pl; the caller has zeroed
 * the tile's pad columns. Missing channels are zeros (they give zeros, never stored back). */
static void pack_row(const lc_dw_c8_args *a, size_t y, size_t n, float *t) {
  const float *s = a->in + y * a->iw;
  const size_t ihw = a->ihw, nch = a->nch;
  float *d = t + a->pl * 8;
  for (size_t x = 0; x < n; x += 8) {
    const size_t cnt = n - x < 8 ? n - x : 8;
    const __m256i m = lc_avx2_mask(cnt);
    const __m256 z = _mm256_setzero_ps();
    __m256 r0 = _mm256_maskload_ps(s + x, m), r1 = nch > 1 ? _mm256_maskload_ps(s + ihw + x, m) : z;
    __m256 r2 = nch > 2 ? _mm256_maskload_ps(s + 2 * ihw + x, m) : z, r3 = nch > 3 ? _mm256_maskload_ps(s + 3 * ihw + x, m) : z;
    __m256 r4 = nch > 4 ? _mm256_maskload_ps(s + 4 * ihw + x, m) : z, r5 = nch > 5 ? _mm256_maskload_ps(s + 5 * ihw + x, m) : z;
    __m256 r6 = nch > 6 ? _mm256_maskload_ps(s + 6 * ihw + x, m) : z, r7 = nch > 7 ? _mm256_maskload_ps(s + 7 * ihw + x, m) : z;
    LC_T8(r0, r1, r2, r3, r4, r5, r6, r7);
    float *q = d + x * 8;
    _mm256_store_ps(q, r0);
    if (cnt > 1) _mm256_store_ps(q + 8, r1);
    if (cnt > 2) _mm256_store_ps(q + 16, r2);
    if (cnt > 3) _mm256_store_ps(q + 24, r3);
    if (cnt > 4) _mm256_store_ps(q + 32, r4);
    if (cnt > 5) _mm256_store_ps(q + 40, r5);
    if (cnt > 6) _mm256_store_ps(q + 48, r6);
    if (cnt > 7) _mm256_store_ps(q + 56, r7);
  }
}

/* The epilogue of lc_avx2_epilogue for final sums without residual (bias, activation, post affine:
 * the same operations), and the first n lanes stored. */
LC_AI void store_out(float *d, __m256 v, int has_bias, __m256 b, const lc_avx2_act *act, size_t n) {
  if (has_bias) v = _mm256_add_ps(v, b);
  lc_avx2_store_n(d, lc_avx2_apply_act(v, act), n);
}

/* Output row oy of the tile (ow pixels of 8 channels, at o) to the nch planes, with the epilogue. */
static void unpack_row(const lc_dw_c8_args *a, const float *o, size_t oy, const lc_avx2_act *act, const __m256 *bv) {
  const size_t ow = a->ow, ohw = a->ohw, nch = a->nch;
  const int hb = a->bias != NULL;
  float *d = a->out + oy * ow;
  for (size_t x = 0; x < ow; x += 8) {
    const size_t cnt = ow - x < 8 ? ow - x : 8;
    const float *q = o + x * 8;
    const __m256 z = _mm256_setzero_ps();
    __m256 r0 = _mm256_load_ps(q), r1 = cnt > 1 ? _mm256_load_ps(q + 8) : z, r2 = cnt > 2 ? _mm256_load_ps(q + 16) : z;
    __m256 r3 = cnt > 3 ? _mm256_load_ps(q + 24) : z, r4 = cnt > 4 ? _mm256_load_ps(q + 32) : z;
    __m256 r5 = cnt > 5 ? _mm256_load_ps(q + 40) : z, r6 = cnt > 6 ? _mm256_load_ps(q + 48) : z;
    __m256 r7 = cnt > 7 ? _mm256_load_ps(q + 56) : z;
    LC_T8(r0, r1, r2, r3, r4, r5, r6, r7);
    store_out(d + x, r0, hb, bv[0], act, cnt);
    if (nch > 1) store_out(d + ohw + x, r1, hb, bv[1], act, cnt);
    if (nch > 2) store_out(d + 2 * ohw + x, r2, hb, bv[2], act, cnt);
    if (nch > 3) store_out(d + 3 * ohw + x, r3, hb, bv[3], act, cnt);
    if (nch > 4) store_out(d + 4 * ohw + x, r4, hb, bv[4], act, cnt);
    if (nch > 5) store_out(d + 5 * ohw + x, r5, hb, bv[5], act, cnt);
    if (nch > 6) store_out(d + 6 * ohw + x, r6, hb, bv[6], act, cnt);
    if (nch > 7) store_out(d + 7 * ohw + x, r7, hb, bv[7], act, cnt);
  }
}

/* Outputs ox .. ox + P of a row (rows: its first tile row) into o, two chains each. */
LC_AI void pixels(const lc_dw_c8_args *a, const float *rows, const float *w8, float *o, size_t ox, size_t kh,
                  size_t kw, const int P) {
  const size_t sw = a->sw, dw = a->dw, wp8 = a->wp * 8;
  __m256 e[3], d[3];
  for (int p = 0; p < P; p++) e[p] = d[p] = _mm256_setzero_ps();
  for (size_t ky = 0; ky < kh; ky++) {
    const float *r = rows + ky * a->dh * wp8;
    for (size_t kx = 0; kx < kw; kx++) {
      const __m256 wv = _mm256_load_ps(w8 + (ky * kw + kx) * 8);
      for (int p = 0; p < P; p++) {
        const __m256 x = _mm256_load_ps(r + ((ox + (size_t)p) * sw + kx * dw) * 8);
        if (kx % 2) d[p] = _mm256_fmadd_ps(x, wv, d[p]);
        else e[p] = _mm256_fmadd_ps(x, wv, e[p]);
      }
    }
  }
  for (int p = 0; p < P; p++) _mm256_store_ps(o + (ox + (size_t)p) * 8, _mm256_add_ps(e[p], d[p]));
}

/* One output row into o: 3 pixels at a time, then one. K: 3 or 5 for square kernels of that size
 * (unrolled; 3x3's nine weight vectors stay in registers), 0 for any other. */
LC_AI void compute_row(const lc_dw_c8_args *a, const float *t, const float *w8, float *o, size_t oy, const int K) {
  const size_t kh = K ? (size_t)K : a->kh, kw = K ? (size_t)K : a->kw;
  const float *rows = t + oy * a->sh * a->wp * 8;
  size_t ox = 0;
  for (; ox + 3 <= a->ow; ox += 3) pixels(a, rows, w8, o, ox, kh, kw, 3);
  for (; ox < a->ow; ox++) pixels(a, rows, w8, o, ox, kh, kw, 1);
}

void lc_f32_dw_c8_avx2(const lc_dw_c8_args *a) {
  const size_t wp8 = a->wp * 8, taps = a->kh * a->kw;
  /* [tile hp x wp x 8][a row of outputs ow x 8][weights taps x 8], from the first 32-byte boundary */
  float *t = a->ws + (32 - (uintptr_t)a->ws % 32) % 32 / sizeof(float), *o = t + a->hp * wp8, *w8 = o + a->ow * 8;
  /* w8[tap][c]: the nch channels' weights of each tap, zero for the missing ones */
  for (size_t k = 0; k < taps; k++)
    for (size_t c = 0; c < 8; c++) w8[k * 8 + c] = c < a->nch ? a->w[c * taps + k] : 0.0f;
  /* tile rows: padded row r holds input row r - pt, its columns [0, n) at [pl, pl + n) */
  const size_t pl = a->pl < a->wp ? a->pl : a->wp, n = a->iw < a->wp - pl ? a->iw : a->wp - pl;
  for (size_t r = 0; r < a->hp; r++) {
    float *tr = t + r * wp8;
    const ptrdiff_t y = (ptrdiff_t)r - (ptrdiff_t)a->pt;
    if (y < 0 || y >= (ptrdiff_t)a->ih || n == 0) {
      memset(tr, 0, wp8 * sizeof(float));
      continue;
    }
    if (pl) memset(tr, 0, pl * 8 * sizeof(float));
    if (pl + n < a->wp) memset(tr + (pl + n) * 8, 0, (a->wp - pl - n) * 8 * sizeof(float));
    pack_row(a, (size_t)y, n, tr);
  }
  const lc_avx2_act act = lc_avx2_act_init(a->ep);
  __m256 bv[8];
  for (size_t c = 0; c < 8; c++) bv[c] = _mm256_set1_ps(a->bias && c < a->nch ? a->bias[c] : 0.0f);
  const int k = a->kh == a->kw && (a->kh == 3 || a->kh == 5) ? (int)a->kh : 0;
  for (size_t oy = 0; oy < a->oh; oy++) {
    if (k == 3) compute_row(a, t, w8, o, oy, 3);
    else if (k == 5) compute_row(a, t, w8, o, oy, 5);
    else compute_row(a, t, w8, o, oy, 0);
    unpack_row(a, o, oy, &act, bv);
  }
}
