/* One monotonic clock for the library, the CLI, tests and benchmarks. */
#ifndef LC_UTIL_CLOCK_H
#define LC_UTIL_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline double lc_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
