/* A small pthread pool owned by a context: run fn(arg, task, thread) for task in [0, n).
 * Tasks are handed out one at a time, the caller's from the front and the workers' from the back
 * (at 2 threads each keeps to about the same part of the image from one layer to the next);
 * results must not depend on which thread ran a task. */
#ifndef LC_THREADPOOL_H
#define LC_THREADPOOL_H

#include <stddef.h>

typedef struct lc_pool lc_pool;
typedef void (*lc_task_fn)(void *arg, size_t task, int thread);

/* threads >= 1; threads - 1 workers are started. NULL on failure. */
lc_pool *lc_pool_create(int threads);
void lc_pool_destroy(lc_pool *p);
int lc_pool_threads(const lc_pool *p);
/* Runs n tasks on up to max_threads threads (<= pool size; the caller is thread 0). Blocks. */
void lc_pool_run(lc_pool *p, size_t n, int max_threads, lc_task_fn fn, void *arg);

#endif
