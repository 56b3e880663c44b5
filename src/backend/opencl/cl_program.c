#include "backend/opencl/cl_program.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tune/blob.h"
#include "tune/cache_dir.h"
#include "tune/hash.h"
#include "util/alloc.h"
#include "util/error.h"

#define PROG_MAGIC 0x4c434c50u /* "LCLP" */

struct lc_cl_program_entry {
  lc_cl_program_entry *next;
  cl_program prog;
  char key[];
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

void lc_cl_warn_once(lc_cl_rt *rt, const char *fmt, ...) {
  if (rt->warned_cache) return;
  rt->warned_cache = 1;
  va_list ap;
  va_start(ap, fmt);
  fputs("lowconv: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

lc_status lc_cl_programs_init(lc_cl_rt *rt, const char *cache_dir) {
  char buf[1024];
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
  lc_free(rt->cache_dir);
  rt->cache_dir = NULL;
}

void lc_cl_program_counts(const lc_cl_rt *rt, int *built, int *loaded) {
  if (built) *built = rt->programs_built;
  if (loaded) *loaded = rt->programs_loaded;
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

lc_status lc_cl_program(lc_cl_rt *rt, const char *name, const char *options, cl_program *out) {
  char key[256];
  int kn = snprintf(key, sizeof key, "%s|%s", name, options ? options : "");
  if (kn < 0 || (size_t)kn >= sizeof key) return lc_error(LC_ERR_INVALID_ARG, "opencl: program key too long");
  for (lc_cl_program_entry *e = rt->programs; e; e = e->next)
    if (!strcmp(e->key, key)) {
      *out = e->prog;
      return LC_OK;
    }
  size_t slen = 0;
  char *src = assemble(name, &slen);
  if (!src) return lc_error(LC_ERR_NO_MEMORY, "opencl: no embedded program '%s' (or out of memory)", name);
  double t0 = now_ms();
  /* Cache key: what makes a binary valid — device, driver, source, options, our version. */
  char ckey[1024], path[1400];
  snprintf(ckey, sizeof ckey, "%s\n%s\n%016llx\n%d.%d.%d", rt->info.fingerprint, key,
           (unsigned long long)lc_hash64(src, slen), LOWCONV_VERSION_MAJOR, LOWCONV_VERSION_MINOR,
           LOWCONV_VERSION_PATCH);
  cl_program p = NULL;
  if (rt->cache_dir) {
    snprintf(path, sizeof path, "%s/prog-%016llx.bin", rt->cache_dir, (unsigned long long)lc_hash64(ckey, strlen(ckey)));
    p = load_cached(rt, path, ckey);
    if (p) rt->programs_loaded++;
  }
  lc_status s = LC_OK;
  if (!p) {
    cl_int e;
    const char *srcs[1] = {src};
    p = rt->cl->CreateProgramWithSource(rt->context, 1, srcs, &slen, &e);
    if (!p) {
      lc_free(src);
      return lc_cl_fail(rt, e, "creating program %s", name);
    }
    e = rt->cl->BuildProgram(p, 1, &rt->device, options ? options : "", NULL, NULL);
    if (e) {
      s = build_log_error(rt, p, e, name, options ? options : "");
      rt->cl->ReleaseProgram(p);
      lc_free(src);
      return s;
    }
    rt->programs_built++;
    if (rt->cache_dir) {
      size_t blen = 0;
      unsigned char *bin = program_binary(rt, p, &blen);
      if (bin && lc_blob_write(path, PROG_MAGIC, ckey, bin, blen))
        lc_cl_warn_once(rt, "cannot write the program cache (%s); it only costs start-up time", lc_last_error());
      lc_free(bin);
    }
  }
  lc_free(src);
  rt->compile_ms += now_ms() - t0;
  lc_cl_program_entry *ent = lc_malloc(sizeof *ent + (size_t)kn + 1);
  if (!ent) {
    rt->cl->ReleaseProgram(p);
    return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  }
  ent->prog = p;
  memcpy(ent->key, key, (size_t)kn + 1);
  ent->next = rt->programs;
  rt->programs = ent;
  *out = p;
  return LC_OK;
}
