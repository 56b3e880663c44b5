/* Block quantization: round-trip error bounds, block geometry (short last block per tap),
 * from_codes, sub-panel dequantization, GEMV in both modes on every kernel set, bad input. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "testutil.h"
#include "util/threadpool.h"

static const int kBlocks[] = {0, 16, 32, 64, 128, 256};
static const lc_weight_format kFormats[] = {LC_WEIGHTS_Q8, LC_WEIGHTS_Q4};

/* Block index of column c: blocks never straddle taps; the last block of a tap is the short one. */
static size_t block_of(const lc_qmatrix *m, size_t c) { return (c / m->kc) * m->bpt + (c % m->kc) / m->block; }

static float *dequant_all(const lc_qmatrix *m) {
  float *d = malloc(m->n * m->k * sizeof(float));
  TU_CHECK(lc_dequant_rows(m, 0, m->n, 0, m->k, d, m->k) == LC_OK, "%s", lc_last_error());
  return d;
}

static struct lc_pool *test_pool;

static int qmax_of(lc_weight_format f) { return f == LC_WEIGHTS_Q4 ? 8 : 128; }

/* |w - dq| <= step/2 for every weight, step = that block's scale (+ float rounding of the decode). */
static void test_roundtrip(void) {
  const size_t kcs[] = {3, 40, 100, 256, 300};
  for (int fi = 0; fi < 2; fi++)
    for (int asym = 0; asym < 2; asym++)
      for (int bi = 0; bi < 6; bi++)
        for (int ki = 0; ki < 5; ki++)
          for (size_t taps = 1; taps <= 3; taps += 2) {
            size_t n = 5, kc = kcs[ki], k = kc * taps;
            lc_quant_spec sp = {kFormats[fi], kBlocks[bi], asym, kc, 0};
            float *w = malloc(n * k * sizeof(float));
            tu_fill(w, n * k, -2.0f, asym ? 5.0f : 2.0f);
            lc_qmatrix m;
            if (lc_quantize(w, n, k, &sp, &m) != LC_OK) {
              TU_CHECK(0, "quantize failed: %s", lc_last_error());
              free(w);
              continue;
            }
            size_t bs = kBlocks[bi] ? (size_t)kBlocks[bi] : k;
            if (bs > kc && kBlocks[bi]) bs = kc;
            size_t bpt = kBlocks[bi] ? (kc + bs - 1) / bs : 1;
            TU_CHECK(m.nb == bpt * (kBlocks[bi] ? taps : 1), "nb %zu", m.nb);
            TU_CHECK(lc_qmatrix_blocks(k, &sp) == m.nb, "lc_qmatrix_blocks");
            if (kBlocks[bi]) TU_CHECK(m.tail == kc - (bpt - 1) * bs, "tail %zu kc %zu bs %zu", m.tail, kc, bs);
            float *d = dequant_all(&m);
            double worst = 0;
            for (size_t r = 0; r < n; r++)
              for (size_t c = 0; c < k; c++) {
                size_t b = r * m.nb + block_of(&m, c);
                float s = m.scales[b], o = m.offsets ? m.offsets[b] : 0.0f, wv = w[r * k + c];
                double err = fabs((double)wv - d[r * k + c]);
                double tol = 0.5 * s + 4 * FLT_EPSILON * (fabs(wv) + fabs(o) + qmax_of(sp.format) * s);
                if (err / tol > worst) worst = err / tol;
              }
            TU_CHECK(worst <= 1.0, "%s asym=%d block=%d kc=%zu taps=%zu: error %.3f x half step",
                     kFormats[fi] == LC_WEIGHTS_Q4 ? "q4" : "q8", asym, kBlocks[bi], kc, taps, worst);
            free(d);
            lc_qmatrix_free(&m);
            free(w);
          }
}

/* Clip search: squared error never above plain rounding; unclipped weights still within half a step. */
static void test_clip_search(void) {
  for (int fi = 0; fi < 2; fi++)
    for (int asym = 0; asym < 2; asym++) {
      size_t n = 8, k = 256;
      float *w = malloc(n * k * sizeof(float));
      for (size_t i = 0; i < n * k; i++) w[i] = tu_rand_float(-1, 1) * tu_rand_float(-1, 1) * tu_rand_float(0, 3);
      lc_quant_spec a = {kFormats[fi], 32, asym, 0, 0}, b = a;
      b.clip_search = 1;
      lc_qmatrix ma, mb;
      TU_CHECK(lc_quantize(w, n, k, &a, &ma) == LC_OK && lc_quantize(w, n, k, &b, &mb) == LC_OK, "quantize");
      float *da = dequant_all(&ma), *db = dequant_all(&mb);
      double ea = 0, eb = 0;
      int bad = 0;
      for (size_t i = 0; i < n * k; i++) {
        size_t blk = (i / k) * mb.nb + block_of(&mb, i % k);
        float s = mb.scales[blk], o = mb.offsets ? mb.offsets[blk] : 0.0f;
        int qlo = fi == 1 ? -8 : -128, qhi = fi == 1 ? 7 : 127;
        if (!asym) qlo = -qhi;
        double lo = (double)qlo * s + o - 0.5 * s, hi = (double)qhi * s + o + 0.5 * s;
        double e = fabs((double)w[i] - db[i]);
        if (w[i] >= lo && w[i] <= hi && e > 0.5 * s * 1.0001 + 1e-6) bad++;
        ea += ((double)w[i] - da[i]) * ((double)w[i] - da[i]);
        eb += e * e;
      }
      TU_CHECK(eb <= ea * (1 + 1e-9), "clip search raised SSE %g -> %g", ea, eb);
      TU_CHECK(bad == 0, "%d unclipped weights beyond half a step", bad);
      free(da);
      free(db);
      lc_qmatrix_free(&ma);
      lc_qmatrix_free(&mb);
      free(w);
    }
}

/* from_codes gives exactly fmaf(q, s, o); sub-panels equal the matching window of the full decode. */
static void test_from_codes_and_panels(void) {
  for (int fi = 0; fi < 2; fi++)
    for (int asym = 0; asym < 2; asym++)
      for (int bi = 0; bi < 6; bi++) {
        size_t n = 7, kc = 72, k = 3 * kc;
        lc_quant_spec sp = {kFormats[fi], kBlocks[bi], asym, kc, 0};
        size_t nb = lc_qmatrix_blocks(k, &sp), qlo = fi ? 8 : 128;
        int8_t *q = malloc(n * k);
        float *s = malloc(n * nb * sizeof(float)), *o = malloc(n * nb * sizeof(float));
        for (size_t i = 0; i < n * k; i++) q[i] = (int8_t)(tu_rand_int(0, (int)(2 * qlo - 1)) - (int)qlo);
        tu_fill(s, n * nb, 0.001f, 0.1f);
        tu_fill(o, n * nb, -1.0f, 1.0f);
        lc_qmatrix m;
        lc_status st = lc_qmatrix_from_codes(n, k, &sp, q, n * k, s, n * nb, asym ? o : NULL, asym ? n * nb : 0, &m);
        TU_CHECK(st == LC_OK, "from_codes: %s", lc_last_error());
        if (st != LC_OK) continue;
        float *d = dequant_all(&m);
        int bad = 0;
        for (size_t r = 0; r < n; r++)
          for (size_t c = 0; c < k; c++) {
            size_t b = r * nb + block_of(&m, c);
            if (d[r * k + c] != fmaf((float)q[r * k + c], s[b], asym ? o[b] : 0.0f)) bad++;
          }
        TU_CHECK(bad == 0, "from_codes decode mismatch at %d weights", bad);
        for (int trial = 0; trial < 20; trial++) {
          size_t r0 = (size_t)tu_rand_int(0, (int)n - 1), nr = (size_t)tu_rand_int(1, (int)(n - r0));
          size_t k0 = (size_t)tu_rand_int(0, (int)k - 1), kl = (size_t)tu_rand_int(1, (int)(k - k0));
          size_t ld = kl + 3;
          float *p = malloc(nr * ld * sizeof(float));
          TU_CHECK(lc_dequant_rows(&m, r0, nr, k0, kl, p, ld) == LC_OK, "%s", lc_last_error());
          int diff = 0;
          for (size_t r = 0; r < nr; r++)
            for (size_t c = 0; c < kl; c++) diff += p[r * ld + c] != d[(r0 + r) * k + k0 + c];
          TU_CHECK(diff == 0, "panel rows %zu+%zu cols %zu+%zu: %d differ", r0, nr, k0, kl, diff);
          free(p);
        }
        free(d);
        lc_qmatrix_free(&m);
        free(q);
        free(s);
        free(o);
      }
}

/* GEMV vs fp64 on the dequantized weights. Accurate: (K+8) eps sum|x w|. int8: per block
 * 0.5 xs sum|w| (activation rounding, xs = absmax/127) plus float rounding of the fold. */
static void check_gemv(const lc_qmatrix *m, size_t mm, lc_qgemv_mode mode, lc_isa isa, int threads) {
  size_t n = m->n, k = m->k, ldx = k + 1, ldy = n + 2;
  float *x = malloc(mm * ldx * sizeof(float)), *y = malloc(mm * ldy * sizeof(float));
  float *bias = malloc(n * sizeof(float));
  tu_fill(x, mm * ldx, -1.0f, 1.0f);
  tu_fill(bias, n, -1.0f, 1.0f);
  for (size_t i = 0; i < mm * ldy; i++) y[i] = NAN;
  float *wd = dequant_all(m);
  lc_qgemv_opts op = {mode, threads, isa, threads > 2 ? test_pool : NULL};
  lc_status st = lc_qgemv(m, mm, x, ldx, bias, y, ldy, &op);
  TU_CHECK(st == LC_OK, "gemv: %s", lc_last_error());
  double worst = 0;
  for (size_t i = 0; i < mm; i++)
    for (size_t j = 0; j < n; j++) {
      double ref = bias[j], mag = fabs(bias[j]), aq = 0;
      for (size_t b = 0; b < m->nb; b++) {
        /* Columns of block b: walk them via block_of (small sizes, fine for a test). */
        double amax = 0, sw = 0, sxw = 0;
        for (size_t c = 0; c < k; c++)
          if (block_of(m, c) == b) {
            double xv = x[i * ldx + c], wv = wd[j * k + c];
            ref += xv * wv;
            amax = fmax(amax, fabs(xv));
            sw += fabs(wv);
            sxw += fabs(xv) * fabs(wv);
          }
        double xs = amax / 127.0;
        if (mode == LC_QGEMV_INT8) {
          double s = m->scales[j * m->nb + b], o = m->offsets ? fabs(m->offsets[j * m->nb + b]) : 0;
          aq += 0.5 * xs * sw * 1.001;
          mag += (sxw + 0.5 * xs * sw + (amax + xs) * (qmax_of(m->format) * s + o) * (double)k);
        } else {
          mag += sxw;
        }
      }
      double tol = aq + (double)(k + m->nb + 8) * FLT_EPSILON * mag + 1e-30;
      double err = fabs(y[i * ldy + j] - ref);
      if (!(err <= tol)) worst = fmax(worst, isnan(err) ? INFINITY : err / tol);
      if (mode == LC_QGEMV_INT8) {
        /* Tight: replay the activation quantization; then only float rounding of the fold is left. */
        double r8 = bias[j], mag8 = fabs(bias[j]);
        for (size_t b = 0; b < m->nb; b++) {
          float amax = 0.0f;
          for (size_t c = 0; c < k; c++)
            if (block_of(m, c) == b) amax = fmaxf(amax, fabsf(x[i * ldx + c]));
          float xs = amax / 127.0f, sb = m->scales[j * m->nb + b];
          double ob = m->offsets ? fabs(m->offsets[j * m->nb + b]) : 0;
          for (size_t c = 0; c < k; c++)
            if (block_of(m, c) == b) {
              float xq = xs > 0.0f ? fminf(fmaxf(roundf(x[i * ldx + c] / xs), -127.0f), 127.0f) : 0.0f;
              double wv = wd[j * k + c];
              r8 += (double)xs * xq * wv;
              mag8 += (double)xs * fabs(xq) * (fabs(wv) + 2 * ob + sb);
            }
        }
        double e8 = fabs(y[i * ldy + j] - r8), t8 = (double)(m->nb + 16) * FLT_EPSILON * mag8 + 1e-30;
        if (!(e8 <= t8)) worst = fmax(worst, isnan(e8) ? INFINITY : e8 / t8);
      }
    }
  TU_CHECK(worst == 0, "gemv %s mode=%d isa=%d m=%zu n=%zu k=%zu block=%zu asym=%d: error %.3g x bound",
           m->format == LC_WEIGHTS_Q4 ? "q4" : m->format == LC_WEIGHTS_Q8 ? "q8" : "f32", (int)mode, (int)isa, mm,
           n, k, m->block, m->asym, worst);
  /* Padding of y between rows is untouched. */
  if (mm > 1) TU_CHECK(isnan(y[n]) && isnan(y[n + 1]), "gemv wrote outside n");
  free(wd);
  free(x);
  free(y);
  free(bias);
}

static void test_gemv(void) {
  const lc_isa isas[] = {LC_ISA_SCALAR, LC_ISA_AVX2, LC_ISA_AUTO};
  const size_t ks[][2] = {{67, 67}, {96, 32}, {300, 100}, {512, 512}, {130, 13}};
  for (int fi = 0; fi < 3; fi++)
    for (int asym = 0; asym < 2; asym++)
      for (int bi = 0; bi < 6; bi++)
        for (int ki = 0; ki < 5; ki++) {
          lc_weight_format f = fi == 2 ? LC_WEIGHTS_F32 : kFormats[fi];
          if (f == LC_WEIGHTS_F32 && (asym || bi)) continue;
          size_t n = (size_t)(1 + 2 * tu_rand_int(0, 9)), k = ks[ki][0];
          lc_quant_spec sp = {f, kBlocks[bi], asym, ks[ki][1], 0};
          float *w = malloc(n * k * sizeof(float));
          tu_fill(w, n * k, asym ? -0.5f : -1.0f, 1.0f);
          lc_qmatrix m;
          TU_CHECK(lc_quantize(w, n, k, &sp, &m) == LC_OK, "%s", lc_last_error());
          for (int ii = 0; ii < 3; ii++)
            for (int mode = 0; mode < 2; mode++) {
              if (f == LC_WEIGHTS_F32 && mode) continue;
              size_t mm = (size_t)tu_rand_int(1, 9);
              check_gemv(&m, mm, (lc_qgemv_mode)mode, isas[ii], 1 + (ki & 1));
            }
          lc_qmatrix_free(&m);
          free(w);
        }
  /* Every M from 1 to 9 on the fastest kernels, many rows, 2 threads. */
  for (int fi = 0; fi < 2; fi++) {
    size_t n = 37, k = 320;
    float *w = malloc(n * k * sizeof(float));
    tu_fill(w, n * k, -1, 1);
    lc_quant_spec sp = {kFormats[fi], 32, 1, 0, 0};
    lc_qmatrix m;
    TU_CHECK(lc_quantize(w, n, k, &sp, &m) == LC_OK, "%s", lc_last_error());
    for (size_t mm = 1; mm <= 9; mm++)
      for (int mode = 0; mode < 2; mode++) check_gemv(&m, mm, (lc_qgemv_mode)mode, LC_ISA_AUTO, 2 + (int)(mm & 1));
    lc_qmatrix_free(&m);
    free(w);
  }
}

/* The tiled kernels: weight rows taken in pairs / quads far apart, activation rows in tiles of 8
 * and 4 with remainders, every block length, k not a multiple of 128 (a partial last group). */
static void test_gemv_tiles(void) {
  const size_t ks[][2] = {{512, 0}, {576, 64}, {4096, 0}};
  const int blocks[] = {16, 32, 64, 128, 256, 0};
  const size_t ms[] = {1, 2, 8, 13, 19};
  for (int ki = 0; ki < 3; ki++)
    for (int bi = 0; bi < 6; bi++)
      for (int asym = 0; asym < 2; asym++) {
        size_t n = ki == 2 ? 11 : 45, k = ks[ki][0];
        if (ki == 2 && (bi != 1 || asym)) continue; /* one long row: block 32, symmetric */
        lc_quant_spec sp = {LC_WEIGHTS_Q4, blocks[bi], asym, ks[ki][1], 0};
        float *w = malloc(n * k * sizeof(float));
        tu_fill(w, n * k, asym ? -0.5f : -1.0f, 1.0f);
        lc_qmatrix m;
        TU_CHECK(lc_quantize(w, n, k, &sp, &m) == LC_OK, "%s", lc_last_error());
        for (int mi = 0; mi < 5; mi++)
          for (int mode = 0; mode < 2; mode++)
            if (ki < 2 || ms[mi] <= 2) check_gemv(&m, ms[mi], (lc_qgemv_mode)mode, LC_ISA_AUTO, 1 + (mi & 1));
        lc_qmatrix_free(&m);
        free(w);
      }
}

static int msg_has(const char *s) { return strstr(lc_last_error(), s) != NULL; }

static void test_bad_input(void) {
  size_t before = lc_alloc_current_bytes();
  float w[4 * 64];
  tu_fill(w, 4 * 64, -1, 1);
  lc_qmatrix m;
  const int bad_blocks[] = {-1, 1, 8, 48, 100, 512};
  for (int i = 0; i < 6; i++) {
    lc_quant_spec sp = {LC_WEIGHTS_Q4, bad_blocks[i], 0, 0, 0};
    TU_CHECK(lc_quantize(w, 4, 64, &sp, &m) == LC_ERR_INVALID_ARG && msg_has("block size"), "block %d: %s",
             bad_blocks[i], lc_last_error());
  }
  lc_quant_spec sp = {LC_WEIGHTS_Q4, 32, 0, 0, 0};
  TU_CHECK(lc_quantize(w, 0, 64, &sp, &m) == LC_ERR_INVALID_ARG, "n = 0");
  TU_CHECK(lc_quantize(NULL, 4, 64, &sp, &m) == LC_ERR_INVALID_ARG, "NULL weights");
  lc_quant_spec sp7 = {LC_WEIGHTS_Q4, 32, 0, 7, 0};
  TU_CHECK(lc_quantize(w, 4, 64, &sp7, &m) == LC_ERR_INVALID_ARG && msg_has("multiple"), "k %% kc: %s",
           lc_last_error());
  lc_quant_spec spf = {(lc_weight_format)9, 32, 0, 0, 0};
  TU_CHECK(lc_quantize(w, 4, 64, &spf, &m) == LC_ERR_INVALID_ARG && msg_has("format"), "format");
  /* NaN / Inf: the message names row, column and flat index. */
  w[2 * 64 + 5] = NAN;
  TU_CHECK(lc_quantize(w, 4, 64, &sp, &m) == LC_ERR_INVALID_ARG && msg_has("[2][5]") && msg_has("133") &&
               msg_has("NaN"),
           "NaN: %s", lc_last_error());
  w[2 * 64 + 5] = -INFINITY;
  TU_CHECK(lc_quantize(w, 4, 64, &sp, &m) == LC_ERR_INVALID_ARG && msg_has("Inf"), "Inf: %s", lc_last_error());
  w[2 * 64 + 5] = 0.5f;
  lc_quant_spec spa = {LC_WEIGHTS_Q8, 32, 1, 0, 0};
  w[0] = -3e38f;
  w[1] = 3e38f;
  TU_CHECK(lc_quantize(w, 4, 64, &spa, &m) == LC_ERR_INVALID_ARG && msg_has("overflow"), "range: %s",
           lc_last_error());
  w[0] = w[1] = 0.25f;

  /* from_codes: counts, ranges, non-finite scale/offset. */
  int8_t q[4 * 64] = {0};
  float s[8], o[8];
  for (int i = 0; i < 8; i++) s[i] = 0.1f, o[i] = 0.0f;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_OK, "good codes: %s",
           lc_last_error());
  lc_qmatrix_free(&m);
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64 - 1, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG &&
               msg_has("codes"),
           "code count: %s", lc_last_error());
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 7, NULL, 0, &m) == LC_ERR_INVALID_ARG && msg_has("scales"),
           "scale count: %s", lc_last_error());
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, o, 8, &m) == LC_ERR_INVALID_ARG && msg_has("offsets"),
           "offsets on symmetric: %s", lc_last_error());
  lc_quant_spec spa4 = {LC_WEIGHTS_Q4, 32, 1, 0, 0};
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &spa4, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG &&
               msg_has("offsets"),
           "missing offsets: %s", lc_last_error());
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &spa4, q, 4 * 64, s, 8, o, 7, &m) == LC_ERR_INVALID_ARG, "offset count");
  q[77] = 8;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG &&
               msg_has("index 77") && msg_has("out of range"),
           "q4 code 8: %s", lc_last_error());
  q[77] = -9;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG, "q4 code -9");
  q[77] = -8;
  s[3] = INFINITY;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG && msg_has("3"),
           "inf scale: %s", lc_last_error());
  s[3] = NAN;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG, "nan scale");
  s[3] = 3e38f; /* -8 * 3e38 overflows */
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &sp, q, 4 * 64, s, 8, NULL, 0, &m) == LC_ERR_INVALID_ARG, "huge scale");
  s[3] = 0.1f;
  o[5] = NAN;
  TU_CHECK(lc_qmatrix_from_codes(4, 64, &spa4, q, 4 * 64, s, 8, o, 8, &m) == LC_ERR_INVALID_ARG, "nan offset");

  /* dequant / gemv argument checks. */
  TU_CHECK(lc_quantize(w, 4, 64, &sp, &m) == LC_OK, "%s", lc_last_error());
  float d[64];
  TU_CHECK(lc_dequant_rows(&m, 3, 2, 0, 8, d, 8) == LC_ERR_INVALID_ARG, "rows out of range");
  TU_CHECK(lc_dequant_rows(&m, 0, 1, 60, 8, d, 8) == LC_ERR_INVALID_ARG, "cols out of range");
  TU_CHECK(lc_dequant_rows(&m, 0, 2, 0, 8, d, 4) == LC_ERR_INVALID_ARG, "ld too small");
  float x[2 * 64] = {0}, y[8];
  TU_CHECK(lc_qgemv(&m, 2, x, 10, NULL, y, 4, NULL) == LC_ERR_INVALID_ARG, "ldx too small");
  TU_CHECK(lc_qgemv(&m, 1, NULL, 64, NULL, y, 4, NULL) == LC_ERR_INVALID_ARG, "NULL x");
  /* Allocation failure inside gemv and quantize leaves nothing behind. */
  for (long f = 1; f <= 4; f++) {
    lc_alloc_fail_after(f);
    lc_qmatrix m2;
    lc_status st = lc_quantize(w, 4, 64, &spa4, &m2);
    lc_alloc_fail_after(0);
    if (st == LC_OK) lc_qmatrix_free(&m2);
    else TU_CHECK(st == LC_ERR_NO_MEMORY, "quantize under failure %ld: %s", f, lc_last_error());
  }
  lc_alloc_fail_after(1);
  TU_CHECK(lc_qgemv(&m, 1, x, 64, NULL, y, 4, NULL) == LC_ERR_NO_MEMORY, "gemv no memory");
  lc_alloc_fail_after(0);
  lc_qmatrix_free(&m);
  lc_quant_spec sf = {LC_WEIGHTS_F32, 0, 0, 0, 0};
  TU_CHECK(lc_quantize(w, 4, 64, &sf, &m) == LC_OK, "f32");
  lc_qgemv_opts op = {LC_QGEMV_INT8, 1, LC_ISA_AUTO, NULL};
  TU_CHECK(lc_qgemv(&m, 1, x, 64, NULL, y, 4, &op) == LC_ERR_UNSUPPORTED, "int8 on f32");
  lc_qmatrix_free(&m);
  TU_CHECK(lc_alloc_current_bytes() == before, "leak: %zu bytes", lc_alloc_current_bytes() - before);
}

int main(void) {
  tu_seed_from_env(12345);
  test_roundtrip();
  test_clip_search();
  test_from_codes_and_panels();
  test_pool = lc_pool_create(3);
  test_gemv();
  test_gemv_tiles();
  lc_pool_destroy(test_pool);
  test_bad_input();
  return tu_finish("test_quant");
}
