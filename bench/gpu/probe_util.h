/* Shared by the standalone OpenCL probes in bench/gpu (each built alone: cc -O2 FILE.c -lOpenCL):
 * a monotonic clock in microseconds and a qsort comparator for doubles. */
#ifndef LC_GPU_PROBE_UTIL_H
#define LC_GPU_PROBE_UTIL_H

#include <time.h>

static inline double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static inline int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
