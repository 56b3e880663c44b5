/* CPU autotuner (autotune.h). Records: key = shape and format (lc_cpu_tune_key), value =
 * "<route> <tile hint> <split> <threads> <ms> <heuristic ms>"; a hint 0 is the route's default. */
#include "conv/autotune.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv/route.h"
#include "kernels/registry.h"
#include "tune/cache_dir.h"
#include "tune/hash.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define MAX_CANDS 96
/* A candidate must beat the heuristic's plan by this much to replace it: closer than that is
 * timing noise, and keeping the heuristic route keeps its bits. */
#define KEEP_HEURISTIC 0.98
/* Progress on stderr once a conv's tuning has run this long. */
#define PROGRESS_MS 500.0

struct lc_cpu_tuner {
  pthread_mutex_t mu;       /* around tc and the counters: a context may be shared by threads */
  lc_tune_cache *tc;
  lc_tune_level level;
  char fingerprint[256];
  int warned_budget, warned_record, warned_save;
  atomic_int convs_tuned; /* read by the progress lines outside mu */
  uint64_t *fresh;        /* hashes of the keys this tuner timed: such a record reads as [tuned] */
  size_t nfresh, capfresh;
};

/* Under t->mu. Out of memory only costs the label. */
static void fresh_add(lc_cpu_tuner *t, const char *key) {
  if (t->nfresh == t->capfresh) {
    size_t cap = t->capfresh ? 2 * t->capfresh : 64;
    uint64_t *f = cap < ((size_t)1 << 24) ? lc_malloc(cap * sizeof *f) : NULL;
    if (!f) return;
    if (t->nfresh) memcpy(f, t->fresh, t->nfresh * sizeof *f);
    lc_free(t->fresh);
    t->fresh = f, t->capfresh = cap;
  }
  t->fresh[t->nfresh++] = lc_hash64(key, strlen(key));
}

static int fresh_has(const lc_cpu_tuner *t, const char *key) {
  uint64_t h = lc_hash64(key, strlen(key));
  for (size_t i = 0; i < t->nfresh; i++)
    if (t->fresh[i] == h) return 1;
  return 0;
}

static void warn(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(int *once, const char *fmt, ...) {
  if (*once) return;
  *once = 1;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lowconv: warning: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The CPU's brand string (cpuid leaves 0x80000002-4), trimmed; "unknown" where there is none. */
static void cpu_model(char *buf, size_t n) {
  snprintf(buf, n, "unknown");
#if defined(__x86_64__) || defined(__i386__)
  unsigned r[12];
  if (__get_cpuid_max(0x80000000u, NULL) < 0x80000004u) return;
  for (unsigned i = 0; i < 3; i++) __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
  char s[49];
  memcpy(s, r, 48);
  s[48] = '\0';
  char *a = s, *e = s + strlen(s);
  while (*a == ' ') a++;
  while (e > a && (e[-1] == ' ' || e[-1] == '\0')) *--e = '\0';
  for (char *q = a; *q; q++)
    if (*q == '\n' || *q == '\r') *q = ' ';
  if (*a) snprintf(buf, n, "%s", a);
#endif
}

lc_status lc_cpu_tuner_open(lc_context *ctx, const lc_context_params *p) {
  ctx->tuner = NULL;
  if (!p || p->cpu_tune == LC_TUNE_NONE) return LC_OK;
  lc_cpu_tuner *t = lc_calloc(1, sizeof *t);
  if (!t) return lc_error(LC_ERR_NO_MEMORY, "cpu tuner: out of memory");
  pthread_mutex_init(&t->mu, NULL);
  t->level = p->cpu_tune;
  char model[64];
  cpu_model(model, sizeof model);
  snprintf(t->fingerprint, sizeof t->fingerprint, "cpu %s | table %s | features 0x%x", model, ctx->k->name, ctx->cpu);
  char dir[4096];
  const char *d = p->cache_dir;
  if (!d) d = lc_cache_dir_default(dir, sizeof dir) ? "" : dir; /* no HOME: memory only */
  if (lc_tune_cache_open(d, t->fingerprint, &t->tc)) {
    lc_status s = lc_tune_cache_open(NULL, t->fingerprint, &t->tc);
    if (s) {
      pthread_mutex_destroy(&t->mu);
      lc_free(t);
      return s;
    }
    fprintf(stderr, "lowconv: warning: CPU tuning cache in '%s' unusable (%s); tunings are kept in memory only\n", d,
            lc_last_error());
  }
  ctx->tuner = t;
  return LC_OK;
}

void lc_cpu_tuner_close(lc_context *ctx) {
  lc_cpu_tuner *t = ctx->tuner;
  if (!t) return;
  if (lc_tune_cache_save(t->tc))
    warn(&t->warned_save, "cannot save the CPU tuning cache (%s); it only costs tuning time", lc_last_error());
  lc_tune_cache_close(t->tc);
  pthread_mutex_destroy(&t->mu);
  lc_free(t->fresh);
  lc_free(t);
  ctx->tuner = NULL;
}

const char *lc_cpu_tuner_fingerprint(const lc_context *ctx) { return ctx && ctx->tuner ? ctx->tuner->fingerprint : ""; }

void lc_cpu_tune_key(const lc_conv *c, const lc_conv_plan *p, char *buf, size_t n) {
  const lc_conv_desc *d = &c->d;
  static const char *const wf[] = {"f32", "q8", "q4"};
  snprintf(buf, n,
           "conv t%d %s %s b%d%s%s n%lld g%lld ic%lld oc%lld ih%lld iw%lld kh%lld kw%lld s%lldx%lld d%lldx%lld "
           "p%lld,%lld,%lld,%lld",
           c->ctx->threads, d->layout == LC_NHWC ? "nhwc" : "nchw", wf[(unsigned)d->weight_format % 3],
           d->weight_format ? d->block_size : 0, d->weight_format && d->asym ? " asym" : "",
           d->weight_format && (d->int8_activations || lc_i8gemm_wanted(c)) ? " i8act" : "", (long long)p->n, (long long)d->groups,
           (long long)d->in_channels, (long long)d->out_channels, (long long)p->ih, (long long)p->iw,
           (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->stride_h, (long long)d->stride_w,
           (long long)d->dilation_h, (long long)d->dilation_w, (long long)p->pt, (long long)p->pl, (long long)p->pb,
           (long long)p->pr);
}

typedef struct cand {
  lc_route r;
  size_t tile, split;
  int threads;
  lc_conv_plan p;
  double ms;
} cand;

static int splits_panels(lc_route r) {
  return r == LC_ROUTE_DIRECT || r == LC_ROUTE_GEMM1X1 || r == LC_ROUTE_IM2COL || r == LC_ROUTE_IGEMM ||
         r == LC_ROUTE_WINOGRAD || r == LC_ROUTE_WINOGRAD4 || r == LC_ROUTE_STEM || r == LC_ROUTE_I8GEMM ||
         r == LC_ROUTE_TAPROWS;
}
static size_t panels_of(const lc_conv *c, lc_route r) {
  if (r == LC_ROUTE_I8GEMM) return lc_i8gemm_panels(c);
  return r == LC_ROUTE_WINOGRAD || r == LC_ROUTE_WINOGRAD4 ? lc_div_up((size_t)c->cout_g, c->ctx->k->nr) : c->npanels;
}
static int takes_tile(lc_route r) {
  return r == LC_ROUTE_GEMM1X1 || r == LC_ROUTE_IM2COL || r == LC_ROUTE_WINOGRAD || r == LC_ROUTE_WINOGRAD4 ||
         r == LC_ROUTE_STEM || r == LC_ROUTE_I8GEMM || r == LC_ROUTE_TAPROWS; /* stem, taprows: output rows per task */
}

/* The plan of route r with these hints (0 = the route's own choice); errors as the route's plan. */
static lc_status plan_with(const lc_conv *c, const lc_conv_plan *geo, lc_route r, size_t tile, size_t split,
                           int threads, lc_conv_plan *q) {
  *q = *geo;
  q->hint_tile = takes_tile(r) ? tile : 0;
  if (!lc_conv_has_weights_for(c, r)) return LC_ERR_UNSUPPORTED;
  lc_status s = lc_route_plan(c, r, q);
  if (s) return s;
  if (threads > 0 && threads < q->threads) q->threads = threads;
  if (split && splits_panels(r)) q->ocsplit = lc_min_sz(split, panels_of(c, r));
  if (!lc_mul_sz(q->ws_thread, (size_t)q->threads, &q->ws_total)) return LC_ERR_OVERFLOW;
  return LC_OK;
}

static int same_plan(const lc_conv_plan *a, const lc_conv_plan *b) {
  return a->route == b->route && a->tile == b->tile && a->ntiles == b->ntiles && a->ocsplit == b->ocsplit &&
         a->threads == b->threads && a->variant == b->variant;
}

static void add(const lc_conv *c, const lc_conv_plan *geo, cand *cs, int *n, lc_route r, size_t tile, size_t split,
                int threads) {
  if (*n >= MAX_CANDS) return;
  cand x = {r, tile, split, threads, {0}, 0.0};
  if (plan_with(c, geo, r, tile, split, threads, &x.p)) return;
  for (int i = 0; i < *n; i++)
    if (same_plan(&cs[i].p, &x.p)) return;
  cs[(*n)++] = x;
}

/* Every route that can run the conv with its own choices; from NORMAL also halved, quartered and
 * doubled tiles and weight-panel splits of 1..4x the threads; HEAVY also every smaller thread count. */
static int enumerate(const lc_conv *c, const lc_conv_plan *geo, lc_tune_level level, cand *cs) {
  int n = 0, T = c->ctx->threads;
  for (int r = 1; r < LC_ROUTE_COUNT; r++) {
    lc_route route = (lc_route)r;
    lc_conv_plan q;
    if (plan_with(c, geo, route, 0, 0, 0, &q)) continue;
    for (int t = level >= LC_TUNE_HEAVY ? 1 : T; t <= T; t++) {
      add(c, geo, cs, &n, route, 0, 0, t);
      if (level < LC_TUNE_NORMAL) continue;
      if (takes_tile(route)) {
        size_t t0 = q.tile;
        add(c, geo, cs, &n, route, t0 / 2, 0, t);
        add(c, geo, cs, &n, route, t0 / 4, 0, t);
        add(c, geo, cs, &n, route, t0 * 2, 0, t);
      }
      if (splits_panels(route) && t > 1)
        for (size_t s = 1; s <= 4; s *= 2) add(c, geo, cs, &n, route, 0, s * (size_t)t, t);
    }
  }
  return n;
}

double lc_cpu_tune_median(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_ROUNDS 25

static void progress(lc_cpu_tuner *t, int done, int total, double t0, int *shown);

/* One timed run of plan q (c->plan is set to it); < 0 when it failed. Each run starts with the
 * weights out of the caches, as a model's layer finds them after the other layers' weights went
 * by: timed hot, a layer of 256 ch at 14 px ran F(4x4) (9.4 MB of weights) in 0.42 ms against
 * F(2x2)'s 0.49, and in IResNet-34 0.70 against 0.53 (Xeon model 167, 2 threads, stop 40). */
static double time_once(lc_conv *c, const lc_conv_plan *q, const float *in, float *out, unsigned char *ws) {
  c->plan = *q;
  lc_conv_evict_weights(c);
  double t0 = lc_now_ms();
  if (lc_conv_run_route(c, in, out, NULL, ws) != LC_OK) return -1.0;
  return lc_now_ms() - t0;
}

/* Times the candidates in interleaved rounds (a warm-up round, then each live candidate once per
 * round), so load from other processes hits them alike; a candidate's time is the median of its
 * rounds. From round 3 on, candidates slower than 1.3x the best median drop out. Rounds go on
 * until min_runs and about min_ms of the best candidate's time (at most MAX_ROUNDS). */
static void time_all(lc_conv *c, lc_cpu_tuner *t, cand *cs, int n, const float *in, float *out, unsigned char *ws,
                     int min_runs, double min_ms) {
  double(*v)[MAX_ROUNDS] = lc_malloc((size_t)n * sizeof *v), t0 = lc_now_ms();
  int *live = lc_malloc((size_t)n * sizeof *live), shown = 0;
  if (!v || !live) { /* no memory for the table: the heuristic's plan (cs[0]) stays */
    for (int i = 0; i < n; i++) cs[i].ms = i ? -1.0 : 0.0;
    lc_free(v), lc_free(live);
    return;
  }
  for (int i = 0; i < n; i++) live[i] = time_once(c, &cs[i].p, in, out, ws) >= 0.0, cs[i].ms = -1.0;
  double spent = 0.0;
  for (int r = 0; r < MAX_ROUNDS; r++) {
    double best = -1.0;
    int alive = 0;
    for (int i = 0; i < n; i++) {
      if (!live[i]) continue;
      double ms = time_once(c, &cs[i].p, in, out, ws);
      if (ms < 0.0) {
        live[i] = 0, cs[i].ms = -1.0;
        continue;
      }
      v[i][r] = ms;
      double tmp[MAX_ROUNDS];
      memcpy(tmp, v[i], (size_t)(r + 1) * sizeof *tmp);
      cs[i].ms = lc_cpu_tune_median(tmp, r + 1);
      if (best < 0.0 || cs[i].ms < best) best = cs[i].ms;
      alive++;
    }
    if (best < 0.0) break;
    spent += best;
    for (int i = 0; i < n && r >= 2; i++)
      if (live[i] && cs[i].ms > 1.3 * best && i) live[i] = 0; /* the heuristic's (0) is always timed out */
    progress(t, r + 1, min_runs > MAX_ROUNDS ? MAX_ROUNDS : min_runs, t0, &shown);
    if (r + 1 >= min_runs && (spent >= min_ms || alive == 1)) break;
  }
  if (shown) fputc('\n', stderr);
  lc_free(v), lc_free(live);
}

static void progress(lc_cpu_tuner *t, int done, int total, double t0, int *shown) {
  if (lc_now_ms() - t0 < PROGRESS_MS || !isatty(2)) return;
  char bar[21];
  int fill = total ? done * 20 / total : 20;
  for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
  bar[20] = '\0';
  fprintf(stderr, "\rlowconv: tuning conv %d [%s] round %d/%d", atomic_load(&t->convs_tuned) + 1, bar, done, total);
  *shown = 1;
}

static void label(lc_conv *c, const lc_conv_plan *p, const char *how) {
  snprintf(c->dev_info.kernel, sizeof c->dev_info.kernel, "%s [%s]", lc_route_name(p->route), how);
}

static lc_status tune_now(lc_conv *c, lc_cpu_tuner *t, const lc_conv_plan *geo, const lc_conv_plan *heur,
                          lc_conv_plan *p, const char *key) {
  cand *cs = lc_malloc((MAX_CANDS + 1) * sizeof *cs); /* the heuristic's, then enumerate's */
  size_t nin, nout;
  int64_t fin[4] = {geo->n, c->d.in_channels, geo->ih, geo->iw}, fout[4] = {geo->n, c->d.out_channels, geo->oh, geo->ow};
  if (!lc_mul_n(&nin, 4, fin) || !lc_mul_n(&nout, 4, fout)) nin = nout = 0; /* checked by prepare */
  float *in = lc_malloc((nin ? nin : 1) * sizeof(float)), *out = lc_malloc((nout ? nout : 1) * sizeof(float));
  if (!cs || !in || !out) {
    lc_free(cs), lc_free(in), lc_free(out);
    return lc_error(LC_ERR_NO_MEMORY, "cpu tuner: out of memory for the timing buffers");
  }
  uint32_t s = 0x9e3779b9u;
  for (size_t i = 0; i < nin; i++) {
    s = s * 1664525u + 1013904223u;
    in[i] = (float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  int n = 0;
  cs[n++] = (cand){heur->route, 0, 0, 0, *heur, 0.0};
  cand *more = cs + 1;
  int nm = enumerate(c, geo, t->level, more);
  for (int i = 0; i < nm; i++)
    if (!same_plan(&more[i].p, heur)) cs[n++] = more[i];
  int min_runs = t->level >= LC_TUNE_HEAVY ? 9 : t->level >= LC_TUNE_NORMAL ? 5 : 3;
  double min_ms = t->level >= LC_TUNE_NORMAL ? 30.0 : 10.0;
  size_t wsmax = 0;
  for (int i = 0; i < n; i++) wsmax = lc_max_sz(wsmax, cs[i].p.ws_total);
  unsigned char *ws = wsmax ? lc_malloc(wsmax) : NULL;
  double t0 = lc_now_ms(), best = -1.0;
  int bi = 0;
  lc_conv_plan saved = c->plan;
  if (!wsmax || ws) time_all(c, t, cs, n, in, out, ws, min_runs, min_ms);
  lc_free(ws);
  c->plan = saved;
  for (int i = 0; i < n; i++)
    if (cs[i].ms >= 0.0 && (best < 0.0 || cs[i].ms < best)) best = cs[i].ms, bi = i;
  if (cs[0].ms >= 0.0 && best >= KEEP_HEURISTIC * cs[0].ms) bi = 0;
  *p = cs[bi].p;
  c->dev_info.candidates = n;
  c->dev_info.tune_ms = lc_now_ms() - t0;
  c->dev_info.kernel_ms = cs[bi].ms;
  c->tune_src = LC_TSRC_TUNED;
  label(c, p, "tuned");
  if (c->dev_info.tune_ms > 4 * PROGRESS_MS && !isatty(2)) /* a log gets a line per long conv instead of a bar */
    fprintf(stderr, "lowconv: tuned conv %d in %.1f s: %s, %d candidates, %.3f ms (heuristic's %.3f ms)\n",
            atomic_load(&t->convs_tuned) + 1, c->dev_info.tune_ms * 1e-3, c->dev_info.kernel, n, cs[bi].ms, cs[0].ms);
  char val[160];
  snprintf(val, sizeof val, "%s %zu %zu %d %.6f %.6f", lc_route_name(cs[bi].r), cs[bi].tile, cs[bi].split,
           cs[bi].threads, cs[bi].ms, cs[0].ms);
  lc_free(cs), lc_free(in), lc_free(out);
  pthread_mutex_lock(&t->mu);
  atomic_fetch_add(&t->convs_tuned, 1);
  lc_status ps = lc_tune_cache_put(t->tc, key, val);
  if (!ps) fresh_add(t, key);
  /* Saved per conv (atomically: temp file + rename), so an interrupted tuning keeps what it did. */
  if (!ps && lc_tune_cache_save(t->tc))
    warn(&t->warned_save, "cannot save the CPU tuning cache (%s); it only costs tuning time", lc_last_error());
  pthread_mutex_unlock(&t->mu);
  lc_clear_error();
  return LC_OK;
}

/* The cached record's plan: 1 (plan set), 0 (no usable record), -1 (record fine, over the budget).
 * A record of the heuristic's candidate (tile, split and threads 0) gives the heuristic's plan heur
 * itself, refinements included: rebuilt from the route alone it lost select.c's tile and chunk rules
 * (IResNet-34 at 2 threads ran 3.5 % slower tuned than untuned with the same routes, stop 27). */
static int from_cache(lc_conv *c, lc_cpu_tuner *t, const lc_conv_plan *geo, const lc_conv_plan *heur, const char *val,
                      lc_conv_plan *p) {
  char rn[32];
  unsigned long long tile, split;
  int threads;
  double ms, hms;
  if (sscanf(val, "%31s %llu %llu %d %lf %lf", rn, &tile, &split, &threads, &ms, &hms) != 6 ||
      lc_route_from_name(rn) <= 0 || threads < 0 || threads > c->ctx->threads || tile > ((size_t)1 << 32) ||
      split > ((size_t)1 << 20)) {
    pthread_mutex_lock(&t->mu);
    warn(&t->warned_record, "CPU tuning cache record '%s' is unusable; timing that conv again", val);
    pthread_mutex_unlock(&t->mu);
    return 0;
  }
  lc_route r = (lc_route)lc_route_from_name(rn);
  if (!tile && !split && !threads && r == heur->route) {
    *p = *heur;
    c->dev_info.kernel_ms = ms;
    return 1;
  }
  lc_status s = plan_with(c, geo, r, (size_t)tile, (size_t)split, threads, p);
  if (s == LC_ERR_BUDGET || (s == LC_OK && c->ctx->budget && p->ws_total > c->ctx->budget)) return -1;
  if (s) return 0; /* e.g. weights for that route released: time again among the others */
  c->dev_info.kernel_ms = ms;
  return 1;
}

lc_status lc_cpu_tune_plan(lc_conv *c, lc_conv_plan *p) {
  lc_cpu_tuner *t = c->ctx->tuner;
  lc_conv_plan geo = *p, heur = *p;
  memset(&c->dev_info, 0, sizeof c->dev_info);
  lc_status s = lc_select_route(c, &heur);
  if (s) return s;
  if (!lc_mul_sz(heur.ws_thread, (size_t)heur.threads, &heur.ws_total)) return LC_ERR_OVERFLOW;
  char key[320], val[LC_TUNE_MAX_VALUE + 1] = "";
  lc_cpu_tune_key(c, &geo, key, sizeof key);
  pthread_mutex_lock(&t->mu);
  const char *v = lc_tune_cache_get(t->tc, key);
  if (v) snprintf(val, sizeof val, "%s", v);
  int fresh = v && fresh_has(t, key);
  pthread_mutex_unlock(&t->mu);
  if (val[0]) {
    int r = from_cache(c, t, &geo, &heur, val, p);
    if (r > 0) { /* timed by this tuner already (a twin conv, or the layout timing): [tuned] */
      c->tune_src = fresh ? LC_TSRC_TUNED : LC_TSRC_CACHE;
      c->dev_info.from_cache = !fresh;
      label(c, p, fresh ? "tuned" : "cache");
      return LC_OK;
    }
    if (r < 0) {
      pthread_mutex_lock(&t->mu);
      warn(&t->warned_budget,
           "the tuned choice '%s' of %s does not fit the workspace budget of %zu bytes; using the heuristic's route "
           "(and so for any other conv like it)", val, key, c->ctx->budget);
      pthread_mutex_unlock(&t->mu);
      *p = heur;
      c->tune_src = LC_TSRC_OVER_BUDGET;
      label(c, p, "heuristic: tuned choice over budget");
      lc_clear_error();
      return LC_OK;
    }
  }
  lc_clear_error();
  return tune_now(c, t, &geo, &heur, p, key);
}

/* ---- the cache for other timing modules (tune_layout.c) ---- */

int lc_cpu_tuner_level(const lc_context *ctx) { return ctx && ctx->tuner ? (int)ctx->tuner->level : LC_TUNE_NONE; }

int lc_cpu_tuner_get(lc_context *ctx, const char *key, char *val, size_t n) {
  lc_cpu_tuner *t = ctx ? ctx->tuner : NULL;
  if (!t || !n) return 0;
  pthread_mutex_lock(&t->mu);
  const char *v = lc_tune_cache_get(t->tc, key);
  if (v) snprintf(val, n, "%s", v);
  pthread_mutex_unlock(&t->mu);
  return v != NULL;
}

void lc_cpu_tuner_put(lc_context *ctx, const char *key, const char *val) {
  lc_cpu_tuner *t = ctx ? ctx->tuner : NULL;
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  if (!lc_tune_cache_put(t->tc, key, val) && lc_tune_cache_save(t->tc))
    warn(&t->warned_save, "cannot save the CPU tuning cache (%s); it only costs tuning time", lc_last_error());
  pthread_mutex_unlock(&t->mu);
  lc_clear_error();
}

void lc_cpu_tuner_bad_record(lc_context *ctx, const char *val) {
  lc_cpu_tuner *t = ctx ? ctx->tuner : NULL;
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  warn(&t->warned_record, "CPU tuning cache record '%s' is unusable; timing that conv again", val);
  pthread_mutex_unlock(&t->mu);
}
