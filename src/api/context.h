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
};

#endif
