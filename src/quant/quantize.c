/* Quantizer, construction from external codes, and the matrix's geometry. */
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kernels/registry.h"
#include "quant/qkernels.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/parallel.h"

static int block_allowed(int b) { return b == 0 || b == 16 || b == 32 || b == 64 || b == 128 || b == 256; }

/* Validates the spec and fills the geometry; allocates nothing. */
static lc_status setup(size_t n, size_t k, const lc_quant_spec *spec, lc_qmatrix *m) {
  memset(m, 0, sizeof *m);
  if (!spec) return lc_error(LC_ERR_INVALID_ARG, "quant: spec is NULL");
  if (spec->format != LC_WEIGHTS_Q8 && spec->format != LC_WEIGHTS_Q4 && spec->format != LC_WEIGHTS_F32)
    return lc_error(LC_ERR_INVALID_ARG, "quant: unknown weight format %d", (int)spec->format);
  if (n == 0 || k == 0) return lc_error(LC_ERR_INVALID_ARG, "quant: empty matrix (n=%zu, k=%zu)", n, k);
  size_t kc = spec->kc ? spec->kc : k;
  if (k % kc != 0)
    return lc_error(LC_ERR_INVALID_ARG, "quant: k=%zu is not a multiple of the channels per tap %zu", k, kc);
  if (spec->format != LC_WEIGHTS_F32 && !block_allowed(spec->block))
    return lc_error(LC_ERR_INVALID_ARG, "quant: block size %d not in {0, 16, 32, 64, 128, 256}", spec->block);
  const lc_qformat *f = &lc_qformats[spec->format];
  m->format = spec->format;
  m->asym = spec->format != LC_WEIGHTS_F32 && spec->asym;
  m->n = n;
  m->k = k;
  if (spec->format == LC_WEIGHTS_F32 || spec->block == 0) kc = k; /* one block spans the row */
  m->kc = kc;
  m->block = (spec->format == LC_WEIGHTS_F32 || spec->block == 0) ? k : lc_min_sz((size_t)spec->block, kc);
  m->taps = k / kc;
  m->bpt = lc_div_up(kc, m->block);
  m->tail = kc - (m->bpt - 1) * m->block;
  m->nb = m->taps * m->bpt;
  if (k > SIZE_MAX / 4) return lc_error(LC_ERR_OVERFLOW, "quant: k=%zu too large", k);
  m->block_bytes = lc_qblock_bytes(f->bits, m->block);
  m->tail_bytes = lc_qblock_bytes(f->bits, m->tail);
  m->row_bytes = m->taps * ((m->bpt - 1) * m->block_bytes + m->tail_bytes);
  size_t t;
  if (!lc_mul_sz(n, m->row_bytes, &t) || !lc_add_sz(t, LC_QSLACK, &t) || !lc_mul_sz(n, m->nb, &t) ||
      !lc_mul_sz(t, sizeof(float), &t))
    return lc_error(LC_ERR_OVERFLOW, "quant: %zu x %zu matrix does not fit in memory", n, k);
  return LC_OK;
}

/* Large weight arrays ask for transparent huge pages before their first touch: a GEMV streams
 * them once per call, and 2 MiB pages measured ~10 % more GB/s (K=4096 N=11008 q4, 1 thread)
 * by sparing a page walk every 4 KiB. A hint only: without THP nothing changes. */
static void *alloc_weights(size_t bytes, int zero) {
  uint8_t *p = lc_malloc(bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (p && bytes >= 2 * huge) {
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
  }
#endif
  if (p && zero) memset(p, 0, bytes);
  return p;
}

static lc_status alloc_arrays(lc_qmatrix *m) {
  m->codes = alloc_weights(m->n * m->row_bytes + LC_QSLACK, 1);
  m->scales = m->format == LC_WEIGHTS_F32 ? NULL : alloc_weights(m->n * m->nb * sizeof(float), 0);
  m->offsets = m->asym ? alloc_weights(m->n * m->nb * sizeof(float), 0) : NULL;
  if (!m->codes || (m->format != LC_WEIGHTS_F32 && !m->scales) || (m->asym && !m->offsets)) {
    lc_qmatrix_free(m);
    return lc_error(LC_ERR_NO_MEMORY, "quant: out of memory for a %zu x %zu matrix", m->n, m->k);
  }
  return LC_OK;
}

size_t lc_qmatrix_blocks(size_t k, const lc_quant_spec *spec) {
  lc_qmatrix m;
  return setup(1, k, spec, &m) == LC_OK ? m.nb : 0;
}

lc_status lc_qmatrix_layout(size_t n, size_t k, const lc_quant_spec *spec, lc_qmatrix *out) { return setup(n, k, spec, out); }

size_t lc_qmatrix_row_bytes(size_t k, const lc_quant_spec *spec) {
  lc_qmatrix m;
  return setup(1, k, spec, &m) == LC_OK ? m.row_bytes : 0;
}

void lc_qmatrix_free(lc_qmatrix *m) {
  if (!m) return;
  if (!(m->borrowed & LC_QM_CODES)) lc_free(m->codes);
  if (!(m->borrowed & LC_QM_SCALES)) {
    lc_free(m->scales);
    lc_free(m->offsets);
  }
  m->borrowed = 0;
  m->codes = NULL;
  m->scales = m->offsets = NULL;
}

lc_status lc_qmatrix_clone(const lc_qmatrix *src, lc_qmatrix *dst) {
  if (!src || !src->codes || !dst) return lc_error(LC_ERR_INVALID_ARG, "quant: clone of NULL");
  lc_qmatrix m = *src;
  m.borrowed = 0;
  lc_status st = alloc_arrays(&m);
  if (st != LC_OK) return st;
  memcpy(m.codes, src->codes, m.n * m.row_bytes + LC_QSLACK);
  if (m.scales) memcpy(m.scales, src->scales, m.n * m.nb * sizeof(float));
  if (m.offsets) memcpy(m.offsets, src->offsets, m.n * m.nb * sizeof(float));
  *dst = m;
  return LC_OK;
}

size_t lc_qmatrix_bytes(const lc_qmatrix *m) {
  size_t per = m->format == LC_WEIGHTS_F32 ? 0 : sizeof(float) * (m->asym ? 2 : 1);
  return m->n * m->row_bytes + m->n * m->nb * per;
}

/* Block j of a row: first column and length. */
static void block_span(const lc_qmatrix *m, size_t j, size_t *k0, size_t *len, size_t *byte0) {
  size_t t = j / m->bpt, i = j % m->bpt;
  *k0 = t * m->kc + i * m->block;
  *len = i == m->bpt - 1 ? m->tail : m->block;
  *byte0 = t * ((m->bpt - 1) * m->block_bytes + m->tail_bytes) + i * m->block_bytes;
}

/* Every code of the width, padding included, must decode to a finite value (kernels read padding). */
static int block_finite(const lc_qformat *f, float s, float o) {
  /* o == 0: q * s rounds once like the fma (only a zero's sign can differ) and needs no libm call,
   * which was most of a saved model's load time spent checking its scales */
  if (o == 0.0f) return isfinite((float)f->qmin * s) && isfinite((float)f->qmax * s);
  return isfinite(fmaf((float)f->qmin, s, o)) && isfinite(fmaf((float)f->qmax, s, o));
}

static double sq_err(const float *v, const int8_t *q, size_t len, float s, float o) {
  double e = 0;
  if (o == 0.0f) { /* q * s is exact in double: one rounding to float, as fmaf(q, s, 0) (no libm call) */
    for (size_t j = 0; j < len; j++) {
      double d = (double)v[j] - (double)(float)((double)q[j] * (double)s);
      e += d * d;
    }
    return e;
  }
  for (size_t j = 0; j < len; j++) {
    double d = (double)v[j] - (double)fmaf((float)q[j], s, o);
    e += d * d;
  }
  return e;
}

/* roundf (halves away from zero) without a libm call (most of a q4 load's time went to roundf,
 * fminf and fmaxf calls): x - trunc(x) is exact. */
static inline float round_away(float x) {
  if (!(fabsf(x) < 1073741824.0f)) return x; /* integral already (or NaN): no conversion out of range */
  float t = (float)(int32_t)x, d = x - t;
  return t + (float)(d >= 0.5f) - (float)(d <= -0.5f); /* no branch: the halves are random */
}

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Quantizes one block to codes q with the range [lo, hi] (clipped); returns scale and offset. */
static void quant_range(const lc_qformat *f, int asym, const float *v, size_t len, float lo, float hi, int8_t *q,
                        float *s, float *o) {
  /* v is finite and |v - lo| / s at most a few times the code range (a clipped range keeps 70 % of
   * the block's), so round_away's int conversion is in range and the clamps see no NaN. */
  if (!asym) {
    float amax = fmaxf(fabsf(lo), fabsf(hi));
    *s = amax / (float)f->qmax_sym;
    *o = 0.0f;
    const float qm = (float)f->qmax_sym, sv = *s;
    for (size_t j = 0; j < len; j++) {
      float r = sv > 0.0f ? round_away(v[j] / sv) : 0.0f;
      q[j] = (int8_t)clampf(r, -qm, qm);
    }
    return;
  }
  int half = 1 << (f->bits - 1), umax = (1 << f->bits) - 1;
  *s = (hi - lo) / (float)umax;
  *o = lo + (float)half * *s;
  const float sv = *s;
  for (size_t j = 0; j < len; j++) {
    float r = sv > 0.0f ? round_away((v[j] - lo) / sv) : 0.0f;
    q[j] = (int8_t)((int)clampf(r, 0.0f, (float)umax) - half);
  }
}

static lc_status quant_block(const lc_qformat *f, const lc_quant_spec *spec, const float *v, size_t len, int8_t *q,
                             int8_t *qtry, float *s, float *o) {
  float mn = v[0], mx = v[0];
  for (size_t j = 1; j < len; j++) { /* finite (checked by the caller) */
    mn = v[j] < mn ? v[j] : mn;
    mx = v[j] > mx ? v[j] : mx;
  }
  if (spec->asym && !isfinite(mx - mn))
    return lc_error(LC_ERR_INVALID_ARG, "quant: block range [%g, %g] overflows float", (double)mn, (double)mx);
  quant_range(f, spec->asym, v, len, mn, mx, q, s, o);
  if (!block_finite(f, *s, *o))
    return lc_error(LC_ERR_INVALID_ARG, "quant: block range [%g, %g] too large to quantize", (double)mn, (double)mx);
  if (!spec->clip_search) return LC_OK;
  /* Shrink the range toward its centre (asym) or zero (sym); keep the lowest squared error. */
  double best = sq_err(v, q, len, *s, *o);
  float mid = spec->asym ? 0.5f * mn + 0.5f * mx : 0.0f;
  for (int c = 19; c >= 14; c--) {
    float frac = (float)c / 20.0f, s2, o2;
    quant_range(f, spec->asym, v, len, mid + (mn - mid) * frac, mid + (mx - mid) * frac, qtry, &s2, &o2);
    double e = sq_err(v, qtry, len, s2, o2);
    if (e < best) {
      best = e;
      *s = s2;
      *o = o2;
      memcpy(q, qtry, len);
    }
  }
  return LC_OK;
}

static void plain_row(void *ctx, size_t r, size_t k, float *row) {
  memcpy(row, (const float *)ctx + r * k, k * sizeof(float));
}

lc_status lc_quantize(const float *w, size_t n, size_t k, const lc_quant_spec *spec, lc_qmatrix *out) {
  if (!w && out) {
    lc_qmatrix m;
    lc_status st = setup(n, k, spec, &m);
    if (st != LC_OK) return st;
    return lc_error(LC_ERR_INVALID_ARG, "quant: weights are NULL");
  }
  return lc_quantize_rows(n, k, spec, plain_row, (void *)w, out);
}

typedef struct rows_job {
  lc_qmatrix *m;
  const lc_quant_spec *spec;
  lc_qrow_fn row_fn;
  void *ctx;
} rows_job;

/* Rows [r0, r1) of the matrix, with their own buffers: one row of floats at a time, the only fp32
 * copy the quantizer ever holds. Nonzero on failure, the message in this thread's lc_last_error. */
static lc_status quant_rows_st(const rows_job *jb, size_t r0, size_t r1) {
  lc_qmatrix *mp = jb->m;
  const lc_qmatrix m = *mp;
  const size_t k = m.k;
  const lc_qformat *f = &lc_qformats[m.format];
  float *row = lc_malloc(k * sizeof(float));
  int8_t *q = lc_malloc(2 * m.block);
  lc_status st = row && q ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "quant: out of memory");
  for (size_t r = r0; r < r1 && st == LC_OK; r++) {
    jb->row_fn(jb->ctx, r, k, row);
    for (size_t c = 0; c < k; c++)
      if (!isfinite(row[c])) {
        st = lc_error(LC_ERR_INVALID_ARG, "quant: weight [%zu][%zu] (index %zu) is %s", r, c, r * k + c,
                      isnan(row[c]) ? "NaN" : "Inf");
        break;
      }
    if (st != LC_OK) break;
    if (m.format == LC_WEIGHTS_F32) {
      memcpy(m.codes + r * m.row_bytes, row, k * sizeof(float));
      continue;
    }
    for (size_t j = 0; j < m.nb; j++) {
      size_t k0, len, b0;
      block_span(&m, j, &k0, &len, &b0);
      float *o = m.asym ? &m.offsets[r * m.nb + j] : &(float){0};
      st = quant_block(f, jb->spec, row + k0, len, q, q + m.block, &m.scales[r * m.nb + j], o);
      if (st != LC_OK) break;
      f->pack(q, len, m.codes + r * m.row_bytes + b0);
    }
  }
  lc_free(q);
  lc_free(row);
  return st;
}

static int quant_rows(void *arg, size_t r0, size_t r1) { return quant_rows_st(arg, r0, r1) != LC_OK; }

lc_status lc_quantize_rows(size_t n, size_t k, const lc_quant_spec *spec, lc_qrow_fn row_fn, void *ctx,
                           lc_qmatrix *out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "quant: output is NULL");
  lc_qmatrix m;
  lc_status st = setup(n, k, spec, &m);
  if (st != LC_OK) return st;
  if (!row_fn) return lc_error(LC_ERR_INVALID_ARG, "quant: weights are NULL");
  if ((st = alloc_arrays(&m)) != LC_OK) return st;
  /* Rows are independent: a load's quantization (IResNet34 at q4: 1 s of one core here, 4 s on
   * the H200 machine's host) spreads over the cores, 64K weights a thread at least. Row r's
   * codes do not depend on the split. */
  rows_job jb = {&m, spec, row_fn, ctx};
  size_t per = k ? ((size_t)1 << 16) / k + 1 : n;
  /* On a failure, again on this thread: the same first bad row and its message here (or, after a
   * worker ran out of memory, maybe success). */
  if (lc_parallel_ranges(n, per, 16, quant_rows, &jb) && (st = quant_rows_st(&jb, 0, n)) != LC_OK) {
    lc_qmatrix_free(&m);
    return st;
  }
  *out = m;
  return LC_OK;
}

/* Counts and values of the scales / offsets of m (shape from setup). */
static lc_status check_scales(const lc_qmatrix *m, const float *scales, size_t scale_count, const float *offsets,
                              size_t offset_count) {
  const lc_qformat *f = &lc_qformats[m->format];
  size_t ns = m->n * m->nb;
  if (!scales || scale_count != ns)
    return lc_error(LC_ERR_INVALID_ARG, "quant: %zu scales given, %zu rows x %zu blocks need %zu",
                    scales ? scale_count : 0, m->n, m->nb, ns);
  if (m->asym ? (!offsets || offset_count != ns) : (offsets != NULL || offset_count != 0))
    return lc_error(LC_ERR_INVALID_ARG, "quant: %zu offsets given, %s needs %zu", offsets ? offset_count : 0,
                    m->asym ? "asymmetric" : "symmetric", m->asym ? ns : (size_t)0);
  for (size_t i = 0; i < ns; i++)
    if (!block_finite(f, scales[i], m->asym ? offsets[i] : 0.0f))
      return lc_error(LC_ERR_INVALID_ARG, "quant: scale/offset %zu (%g, %g) is not finite or overflows the code range",
                      i, (double)scales[i], m->asym ? (double)offsets[i] : 0.0);
  return LC_OK;
}

lc_status lc_qmatrix_wrap(size_t n, size_t k, const lc_quant_spec *spec, const uint8_t *codes, const float *scales,
                          const float *offsets, lc_qmatrix *out) {
  if (!out || !codes) return lc_error(LC_ERR_INVALID_ARG, "quant: output or codes is NULL");
  lc_qmatrix m;
  lc_status st = setup(n, k, spec, &m);
  if (st != LC_OK) return st;
  if (m.format == LC_WEIGHTS_F32) return lc_error(LC_ERR_INVALID_ARG, "quant: f32 weights have no codes");
  if (m.format == LC_WEIGHTS_Q4 && (m.block % 2 || m.tail % 2))
    return lc_error(LC_ERR_INVALID_ARG, "quant: q4 blocks of odd length (%zu, %zu) do not start on bytes", m.block,
                    m.tail);
  size_t ns = n * m.nb;
  if ((st = check_scales(&m, scales, ns, m.asym ? offsets : NULL, m.asym ? ns : 0))) return st;
  /* no code check: every int8 byte and every nibble is a code of the format's range */
  m.codes = (uint8_t *)(uintptr_t)codes;
  m.scales = (float *)(uintptr_t)scales;
  m.offsets = m.asym ? (float *)(uintptr_t)offsets : NULL;
  m.borrowed = LC_QM_CODES | LC_QM_SCALES;
  *out = m;
  return LC_OK;
}

lc_status lc_qmatrix_from_code_rows(size_t n, size_t k, const lc_quant_spec *spec, lc_qcode_row_fn row_fn,
                                    void *ctx, const float *scales, size_t scale_count, const float *offsets,
                                    size_t offset_count, lc_qmatrix *out) {
  if (!out || !row_fn) return lc_error(LC_ERR_INVALID_ARG, "quant: output or row function is NULL");
  lc_qmatrix m;
  lc_status st = setup(n, k, spec, &m);
  if (st != LC_OK) return st;
  if (m.format == LC_WEIGHTS_F32) return lc_error(LC_ERR_INVALID_ARG, "quant: f32 weights have no codes");
  const lc_qformat *f = &lc_qformats[m.format];
  size_t ns = n * m.nb;
  if ((st = check_scales(&m, scales, scale_count, offsets, offset_count))) return st;
  int8_t *q = lc_malloc(k ? k : 1); /* one row at a time: no int8 copy of the whole matrix */
  if (!q) return lc_error(LC_ERR_NO_MEMORY, "quant: out of memory");
  if ((st = alloc_arrays(&m)) != LC_OK) {
    lc_free(q);
    return st;
  }
  memcpy(m.scales, scales, ns * sizeof(float));
  if (m.asym) memcpy(m.offsets, offsets, ns * sizeof(float));
  for (size_t r = 0; r < n && !st; r++) {
    row_fn(ctx, r, k, q);
    for (size_t i = 0; i < k; i++)
      if (q[i] < f->qmin || q[i] > f->qmax) {
        st = lc_error(LC_ERR_INVALID_ARG, "quant: code %d at index %zu out of range [%d, %d] for %s", q[i], r * k + i,
                      f->qmin, f->qmax, f->name);
        break;
      }
    for (size_t j = 0; !st && j < m.nb; j++) {
      size_t k0, len, b0;
      block_span(&m, j, &k0, &len, &b0);
      f->pack(q + k0, len, m.codes + r * m.row_bytes + b0);
    }
  }
  lc_free(q);
  if (st) {
    lc_qmatrix_free(&m);
    return st;
  }
  *out = m;
  return LC_OK;
}

static void code_row(void *ctx, size_t r, size_t k, int8_t *row) { memcpy(row, (const int8_t *)ctx + r * k, k); }

lc_status lc_qmatrix_from_codes(size_t n, size_t k, const lc_quant_spec *spec, const int8_t *q, size_t q_count,
                                const float *scales, size_t scale_count, const float *offsets,
                                size_t offset_count, lc_qmatrix *out) {
  size_t nq;
  if (!lc_mul_sz(n, k, &nq)) return lc_error(LC_ERR_OVERFLOW, "quant: %zu x %zu codes overflow", n, k);
  if (!q || q_count != nq)
    return lc_error(LC_ERR_INVALID_ARG, "quant: %zu codes given, %zu x %zu matrix needs %zu", q ? q_count : 0, n,
                    k, nq);
  return lc_qmatrix_from_code_rows(n, k, spec, code_row, (void *)(uintptr_t)q, scales, scale_count, offsets,
                                   offset_count, out);
}

lc_status lc_dequant_rows(const lc_qmatrix *m, size_t row0, size_t nrows, size_t k0, size_t klen, float *dst,
                          size_t ld) {
  return lc_dequant_rows_with(lc_kernels_clamp(LC_ISA_AUTO), m, row0, nrows, k0, klen, dst, ld);
}

lc_status lc_dequant_rows_with(const lc_kernels *kt, const lc_qmatrix *m, size_t row0, size_t nrows, size_t k0,
                               size_t klen, float *dst, size_t ld) {
  if (!m || !m->codes || !dst) return lc_error(LC_ERR_INVALID_ARG, "dequant: NULL matrix or destination");
  if (row0 > m->n || nrows > m->n - row0 || k0 > m->k || klen > m->k - k0 || (nrows > 1 && ld < klen))
    return lc_error(LC_ERR_INVALID_ARG, "dequant: rows [%zu, +%zu) cols [%zu, +%zu) ld %zu outside %zu x %zu",
                    row0, nrows, k0, klen, ld, m->n, m->k);
  lc_dequant_fn deq = kt->dequant[m->format];
  size_t tap_bytes = (m->bpt - 1) * m->block_bytes + m->tail_bytes;
  /* Where k0 lies (tap, block, offset), found once: the divisions per block cost as much as
   * dequantizing a block of 32 (perf, q4 3x3 512 ch at 7x7). */
  size_t t0 = k0 / m->kc, i0 = k0 % m->kc / m->block, j00 = k0 % m->kc % m->block;
  for (size_t r = 0; r < nrows; r++) {
    size_t row = row0 + r, t = t0, i = i0, j0 = j00;
    const uint8_t *codes = m->codes + row * m->row_bytes;
    const float *sr = m->scales ? m->scales + row * m->nb : NULL, *orow = m->offsets ? m->offsets + row * m->nb : NULL;
    float *d = dst + r * ld;
    for (size_t kk = k0; kk < k0 + klen;) {
      size_t len = lc_min_sz((i == m->bpt - 1 ? m->tail : m->block) - j0, k0 + klen - kk);
      size_t b = t * m->bpt + i;
      deq(codes + t * tap_bytes + i * m->block_bytes, j0, len, sr ? sr[b] : 1.0f, orow ? orow[b] : 0.0f, d + (kk - k0));
      kk += len;
      j0 = 0;
      if (++i == m->bpt) i = 0, t++;
    }
  }
  return LC_OK;
}
