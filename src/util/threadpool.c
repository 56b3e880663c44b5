#include "util/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/timer.h"

/* Waiting: workers spin this long for the next job, then sleep on a condition variable. Waking a
 * sleeping thread cost 43 us per parallel region on the 2-core test machine, more than a whole
 * small layer; a model's layers follow each other within this window, so back-to-back layers find
 * the workers awake, and an idle pool sleeps after it. Bounded in time, not in pause steps: a pause
 * is ~10 cycles on Zen 2 and ~140 on Skylake and later. */
#define LC_POOL_SPIN_MS 0.2
/* Pause steps between clock reads while spinning; each read also yields the core, so a spinning
 * thread never holds up a runnable one placed on its core (a woken worker often lands on its
 * waker's core: a caller spinning for it there kept it off the core for the whole window, 240 us
 * per job on a loaded machine, bench_pool). */
#define LC_POOL_SPIN_STEP 64

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
  struct lc_pool *p;
  int index;
} worker_arg;

/* The job word: bits 48..63 the threads taking part, bits 24..47 the tasks claimed from the front,
 * bits 0..23 the tasks not yet claimed. The caller (thread 0) claims from the front (task f), the
 * workers from the back (task f + remaining - 1), each with one compare-and-swap on the whole
 * word, so a thread never takes part in a job it may not (index >= active) or claims a task of a
 * job that is over. Front and back: routes number their tasks in image order (row bands, pixel
 * tiles, Winograd chunks), so at 2 threads each thread keeps to about the same half of the image
 * from one layer to the next, and reads what it wrote into its own core's cache. The job's fields
 * are read only after a successful claim: the caller can't rewrite them before every claimed task
 * is done, so a stale view of the word (a later job with the same word) still reads the job it
 * claimed from. */
#define ACTIVE_SHIFT 48
#define FRONT_SHIFT 24
#define REMAIN_MASK 0xffffffull
#define JOB_MAX_TASKS ((size_t)0xffffffu)

struct lc_pool {
  int threads;
  pthread_t *workers;
  worker_arg *args;         /* one per worker, owned by the pool */
  pthread_mutex_t mu;
  pthread_mutex_t run_mu;   /* held by the one caller whose job the pool runs (include/lowconv.h:
                               a context may be shared by threads; their jobs take turns) */
  pthread_cond_t start_cv, done_cv;
  atomic_uint_fast64_t job; /* see above */
  atomic_int stop;
  atomic_int sleeping;      /* workers blocked on start_cv */
  atomic_int caller_sleeping;
  atomic_size_t done;       /* tasks of the current job finished */
  /* current job: written under run_mu before job is published, read after a claim */
  lc_task_fn fn;
  void *arg;
  size_t n, base;
};

/* The pool whose job this thread is taking part in: a task that calls lc_pool_run on it again
 * runs its tasks inline instead of waiting on run_mu, which its own caller holds. */
static _Thread_local const lc_pool *lc_pool_inside;

static int claimable(uint_fast64_t w, int index) {
  return (w & REMAIN_MASK) != 0 && index < (int)(w >> ACTIVE_SHIFT);
}

/* Claims and runs tasks while the current job has some for this thread: a run of
 * rem / (2 x threads) tasks (at least one) per compare-and-swap, so that the shared word and
 * `done` change hands between cores a few times per job instead of twice per task (128 tasks
 * of a 256-channel depthwise conv at 40 px: 0.95x of the time at 2 threads). The runs
 * shrink with what is left, so the last ones are single tasks. */
static void run_tasks(lc_pool *p, int index) {
  uint_fast64_t w = atomic_load_explicit(&p->job, memory_order_acquire);
  while (claimable(w, index)) {
    size_t front = (size_t)(w >> FRONT_SHIFT & REMAIN_MASK), rem = (size_t)(w & REMAIN_MASK);
    size_t run = rem / (2 * (size_t)(w >> ACTIVE_SHIFT));
    if (run < 1) run = 1;
    int back = index > 0;
    uint_fast64_t next = back ? w - run : w - run + ((uint_fast64_t)run << FRONT_SHIFT);
    if (!atomic_compare_exchange_weak_explicit(&p->job, &w, next, memory_order_acq_rel, memory_order_acquire))
      continue;
    size_t t0 = back ? front + rem - run : front;
    for (size_t t = t0; t < t0 + run; t++) p->fn(p->arg, p->base + t, index);
    size_t n = p->n; /* read before done is bumped: then the caller may start the next job */
    if (atomic_fetch_add(&p->done, run) + run == n && /* seq_cst: against caller_sleeping */
        atomic_load(&p->caller_sleeping)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
    w = atomic_load_explicit(&p->job, memory_order_acquire);
  }
}

/* Until this worker has something to claim (or the pool stops): spin, then sleep. */
static void wait_job(lc_pool *p, int index) {
  double t0 = lc_now_ms();
  for (unsigned spins = 1;; spins++) {
    if (claimable(atomic_load_explicit(&p->job, memory_order_acquire), index) || atomic_load(&p->stop)) return;
    cpu_relax();
    if (spins % LC_POOL_SPIN_STEP) continue;
    if (lc_now_ms() - t0 > LC_POOL_SPIN_MS) break;
    sched_yield();
  }
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->sleeping, 1); /* seq_cst: the publisher reads it after storing the job */
  while (!claimable(atomic_load(&p->job), index) && !atomic_load(&p->stop)) pthread_cond_wait(&p->start_cv, &p->mu);
  atomic_fetch_sub(&p->sleeping, 1);
  pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *v) {
  worker_arg wa = *(worker_arg *)v;
  lc_pool *p = wa.p;
  lc_pool_inside = p;
  for (;;) {
    wait_job(p, wa.index);
    if (atomic_load(&p->stop)) break;
    run_tasks(p, wa.index);
  }
  return NULL;
}

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n < 1 << 20 ? (int)n : 0;
}

static atomic_int warned_oversubscribed;

lc_pool *lc_pool_create(int threads) {
  if (threads < 1) threads = 1;
  int cores = online_cores();
  if (cores && threads > cores && !atomic_exchange(&warned_oversubscribed, 1))
    fprintf(stderr, "lowconv: warning: %d threads exceeds the %d online cores; threads will wait for each other "
            "(often many times slower)\n", threads, cores);
  lc_pool *p = lc_calloc(1, sizeof *p);
  if (!p) return NULL;
  p->threads = threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_mutex_init(&p->run_mu, NULL);
  pthread_cond_init(&p->start_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (threads > 1) {
    p->workers = lc_calloc((size_t)threads - 1, sizeof *p->workers);
    p->args = lc_calloc((size_t)threads - 1, sizeof *p->args);
    if (!p->workers || !p->args) {
      p->threads = 1; /* nothing to join */
      lc_pool_destroy(p);
      return NULL;
    }
    for (int i = 1; i < threads; i++) {
      worker_arg *wa = &p->args[i - 1];
      wa->p = p;
      wa->index = i;
      if (pthread_create(&p->workers[i - 1], NULL, worker_main, wa) != 0) {
        p->threads = i; /* join the ones that started */
        lc_pool_destroy(p);
        return NULL;
      }
    }
  }
  return p;
}

void lc_pool_destroy(lc_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->threads; i++) pthread_join(p->workers[i - 1], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->run_mu);
  pthread_cond_destroy(&p->start_cv);
  pthread_cond_destroy(&p->done_cv);
  lc_free(p->workers);
  lc_free(p->args);
  lc_free(p);
}

int lc_pool_threads(const lc_pool *p) { return p ? p->threads : 1; }

/* One job of n <= JOB_MAX_TASKS tasks (base + t): publish, work along, wait for the claimed ones. */
static void run_job(lc_pool *p, size_t base, size_t n, int use, lc_task_fn fn, void *arg) {
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->base = base;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  atomic_store(&p->job, (uint_fast64_t)use << ACTIVE_SHIFT | (uint_fast64_t)n); /* seq_cst, see wait_job */
  if (atomic_load(&p->sleeping)) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->mu);
  }
  run_tasks(p, 0);
  /* Every task is claimed now: wait only for those still running on a worker. */
  double t0 = 0.0;
  for (unsigned spins = 1; atomic_load_explicit(&p->done, memory_order_acquire) < n; spins++) {
    cpu_relax();
    if (spins % LC_POOL_SPIN_STEP) continue;
    if (t0 == 0.0) t0 = lc_now_ms();
    if (lc_now_ms() - t0 <= LC_POOL_SPIN_MS) {
      sched_yield();
      continue;
    }
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->caller_sleeping, 1);
    while (atomic_load(&p->done) < n) pthread_cond_wait(&p->done_cv, &p->mu);
    atomic_store(&p->caller_sleeping, 0);
    pthread_mutex_unlock(&p->mu);
    break;
  }
  atomic_store_explicit(&p->job, 0, memory_order_release);
}

void lc_pool_run(lc_pool *p, size_t n, int max_threads, lc_task_fn fn, void *arg) {
  if (n == 0) return;
  int use = p ? p->threads : 1;
  if (max_threads > 0 && max_threads < use) use = max_threads;
  if ((size_t)use > n) use = (int)n;
  if (use <= 1 || lc_pool_inside == p) {
    for (size_t t = 0; t < n; t++) fn(arg, t, 0);
    return;
  }
  pthread_mutex_lock(&p->run_mu);
  const lc_pool *outer = lc_pool_inside; /* a task of another pool may call us */
  lc_pool_inside = p;
  for (size_t base = 0; base < n; base += JOB_MAX_TASKS)
    run_job(p, base, n - base < JOB_MAX_TASKS ? n - base : JOB_MAX_TASKS, use, fn, arg);
  lc_pool_inside = outer;
  pthread_mutex_unlock(&p->run_mu);
}
