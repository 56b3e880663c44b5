#ifndef LC_API_CONTEXT_H
#define LC_API_CONTEXT_H

#include "lowconv.h"
#include "kernels/kernels.h"
#include "util/threadpool.h"

/* Which table LC_ISA_AUTO takes on an AVX-512 CPU. AVX-512 (8x32) measured 1-4% faster than AVX2
 * (6x16) on packed operands, ~25% on in-place B and ragged tiles (Zen 4, docs/benchmarks.md). */
#ifndef LC_AUTO_PREFERS_AVX512
#define LC_AUTO_PREFERS_AVX512 1
#endif

struct lc_context {
  int threads;
  size_t budget;            /* 0 = unlimited */
  unsigned cpu;             /* LC_CPU_* */
  const lc_kernels *k;      /* chosen once */
  lc_isa isa;               /* as asked (LC_ISA_AUTO or a forced table) */
  lc_pool *pool;
  const struct lc_backend_ops *be; /* backend/backend.h; CPU unless asked */
  void *dev;                /* the backend's device state (OpenCL: cl_backend.c) */
  lc_tune_level tune;
};

#endif
