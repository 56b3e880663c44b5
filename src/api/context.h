#ifndef LC_API_CONTEXT_H
#define LC_API_CONTEXT_H

#include "lowconv.h"
#include "kernels/kernels.h"
#include "util/threadpool.h"

/* Which table LC_ISA_AUTO takes on an AVX-512 CPU (decided by measurement, docs/benchmarks.md). */
#ifndef LC_AUTO_PREFERS_AVX512
#define LC_AUTO_PREFERS_AVX512 0
#endif

struct lc_context {
  int threads;
  size_t budget;            /* 0 = unlimited */
  unsigned cpu;             /* LC_CPU_* */
  const lc_kernels *k;      /* chosen once */
  lc_pool *pool;
};

#endif
