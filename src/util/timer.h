/* The one clock for timing in the library, the CLI, tests and benchmarks: monotonic wall time (and
 * the calling thread's CPU time for microbenchmarks that must not count preemption). */
#ifndef LC_UTIL_TIMER_H
#define LC_UTIL_TIMER_H

#include <time.h>

static inline double lc_timespec_ms(const struct timespec *t) {
  return (double)t->tv_sec * 1e3 + (double)t->tv_nsec * 1e-6;
}

/* Milliseconds on the monotonic clock (arbitrary origin: take differences). */
static inline double lc_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return lc_timespec_ms(&t);
}
static inline double lc_now_s(void) { return lc_now_ms() * 1e-3; }

/* CPU time of the calling thread, in milliseconds. */
static inline double lc_thread_cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return lc_timespec_ms(&t);
}

#endif
