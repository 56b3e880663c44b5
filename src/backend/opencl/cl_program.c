#include "backend/opencl/cl_program.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tune/blob.h"
#include "tune/cache_dir.h"
#include "tune/hash.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

#define PROG_MAGIC 0x4c434c50u /* "LCLP" */

struct lc_cl_program_entry {
  lc_cl_program_entry *next;
  cl_program prog;
  char key[];
};

/* Builds run on worker threads too: the once-flag and the counters are guarded. */
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

void lc_cl_warn_once(lc_cl_rt *rt, const char *fmt, ...) {
  pthread_mutex_lock(&warn_lock);
  int warned = rt->warned_cache;
  rt->warned_cache = 1;
  pthread_mutex_unlock(&warn_lock);
  if (warned) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("lowconv: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* PoCL compiles every kernel of a program for any local size when asked for its binary (~10 s a
 * kernel on 2 cores: 76 s for conv_gemv) and keeps its own kernel cache ($POCL_CACHE_DIR), so its
 * programs are not saved; LOWCONV_CL_PROGRAM_BINARIES=0/1 decides for any device. */
static int save_binaries(const lc_cl_rt *rt) {
  const char *e = getenv("LOWCONV_CL_PROGRAM_BINARIES");
  if (e && (e[0] == '0' || e[0] == '1')) return e[0] == '1';
  return !rt->info.is_pocl;
}

lc_status lc_cl_programs_init(lc_cl_rt *rt, const char *cache_dir) {
  char buf[1024];
  rt->save_binaries = save_binaries(rt);
  if (cache_dir && !*cache_dir) return LC_OK;
  if (!cache_dir) {
    if (lc_cache_dir_default(buf, sizeof buf) || !*buf) return LC_OK; /* no HOME, or turned off */
    cache_dir = buf;
  }
  if (lc_mkdir_p(cache_dir, 0700)) {
    lc_cl_warn_once(rt, "cache directory %s is unusable (%s); programs and tunings are not cached", cache_dir,
                    lc_last_error());
    return LC_OK;
  }
  size_t n = strlen(cache_dir) + 1;
  rt->cache_dir = lc_malloc(n);
  if (!rt->cache_dir) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  memcpy(rt->cache_dir, cache_dir, n);
  return LC_OK;
}

void lc_cl_programs_free(lc_cl_rt *rt) {
  for (lc_cl_program_entry *e = rt->programs, *n; e; e = n) {
    n = e->next;
    rt->cl->ReleaseProgram(e->prog);
    lc_free(e);
  }
  rt->programs = NULL;
  lc_free(rt->want);
  rt->want = NULL;
  rt->nwant = rt->capwant = 0;
  lc_free(rt->tags);
  rt->tags = NULL;
  rt->ntags = rt->captags = 0;
  lc_free(rt->cache_dir);
  rt->cache_dir = NULL;
}

void lc_cl_program_counts(const lc_cl_rt *rt, int *built, int *loaded) {
  pthread_mutex_t *m = (pthread_mutex_t *)&rt->blk; /* read-only use of a const runtime */
  pthread_mutex_lock(m);
  if (built) *built = rt->programs_built;
  if (loaded) *loaded = rt->programs_loaded;
  pthread_mutex_unlock(m);
}

static const lc_cl_source *find_source(const char *name) {
  for (size_t i = 0; i < lc_cl_nsources; i++)
    if (!strcmp(lc_cl_sources[i].name, name)) return &lc_cl_sources[i];
  return NULL;
}

/* The argument header, the shared helpers, then the program's own file. */
static char *assemble(const char *name, size_t *len) {
  const lc_cl_source *parts[3] = {find_source("cl_conv_args"), find_source("common"), find_source(name)};
  size_t n = 1;
  for (int i = 0; i < 3; i++) {
    if (!parts[i]) return NULL;
    n += parts[i]->len + 1;
  }
  char *s = lc_malloc(n), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < 3; i++) {
    memcpy(p, parts[i]->text, parts[i]->len);
    p += parts[i]->len;
    *p++ = '\n';
  }
  *p = 0;
  *len = (size_t)(p - s);
  return s;
}

static lc_status build_log_error(lc_cl_rt *rt, cl_program p, cl_int e, const char *name, const char *options) {
  char log[4096];
  size_t got = 0;
  log[0] = 0;
  if (rt->cl->GetProgramBuildInfo(p, rt->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &got) != CL_SUCCESS)
    got = 0;
  log[got < sizeof log ? got : sizeof log - 1] = 0;
  return lc_cl_fail(rt, e, "building program %s with '%s'; build log:\n%s", name, options, log);
}

/* The program binary of a built program (one device), or NULL. */
static unsigned char *program_binary(lc_cl_rt *rt, cl_program p, size_t *len) {
  size_t n = 0;
  if (rt->cl->GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) != CL_SUCCESS || !n) return NULL;
  unsigned char *b = lc_malloc(n);
  if (b && rt->cl->GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof b, &b, NULL) != CL_SUCCESS) {
    lc_free(b);
    return NULL;
  }
  *len = n;
  return b;
}

/* From the cache: NULL on a miss (a bad entry warns once and is rebuilt). */
static cl_program load_cached(lc_cl_rt *rt, const char *path, const char *key) {
  void *bin = NULL;
  size_t len = 0;
  lc_cache_reason why = LC_CACHE_OK;
  if (lc_blob_read_why(path, PROG_MAGIC, key, &bin, &len, &why)) {
    if (why != LC_CACHE_MISSING)
      lc_cl_warn_once(rt, "program cache entry %s is unusable (%s); rebuilding it", path, lc_last_error());
    return NULL;
  }
  cl_int e, bs;
  const unsigned char *b = bin;
  cl_program p = rt->cl->CreateProgramWithBinary(rt->context, 1, &rt->device, &len, &b, &bs, &e);
  lc_free(bin);
  if (p && rt->cl->BuildProgram(p, 1, &rt->device, "", NULL, NULL) == CL_SUCCESS) return p;
  if (p) rt->cl->ReleaseProgram(p);
  lc_cl_warn_once(rt, "program cache entry %s was rejected by the driver; rebuilding it", path);
  return NULL;
}

static int program_key(const char *name, const char *options, char *key, size_t n) {
  int kn = snprintf(key, n, "%s|%s", name, options ? options : "");
  return kn < 0 || (size_t)kn >= n ? -1 : kn;
}

static cl_program find_program(const lc_cl_rt *rt, const char *key) {
  for (lc_cl_program_entry *e = rt->programs; e; e = e->next)
    if (!strcmp(e->key, key)) return e->prog;
  return NULL;
}

/* The cache entry's key (what makes a binary valid: device, driver, source, options, our
 * version) and path of program name, and the options it is built with. 0, or -1 with the error. */
static int entry_of(const lc_cl_rt *rt, const char *key, const char *options, const char *src, size_t slen,
                    char *ckey, size_t nckey, char *path, size_t npath, char *opts, size_t nopts) {
  /* LOWCONV_CL_EXTRA_OPTIONS: build options added to every program (experiments). */
  const char *extra = getenv("LOWCONV_CL_EXTRA_OPTIONS");
  int on = snprintf(opts, nopts, "%s%s%s", options ? options : "", extra && *extra ? " " : "", extra ? extra : "");
  if (on < 0 || (size_t)on >= nopts) return -1;
  snprintf(ckey, nckey, "%s\n%s\n%016llx\n%d.%d.%d%s%s", rt->info.fingerprint, key,
           (unsigned long long)lc_hash64(src, slen), LOWCONV_VERSION_MAJOR, LOWCONV_VERSION_MINOR,
           LOWCONV_VERSION_PATCH, extra && *extra ? "\n" : "", extra && *extra ? extra : "");
  if (rt->cache_dir)
    snprintf(path, npath, "%s/prog-%016llx.bin", rt->cache_dir, (unsigned long long)lc_hash64(ckey, strlen(ckey)));
  else if (npath)
    path[0] = 0;
  return 0;
}

/* 1 if the disk cache has an entry for the wanted program (its contents not checked). */
static int on_disk(const lc_cl_rt *rt, const lc_cl_want *w) {
  if (!rt->cache_dir) return 0;
  size_t slen = 0;
  char *src = assemble(w->name, &slen);
  char ckey[1600], path[1400], opts[600];
  int ok = src && !entry_of(rt, w->key, w->options, src, slen, ckey, sizeof ckey, path, sizeof path, opts, sizeof opts) &&
           access(path, R_OK) == 0;
  lc_free(src);
  return ok;
}

/* One program from the disk cache or from source; touches no shared state of rt except through
 * lc_cl_warn_once, so several run at once on worker threads. *from_source: built, not loaded. */
static lc_status build_one(lc_cl_rt *rt, const char *name, const char *options, const char *key, cl_program *out,
                           int *from_source) {
  *out = NULL, *from_source = 0;
  size_t slen = 0;
  char *src = assemble(name, &slen);
  if (!src) return lc_error(LC_ERR_NO_MEMORY, "opencl: no embedded program '%s' (or out of memory)", name);
  char ckey[1600], path[1400], opts[600];
  if (entry_of(rt, key, options, src, slen, ckey, sizeof ckey, path, sizeof path, opts, sizeof opts)) {
    lc_free(src);
    return lc_error(LC_ERR_INVALID_ARG, "opencl: build options of %s too long (LOWCONV_CL_EXTRA_OPTIONS)", name);
  }
  options = opts;
  cl_program p = rt->cache_dir ? load_cached(rt, path, ckey) : NULL;
  lc_status s = LC_OK;
  if (!p) {
    cl_int e;
    const char *srcs[1] = {src};
    p = rt->cl->CreateProgramWithSource(rt->context, 1, srcs, &slen, &e);
    if (!p) {
      lc_free(src);
      return lc_cl_fail(rt, e, "creating program %s", name);
    }
    double tb = lc_now_ms();
    e = rt->cl->BuildProgram(p, 1, &rt->device, options ? options : "", NULL, NULL);
    if (rt->timing > 1) /* which programs a cold start pays for */
      fprintf(stderr, "lowconv: built %s [%s] in %.1f ms\n", name, options ? options : "", lc_now_ms() - tb);
    if (!e && rt->timing > 2) { /* the compiler's own report (registers, spills with -cl-nv-verbose) */
      char log[2048];
      size_t got = 0;
      if (rt->cl->GetProgramBuildInfo(p, rt->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &got) == CL_SUCCESS) {
        log[got < sizeof log ? got : sizeof log - 1] = 0;
        fprintf(stderr, "lowconv: build log of %s:\n%s\n", name, log);
      }
    }
    if (e) {
      s = build_log_error(rt, p, e, name, options ? options : "");
      rt->cl->ReleaseProgram(p);
      lc_free(src);
      return s;
    }
    *from_source = 1;
    if (rt->cache_dir && rt->save_binaries) {
      size_t blen = 0;
      unsigned char *bin = program_binary(rt, p, &blen);
      if (bin && lc_blob_write(path, PROG_MAGIC, ckey, bin, blen))
        lc_cl_warn_once(rt, "cannot write the program cache (%s); it only costs start-up time", lc_last_error());
      lc_free(bin);
    }
  }
  lc_free(src);
  *out = p;
  return LC_OK;
}

static lc_status insert(lc_cl_rt *rt, const char *key, cl_program p, int from_source) {
  size_t kn = strlen(key);
  lc_cl_program_entry *ent = lc_malloc(sizeof *ent + kn + 1);
  if (!ent) {
    rt->cl->ReleaseProgram(p);
    return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  }
  ent->prog = p;
  memcpy(ent->key, key, kn + 1);
  pthread_mutex_lock(&rt->blk);
  ent->next = rt->programs;
  rt->programs = ent;
  if (from_source) rt->programs_built++;
  else rt->programs_loaded++;
  pthread_cond_broadcast(&rt->bcv);
  pthread_mutex_unlock(&rt->blk);
  return LC_OK;
}

/* Background builds (lc_cl_build_wanted_async): items taken in order by nth workers. */
#define MAX_BUILD_THREADS 16
typedef struct lc_cl_bg {
  lc_cl_rt *rt;
  lc_cl_want *items;
  int n, next;
  unsigned char *busy; /* 1 while item i is not yet built or given up (guarded by rt->blk) */
  pthread_t th[MAX_BUILD_THREADS];
  int nth;
  double t0, t1; /* start; when the last item finished (0 while some run) */
  int oom, left;  /* left: items not finished */
  int cold_left;  /* of them, those with no disk cache entry when the batch started */
  unsigned char *cold;
  char oom_msg[512];
} lc_cl_bg;

/* 1 if a background build of key is still to finish (rt->blk held). */
static int bg_pending(const lc_cl_rt *rt, const char *key) {
  const lc_cl_bg *b = rt->bg;
  for (int i = 0; b && i < b->n; i++)
    if (b->busy[i] && !strcmp(b->items[i].key, key)) return 1;
  return 0;
}

int lc_cl_program_known(const lc_cl_rt *rt, const char *name, const char *options) {
  char key[256];
  if (program_key(name, options, key, sizeof key) < 0) return 0;
  pthread_mutex_t *m = (pthread_mutex_t *)&rt->blk;
  pthread_mutex_lock(m);
  int k = find_program(rt, key) != NULL;
  pthread_mutex_unlock(m);
  return k;
}

/* The program of key once built, waiting for a background build of it; NULL if none has it. */
static cl_program find_or_wait(lc_cl_rt *rt, const char *key) {
  pthread_mutex_lock(&rt->blk);
  cl_program p;
  double t0 = lc_now_ms();
  int waited = 0;
  while (!(p = find_program(rt, key)) && bg_pending(rt, key)) pthread_cond_wait(&rt->bcv, &rt->blk), waited = 1;
  if (waited) rt->wait_ms += lc_now_ms() - t0;
  pthread_mutex_unlock(&rt->blk);
  return p;
}

lc_status lc_cl_program(lc_cl_rt *rt, const char *name, const char *options, cl_program *out) {
  char key[256];
  if (program_key(name, options, key, sizeof key) < 0)
    return lc_error(LC_ERR_INVALID_ARG, "opencl: program key too long");
  if ((*out = find_or_wait(rt, key))) return LC_OK;
  double t0 = lc_now_ms();
  cl_program p;
  int from_source;
  lc_status s = build_one(rt, name, options, key, &p, &from_source);
  rt->compile_ms += lc_now_ms() - t0;
  if (!s) s = insert(rt, key, p, from_source);
  if (!s) *out = p;
  return s;
}

/* Records that the collect pass's current node wants item i of the wanted list. Out of memory
 * only loses the node's order (it is initialized as if ready). */
static lc_status tag_want(lc_cl_rt *rt, int i) {
  if (rt->ctag < 0) return LC_OK;
  if (rt->ntags == rt->captags) {
    int cap = rt->captags ? 2 * rt->captags : 64;
    int *t = lc_malloc((size_t)cap * 2 * sizeof *t);
    if (!t) return LC_OK;
    if (rt->ntags) memcpy(t, rt->tags, (size_t)rt->ntags * 2 * sizeof *t);
    lc_free(rt->tags);
    rt->tags = t, rt->captags = cap;
  }
  rt->tags[2 * rt->ntags] = rt->ctag, rt->tags[2 * rt->ntags + 1] = i;
  rt->ntags++;
  return LC_OK;
}

lc_status lc_cl_want_program(lc_cl_rt *rt, const char *name, const char *options) {
  char key[256];
  if (program_key(name, options, key, sizeof key) < 0)
    return lc_error(LC_ERR_INVALID_ARG, "opencl: program key too long");
  pthread_mutex_lock(&rt->blk);
  int have = find_program(rt, key) || bg_pending(rt, key); /* built, or being built in the background */
  pthread_mutex_unlock(&rt->blk);
  if (have) return LC_OK;
  if (strlen(name) >= sizeof rt->want->name || strlen(options ? options : "") >= sizeof rt->want->options)
    return lc_error(LC_ERR_INVALID_ARG, "opencl: program %s's name or build options too long", name);
  for (int i = 0; i < rt->nwant; i++)
    if (!strcmp(rt->want[i].key, key)) return tag_want(rt, i);
  if (rt->nwant == rt->capwant) {
    int cap = rt->capwant ? 2 * rt->capwant : 16;
    lc_cl_want *w = lc_malloc((size_t)cap * sizeof *w);
    if (!w) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
    if (rt->nwant) memcpy(w, rt->want, (size_t)rt->nwant * sizeof *w);
    lc_free(rt->want);
    rt->want = w, rt->capwant = cap;
  }
  lc_cl_want *w = &rt->want[rt->nwant++];
  snprintf(w->key, sizeof w->key, "%s", key);
  snprintf(w->name, sizeof w->name, "%s", name);
  snprintf(w->options, sizeof w->options, "%s", options ? options : "");
  return tag_want(rt, rt->nwant - 1);
}

void lc_cl_collect_tag(lc_cl_rt *rt, int tag) { rt->ctag = tag; }

/* Only cache loads left (a warm start): no wait, the caller's next node packs its weights while
 * they load (IResNet-34's op init idled 11 ms for the first program). */
int lc_cl_build_wait_one(lc_cl_rt *rt) {
  pthread_mutex_lock(&rt->blk);
  int left = rt->bg && rt->bg->cold_left > 0 ? rt->bg->left : 0, waited = left > 0;
  while (left > 0 && rt->bg && rt->bg->left == left) pthread_cond_wait(&rt->bcv, &rt->blk);
  pthread_mutex_unlock(&rt->blk);
  return waited;
}

/* The pass tags nodes in increasing order, so a node's pairs are one run, found by bisection: the
 * planner asks about every waiting node each time it picks one. */
int lc_cl_tag_ready(lc_cl_rt *rt, int tag) {
  pthread_mutex_lock(&rt->blk);
  const lc_cl_bg *b = rt->bg;
  int ready = 1;
  if (b && b->left > 0) {
    int lo = 0, hi = rt->ntags;
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (rt->tags[2 * mid] < tag) lo = mid + 1;
      else hi = mid;
    }
    for (int i = lo; ready && i < rt->ntags && rt->tags[2 * i] == tag; i++)
      if (rt->tags[2 * i + 1] < b->n && b->busy[rt->tags[2 * i + 1]]) ready = 0;
  }
  pthread_mutex_unlock(&rt->blk);
  return ready;
}

/* Worker state of a concurrent build: items are taken in order from a shared counter. */
typedef struct build_job {
  lc_cl_rt *rt;
  pthread_mutex_t lock;
  int next, n;
  cl_program *prog;
  int *from_source;
  lc_status *st;
  int oom;  /* one build ran out of memory: that is an error of the whole build */
  char oom_msg[512];
} build_job;

static void *build_worker(void *arg) {
  build_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    int i = j->next < j->n ? j->next++ : -1;
    pthread_mutex_unlock(&j->lock);
    if (i < 0) return NULL;
    const lc_cl_want *w = &j->rt->want[i];
    j->st[i] = build_one(j->rt, w->name, w->options, w->key, &j->prog[i], &j->from_source[i]);
    if (j->st[i] == LC_ERR_NO_MEMORY) {
      pthread_mutex_lock(&j->lock);
      if (!j->oom) snprintf(j->oom_msg, sizeof j->oom_msg, "%s", lc_last_error());
      j->oom = 1;
      pthread_mutex_unlock(&j->lock);
    }
  }
}

static int build_threads(int n) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("LOWCONV_CL_BUILD_THREADS"); /* 1: one build after another */
  if (env && atoi(env) > 0) cores = atoi(env);
  int nt = (int)(cores < 1 ? 1 : cores > MAX_BUILD_THREADS ? MAX_BUILD_THREADS : cores);
  return nt > n ? n : nt;
}

static void *bg_worker(void *arg) {
  lc_cl_bg *b = arg;
  lc_cl_rt *rt = b->rt;
  for (;;) {
    pthread_mutex_lock(&rt->blk);
    int i = b->next < b->n ? b->next++ : -1;
    pthread_mutex_unlock(&rt->blk);
    if (i < 0) return NULL;
    const lc_cl_want *w = &b->items[i];
    cl_program p = NULL;
    int from_source = 0;
    lc_status s = build_one(rt, w->name, w->options, w->key, &p, &from_source);
    if (p && insert(rt, w->key, p, from_source)) s = LC_ERR_NO_MEMORY; /* insert released it */
    pthread_mutex_lock(&rt->blk);
    if (s == LC_ERR_NO_MEMORY && !b->oom) {
      b->oom = 1;
      snprintf(b->oom_msg, sizeof b->oom_msg, "%s", lc_last_error());
    }
    b->busy[i] = 0; /* a failed build is built again where it is used, with its log */
    b->cold_left -= b->cold[i];
    if (--b->left == 0) b->t1 = lc_now_ms();
    pthread_cond_broadcast(&rt->bcv);
    pthread_mutex_unlock(&rt->blk);
  }
}

lc_status lc_cl_build_wanted_async(lc_cl_rt *rt) {
  lc_status s = lc_cl_build_join(rt); /* one batch at a time */
  if (s) return s;
  int n = rt->nwant;
  if (!n) return LC_OK;
  lc_cl_bg *b = lc_calloc(1, sizeof *b);
  unsigned char *busy = lc_malloc((size_t)n), *cold = lc_malloc((size_t)n);
  if (!b || !busy || !cold) {
    lc_free(b);
    lc_free(busy);
    lc_free(cold);
    return lc_cl_build_wanted(rt); /* the same builds, waited for */
  }
  memset(busy, 1, (size_t)n);
  b->t0 = lc_now_ms();
  for (int i = 0; i < n; i++) b->cold_left += cold[i] = (unsigned char)!on_disk(rt, &rt->want[i]);
  b->rt = rt, b->items = rt->want, b->n = n, b->left = n, b->busy = busy, b->cold = cold;
  rt->want = NULL, rt->nwant = rt->capwant = 0; /* the batch owns the list now */
  int nt = build_threads(n);
  pthread_mutex_lock(&rt->blk);
  rt->bg = b;
  pthread_mutex_unlock(&rt->blk);
  while (b->nth < nt && !pthread_create(&b->th[b->nth], NULL, bg_worker, b)) b->nth++;
  if (!b->nth) bg_worker(b); /* no thread: build here */
  return LC_OK;
}

double lc_cl_bg_ms(const lc_cl_rt *rt) {
  pthread_mutex_t *m = (pthread_mutex_t *)&rt->blk;
  pthread_mutex_lock(m);
  double ms = rt->bg ? (rt->bg->t1 > 0 ? rt->bg->t1 : lc_now_ms()) - rt->bg->t0 : 0.0;
  pthread_mutex_unlock(m);
  return ms;
}

lc_status lc_cl_build_join(lc_cl_rt *rt) {
  lc_cl_bg *b = rt->bg;
  if (!b) return LC_OK;
  for (int i = 0; i < b->nth; i++) pthread_join(b->th[i], NULL);
  pthread_mutex_lock(&rt->blk);
  rt->bg = NULL;
  pthread_mutex_unlock(&rt->blk);
  rt->compile_ms += (b->t1 > 0 ? b->t1 : lc_now_ms()) - b->t0; /* the batch's wall time, not the wait */
  lc_status s = b->oom ? lc_error(LC_ERR_NO_MEMORY, "%s", b->oom_msg) : LC_OK;
  lc_free(b->items);
  lc_free(b->busy);
  lc_free(b->cold);
  lc_free(b);
  return s;
}

/* Builds the wanted programs at once: NVIDIA JIT-compiles each program for up to a second when
 * its cache is cold, and builds of different programs from different threads may overlap. A
 * build that fails for another reason than memory is left out: the caller's serial build of it
 * fails again and reports the build log where the program is used. */
lc_status lc_cl_build_wanted(lc_cl_rt *rt) {
  int n = rt->nwant;
  if (!n) return LC_OK;
  double t0 = lc_now_ms();
  build_job j;
  memset(&j, 0, sizeof j);
  j.rt = rt, j.n = n;
  j.prog = lc_calloc((size_t)n, sizeof *j.prog);
  j.from_source = lc_calloc((size_t)n, sizeof *j.from_source);
  j.st = lc_calloc((size_t)n, sizeof *j.st);
  lc_status s = LC_OK;
  if (!j.prog || !j.from_source || !j.st) {
    s = lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
    goto done;
  }
  pthread_mutex_init(&j.lock, NULL);
  int nt = build_threads(n);
  pthread_t th[MAX_BUILD_THREADS];
  int started = 0;
  for (; started < nt - 1; started++) /* the calling thread is the last worker */
    if (pthread_create(&th[started], NULL, build_worker, &j)) break;
  build_worker(&j);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&j.lock);
  for (int i = 0; i < n; i++) {
    if (!j.prog[i]) continue;
    lc_status e = s ? LC_OK : insert(rt, rt->want[i].key, j.prog[i], j.from_source[i]);
    if (s) rt->cl->ReleaseProgram(j.prog[i]);
    if (e) s = e; /* insert released it */
  }
  if (!s && j.oom) s = lc_error(LC_ERR_NO_MEMORY, "%s", j.oom_msg);
done:
  lc_free(j.prog);
  lc_free(j.from_source);
  lc_free(j.st);
  rt->nwant = 0;
  rt->compile_ms += lc_now_ms() - t0;
  return s;
}
