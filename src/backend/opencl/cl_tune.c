/* Choosing how a conv runs on the device: the tuning cache if it knows the shape (no timing),
 * else every candidate the families offer at the context's level, each timed with profiling
 * events (one warm-up, median of several) and kept only if sampled outputs match an fp64 host
 * reference; at level none, the heuristic's candidate. Tests force a family with
 * LOWCONV_CL_FAMILY / LOWCONV_CL_VARIANT. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/opencl/cl_backend.h"
#include "conv/conv.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

#define MAX_CANDS 256

static int find_family(const char *name) {
  for (int i = 0; i < lc_cl_nfamilies; i++)
    if (!strcmp(lc_cl_families[i]->name, name)) return i;
  return -1;
}

static int find_variant(const lc_cl_family *f, const char *name) {
  for (int v = 0; v < f->nvariants; v++)
    if (!strcmp(f->variants[v], name)) return v;
  return -1;
}

/* What determines the choice: the problem's sizes, weight format and layout (activation, bias
 * and residual don't change which kernel is fastest). */
static void shape_key(const lc_conv *c, const lc_cl_conv *cc, char *buf, size_t n) {
  const lc_cl_conv_args *a = &cc->a;
  snprintf(buf, n, "conv n%d g%d ic%d oc%d %dx%d k%dx%d s%dx%d d%dx%d p%d,%d,%lld,%lld %s w%d%s b%d%s", a->n, a->groups,
           a->cin_g * a->groups, a->cout_g * a->groups, a->ih, a->iw, a->kh, a->kw, a->sh, a->sw, a->dh, a->dw,
           a->pt, a->pl, (long long)c->plan.pb, (long long)c->plan.pr, c->d.layout == LC_NCHW ? "nchw" : "nhwc",
           (int)cc->wfmt, cc->asym ? "a" : "s", c->d.block_size, a->in_aff ? " ia" : "");
}

/* With an input affine only the families whose kernels apply it (cl_conv_args.h) may run. */
static int can_run(const lc_cl_conv *cc, int fi, int v) {
  const lc_cl_family *f = lc_cl_families[fi];
  if (cc->a.in_aff && f != &lc_cl_family_gemm && f != &lc_cl_family_gemmq && f != &lc_cl_family_wino &&
      f != &lc_cl_family_ref)
    return 0;
  return f->eligible(cc, v);
}

/* LOWCONV_CL_SKIP=name[,name...]: families the tuner leaves out (A/B runs of a family). */
static int skipped(const char *name) {
  const char *e = getenv("LOWCONV_CL_SKIP");
  size_t n = strlen(name);
  for (const char *p = e; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

/* A GEMV can run it: a 1x1 conv on at most 8 pixels. Only the GEMV families are timed then: the
 * others' few items run long dependent load chains that timed close to a GEMV in isolation (a
 * few us, caches warm) but 2-3x slower in a net (od96's SE convs on the H200: 12-18 us against
 * 6-9). LOWCONV_CL_FEWPIX_ALL=1 times every family, for A/B runs. */
static int gemv_only(const lc_cl_conv *cc) {
  const char *e = getenv("LOWCONV_CL_FEWPIX_ALL");
  if (e && *e == '1') return 0;
  for (int fi = 0; fi < lc_cl_nfamilies; fi++) {
    const lc_cl_family *f = lc_cl_families[fi];
    if (f != &lc_cl_family_gemv && f != &lc_cl_family_gemvq) continue;
    for (int v = 0; v < f->nvariants; v++)
      if (can_run(cc, fi, v) && !skipped(f->name)) return 1;
  }
  return 0;
}

/* Candidates at `level`, the heuristic's first. A forced family/variant restricts the list. */
static int enumerate(const lc_cl_conv *cc, int level, lc_cl_cand *out, int max, lc_status *st) {
  const char *ff = getenv("LOWCONV_CL_FAMILY"), *fv = getenv("LOWCONV_CL_VARIANT");
  int force_f = -1, n = 0;
  *st = LC_OK;
  if (ff && *ff) {
    force_f = find_family(ff);
    if (force_f < 0) {
      *st = lc_error(LC_ERR_INVALID_ARG, "LOWCONV_CL_FAMILY='%s' is not a kernel family of this build", ff);
      return 0;
    }
  }
  const int few = force_f < 0 && gemv_only(cc);
  for (int fi = 0; fi < lc_cl_nfamilies; fi++) {
    const lc_cl_family *f = lc_cl_families[fi];
    if (force_f >= 0 && fi != force_f) continue;
    if (force_f < 0 && fi != lc_cl_nfamilies - 1 && skipped(f->name)) continue;
    if (few && f != &lc_cl_family_gemv && f != &lc_cl_family_gemvq) continue;
    if (force_f < 0 && fi == lc_cl_nfamilies - 1 && n) break; /* the baseline only if nothing else runs */
    for (int v = 0; v < f->nvariants; v++) {
      if (force_f >= 0 && fv && *fv && strcmp(f->variants[v], fv)) continue;
      if (!can_run(cc, fi, v)) continue;
      size_t lws[LC_CL_MAX_LWS][3];
      int nl = f->local_sizes(cc, v, level, lws, LC_CL_MAX_LWS);
      for (int i = 0; i < nl && n < max; i++) {
        out[n].family = fi, out[n].variant = v;
        memcpy(out[n].lws, lws[i], sizeof out[n].lws);
        n++;
      }
      if (level == LC_TUNE_NONE && n) return n;
    }
    if (level == LC_TUNE_NONE && n) return n;
  }
  if (!n)
    *st = lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): no kernel%s%s%s can run this conv", ff ? " of family " : "",
                   ff ? ff : "", fv && *fv ? " with that variant" : "");
  return n;
}

/* Device workspace for candidate x (grows cc->ws); LC_ERR_BUDGET past the context's budget. */
static lc_status ensure_ws(lc_conv *c, lc_cl_conv *cc, const lc_cl_cand *x) {
  const lc_cl_family *f = lc_cl_families[x->family];
  lc_status s = f == &lc_cl_family_wino    ? lc_cl_wino_ready(cc, x->variant)
                : f == &lc_cl_family_wino9 ? lc_cl_wino9_ready(cc)
                                           : LC_OK;
  if (s) return s;
  size_t need = f->ws_bytes(cc, x);
  if (need <= cc->ws_bytes) return LC_OK;
  if (c->ctx->budget && need > c->ctx->budget)
    return lc_error(LC_ERR_BUDGET, "conv (opencl): %s needs %zu bytes of device workspace, budget %zu", f->name,
                    need, c->ctx->budget);
  lc_cl_release_mem(cc->rt, &cc->ws);
  cc->ws_bytes = 0;
  s = lc_cl_buffer(cc->rt, need, NULL, &cc->ws);
  if (!s) cc->ws_bytes = need;
  return s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The host's floor for a run of `launches` kernels: that many times the least host time per
 * launch this process has seen (rt->lock held, as for all tuning). A run's own enqueue time is
 * inflated while background builds hold the driver: three launches once timed at 49.5 us against
 * a 41.7 us device median, so the multi-launch tiles lost by chance (stop 27, H100). */
static double host_floor(lc_cl_rt *rt, long launches, double host) {
  if (launches < 1) return host;
  double per = host / (double)launches;
  if (rt->tune_launch_ms <= 0.0 || per < rt->tune_launch_ms) rt->tune_launch_ms = per;
  return (double)launches * rt->tune_launch_ms;
}

/* A timed candidate: its median device time and its launches per run. */
typedef struct cand_time {
  double dev;
  long launches;
} cand_time;

/* What a candidate costs in a network: the longer of its device time and its launches' host time
 * at the least host time per launch seen so far (rt->tune_launch_ms). Scored when candidates are
 * compared, not when each is timed: the least per launch only falls as tuning goes on. */
static double cand_score(const lc_cl_rt *rt, const cand_time *t) {
  double host = (double)t->launches * rt->tune_launch_ms;
  return t->dev > host ? t->dev : host;
}

/* a before b: the lower score; at equal scores (both at the host's floor: on NVIDIA every 1x1
 * shortcut of resnet34-112, 11-16 us against a 14-16 us floor) the lower device time, which a
 * faster host or a batch would see. */
static int cand_better(const lc_cl_rt *rt, const cand_time *a, const cand_time *b) {
  double sa = cand_score(rt, a), sb = cand_score(rt, b);
  return sa < sb || (sa == sb && a->dev < b->dev);
}

/* Median device time of `reps` runs after one warm-up, and the launches of a run; a candidate
 * whose first run's device time is over 3x the best so far stops there (it can't win, and slow
 * ones would dominate the tuning time). */
static lc_status time_cand(lc_cl_conv *cc, const lc_cl_cand *x, cl_mem in, cl_mem out, int reps, double best,
                           cand_time *ct) {
  const lc_cl_family *f = lc_cl_families[x->family];
  double t[16], host_min = 1e30;
  int done = 0;
  long launches = 1;
  if (reps > 16) reps = 16;
  lc_status s = f->enqueue(cc, x, in, out, NULL, NULL, NULL);
  for (int r = 0; !s && r < reps; r++) {
    cl_event e0 = NULL, e1 = NULL;
    long n0 = cc->rt->n_enq;
    double h0 = lc_now_ms();
    s = f->enqueue(cc, x, in, out, NULL, &e0, &e1);
    launches = cc->rt->n_enq - n0;
    double host = host_floor(cc->rt, launches, lc_now_ms() - h0);
    if (!s) s = lc_cl_event_ms(cc->rt, e0, e1, &t[r]);
    /* In a network the device runs while the host enqueues the next convs: a conv costs the
     * longer of its device time and its launches' host time (NVIDIA: 5-7 us per launch, the
     * second kernel of split-K or Winograd's three then matter at batch 1). The host's least
     * time: a cold start builds programs on other threads meanwhile, and a run the scheduler
     * delayed made split-K lose to slower one-launch kernels (stop 21, H100: 57.7 against 32 us). */
    if (host < host_min) host_min = host;
    done = r + 1;
    if (!s && best > 0 && t[r] > 3 * best) break;
  }
  if (s) return s;
  if (getenv("LOWCONV_CL_DEBUG")) {
    fprintf(stderr, "lowconv: tune: runs");
    for (int r = 0; r < done; r++) fprintf(stderr, " %.4f", t[r]);
    fprintf(stderr, ", host floor %.4f\n", host_min);
  }
  qsort(t, (size_t)done, sizeof t[0], cmp_double);
  ct->dev = t[done / 2];
  ct->launches = launches > 0 ? launches : 1;
  return LC_OK;
}

/* An idle GPU runs slow clocks (an H100 at 345 MHz) and raises them only under load, so the
 * first convs a process tuned were timed partly at the low clocks, biased towards whichever
 * candidates ran last. Before its first timing the tuner keeps a GPU busy with a candidate for
 * about 20 ms (batches of 1, 2, 4, ... runs, so a slow kernel stops it early). */
static void warm_clocks(lc_cl_conv *cc, const lc_cl_cand *x, cl_mem in, cl_mem out) {
  if (!(cc->rt->info.type & CL_DEVICE_TYPE_GPU) || atomic_exchange(&cc->rt->tune_warm, 1)) return; /* CPUs: PoCL */
  const double t0 = lc_now_ms();
  for (int i = 0, batch = 1; i < 200 && lc_now_ms() - t0 < 20.0; i++, batch = batch < 64 ? 2 * batch : 64) {
    for (int j = 0; j < batch; j++) /* batches of 1, 2, 4, ... 64: a slow kernel runs few times */
      if (lc_cl_families[x->family]->enqueue(cc, x, in, out, NULL, NULL, NULL)) return;
    if (lc_cl_finish(cc->rt)) return;
  }
}

#define NSAMPLES 512

/* The check every candidate must pass: NSAMPLES output elements (the first and last, the rest
 * spread by a hash) recomputed on the host in fp64 from the input and the weights as the device
 * holds them. Sampling keeps the check cheap on large layers while any indexing error, which
 * moves whole rows, columns or channels, is caught. */
typedef struct tune_bufs {
  cl_mem in, out;
  float *x, *got, *w, *bias, *xd;
  size_t nin, nout, idx[NSAMPLES];
  double ref[NSAMPLES], mx;
  double refq[NSAMPLES], mxq; /* on the input as family qfam - 1's kernels see it (lc_cl_input_seen) */
  int qfam;                   /* -(f + 1): family f sees the input as given */
} tune_bufs;

static void bufs_free(lc_cl_rt *rt, tune_bufs *b) {
  lc_cl_release_mem(rt, &b->in);
  lc_cl_release_mem(rt, &b->out);
  lc_free(b->x);
  lc_free(b->got);
  lc_free(b->w);
  lc_free(b->bias);
  lc_free(b->xd);
}

static double act_d(double v, const lc_cl_conv_args *a) {
  switch (a->act) {
    case LC_ACT_RELU: return v > 0 ? v : 0;
    case LC_ACT_CLIP: return v < a->act_min ? a->act_min : v > a->act_max ? a->act_max : v;
    case LC_ACT_LEAKY_RELU: return v < 0 ? v * a->act_alpha : v;
    case LC_CL_ACT_HARD_SIGMOID: {
      double t = v * a->act_alpha + a->act_beta;
      return t < 0 ? 0 : t > 1 ? 1 : t;
    }
    case LC_ACT_HARD_SWISH: {
      double t = v / 6.0 + 0.5;
      return v * (t < 0 ? 0 : t > 1 ? 1 : t);
    }
    default: return v;
  }
}

/* Output element i (NCHW-ordered index n, o, y, x) in fp64. */
static double ref_at(const lc_cl_conv_args *a, const float *x, const float *w, const float *bias, size_t i) {
  int O = a->groups * a->cout_g, ox = (int)(i % (size_t)a->ow), oy = (int)(i / (size_t)a->ow % (size_t)a->oh);
  int o = (int)(i / ((size_t)a->ow * (size_t)a->oh) % (size_t)O), n = (int)(i / ((size_t)a->ow * a->oh * O));
  int g = o / a->cout_g, taps = a->kh * a->kw;
  double acc = bias ? bias[o] : 0.0;
  for (int ic = 0; ic < a->cin_g; ic++)
    for (int ky = 0; ky < a->kh; ky++) {
      int iy = oy * a->sh - a->pt + ky * a->dh;
      if (iy < 0 || iy >= a->ih) continue;
      for (int kx = 0; kx < a->kw; kx++) {
        int ix = ox * a->sw - a->pl + kx * a->dw;
        if (ix < 0 || ix >= a->iw) continue;
        size_t xi = (size_t)n * a->in_sn + (size_t)(g * a->cin_g + ic) * a->in_sc + (size_t)iy * a->in_sh +
                    (size_t)ix * a->in_sw;
        acc += (double)x[xi] * w[((size_t)o * a->cin_g + ic) * taps + ky * a->kw + kx];
      }
    }
  return act_d(acc, a);
}

static size_t out_offset(const lc_cl_conv_args *a, size_t i) {
  size_t O = (size_t)(a->groups * a->cout_g), ox = i % a->ow, oy = i / a->ow % a->oh, o = i / (a->ow * a->oh) % O;
  size_t n = i / (a->ow * a->oh * O);
  return n * a->out_sn + o * a->out_sc + oy * a->out_sh + ox * a->out_sw;
}

/* b->x as an input-affine kernel reads it (the device buffer keeps the raw values). */
static lc_status affine_seen(lc_cl_conv *cc, tune_bufs *b) {
  const lc_cl_conv_args *a = &cc->a;
  size_t M = (size_t)(a->groups * a->cout_g), C = (size_t)(a->groups * a->cin_g);
  float *t = lc_malloc(2 * C * sizeof(float));
  if (!t) return lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory for tuning buffers");
  lc_status s = lc_cl_read(cc->rt, cc->bias, 4 * M * sizeof(float), 2 * C * sizeof(float), t);
  for (size_t n = 0; !s && n < (size_t)a->n; n++)
    for (size_t ch = 0; ch < C; ch++)
      for (size_t y = 0; y < (size_t)a->ih; y++)
        for (size_t x = 0; x < (size_t)a->iw; x++) {
          float *v = &b->x[n * a->in_sn + ch * a->in_sc + y * a->in_sh + x * a->in_sw];
          *v = fmaf(*v, t[ch], t[C + ch]);
        }
  lc_free(t);
  return s;
}

static lc_status bufs_init(const lc_conv *c, lc_cl_conv *cc, tune_bufs *b) {
  const lc_cl_conv_args *a = &cc->a;
  b->nin = (size_t)a->n * (size_t)a->in_sn, b->nout = (size_t)a->n * (size_t)a->out_sn;
  size_t nw = (size_t)(a->groups * a->cout_g) * (size_t)a->K, O = (size_t)(a->groups * a->cout_g);
  b->x = lc_malloc(b->nin * sizeof(float));
  b->got = lc_malloc(b->nout * sizeof(float));
  b->w = lc_malloc(nw * sizeof(float));
  b->bias = a->has_bias ? lc_malloc(O * sizeof(float)) : NULL;
  if (!b->x || !b->got || !b->w || (a->has_bias && !b->bias))
    return lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory for tuning buffers");
  uint32_t r = 12345u;
  for (size_t i = 0; i < b->nin; i++) { /* never zeros: they hide unwritten or misindexed outputs */
    r = r * 1664525u + 1013904223u;
    b->x[i] = (float)(r >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  lc_status s = lc_cl_conv_weights(c, b->w);
  if (!s && b->bias) s = lc_cl_read(cc->rt, cc->bias, 0, O * sizeof(float), b->bias);
  if (!s) s = lc_cl_buffer(cc->rt, b->nin * sizeof(float), b->x, &b->in);
  if (!s && a->in_aff) s = affine_seen(cc, b); /* the reference sees the input as the kernels do */
  if (!s) s = lc_cl_buffer(cc->rt, b->nout * sizeof(float), NULL, &b->out);
  b->mx = 0;
  for (size_t j = 0; !s && j < NSAMPLES; j++) {
    size_t i = j == 0 ? 0 : j == 1 ? b->nout - 1 : (size_t)((j * 0x9E3779B97F4A7C15ull) >> 11) % b->nout;
    b->idx[j] = i;
    b->ref[j] = ref_at(a, b->x, b->w, b->bias, i);
    b->mx = fmax(b->mx, fabs(b->ref[j]));
  }
  return s;
}

/* The reference for candidate x: on the input itself, or (a family that quantizes activations)
 * on the input as its kernels see it, computed once per family. NULL: out of memory. */
static const double *ref_for(lc_cl_conv *cc, tune_bufs *b, const lc_cl_cand *x, double *mx) {
  *mx = b->mx;
  if (b->qfam == -(x->family + 1)) return b->ref;
  if (b->qfam != x->family + 1) {
    if (!b->xd && !(b->xd = lc_malloc(b->nin * sizeof(float)))) return NULL;
    if (!lc_cl_input_seen(cc, x->family, b->x, b->nin, b->xd) &&
        !lc_cl_gemmq_input_seen(cc, x->family, b->x, b->nin, b->xd)) {
      b->qfam = -(x->family + 1);
      return b->ref;
    }
    b->mxq = 0;
    for (size_t j = 0; j < NSAMPLES; j++) {
      b->refq[j] = ref_at(&cc->a, b->xd, b->w, b->bias, b->idx[j]);
      b->mxq = fmax(b->mxq, fabs(b->refq[j]));
    }
    b->qfam = x->family + 1;
  }
  *mx = b->mxq;
  return b->refq;
}

/* max |got - ref| <= 1e-3 * max |ref| over the samples: an indexing error is of the order of the
 * outputs; fp32 accumulation-order differences stay orders of magnitude below. */
static int outputs_match(const lc_cl_conv_args *a, const tune_bufs *b, const double *ref, double mx) {
  double err = 0;
  for (size_t j = 0; j < NSAMPLES; j++) {
    double g = b->got[out_offset(a, b->idx[j])];
    if (!isfinite(g)) return 0;
    err = fmax(err, fabs(g - ref[j]));
  }
  return err <= 1e-3 * fmax(mx, 1e-30);
}

/* Times every candidate and keeps the fastest that passes the check. */
static lc_status measure(lc_conv *c, lc_cl_conv *cc, const lc_cl_cand *cands, int n, int level, lc_cl_cand *best,
                         lc_conv_device_info *info) {
  tune_bufs b;
  memset(&b, 0, sizeof b);
  cc->a.has_res = 0;
  int epi = cc->a.epi; /* the reference has no PRelu or affine epilogue: checked without them */
  cc->a.epi = 0;
  lc_status s = bufs_init(c, cc, &b);
  int reps = level >= LC_TUNE_HEAVY ? 9 : level >= LC_TUNE_NORMAL ? 5 : 3, found = 0;
  /* Every matching candidate's time, ranked once all are timed (cand_score's floor). */
  cand_time *ct = lc_calloc((size_t)n + 1, sizeof *ct);
  int *okc = lc_calloc((size_t)n + 1, sizeof *okc);
  double best_dev = 0.0;
  if (!s && (!ct || !okc)) s = lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory for tuning");
  for (int i = 0; !s && i < n; i++) {
    if (ensure_ws(c, cc, &cands[i])) continue; /* over the budget: not a candidate */
    warm_clocks(cc, &cands[i], b.in, b.out);
    lc_status e = time_cand(cc, &cands[i], b.in, b.out, reps, found ? best_dev : 0.0, &ct[i]);
    if (!e) e = lc_cl_read(cc->rt, b.out, 0, b.nout * sizeof(float), b.got);
    if (e == LC_ERR_NO_MEMORY) {
      s = e;
      break;
    }
    double mx = 0;
    const double *ref = e ? NULL : ref_for(cc, &b, &cands[i], &mx);
    if (!e && !ref) {
      s = lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory for tuning buffers");
      break;
    }
    info->candidates++;
    int ok = !e && outputs_match(&cc->a, &b, ref, mx);
    if (getenv("LOWCONV_CL_DEBUG")) { /* every candidate's time: what a tile choice is made from */
      const lc_cl_family *f = lc_cl_families[cands[i].family];
      fprintf(stderr, "lowconv: tune: %s %s lws %zux%zux%zu ", f->name, f->variants[cands[i].variant],
              cands[i].lws[0], cands[i].lws[1], cands[i].lws[2]);
      if (e) fprintf(stderr, "%s\n", lc_last_error());
      else fprintf(stderr, "%.4f ms%s\n", ct[i].dev, ok ? "" : " (does not match the fp64 reference)");
    }
    if (!ok) continue;
    okc[i] = 1;
    if (!found || ct[i].dev < best_dev) best_dev = ct[i].dev;
    found++;
  }
  int bi = -1, si = -1; /* the best and the second by cand_better */
  for (int i = 0; !s && i < n; i++) {
    if (!okc[i]) continue;
    if (bi < 0 || cand_better(cc->rt, &ct[i], &ct[bi])) si = bi, bi = i;
    else if (si < 0 || cand_better(cc->rt, &ct[i], &ct[si])) si = i;
  }
  cand_time won = bi >= 0 ? ct[bi] : (cand_time){0.0, 1};
  if (bi >= 0) *best = cands[bi];
  /* Three runs per candidate (level fast) rank close ones by noise: the two best are timed again,
   * nine runs each, and the better of those wins. */
  if (!s && si >= 0 && reps < 9) {
    cand_time a, z;
    if (!ensure_ws(c, cc, &cands[bi]) && !time_cand(cc, &cands[bi], b.in, b.out, 9, 0.0, &a) &&
        !ensure_ws(c, cc, &cands[si]) && !time_cand(cc, &cands[si], b.in, b.out, 9, 0.0, &z)) {
      int second = cand_better(cc->rt, &z, &a);
      won = second ? z : a;
      *best = cands[second ? si : bi];
    }
  }
  lc_free(ct);
  lc_free(okc);
  bufs_free(cc->rt, &b);
  cc->a.epi = epi;
  if (s) return s;
  if (!found) return lc_error(LC_ERR_INTERNAL, "conv (opencl): no candidate of %d matched the reference", n);
  info->kernel_ms = cand_score(cc->rt, &won);
  return LC_OK;
}

/* "family variant l0 l1 l2 ms" from the cache, if it still names a candidate that can run. */
static int from_cache(const lc_cl_conv *cc, const char *val, lc_cl_cand *x, double *ms) {
  char fam[32], var[32];
  unsigned long long l[3];
  if (sscanf(val, "%31s %31s %llu %llu %llu %lf", fam, var, &l[0], &l[1], &l[2], ms) != 6) return 0;
  int f = find_family(fam), v = f < 0 ? -1 : find_variant(lc_cl_families[f], var);
  if (v < 0 || !can_run(cc, f, v)) return 0;
  /* the local size must still be one the family offers (kernels may have changed since) */
  size_t lws[LC_CL_MAX_LWS][3];
  int nl = lc_cl_families[f]->local_sizes(cc, v, LC_TUNE_HEAVY, lws, LC_CL_MAX_LWS), ok = 0;
  for (int i = 0; i < nl && !ok; i++) ok = lws[i][0] == l[0] && lws[i][1] == l[1] && lws[i][2] == l[2];
  if (!ok) return 0;
  x->family = f, x->variant = v;
  for (int i = 0; i < 3; i++) x->lws[i] = (size_t)l[i];
  return 1;
}

/* After the choice: the workspace cut to what the chosen candidate needs (a larger one timed
 * before it grew it), Winograd's weights dropped unless it won. */
static lc_status fit_to(lc_conv *c, lc_cl_conv *cc, const lc_cl_cand *x) {
  if (lc_cl_families[x->family] != &lc_cl_family_wino && lc_cl_families[x->family] != &lc_cl_family_wino9)
    lc_cl_wino_release(cc);
  if (lc_cl_families[x->family]->ws_bytes(cc, x) < cc->ws_bytes) {
    lc_cl_release_mem(cc->rt, &cc->ws);
    cc->ws_bytes = 0;
  }
  return ensure_ws(c, cc, x);
}

lc_status lc_cl_tune(lc_conv *c, lc_cl_conv *cc, lc_cl_cand *out, lc_conv_device_info *info) {
  lc_cl_ctx *x = c->ctx->dev;
  char key[256], val[160];
  shape_key(c, cc, key, sizeof key);
  const char *forced = getenv("LOWCONV_CL_FAMILY");
  int level = forced && *forced ? LC_TUNE_NONE : (int)x->tune;
  const char *cached = x->tc && !(forced && *forced) ? lc_tune_cache_get(x->tc, key) : NULL;
  double ms = 0.0;
  if (cached && from_cache(cc, cached, out, &ms)) {
    info->from_cache = 1;
    info->kernel_ms = ms;
    return cc->rt->collect_pass ? lc_cl_conv_collect(cc, out, 1) : fit_to(c, cc, out);
  }
  lc_cl_cand *cands = lc_malloc(MAX_CANDS * sizeof *cands);
  if (!cands) return lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory");
  lc_status s;
  int n = enumerate(cc, level, cands, MAX_CANDS, &s);
  if (!s && cc->rt->collect_pass) { /* a model's collect pass: what timing would build, nothing run */
    *out = cands[0];
    s = lc_cl_conv_collect(cc, cands, level == LC_TUNE_NONE ? 1 : n);
  } else if (!s && (level == LC_TUNE_NONE || n == 1)) {
    *out = cands[0];
    s = fit_to(c, cc, out);
  } else if (!s) {
    double t0 = lc_now_ms();
    if (getenv("LOWCONV_CL_DEBUG")) fprintf(stderr, "lowconv: tune: %s, %d candidates\n", key, n);
    s = lc_cl_conv_prebuild(cc, cands, n);
    if (!s) s = measure(c, cc, cands, n, level, out, info);
    info->tune_ms = lc_now_ms() - t0;
    if (!s) s = fit_to(c, cc, out);
    if (!s && x->tc) {
      const lc_cl_family *f = lc_cl_families[out->family];
      snprintf(val, sizeof val, "%s %s %zu %zu %zu %.6f", f->name, f->variants[out->variant], out->lws[0],
               out->lws[1], out->lws[2], info->kernel_ms);
      if (!lc_tune_cache_put(x->tc, key, val)) x->tuned_since_save++;
    }
  }
  lc_free(cands);
  return s;
}
