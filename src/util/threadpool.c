#include "util/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util/alloc.h"

typedef struct worker_arg {
  struct lc_pool *p;
  int index;
} worker_arg;

struct lc_pool {
  int threads;
  pthread_t *workers;
  worker_arg *args;         /* one per worker, owned by the pool (freed in destroy, not by workers) */
  pthread_mutex_t mu;
  pthread_cond_t start_cv, done_cv;
  unsigned long generation; /* bumped per job; workers wait for a new one */
  int stop;
  int active;               /* threads taking part in the current job */
  int pending;              /* workers still running the current job */
  /* current job */
  lc_task_fn fn;
  void *arg;
  size_t n;
  atomic_size_t next;
};

static void run_tasks(lc_pool *p, int thread) {
  for (;;) {
    size_t t = atomic_fetch_add(&p->next, 1);
    if (t >= p->n) break;
    p->fn(p->arg, t, thread);
  }
}

static void *worker_main(void *v) {
  worker_arg wa = *(worker_arg *)v;
  lc_pool *p = wa.p;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->generation == seen) pthread_cond_wait(&p->start_cv, &p->mu);
    if (p->stop) break;
    seen = p->generation;
    if (wa.index >= p->active) continue;
    pthread_mutex_unlock(&p->mu);
    run_tasks(p, wa.index);
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0) pthread_cond_signal(&p->done_cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

lc_pool *lc_pool_create(int threads) {
  if (threads < 1) threads = 1;
  lc_pool *p = lc_calloc(1, sizeof *p);
  if (!p) return NULL;
  p->threads = threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->start_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (threads > 1) {
    p->workers = lc_calloc((size_t)threads - 1, sizeof *p->workers);
    p->args = lc_calloc((size_t)threads - 1, sizeof *p->args);
    if (!p->workers || !p->args) {
      p->threads = 1; /* nothing to join */
      goto fail;
    }
    for (int i = 1; i < threads; i++) {
      worker_arg *wa = &p->args[i - 1];
      wa->p = p;
      wa->index = i;
      if (pthread_create(&p->workers[i - 1], NULL, worker_main, wa) != 0) goto fail_started;
      continue;
    fail_started:
      p->threads = i; /* join the ones that started */
      lc_pool_destroy(p);
      return NULL;
    }
  }
  return p;
fail:
  lc_pool_destroy(p);
  return NULL;
}

void lc_pool_destroy(lc_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->threads; i++) pthread_join(p->workers[i - 1], NULL);
  pthread_mutex_destroy(&p->mu);
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
  if (use <= 1) {
    for (size_t t = 0; t < n; t++) fn(arg, t, 0);
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  atomic_store(&p->next, 0);
  p->active = use;
  p->pending = use - 1;
  p->generation++;
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  run_tasks(p, 0);
  pthread_mutex_lock(&p->mu);
  while (p->pending > 0) pthread_cond_wait(&p->done_cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
