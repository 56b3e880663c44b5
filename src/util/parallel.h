/* Start-up loops (weight folding, copies, repacking) on a few short-lived threads: they run once
 * per model, before any context's pool exists or on a device plan that has none. */
#ifndef LC_PARALLEL_H
#define LC_PARALLEL_H

#include <stddef.h>

typedef int (*lc_range_fn)(void *arg, size_t lo, size_t hi); /* nonzero: failed */

/* Splits [0, n) into up to max_threads ranges of at least min_per_thread items (online cores
 * permitting) and runs fn on each, the caller taking the last. Returns nonzero if any call did.
 * A thread that cannot be started costs only speed: its range runs on the caller. */
int lc_parallel_ranges(size_t n, size_t min_per_thread, int max_threads, lc_range_fn fn, void *arg);

#endif
