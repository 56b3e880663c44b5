/* Layouts for the model runner (model/layout.c asks, per conv that may run NHWC; autotune.h):
 * both layouts of a conv shape on their own tuned plans, timed in interleaved rounds with the
 * weights flushed before each run (as autotune.c times routes), the ratio kept in the CPU tuner's
 * cache. A file of its own: it creates and runs convs (op.c), which call the tuner back. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conv/autotune.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/timer.h"

#define LAY_ROUNDS 25      /* at most, as autotune.c's MAX_ROUNDS */
#define LAY_LOG_MS 2000.0  /* a line on a log (not a terminal) past this */

void lc_cpu_tune_layout_key(const lc_context *ctx, const lc_conv_desc *d, int64_t n, int64_t ih, int64_t iw, char *buf,
                            size_t size) {
  snprintf(buf, size,
           "layout t%d n%lld g%lld ic%lld oc%lld ih%lld iw%lld kh%lld kw%lld s%lldx%lld d%lldx%lld p%lld,%lld,%lld,%lld",
           ctx->threads, (long long)n, (long long)d->groups, (long long)d->in_channels, (long long)d->out_channels,
           (long long)ih, (long long)iw, (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->stride_h,
           (long long)d->stride_w, (long long)d->dilation_h, (long long)d->dilation_w, (long long)d->pad_top,
           (long long)d->pad_left, (long long)d->pad_bottom, (long long)d->pad_right);
}

typedef struct lay_run {
  lc_conv *c;
  float *in, *out;
  void *ws;
  size_t wsz;
} lay_run;

static void lay_free(lay_run *r) {
  lc_conv_destroy(r->c);
  lc_free(r->in), lc_free(r->out), lc_free(r->ws);
  memset(r, 0, sizeof *r);
}

/* The conv of d in layout l with weights w, prepared, with its buffers; LC_ERR_* if it can't run. */
static lc_status lay_open(lc_context *ctx, const lc_conv_desc *d, lc_layout l, const float *w, int64_t n, int64_t ih,
                          int64_t iw, lay_run *r) {
  memset(r, 0, sizeof *r);
  lc_conv_desc x = *d;
  x.layout = l, x.weights = w, x.bias = NULL, x.activation = LC_ACT_NONE, x.route = LC_ROUTE_AUTO;
  x.weight_format = LC_WEIGHTS_F32, x.q_codes = NULL, x.q_scales = NULL, x.q_offsets = NULL;
  x.post_mul = 1.0f, x.post_add = 0.0f, x.act_slopes = NULL, x.pad_values = NULL;
  lc_conv_shape sh;
  size_t nin, nout;
  lc_status s = lc_conv_create(ctx, &x, &r->c);
  if (!s) s = lc_conv_prepare(r->c, n, ih, iw, &sh);
  if (s) {
    lay_free(r);
    return s;
  }
  const int64_t fi[4] = {n, d->in_channels, ih, iw}, fo[4] = {n, d->out_channels, sh.out_h, sh.out_w};
  if (!lc_mul_n(&nin, 4, fi) || !lc_mul_n(&nout, 4, fo) || !lc_mul_sz(nin, sizeof(float), &nin) ||
      !lc_mul_sz(nout, sizeof(float), &nout)) {
    lay_free(r);
    return lc_error(LC_ERR_OVERFLOW, "cpu tuner: layout timing buffers overflow");
  }
  r->in = lc_calloc(1, nin ? nin : 1), r->out = lc_malloc(nout ? nout : 1);
  r->wsz = sh.workspace_bytes, r->ws = r->wsz ? lc_malloc(r->wsz) : NULL;
  if (!r->in || !r->out || (r->wsz && !r->ws)) {
    lay_free(r);
    return lc_error(LC_ERR_NO_MEMORY, "cpu tuner: out of memory for the layout timing buffers");
  }
  for (size_t i = 0; i < nin / sizeof(float); i++) r->in[i] = (float)(i % 7) * 0.25f - 0.75f;
  return LC_OK;
}

static double lay_once(lay_run *r) {
  lc_conv_evict_weights(r->c);
  double t0 = lc_now_ms();
  if (lc_conv_run(r->c, r->in, r->out, r->ws, r->wsz)) return -1.0;
  return lc_now_ms() - t0;
}

/* Both layouts in interleaved rounds after a warm-up run each (as time_all), medians. */
static int lay_time(int level, lay_run *a, lay_run *b, double *ma, double *mb) {
  double va[LAY_ROUNDS], vb[LAY_ROUNDS], spent = 0.0;
  int min_runs = level >= LC_TUNE_HEAVY ? 9 : level >= LC_TUNE_NORMAL ? 5 : 3, r = 0;
  double min_ms = level >= LC_TUNE_NORMAL ? 30.0 : 10.0;
  if (lay_once(a) < 0.0 || lay_once(b) < 0.0) return 0;
  for (; r < LAY_ROUNDS && (r < min_runs || spent < min_ms); r++) {
    va[r] = lay_once(a), vb[r] = lay_once(b);
    if (va[r] < 0.0 || vb[r] < 0.0) return 0;
    spent += va[r] + vb[r];
  }
  *ma = lc_cpu_tune_median(va, r), *mb = lc_cpu_tune_median(vb, r);
  return *ma > 0.0 && *mb > 0.0;
}

int lc_cpu_tune_layout(lc_context *ctx, const lc_conv_desc *d, int64_t n, int64_t ih, int64_t iw, double *ratio) {
  int level = lc_cpu_tuner_level(ctx);
  if (level == LC_TUNE_NONE || !d || d->in_channels < 1 || d->groups < 1 || d->kernel_h < 1 || d->kernel_w < 1)
    return LC_TSRC_HEURISTIC;
  char key[320], val[LC_TUNE_MAX_VALUE + 1] = "";
  lc_cpu_tune_layout_key(ctx, d, n, ih, iw, key, sizeof key);
  double q, ma, mb;
  if (lc_cpu_tuner_get(ctx, key, val, sizeof val)) {
    if (sscanf(val, "%lf %lf %lf", &q, &ma, &mb) == 3 && q > 0.01 && q < 100.0) {
      *ratio = q;
      return LC_TSRC_CACHE;
    }
    lc_cpu_tuner_bad_record(ctx, val);
  }
  size_t nw;
  const int64_t fw[4] = {d->out_channels, d->in_channels / d->groups, d->kernel_h, d->kernel_w};
  if (!lc_mul_n(&nw, 4, fw) || nw > ((size_t)1 << 30)) return LC_TSRC_HEURISTIC;
  float *w = lc_malloc((nw ? nw : 1) * sizeof(float));
  if (!w) return LC_TSRC_HEURISTIC;
  uint32_t r = 0x2545f491u;
  for (size_t i = 0; i < nw; i++) {
    r = r * 1664525u + 1013904223u;
    w[i] = (float)(r >> 8) * (0.2f / 16777216.0f) - 0.1f;
  }
  lay_run a, b;
  int got = 0;
  double t0 = lc_now_ms();
  if (!lay_open(ctx, d, LC_NCHW, w, n, ih, iw, &a)) {
    if (!lay_open(ctx, d, LC_NHWC, w, n, ih, iw, &b)) {
      got = lay_time(level, &a, &b, &ma, &mb);
      lay_free(&b);
    }
    lay_free(&a);
  }
  lc_free(w);
  lc_clear_error();
  if (!got) return LC_TSRC_HEURISTIC;
  *ratio = mb / ma;
  if (lc_now_ms() - t0 > LAY_LOG_MS && !isatty(2))
    fprintf(stderr, "lowconv: timed both layouts of %s in %.1f s: NHWC / NCHW %.3f\n", key, (lc_now_ms() - t0) * 1e-3,
            *ratio);
  snprintf(val, sizeof val, "%.4f %.6f %.6f", *ratio, ma, mb);
  lc_cpu_tuner_put(ctx, key, val);
  return LC_TSRC_TUNED;
}
