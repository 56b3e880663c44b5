#include "util/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util/alloc.h"

/* Waiting: workers and the caller spin a short while before sleeping on a condition variable.
 * Waking a sleeping thread cost 43 us per parallel region on the 2-core test machine, more than a
 * whole small layer (MobileNetV2 has ~100 of them); a spin of this many pause steps (~20-50 us)
 * covers the gaps between layers of a model run. */
#define LC_POOL_SPIN 4000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
  struct lc_pool *p;
  int index;
} worker_arg;

struct lc_pool {
  int threads;
  pthread_t *workers;
  worker_arg *args;         /* one per worker, owned by the pool */
  pthread_mutex_t mu;
  pthread_mutex_t run_mu;   /* held by the one caller whose job the pool runs (include/lowconv.h:
                               a context may be shared by threads; their jobs take turns) */
  pthread_cond_t start_cv, done_cv;
  atomic_ulong generation;  /* bumped per job */
  atomic_int stop;
  atomic_int sleeping;      /* workers blocked on start_cv */
  atomic_int pending;       /* workers that have not finished the current job (all workers ack
                               every job, so none can lag behind into the next one) */
  /* current job: written under run_mu before generation is bumped */
  int active;               /* threads taking part */
  lc_task_fn fn;
  void *arg;
  size_t n;
  atomic_size_t next;
};

/* The pool whose job this thread is taking part in: a task that calls lc_pool_run on it again
 * runs its tasks inline instead of waiting on run_mu, which its own caller holds. */
static _Thread_local const lc_pool *lc_pool_inside;

static void run_tasks(lc_pool *p, int thread) {
  for (;;) {
    size_t t = atomic_fetch_add(&p->next, 1);
    if (t >= p->n) break;
    p->fn(p->arg, t, thread);
  }
}

static unsigned long wait_job(lc_pool *p, unsigned long seen) {
  unsigned long g;
  int spins = 0;
  while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen && !atomic_load(&p->stop)) {
    if (++spins < LC_POOL_SPIN) {
      cpu_relax();
      continue;
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleeping, 1);
    while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop)) pthread_cond_wait(&p->start_cv, &p->mu);
    atomic_fetch_sub(&p->sleeping, 1);
    pthread_mutex_unlock(&p->mu);
    spins = 0;
  }
  return g;
}

static void *worker_main(void *v) {
  worker_arg wa = *(worker_arg *)v;
  lc_pool *p = wa.p;
  unsigned long seen = 0;
  lc_pool_inside = p;
  for (;;) {
    seen = wait_job(p, seen);
    if (atomic_load(&p->stop)) break;
    if (wa.index < p->active) run_tasks(p, wa.index);
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return NULL;
}

lc_pool *lc_pool_create(int threads) {
  if (threads < 1) threads = 1;
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
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->active = use;
  atomic_store(&p->next, 0);
  atomic_store(&p->pending, p->threads - 1);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  if (atomic_load(&p->sleeping)) pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  run_tasks(p, 0);
  for (int spins = 0; atomic_load_explicit(&p->pending, memory_order_acquire) > 0; spins++) {
    if (spins < LC_POOL_SPIN) {
      cpu_relax();
      continue;
    }
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    break;
  }
  lc_pool_inside = outer;
  pthread_mutex_unlock(&p->run_mu);
}
