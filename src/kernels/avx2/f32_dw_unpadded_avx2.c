/* Depthwise NCHW rows read in place (the depthwise route's DIRECT variant), AVX2: R output rows
 * from S (R - 1) + K input rows, 8 outputs a block. Each input row's K tap vectors are made once
 * and feed every output row that uses them, so a block loads K + 1 (stride 2) or K (stride 1)
 * vectors per input row for up to R K FMAs per tap. The padding is masked loads at the edges, or
 * lanes shifted in registers where one or two columns are padding; the sums run in dw_row_block's
 * order (ky-major, even kx into one chain, odd into another, then added), so this gives the bits of
 * the padded-copy variants. Copying the padded plane cost as much as the conv on a 256-channel 3x3
 * at 40 px. */
#include <stddef.h>
#include <stdint.h>

#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

/* 8 floats row[off .. off + 8), zero where the column lies outside [0, iw) (edge: masked). */
LC_AI __m256 vload(const float *row, ptrdiff_t off, ptrdiff_t iw, int edge) {
  return edge ? lc_avx2_load_m(row, off, lc_avx2_cols_in(off, iw)) : _mm256_loadu_ps(row + off);
}

/* Even / odd lanes of the 16 floats a:b in the order shuffle_ps leaves them: outputs
 * {0, 1, 4, 5, 2, 3, 6, 7}. Stride 2 sums in that order and puts the lanes in place once, at the
 * store (unperm), not once a tap: a lane gets the same products in the same order either way. */
LC_AI __m256 even_p(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, 0x88); }
LC_AI __m256 odd_p(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, 0xDD); }
LC_AI __m256 unperm(__m256 v) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8)); }

/* Tap kx of 8 outputs from padded column c0 = S ox - pl: V[c0 + S l + kx], l < 8 (stride 2: in
 * even_p's order). The last (even) tap of stride 2 takes the odd lanes one float earlier so that
 * nothing past the block's last needed column, c0 + 14 + K - 1, is loaded. */
LC_AI __m256 tap(const float *row, ptrdiff_t c0, int S, int K, int kx, ptrdiff_t iw, int edge) {
  if (S == 1) return vload(row, c0 + kx, iw, edge);
  if (kx % 2 || kx == K - 1) return odd_p(vload(row, c0 + kx - 1, iw, edge), vload(row, c0 + kx + 7, iw, edge));
  return even_p(vload(row, c0 + kx, iw, edge), vload(row, c0 + kx + 8, iw, edge));
}

#define LC_UNROLL _Pragma("GCC unroll 8")
#define LC_UNROLL_ALL _Pragma("GCC unroll 32")
#define LC_S2_MAX_R 8

LC_AI void block(size_t ox, size_t nout, int edge, const int S, const int R, size_t ors, const int K, size_t pl,
                 size_t iw, const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                 const lc_avx2_act *act, __m256 bias, const int raw) {
  const int NI = S * (R - 1) + K;
  const ptrdiff_t c0 = (ptrdiff_t)(ox * (size_t)S) - (ptrdiff_t)pl;
  __m256 a0[4], a1[4];
  LC_UNROLL for (int r = 0; r < R; r++) a0[r] = a1[r] = _mm256_setzero_ps();
  LC_UNROLL for (int i = 0; i < NI; i++) {
    LC_UNROLL for (int kx = 0; kx < K; kx++) {
      const __m256 x = tap(in_rows[i], c0, S, K, kx, (ptrdiff_t)iw, edge);
      LC_UNROLL for (int r = 0; r < R; r++) {
        const int ky = i - S * r;
        if (ky < 0 || ky >= K) continue;
        const __m256 wt = _mm256_broadcast_ss(w + ky * K + kx);
        if (kx % 2) a1[r] = _mm256_fmadd_ps(x, wt, a1[r]);
        else a0[r] = _mm256_fmadd_ps(x, wt, a0[r]);
      }
    }
  }
  LC_UNROLL for (int r = 0; r < R; r++) {
    a0[r] = _mm256_add_ps(a0[r], a1[r]);
    if (S == 2) a0[r] = unperm(a0[r]);
  }
  const __m256i m = lc_avx2_mask(nout);
  if (raw) { /* the sums alone: dw_epilogue finishes the rows */
    LC_UNROLL for (int r = 0; r < R; r++) lc_avx2_store_n(out + (size_t)r * ors + ox, a0[r], nout);
    return;
  }
  const float *res = p->final ? p->residual : NULL;
  LC_UNROLL for (int r = 0; r < R; r++)
    lc_avx2_epilogue(a0[r], out + (size_t)r * ors + ox, NULL, bias, res ? res + (size_t)r * ors + ox : NULL, p, act,
                     m, nout < 8);
}

/* Masked blocks of stride 2 (the edges block_s2 does not make), R rows in calls of two, out of line:
 * one copy for all of stride 2's row groups, not two in each (clang's ASan + UBSan build of this file,
 * -O1 on a 2-vCPU Zen 3: 404 s against 453). */
static void s2_masked(size_t ox, size_t nout, size_t R, size_t ors, int K, size_t pl, size_t iw,
                      const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                      const lc_avx2_act *act, const __m256 *bias, int raw) {
  lc_gemm_params q = *p;
  for (size_t r0 = 0; r0 < R; r0 += 2) {
    const float *const *ir = in_rows + 2 * r0;
    float *o = out + r0 * ors;
    q.residual = p->residual ? p->residual + r0 * ors : NULL;
#define LC_M(KK, RR, RAW) block(ox, nout, 1, 2, RR, ors, KK, pl, iw, ir, w, o, &q, act, *bias, RAW)
    if (K == 3 && R - r0 >= 2) raw ? LC_M(3, 2, 1) : LC_M(3, 2, 0);
    else if (K == 3) raw ? LC_M(3, 1, 1) : LC_M(3, 1, 0);
    else if (R - r0 >= 2) raw ? LC_M(5, 2, 1) : LC_M(5, 2, 0);
    else raw ? LC_M(5, 1, 1) : LC_M(5, 1, 0);
#undef LC_M
  }
}

/* The final epilogue of rows of sums (bias, activation, affine; no residual, nothing to accumulate)
 * with the activation fixed at compile time: the same operations as lc_avx2_epilogue on the same
 * values, so the same bits. Kept out of the products' loop, whose per-vector tests of the epilogue's
 * fields and six constant vectors spilled its accumulators. */
LC_AI void epi_rows(float *out, size_t ors, size_t rows, size_t ow, const lc_gemm_params *p, const lc_avx2_act *a,
                    const int act, const int post) {
  lc_avx2_act ca = *a;
  ca.act = act;
  ca.post = post;
  const int has_bias = p->bias != NULL;
  const __m256 b = _mm256_set1_ps(has_bias ? p->bias[0] : 0.0f);
  for (size_t r = 0; r < rows; r++) {
    float *o = out + r * ors;
    size_t ox = 0;
    for (; ox + 8 <= ow; ox += 8) {
      __m256 v = _mm256_loadu_ps(o + ox);
      if (has_bias) v = _mm256_add_ps(v, b);
      _mm256_storeu_ps(o + ox, lc_avx2_apply_act(v, &ca));
    }
    if (ox < ow) {
      const __m256i m = lc_avx2_mask(ow - ox);
      __m256 v = _mm256_maskload_ps(o + ox, m);
      if (has_bias) v = _mm256_add_ps(v, b);
      lc_avx2_store_n(o + ox, lc_avx2_apply_act(v, &ca), ow - ox);
    }
  }
}

static void dw_epilogue(float *out, size_t ors, size_t rows, size_t ow, const lc_gemm_params *p,
                        const lc_avx2_act *a) {
  if (!p->bias && p->act == 0 && !p->post) return; /* the sums are the outputs */
#define LC_EPI(f) p->post ? epi_rows(out, ors, rows, ow, p, a, f, 1) : epi_rows(out, ors, rows, ow, p, a, f, 0)
  switch (p->act) {
    case 0: LC_EPI(0); break;
    case 1: LC_EPI(1); break;
    case 2: LC_EPI(2); break;
    case 3: LC_EPI(3); break;
    default: LC_EPI(4); break;
  }
#undef LC_EPI
}

/* 8 outputs in R (1 or 2) rows at stride 1, 3x3, read in place (no edge): the nine weights stay in
 * registers (broadcast once a call) and each input row's three tap vectors are loaded once for the
 * output rows that use them; the even / odd kx chains of block, summed in its order (the same bits).
 * block keeps the weights in memory: GCC hoisted and spilled them next to 4 rows' 8 accumulators
 * (a Zen 3, 160 px: 7.9 cycles an output vector, this 6.6-6.8). */
LC_AI void block_k3(size_t ox, size_t r0, size_t ors, const int R, size_t pl, const float *const *in_rows,
                    const __m256 wv[9], float *out, const lc_gemm_params *p, const lc_avx2_act *act, __m256 bias,
                    const int raw, const int edge) {
  const ptrdiff_t c0 = (ptrdiff_t)ox - (ptrdiff_t)pl;
  in_rows += r0, out += r0 * ors; /* output rows r0 .. r0 + R of the call */
  const __m256i up = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6), down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
  __m256 e[2], o[2];
  LC_UNROLL for (int r = 0; r < R; r++) e[r] = o[r] = _mm256_setzero_ps();
  LC_UNROLL for (int i = 0; i < R + 2; i++) {
    const float *q = in_rows[i] + c0;
    __m256 x0, x1 = _mm256_loadu_ps(q + 1), x2;
    if (edge == 1) { /* column -1 is padding: x0 is x1 a lane later, a zero first */
      x0 = _mm256_blend_ps(_mm256_permutevar8x32_ps(x1, up), _mm256_setzero_ps(), 0x01);
      x2 = _mm256_loadu_ps(q + 2);
    } else if (edge == 2) { /* column iw is padding: x2 is x1 a lane earlier, a zero last */
      x0 = _mm256_loadu_ps(q);
      x2 = _mm256_blend_ps(_mm256_permutevar8x32_ps(x1, down), _mm256_setzero_ps(), 0x80);
    } else {
      x0 = _mm256_loadu_ps(q), x2 = _mm256_loadu_ps(q + 2);
    }
    LC_UNROLL for (int r = 0; r < R; r++) {
      const int ky = i - r;
      if (ky < 0 || ky > 2) continue;
      e[r] = _mm256_fmadd_ps(x0, wv[3 * ky], e[r]);
      o[r] = _mm256_fmadd_ps(x1, wv[3 * ky + 1], o[r]);
      e[r] = _mm256_fmadd_ps(x2, wv[3 * ky + 2], e[r]);
    }
  }
  const float *res = p->final && p->residual ? p->residual + r0 * ors : NULL;
  LC_UNROLL for (int r = 0; r < R; r++) {
    float *d = out + (size_t)r * ors + ox;
    if (raw) _mm256_storeu_ps(d, _mm256_add_ps(e[r], o[r]));
    else
      lc_avx2_epilogue(_mm256_add_ps(e[r], o[r]), d, NULL, bias, res ? res + (size_t)r * ors + ox : NULL, p, act,
                       _mm256_setzero_si256(), 0);
  }
}

/* block_k3 over R (1, 2, or 4 as two calls of two) output rows; edge 1 / 2: the left / right edge
 * of a pad-1 row, a full block whose one padding column is made in registers. Edge blocks through
 * block (masked loads) cost 17-21 cycles an output vector against an interior one's 5.5-6 (Zen 3,
 * bench_dw_rows at 16 and 40 px); block_k3 with the same masked loads was no faster. */
LC_AI void blocks_k3(size_t ox, size_t ors, const int R, size_t pl, const float *const *in_rows, const __m256 wv[9],
                     float *out, const lc_gemm_params *p, const lc_avx2_act *act, __m256 bias, const int raw,
                     const int edge) {
  if (R == 4) {
    block_k3(ox, 0, ors, 2, pl, in_rows, wv, out, p, act, bias, raw, edge);
    block_k3(ox, 2, ors, 2, pl, in_rows, wv, out, p, act, bias, raw, edge);
  } else {
    block_k3(ox, 0, ors, R, pl, in_rows, wv, out, p, act, bias, raw, edge);
  }
}

/* 8 outputs in R rows at stride 2, K 3 or 5, read in place. Each input row's K taps are shuffles of
 * loads in even_p's order (3x3: four loads for three taps; 5x5: six for five), put in place once at
 * the store; the last tap takes odd lanes one float early, as in tap, so nothing past c0 + 14 + K - 1
 * is read. Output row r is done after input row 2 r + K - 1 and stored there: only (K + 1) / 2 rows'
 * sums are live whatever R, and R rows read 2 R + K - 2 input rows, not R K. The weights are vectors:
 * 3x3's stay in registers (block_k3's), 5x5's are FMA operands. block's order of the sums (the same
 * bits). edge 1: the pl (1, or 2 at 5x5) columns left of the row are padding; edge 2: the last column
 * read is the one past the row; both made in registers. pf: the next group's 2 R new rows, a line each
 * prefetched a block (integer address math: the line may lie past the row); 32 channels at 320 px
 * took 1.9 ms without, 0.6-0.8 with (the kernel alone, rows in cache: ~8% slower). */
LC_AI void block_s2(size_t ox, size_t ors, const int R, const int K, size_t pl, const float *const *in_rows,
                    const __m256 *wv, float *out, const lc_gemm_params *p, const lc_avx2_act *act, __m256 bias,
                    const int raw, const int edge, const float *const *pf) {
  const ptrdiff_t c0 = (ptrdiff_t)(2 * ox) - (ptrdiff_t)pl;
  if (pf)
    LC_UNROLL_ALL for (int j = 0; j < 2 * R; j++)
      _mm_prefetch((const char *)((uintptr_t)pf[j] + (uintptr_t)((c0 + 8) * (ptrdiff_t)sizeof(float))), _MM_HINT_T0);
  const __m256i up1 = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6), up2 = _mm256_setr_epi32(0, 0, 0, 1, 2, 3, 4, 5),
                down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
  const __m256 z = _mm256_setzero_ps();
  const float *res = p->final && p->residual ? p->residual : NULL;
  __m256 e[LC_S2_MAX_R], o[LC_S2_MAX_R], x[5];
  LC_UNROLL_ALL for (int i = 0; i < 2 * R + K - 2; i++) {
    const float *q = in_rows[i];
    /* edge 1: c0 + pl = 0, the first load is the row's first 8 columns pl lanes later, zeros first;
     * edge 2: the last load's last column is the one past the row, its lanes are the load one float
     * earlier a lane earlier, a zero last */
    if (K == 3) {
      const __m256 a1 = _mm256_loadu_ps(q + c0 + 1), b = _mm256_loadu_ps(q + c0 + 8);
      const __m256 b1 = edge == 2 ? _mm256_blend_ps(_mm256_permutevar8x32_ps(b, down), z, 0x80)
                                  : _mm256_loadu_ps(q + c0 + 9);
      const __m256 a = edge == 1 ? _mm256_blend_ps(_mm256_permutevar8x32_ps(a1, up1), z, 0x01)
                                 : _mm256_loadu_ps(q + c0);
      x[0] = even_p(a, b), x[1] = odd_p(a, b), x[2] = odd_p(a1, b1);
    } else {
      const __m256 b = _mm256_loadu_ps(q + c0 + 8), a2 = _mm256_loadu_ps(q + c0 + 2), b2 = _mm256_loadu_ps(q + c0 + 10);
      const __m256 b3 = edge == 2 ? _mm256_blend_ps(_mm256_permutevar8x32_ps(b2, down), z, 0x80)
                                  : _mm256_loadu_ps(q + c0 + 11);
      __m256 a = _mm256_loadu_ps(edge == 1 ? q : q + c0);
      if (edge == 1)
        a = pl == 1 ? _mm256_blend_ps(_mm256_permutevar8x32_ps(a, up1), z, 0x01)
                    : _mm256_blend_ps(_mm256_permutevar8x32_ps(a, up2), z, 0x03);
      x[0] = even_p(a, b), x[1] = odd_p(a, b), x[2] = even_p(a2, b2), x[3] = odd_p(a2, b2);
      x[4] = odd_p(_mm256_loadu_ps(q + c0 + 3), b3);
    }
    LC_UNROLL_ALL for (int r = 0; r < R; r++) {
      const int ky = i - 2 * r;
      if (ky < 0 || ky >= K) continue;
      if (ky == 0) e[r] = o[r] = _mm256_setzero_ps();
      LC_UNROLL for (int kx = 0; kx < K; kx++) {
        if (kx % 2) o[r] = _mm256_fmadd_ps(x[kx], wv[ky * K + kx], o[r]);
        else e[r] = _mm256_fmadd_ps(x[kx], wv[ky * K + kx], e[r]);
      }
      if (ky < K - 1) continue;
      float *d = out + (size_t)r * ors + ox;
      const __m256 v = unperm(_mm256_add_ps(e[r], o[r]));
      if (raw) _mm256_storeu_ps(d, v);
      else
        lc_avx2_epilogue(v, d, NULL, bias, res ? res + (size_t)r * ors + ox : NULL, p, act, _mm256_setzero_si256(),
                         0);
    }
  }
}

LC_AI void rows_unpadded(size_t ow, const int S, const int R, size_t ors, const int K, size_t pl, size_t iw,
                         const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p,
                         const lc_avx2_act *act, __m256 bias, const int raw, const float *const *pf) {
  size_t ox = 0;
  if (S == 1 && K == 3) { /* four rows as two calls of two: 4 x 2 accumulators and 9 weights would spill */
    __m256 wv[9];
    LC_UNROLL for (int t = 0; t < 9; t++) wv[t] = _mm256_broadcast_ss(w + t);
    /* Left edge, pad 1, a full block whose columns 0 .. 8 lie in the row: lanes shifted in registers */
    if (pl == 1 && ow >= 8 && iw >= 9) blocks_k3(0, ors, R, pl, in_rows, wv, out, p, act, bias, raw, 1), ox = 8;
    for (; ox < ow && (ptrdiff_t)ox < (ptrdiff_t)pl; ox += 8) /* other left edges: masked loads */
      block(ox, ow - ox < 8 ? ow - ox : 8, 1, S, R, ors, K, pl, iw, in_rows, w, out, p, act, bias, raw);
    for (; ox + 8 <= ow && ox + 10 <= iw + pl; ox += 8)
      blocks_k3(ox, ors, R, pl, in_rows, wv, out, p, act, bias, raw, 0);
    /* Right edge, a full block with only its last column past the row (ow = iw at pad 1) */
    if (ox + 8 == ow && ox + 9 == iw + pl && ox >= pl)
      blocks_k3(ox, ors, R, pl, in_rows, wv, out, p, act, bias, raw, 2), ox += 8;
    for (; ox < ow; ox += 8)
      block(ox, ow - ox < 8 ? ow - ox : 8, 1, S, R, ors, K, pl, iw, in_rows, w, out, p, act, bias, raw);
    if (raw) dw_epilogue(out, ors, (size_t)R, ow, p, act);
    return;
  }
  if (S == 2) {
    __m256 wv[25];
    LC_UNROLL_ALL for (int t = 0; t < K * K; t++) wv[t] = _mm256_broadcast_ss(w + t);
    /* Left edge, pad 1 (or 2 at 5x5), a full block whose other columns lie in the row */
    if (ow >= 8 && (pl == 1 || (K == 5 && pl == 2)) && 14 + (size_t)K <= iw + pl)
      block_s2(0, ors, R, K, pl, in_rows, wv, out, p, act, bias, raw, 1, pf), ox = 8;
    for (; ox < ow && (ptrdiff_t)(2 * ox) < (ptrdiff_t)pl; ox += 8)
      s2_masked(ox, ow - ox < 8 ? ow - ox : 8, (size_t)R, ors, K, pl, iw, in_rows, w, out, p, act, &bias, raw);
    for (; ox + 8 <= ow && 2 * ox + 14 + (size_t)K <= iw + pl; ox += 8)
      block_s2(ox, ors, R, K, pl, in_rows, wv, out, p, act, bias, raw, 0, pf);
    /* Right edge: the last full block, then the last 8 outputs again (raw: the sums alone, the same
     * bits a second time) rather than masked loads, each in the row or its last column one past it.
     * Masked, a 10 px row took 66 cycles an output vector, this 22. */
    for (int t = 0; t < 2 && ox < ow && ow >= 8; t++) {
      const size_t xr = ox + 8 <= ow ? ox : ow - 8, end = 2 * xr + 14 + (size_t)K;
      if ((xr < ox && !raw) || 2 * xr < pl || end > iw + pl + 1) break;
      block_s2(xr, ors, R, K, pl, in_rows, wv, out, p, act, bias, raw, end > iw + pl ? 2 : 0, pf), ox = xr + 8;
    }
    for (; ox < ow; ox += 8)
      s2_masked(ox, ow - ox < 8 ? ow - ox : 8, (size_t)R, ors, K, pl, iw, in_rows, w, out, p, act, &bias, raw);
    if (raw) dw_epilogue(out, ors, (size_t)R, ow, p, act);
    return;
  }
  /* Left edge: blocks whose first column is left of the row. */
  for (; ox < ow && (ptrdiff_t)(ox * (size_t)S) < (ptrdiff_t)pl; ox += 8)
    block(ox, ow - ox < 8 ? ow - ox : 8, 1, S, R, ors, K, pl, iw, in_rows, w, out, p, act, bias, raw);
  /* Interior: 8 outputs whose columns up to S ox - pl + S 7 + K - 1 lie in the row. */
  for (; ox + 8 <= ow && ox * (size_t)S + 7 * (size_t)S + (size_t)K <= iw + pl; ox += 8)
    block(ox, 8, 0, S, R, ors, K, pl, iw, in_rows, w, out, p, act, bias, raw);
  for (; ox < ow; ox += 8)
    block(ox, ow - ox < 8 ? ow - ox : 8, 1, S, R, ors, K, pl, iw, in_rows, w, out, p, act, bias, raw);
  if (raw) dw_epilogue(out, ors, (size_t)R, ow, p, act);
}

/* One function per (stride, rows, kernel, raw): inlined into one entry point, the twenty
 * instantiations made clang's ASan + UBSan build of this file (the fuzz targets) take over 10
 * minutes; as functions each compiles on its own. Stride 2's groups of 4 and 8 rows are raw only:
 * with the fused epilogue (a residual, accumulation) they were the slowest functions to compile and
 * gain little where the epilogue dominates. */
typedef void (*dw_rows_fn)(size_t ow, size_t ors, size_t pl, size_t iw, const float *const *ir, const float *w,
                           float *o, const lc_gemm_params *p, const lc_avx2_act *act, const __m256 *bias,
                           const float *const *pf);
#define LC_DW_ROWS(S, R, K, RAW)                                                                            \
  static void dw_rows_##S##_##R##_##K##_##RAW(size_t ow, size_t ors, size_t pl, size_t iw,                  \
                                              const float *const *ir, const float *w, float *o,              \
                                              const lc_gemm_params *p, const lc_avx2_act *act,               \
                                              const __m256 *bias, const float *const *pf) {                  \
    rows_unpadded(ow, S, R, ors, K, pl, iw, ir, w, o, p, act, *bias, RAW, pf);                              \
  }
#define LC_DW_ROWS2(S, R, K) LC_DW_ROWS(S, R, K, 0) LC_DW_ROWS(S, R, K, 1)
LC_DW_UNPADDED_GROUPS(LC_DW_ROWS2)
LC_DW_ROWS2(2, 2, 5)
LC_DW_ROWS(2, 4, 3, 1)
LC_DW_ROWS(2, 8, 3, 1)
LC_DW_ROWS(2, 4, 5, 1)
#undef LC_DW_ROWS2
#undef LC_DW_ROWS
#define LC_DW_PAIR(S, R, K) {dw_rows_##S##_##R##_##K##_0, dw_rows_##S##_##R##_##K##_1}
#define LC_DW_RAW(S, R, K) dw_rows_##S##_##R##_##K##_1

/* Stride 2's group at output row r: 8 rows (3x3) or 4 (5x5) of raw sums, 2 with the fused epilogue. */
static size_t s2_group_rows(size_t k, size_t r, size_t rows, int raw) {
  return raw && k == 3 && r + 7 < rows ? 8 : raw && r + 3 < rows ? 4 : r + 1 < rows ? 2 : 1;
}

/* Row groups of 4 at stride 1; at stride 2, of 8 (3x3) or 4 (5x5) raw, 2 fused; then what is left.
 * The whole of a plane in one call: a call per group of 4 cost ~100 cycles besides its blocks (a Zen 3,
 * bench_dw_rows: 104 cycles a call at 8 px, 5.4 per interior output vector), half of a 40 px plane's
 * time; 3x3 stride 2 at 40 px, 8 rows a group against 4: 12.4 against 13.7 cycles an output vector. */
void lc_f32_dw_row_unpadded_avx2(size_t ow, size_t rows, size_t ors, size_t s, size_t k, size_t pl, size_t iw,
                                 const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p) {
  static const dw_rows_fn s1k3[3][2] = {LC_DW_PAIR(1, 1, 3), LC_DW_PAIR(1, 2, 3), LC_DW_PAIR(1, 4, 3)},
                          s1k5[3][2] = {LC_DW_PAIR(1, 1, 5), LC_DW_PAIR(1, 2, 5), LC_DW_PAIR(1, 4, 5)},
                          s2[2][2][2] = {{LC_DW_PAIR(2, 1, 3), LC_DW_PAIR(2, 2, 3)},
                                         {LC_DW_PAIR(2, 1, 5), LC_DW_PAIR(2, 2, 5)}},
                          s2raw[2][2] = {{LC_DW_RAW(2, 4, 3), LC_DW_RAW(2, 8, 3)}, {LC_DW_RAW(2, 4, 5), NULL}};
  const lc_avx2_act act = lc_avx2_act_init(p);
  const __m256 bias = _mm256_set1_ps(p->bias ? p->bias[0] : 0.0f);
  /* A residual may be the output itself (read before each write): it keeps the fused epilogue. */
  const int raw = p->final && !p->accumulate && !p->residual && p->act >= 0 && p->act <= 4;
  lc_gemm_params q = *p;
  for (size_t r = 0; r < rows;) {
    const size_t nr = s == 2 ? s2_group_rows(k, r, rows, raw) : lc_dw_group_rows(s, k, r, rows);
    const int ri = nr == 4 ? 2 : nr == 2 ? 1 : 0;
    const dw_rows_fn f = s == 1   ? (k == 3 ? s1k3 : s1k5)[ri][raw]
                         : nr > 2 ? s2raw[k == 5][nr == 8]
                                  : s2[k == 5][ri][raw];
    q.residual = p->residual ? p->residual + r * ors : NULL;
    /* stride 2: the next group's new input rows, when it has as many as this one */
    const size_t nx = (r + nr) * s + k - s, nin = s * (rows - 1) + k;
    const float *const *pf = s == 2 && nx + 2 * nr <= nin ? in_rows + nx : NULL;
    f(ow, ors, pl, iw, in_rows + r * s, w, out + r * ors, &q, &act, &bias, pf);
    r += nr;
  }
}
#undef LC_DW_RAW
#undef LC_DW_PAIR
