#include "util/parallel.h"

#include <pthread.h>
#include <unistd.h>

#define MAX_THREADS 16

typedef struct range_job {
  lc_range_fn fn;
  void *arg;
  size_t lo, hi;
  int failed;
} range_job;

static void *run_range(void *p) {
  range_job *j = p;
  j->failed = j->fn(j->arg, j->lo, j->hi);
  return NULL;
}

int lc_parallel_ranges(size_t n, size_t min_per_thread, int max_threads, lc_range_fn fn, void *arg) {
  if (!n) return 0;
  size_t nt = min_per_thread ? n / min_per_thread : n;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (max_threads > MAX_THREADS) max_threads = MAX_THREADS;
  if (nt > (size_t)(max_threads > 0 ? max_threads : 1)) nt = (size_t)(max_threads > 0 ? max_threads : 1);
  if (cores > 0 && nt > (size_t)cores) nt = (size_t)cores;
  if (nt < 1) nt = 1;
  range_job jobs[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  int started[MAX_THREADS] = {0}, failed = 0;
  for (size_t i = 0; i < nt; i++) {
    jobs[i] = (range_job){fn, arg, n * i / nt, n * (i + 1) / nt, 0};
    if (i + 1 < nt) {
      if (!pthread_create(&th[i], NULL, run_range, &jobs[i])) started[i] = 1;
      else run_range(&jobs[i]);
    }
  }
  run_range(&jobs[nt - 1]);
  for (size_t i = 0; i < nt; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    failed |= jobs[i].failed;
  }
  return failed;
}
