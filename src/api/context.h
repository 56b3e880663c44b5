#ifndef LC_API_CONTEXT_H
#define LC_API_CONTEXT_H

#include "lowconv.h"
#include "kernels/registry.h"
#include "util/threadpool.h"

struct lc_context {
  int threads;
  size_t budget;            /* 0 = unlimited */
  unsigned cpu;             /* LC_CPU_* */
  const lc_kernels *k;      /* chosen once (kernels/registry.h) */
  lc_isa isa;               /* as asked (LC_ISA_AUTO or a forced table) */
  lc_pool *pool;
  const struct lc_backend_ops *be; /* backend/backend.h; CPU unless asked */
  void *dev;                /* the backend's device state (OpenCL: cl_backend.c) */
  lc_tune_level tune;
  struct lc_cpu_tuner *tuner; /* conv/autotune.h; NULL unless lc_context_params.cpu_tune */
  struct lc_ctx_open *opening; /* a device still opening on its own thread (lc_context_create_async) */
  void *staged;             /* the backend's host work done before the device opened (OpenCL: packed weights) */
  void (*staged_free)(void *staged);
};

/* The device opened on a thread of its own: validates the params and returns at once; the
 * driver's start (NVIDIA: ~0.2 s of platform and context creation) runs meanwhile. Nothing may
 * use the device, ctx->dev included, before lc_context_wait; lc_context_destroy joins the open
 * first. The CPU backend opens at once. */
lc_status lc_context_create_async(const lc_context_params *p, lc_context **out);
/* Waits for the open: its status and message exactly as lc_context_create would have given them
 * (again at every call). After a failure only lc_context_destroy is allowed. */
lc_status lc_context_wait(lc_context *ctx);

#endif
