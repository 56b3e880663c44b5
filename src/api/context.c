#define _DEFAULT_SOURCE /* sigaltstack */
#include "api/context.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "kernels/cpu.h"
#include "util/alloc.h"
#include "util/error.h"

void lc_context_params_init(lc_context_params *p) {
  if (!p) return;
  p->threads = 1;
  p->workspace_budget = 0;
  p->isa = LC_ISA_AUTO;
  p->backend = LC_BACKEND_CPU;
  p->cl_platform = p->cl_device = -1;
  p->cache_dir = NULL;
  p->tune = LC_TUNE_FAST;
  p->cpu_tune = LC_TUNE_NONE;
}

lc_status lc_device_parse(const char *spec, lc_context_params *p) {
  if (!spec || !p) return lc_error(LC_ERR_INVALID_ARG, "device: name or params is NULL");
  if (!strcmp(spec, "cpu")) {
    p->backend = LC_BACKEND_CPU;
    return LC_OK;
  }
  if (strncmp(spec, "opencl", 6) || (spec[6] && spec[6] != ':'))
    return lc_error(LC_ERR_INVALID_ARG, "device '%s' unknown: use cpu, opencl, opencl:P or opencl:P:D", spec);
  long v[2] = {-1, -1};
  const char *s = spec + 6;
  for (int i = 0; i < 2 && *s == ':'; i++) {
    char *end;
    v[i] = strtol(s + 1, &end, 10);
    if (end == s + 1 || v[i] < 0 || v[i] > 1000)
      return lc_error(LC_ERR_INVALID_ARG, "device '%s': platform and device are indices (opencl:0:1)", spec);
    s = end;
  }
  if (*s) return lc_error(LC_ERR_INVALID_ARG, "device '%s': expected opencl, opencl:P or opencl:P:D", spec);
  p->backend = LC_BACKEND_OPENCL;
  p->cl_platform = (int)v[0];
  p->cl_device = (int)v[1];
  return LC_OK;
}

const lc_backend_ops *lc_context_backend_ops(const lc_context *ctx) { return ctx->be; }
lc_backend lc_context_backend(const lc_context *ctx) {
  return ctx && ctx->be != &lc_backend_cpu ? LC_BACKEND_OPENCL : LC_BACKEND_CPU;
}
const char *lc_context_device_name(const lc_context *ctx) { return ctx ? ctx->be->device_name(ctx) : ""; }
const char *lc_context_fingerprint(const lc_context *ctx) { return ctx ? ctx->be->fingerprint(ctx) : ""; }
lc_status lc_context_sync(lc_context *ctx) {
  if (!ctx) return lc_error(LC_ERR_INVALID_ARG, "context is NULL");
  return ctx->be->sync(ctx);
}

/* A context with its backend chosen and the params checked, the device not yet opened. */
static lc_status context_new(const lc_context_params *p, lc_context **out) {
  if (p->threads < 0 || p->threads > 1024)
    return lc_error(LC_ERR_INVALID_ARG, "context: threads must be in 0..1024, got %d", p->threads);
  lc_status st;
  const lc_kernels *k = lc_kernels_pick(p->isa, &st);
  if (!k) return st;
  lc_context *c = lc_calloc(1, sizeof *c);
  if (!c) return lc_error(LC_ERR_NO_MEMORY, "context: out of memory");
  c->threads = p->threads ? p->threads : 1;
  c->budget = p->workspace_budget;
  c->cpu = lc_cpu_features();
  c->k = k;
  c->isa = p->isa;
  c->pool = lc_pool_create(c->threads);
  if (!c->pool) {
    lc_free(c);
    return lc_error(LC_ERR_NO_MEMORY, "context: cannot start %d threads", p->threads);
  }
  c->tune = p->tune;
  if ((unsigned)p->cpu_tune > LC_TUNE_HEAVY)
    st = lc_error(LC_ERR_INVALID_ARG, "context: unknown cpu_tune level %d", (int)p->cpu_tune);
  if ((unsigned)p->tune > LC_TUNE_HEAVY) st = lc_error(LC_ERR_INVALID_ARG, "context: unknown tune level %d", (int)p->tune);
  c->be = &lc_backend_cpu;
  if (!st && p->backend == LC_BACKEND_OPENCL) {
#if LC_HAVE_OPENCL
    c->be = &lc_backend_opencl;
#else
    st = lc_error(LC_ERR_UNSUPPORTED, "context: this lowconv was built without the OpenCL backend (no CL/cl.h "
                  "at build time; Debian: opencl-c-headers)");
#endif
  } else if (!st && p->backend != LC_BACKEND_CPU) {
    st = lc_error(LC_ERR_INVALID_ARG, "context: unknown backend %d", (int)p->backend);
  }
  if (st) {
    c->be = &lc_backend_cpu;
    lc_context_destroy(c);
    return st;
  }
  *out = c;
  return LC_OK;
}

lc_status lc_context_create(const lc_context_params *p, lc_context **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "context: out is NULL");
  *out = NULL;
  lc_context_params d;
  lc_context_params_init(&d);
  if (!p) p = &d;
  lc_context *c = NULL;
  lc_status st = context_new(p, &c);
  if (st) return st;
  if ((st = c->be->open(c, p))) {
    c->be = &lc_backend_cpu;
    lc_context_destroy(c);
    return st;
  }
  *out = c;
  return LC_OK;
}

/* The open in flight: its own copy of the params (the caller's may be gone), its outcome. */
struct lc_ctx_open {
  pthread_t th;
  int running;             /* th to be joined */
  lc_context_params p;
  char cache_dir[1024];
  lc_status s;
  char msg[512];           /* lc_last_error of the open's thread, for the waiting one */
};

/* A driver started on a short-lived thread may leave it an alternate signal stack of its own
 * (PoCL's LLVM installs one where the thread's is smaller), which ASan then fails to unmap at the
 * thread's exit: the thread's own stack goes back before it ends. */
static void *open_main(void *arg) {
  lc_context *c = arg;
  struct lc_ctx_open *o = c->opening;
  stack_t mine;
  int have = sigaltstack(NULL, &mine) == 0;
  o->s = c->be->open(c, &o->p);
  if (o->s) snprintf(o->msg, sizeof o->msg, "%s", lc_last_error());
  stack_t now;
  if (have && sigaltstack(NULL, &now) == 0 && (now.ss_sp != mine.ss_sp || now.ss_size != mine.ss_size ||
                                                (now.ss_flags & SS_DISABLE) != (mine.ss_flags & SS_DISABLE))) {
    if (mine.ss_flags & SS_DISABLE) mine.ss_sp = NULL, mine.ss_size = 0, mine.ss_flags = SS_DISABLE;
    else mine.ss_flags = 0;
    (void)sigaltstack(&mine, NULL);
  }
  return NULL;
}

lc_status lc_context_create_async(const lc_context_params *p, lc_context **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "context: out is NULL");
  *out = NULL;
  lc_context_params d;
  lc_context_params_init(&d);
  if (!p) p = &d;
  lc_context *c = NULL;
  lc_status st = context_new(p, &c);
  if (st) return st;
  struct lc_ctx_open *o = lc_calloc(1, sizeof *o);
  if (!o) {
    lc_context_destroy(c);
    return lc_error(LC_ERR_NO_MEMORY, "context: out of memory");
  }
  o->p = *p;
  if (p->cache_dir) {
    if (strlen(p->cache_dir) >= sizeof o->cache_dir) {
      lc_free(o);
      lc_context_destroy(c);
      return lc_error(LC_ERR_INVALID_ARG, "context: cache directory path longer than %zu bytes", sizeof o->cache_dir - 1);
    }
    snprintf(o->cache_dir, sizeof o->cache_dir, "%s", p->cache_dir);
    o->p.cache_dir = o->cache_dir;
  }
  c->opening = o;
  if (c->be == &lc_backend_cpu || pthread_create(&o->th, NULL, open_main, c) != 0)
    open_main(c); /* nothing to wait for, or no thread to spare: open here */
  else
    o->running = 1;
  *out = c;
  return LC_OK;
}

lc_status lc_context_wait(lc_context *ctx) {
  if (!ctx) return lc_error(LC_ERR_INVALID_ARG, "context is NULL");
  struct lc_ctx_open *o = ctx->opening;
  if (!o) return LC_OK;
  if (o->running) pthread_join(o->th, NULL);
  o->running = 0;
  return o->s ? lc_error(o->s, "%s", o->msg) : LC_OK;
}

void lc_context_destroy(lc_context *ctx) {
  if (!ctx) return;
  if (ctx->opening) {
    if (ctx->opening->running) pthread_join(ctx->opening->th, NULL); /* the driver's calls cannot be cut short */
    lc_free(ctx->opening);
    ctx->opening = NULL;
  }
  if (ctx->staged_free) ctx->staged_free(ctx->staged);
  if (ctx->be) ctx->be->close(ctx);
  lc_pool_destroy(ctx->pool);
  lc_free(ctx);
}

unsigned lc_context_cpu_features(const lc_context *ctx) { return ctx ? ctx->cpu : 0; }
const char *lc_context_isa_name(const lc_context *ctx) { return ctx ? lc_isa_name(ctx->k->isa) : ""; }
int lc_context_threads(const lc_context *ctx) { return ctx ? ctx->threads : 0; }
