/* The thread pool (src/util/threadpool.c): every task runs exactly once with a thread index below
 * the job's thread count, jobs back to back and of every size; at 2 threads the caller's tasks are
 * a prefix of the job and the worker's the rest (front and back: each keeps to its part of the
 * image across layers); a task calling the pool again runs inline; an idle pool sleeps (no CPU
 * burnt once the spin window is over); asking for more threads than online cores warns once per
 * process. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "util/threadpool.h"

typedef struct job {
  atomic_int *hits;
  atomic_int *who; /* the thread that ran each task, when set */
  atomic_int bad_thread;
  int use;
  lc_pool *p;
  atomic_int nested;
} job;

static void count_task(void *arg, size_t t, int thread) {
  job *j = arg;
  atomic_fetch_add(&j->hits[t], 1);
  if (j->who) atomic_store(&j->who[t], thread);
  if (thread < 0 || thread >= j->use) atomic_store(&j->bad_thread, 1);
}

static void nested_task(void *arg, size_t t, int thread) {
  job *j = arg;
  (void)t, (void)thread;
  job inner;
  memset(&inner, 0, sizeof inner);
  atomic_int hits[3] = {0, 0, 0};
  inner.hits = hits;
  inner.use = 1; /* inline: thread 0 only */
  lc_pool_run(j->p, 3, 0, count_task, &inner);
  if (hits[0] == 1 && hits[1] == 1 && hits[2] == 1 && !inner.bad_thread) atomic_fetch_add(&j->nested, 1);
}

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int main(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  /* Over-subscription: one warning, however many pools. */
  tu_stderr_begin();
  lc_pool *a = lc_pool_create((int)cores + 1), *b = lc_pool_create((int)cores + 2);
  int warnings = tu_stderr_end();
  TU_CHECK(a && b && warnings == 1 && strstr(tu_stderr_text, "online cores"), "%d warnings: %s", warnings,
           tu_stderr_text);
  lc_pool_destroy(a);
  lc_pool_destroy(b);

  lc_pool *p = lc_pool_create(3);
  TU_CHECK(p && lc_pool_threads(p) == 3, "pool of 3");
  static const size_t sizes[] = {1, 2, 3, 4, 7, 64, 1000};
  atomic_int *hits = calloc(1000, sizeof *hits);
  int jobs = 0;
  for (int round = 0; round < 200; round++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int maxt = 0; maxt <= 3; maxt++) {
        size_t n = sizes[s];
        for (size_t i = 0; i < n; i++) atomic_store(&hits[i], 0);
        job j;
        memset(&j, 0, sizeof j);
        j.hits = hits;
        j.use = maxt ? maxt : 3;
        lc_pool_run(p, n, maxt, count_task, &j);
        int ok = !j.bad_thread;
        for (size_t i = 0; i < n; i++) ok &= atomic_load(&hits[i]) == 1;
        if (!ok) TU_CHECK(0, "round %d: %zu tasks on %d threads: a task ran twice, never or on a bad thread", round,
                          n, maxt);
        jobs++;
      }
  printf("  %d jobs back to back, every task once\n", jobs);
  /* Front and back at 2 threads: thread 0's tasks [0, k), thread 1's [k, n). */
  atomic_int *who = calloc(1000, sizeof *who);
  int split_bad = 0, both = 0;
  for (int round = 0; who && round < 100; round++) {
    size_t n = round % 2 ? 1000 : 64;
    for (size_t i = 0; i < n; i++) atomic_store(&hits[i], 0);
    job jw;
    memset(&jw, 0, sizeof jw);
    jw.hits = hits, jw.who = who, jw.use = 2;
    lc_pool_run(p, n, 2, count_task, &jw);
    size_t k = 0;
    while (k < n && atomic_load(&who[k]) == 0) k++;
    for (size_t i = k; i < n; i++) split_bad |= atomic_load(&who[i]) != 1;
    both += k > 0 && k < n;
  }
  TU_CHECK(who && !split_bad, "2 threads: the caller's tasks are not a prefix and the worker's the rest");
  printf("  2 threads: the caller took a prefix, the worker the rest (both ran tasks in %d of 100 jobs)\n", both);
  free(who);
  job j;
  memset(&j, 0, sizeof j);
  j.p = p;
  j.use = 3;
  lc_pool_run(p, 8, 0, nested_task, &j);
  TU_CHECK(atomic_load(&j.nested) == 8, "nested calls run inline: %d of 8", atomic_load(&j.nested));

  /* Idle: after the spin window the workers sleep. 200 ms of wall time may cost a few ms of CPU
   * (the window, wake-ups), never the 400 ms two spinning workers would burn. */
  lc_pool_run(p, 64, 0, count_task, &(job){.hits = hits, .use = 3});
  double c0 = cpu_ms();
  nanosleep(&(struct timespec){0, 200000000}, NULL);
  double idle = cpu_ms() - c0;
  printf("  idle pool: %.2f ms of CPU in 200 ms\n", idle);
  TU_CHECK(idle < 40.0, "idle pool burnt %.1f ms of CPU in 200 ms", idle);
  lc_pool_destroy(p);
  free(hits);
  return tu_finish("test_threadpool");
}
