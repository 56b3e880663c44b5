/* GEMV driver: prepares the activations once per call, then splits the rows over threads. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "kernels/registry.h"
#include "quant/qkernels.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/threadpool.h"

/* Longest block the int8 kernels accept: 255 * 127 * len must fit in int32. */
#define LC_QINT8_MAX_BLOCK 65536

const char *lc_qgemv_isa_name(const lc_qgemv_opts *opts) {
  return lc_kernels_clamp(opts ? opts->isa : LC_ISA_AUTO)->qname;
}

/* roundf without a libm call: v - trunc(v) is exact, step away from zero at >= 0.5. */
static inline float round_away(float v) {
  float t = (float)(int32_t)v, d = v - t;
  return d >= 0.5f ? t + 1.0f : d <= -0.5f ? t - 1.0f : t;
}

/* Copies (accurate) or quantizes (int8) one block of one activation row into the padded layout. */
static void prep_block(int q4, lc_qgemv_mode mode, const float *x, size_t len, float *xf, int8_t *xq, float *xs,
                       int32_t *isum, float *xsum) {
  size_t pad = lc_qpad(len);
#define POS(e) (q4 ? ((e) & ~(size_t)31) + ((e) & 1) * 16 + (((e) & 31) >> 1) : (e))
  if (mode == LC_QGEMV_ACCURATE) {
    float s = 0.0f;
    memset(xf, 0, pad * sizeof(float));
    for (size_t e = 0; e < len; e++) {
      xf[POS(e)] = x[e];
      s += x[e];
    }
    *xsum = s;
    return;
  }
  float amax = 0.0f;
  for (size_t e = 0; e < len; e++) {
    float v = fabsf(x[e]);
    amax = v > amax ? v : amax;
  }
  float scale = amax / 127.0f;
  int32_t sum = 0;
  memset(xq, 0, pad);
  if (scale > 0.0f)
    for (size_t e = 0; e < len; e++) {
      float r = x[e] / scale; /* NaN (undefined input) must not reach the int conversion */
      r = r >= -127.0f ? (r <= 127.0f ? round_away(r) : 127.0f) : -127.0f;
      int8_t v = (int8_t)r;
      xq[POS(e)] = v;
      sum += v;
    }
#undef POS
  *xs = scale;
  *isum = sum;
  *xsum = scale * (float)sum;
}

typedef struct task {
  const lc_qmatrix *w;
  const lc_qact *a;
  lc_qgemv_kernel kern;
  size_t n0, n1;
  const float *bias;
  float *y;
  size_t ldy;
} task;

static void run_task(const task *t) {
  if (t->n0 >= t->n1) return;
  t->kern(t->w, t->a, t->n0, t->n1, t->y, t->ldy);
  if (t->bias)
    for (size_t i = 0; i < t->a->m; i++)
      for (size_t j = t->n0; j < t->n1; j++) t->y[i * t->ldy + j] += t->bias[j];
}

static void pool_task(void *arg, size_t t, int thread) {
  (void)thread;
  run_task((const task *)arg + t);
}

static void *thread_main(void *p) {
  run_task(p);
  return NULL;
}

#define LC_QMAX_THREADS 64

lc_status lc_qgemv(const lc_qmatrix *w, size_t m, const float *x, size_t ldx, const float *bias, float *y,
                   size_t ldy, const lc_qgemv_opts *opts) {
  lc_qgemv_opts def = {LC_QGEMV_ACCURATE, 1, LC_ISA_AUTO, NULL};
  if (!opts) opts = &def;
  if (!w || !w->codes || !x || !y) return lc_error(LC_ERR_INVALID_ARG, "gemv: NULL matrix, input or output");
  if (m == 0) return LC_OK;
  if ((m > 1 && ldx < w->k) || (m > 1 && ldy < w->n))
    return lc_error(LC_ERR_INVALID_ARG, "gemv: row strides ldx=%zu ldy=%zu below k=%zu / n=%zu", ldx, ldy, w->k,
                    w->n);
  if (opts->mode != LC_QGEMV_ACCURATE && opts->mode != LC_QGEMV_INT8)
    return lc_error(LC_ERR_INVALID_ARG, "gemv: unknown mode %d", (int)opts->mode);
  if (opts->mode == LC_QGEMV_INT8 && w->format == LC_WEIGHTS_F32)
    return lc_error(LC_ERR_UNSUPPORTED, "gemv: int8 mode needs q8 or q4 weights");
  if (opts->mode == LC_QGEMV_INT8 && w->block > LC_QINT8_MAX_BLOCK)
    return lc_error(LC_ERR_UNSUPPORTED, "gemv: int8 mode needs blocks of at most %d (block is %zu)",
                    LC_QINT8_MAX_BLOCK, w->block);
  lc_qgemv_kernel kern = lc_kernels_clamp(opts->isa)->qgemv[w->format][opts->mode];
  if (!kern) return lc_error(LC_ERR_INTERNAL, "gemv: no kernel for this format and mode");

  /* Activation workspace: values, per-block scale, integer sum and float sum (+ split128 lanes). */
  int split = opts->mode == LC_QGEMV_INT8 && kern == lc_qgemv_q4_int8_avx512vnni && lc_q4_split128(w);
  int bcast = split && m >= LC_QBCAST_M; /* many rows: activation rows in lanes (qkernels.h) */
  size_t row_len = w->taps * ((w->bpt - 1) * lc_qpad(w->block) + lc_qpad(w->tail));
  if (split) row_len = lc_round_up(w->k, 128);
  size_t esz = opts->mode == LC_QGEMV_INT8 ? 1 : sizeof(float), vals, meta, lanes = 0, bt = 0, bs = 0, total;
  size_t mt = lc_round_up(m, 16);
  if (!lc_mul_sz(m, row_len, &vals) || !lc_mul_sz(vals, esz, &vals) || !lc_mul_sz(m, w->nb, &meta) ||
      !lc_mul_sz(meta, 3 * sizeof(float), &meta) || (split && !lc_mul_sz(m, row_len / 2, &lanes)) ||
      (bcast && (!lc_mul_sz(mt, w->k, &bt) || !lc_mul_sz(mt, w->nb, &bs) || !lc_mul_sz(bs, sizeof(float), &bs))) ||
      !lc_add_sz(lc_round_up(vals, 64), lc_round_up(meta, 64), &total) || !lc_add_sz(total, lanes, &total) ||
      !lc_add_sz(total, lc_round_up(bt, 64), &total) || !lc_add_sz(total, bs, &total))
    return lc_error(LC_ERR_OVERFLOW, "gemv: activation workspace for m=%zu does not fit", m);
  uint8_t *ws = lc_malloc(total);
  if (!ws) return lc_error(LC_ERR_NO_MEMORY, "gemv: out of memory for %zu bytes of workspace", total);
  float *xs = (float *)(ws + lc_round_up(vals, 64));
  float *xsum = xs + m * w->nb;
  int32_t *isum = (int32_t *)(xsum + m * w->nb);
  int32_t *ibias = (int32_t *)(ws + lc_round_up(vals, 64) + lc_round_up(meta, 64));
  uint8_t *xt = (uint8_t *)ibias + lanes;
  float *xst = (float *)(void *)(xt + lc_round_up(bt, 64));
  lc_qact a = {m, row_len, NULL, NULL, xs, isum, xsum, split ? ibias : NULL, bcast ? xt : NULL, bcast ? xst : NULL};
  if (opts->mode == LC_QGEMV_INT8)
    a.xq = (const int8_t *)ws;
  else
    a.xf = (const float *)ws;

  /* q4 activations in nibble order, except for the AVX-512 int8 kernel (natural or split128). */
  int q4_split = w->format == LC_WEIGHTS_Q4 && kern != lc_qgemv_q4_int8_avx512vnni;
  for (size_t i = 0; i < m; i++) {
    if (split) {
      lc_qprep_split128_avx512(w, x + i * ldx, (int8_t *)ws + i * row_len, xs + i * w->nb, isum + i * w->nb,
                               xsum + i * w->nb, ibias + i * (row_len / 8), !bcast);
      continue;
    }
    size_t xoff = 0, b = 0;
    for (size_t t = 0; t < w->taps; t++)
      for (size_t bi = 0; bi < w->bpt; bi++, b++) {
        size_t len = lc_qblock_len(w, bi), k0 = t * w->kc + bi * w->block, o = i * row_len + xoff;
        prep_block(q4_split, opts->mode, x + i * ldx + k0, len, (float *)ws + (esz == 4 ? o : 0), (int8_t *)ws + o,
                   &xs[i * w->nb + b], &isum[i * w->nb + b], &xsum[i * w->nb + b]);
        xoff += lc_qpad(len);
      }
  }

  if (bcast) lc_qprep_bcast(w, m, (const int8_t *)ws, row_len, xs, xt, xst);

  /* Rows split into contiguous ranges, multiples of 4 rows so kernels keep their tiles. */
  int nt = opts->threads < 1 ? 1 : (opts->threads > LC_QMAX_THREADS ? LC_QMAX_THREADS : opts->threads);
  if ((size_t)nt > lc_div_up(w->n, 4)) nt = (int)lc_div_up(w->n, 4);
  task tasks[LC_QMAX_THREADS];
  pthread_t tids[LC_QMAX_THREADS];
  int started[LC_QMAX_THREADS] = {0};
  size_t per = lc_round_up(lc_div_up(w->n, (size_t)nt), 4);
  for (int t = 0; t < nt; t++) {
    size_t n0 = lc_min_sz((size_t)t * per, w->n), n1 = lc_min_sz(n0 + per, w->n);
    tasks[t] = (task){w, &a, kern, n0, n1, bias, y, m > 1 ? ldy : w->n};
  }
  if (opts->pool && nt > 1) {
    int pt = lc_pool_threads(opts->pool);
    lc_pool_run(opts->pool, (size_t)nt, nt < pt ? nt : pt, pool_task, tasks);
    lc_free(ws);
    return LC_OK;
  }
  for (int t = 1; t < nt; t++) started[t] = pthread_create(&tids[t], NULL, thread_main, &tasks[t]) == 0;
  run_task(&tasks[0]);
  for (int t = 1; t < nt; t++) {
    if (started[t])
      pthread_join(tids[t], NULL);
    else
      run_task(&tasks[t]); /* thread could not start: do its share here */
  }
  lc_free(ws);
  return LC_OK;
}
