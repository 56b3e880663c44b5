/* Cost of one parallel region of the thread pool: back-to-back jobs of `tasks` equal tasks of a fixed
 * amount of work, on T threads and inline (1 thread), and after an idle gap that outlasts the spin
 * window (the wake-up path). Prints per-job median and 90th percentile in microseconds and the
 * speedup of the medians over the inline run. First, what the machine itself gives: T plain threads
 * running the same work for 0.3 s against one (a VM's vCPUs can share a core with a neighbour: on
 * the 2-vCPU Xeon of stop 22 two threads ran 1.26x one thread's work at one minute, 2.2x at the
 * next), so a pool figure can be read against it.
 * usage: bench_pool [threads 2] [tasks 2] [work us per task 20,100,500] [jobs 2000] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/threadpool.h"
#include "util/timer.h"

static double ns_per_unit;

static void spin_task(void *arg, size_t t, int thread) {
  (void)t, (void)thread;
  volatile double x = 1.0;
  long n = *(const long *)arg;
  for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void measure(lc_pool *p, size_t tasks, long units, int jobs, double gap_ms, double *med, double *p90) {
  double *v = malloc((size_t)jobs * sizeof *v);
  for (int j = 0; j < jobs; j++) {
    if (gap_ms > 0) nanosleep(&(struct timespec){0, (long)(gap_ms * 1e6)}, NULL);
    double t0 = lc_now_ms();
    lc_pool_run(p, tasks, 0, spin_task, &units);
    v[j] = (lc_now_ms() - t0) * 1e3;
  }
  qsort(v, (size_t)jobs, sizeof *v, cmp);
  *med = v[jobs / 2];
  *p90 = v[jobs * 9 / 10];
  free(v);
}

/* Units of spin_task work one plain thread completes in 0.3 s. */
static void *raw_thread(void *arg) {
  long *done = arg, unit = 10000;
  *done = 0;
  double t0 = lc_now_ms();
  while (lc_now_ms() - t0 < 300.0) {
    spin_task(&unit, 0, 0);
    *done += unit;
  }
  return NULL;
}

/* Sum of T plain threads' rates over one thread's rate. */
static double raw_pair(int threads) {
  pthread_t t[64];
  long done[64];
  if (threads > 64) threads = 64;
  raw_thread(&done[0]);
  double one = (double)done[0];
  int started = 0;
  for (; started < threads; started++)
    if (pthread_create(&t[started], NULL, raw_thread, &done[started])) break;
  double sum = 0;
  for (int i = 0; i < started; i++) {
    pthread_join(t[i], NULL);
    sum += (double)done[i];
  }
  return one > 0 ? sum / one : 0.0;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2, jobs = argc > 4 ? atoi(argv[4]) : 2000;
  size_t tasks = argc > 2 ? (size_t)atol(argv[2]) : 2;
  const char *works = argc > 3 ? argv[3] : "20,100,500";
  /* Calibrate the work unit on this thread. */
  long cal = 2000000;
  double t0 = lc_now_ms();
  spin_task(&cal, 0, 0);
  ns_per_unit = (lc_now_ms() - t0) * 1e6 / (double)cal;
  lc_pool *p = lc_pool_create(threads), *one = lc_pool_create(1);
  printf("machine: %d plain threads did %.2fx one thread's work (0.3 s each)\n", threads, raw_pair(threads));
  printf("threads %d, %zu tasks per job, %d jobs per figure; us per job: median / p90\n", threads, tasks, jobs);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", works);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    double us = atof(tok);
    long units = (long)(us * 1e3 / ns_per_unit);
    double m1, q1, mt, qt, mg, qg;
    measure(one, tasks, units, jobs, 0, &m1, &q1);
    measure(p, tasks, units, jobs, 0, &mt, &qt);
    measure(p, tasks, units, jobs / 10 + 1, 1.0, &mg, &qg); /* 1 ms gaps: workers asleep */
    printf("work %6.0f us/task: inline %8.1f / %8.1f   %d threads %8.1f / %8.1f (x%.2f)   after 1 ms idle %8.1f / %8.1f (x%.2f)\n",
           us, m1, q1, threads, mt, qt, m1 / mt, mg, qg, m1 / mg);
  }
  lc_pool_destroy(p);
  lc_pool_destroy(one);
  return 0;
}
