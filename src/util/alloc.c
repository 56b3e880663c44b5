#include "util/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"

/* A 64-byte header in front of each block holds its size, so lc_free can count without a table. */
#define LC_ALLOC_HDR 64

static atomic_size_t lc_cur_bytes;
static atomic_size_t lc_peak_bytes;
static atomic_long lc_fail_countdown;

void *lc_malloc(size_t size) {
  if (size == 0 || size > SIZE_MAX - 2 * LC_ALLOC_HDR) return NULL;
  long n = atomic_load(&lc_fail_countdown);
  if (n > 0 && atomic_fetch_sub(&lc_fail_countdown, 1) == 1) return NULL;
  size_t total = (size + LC_ALLOC_HDR + 63) & ~(size_t)63;
  unsigned char *p = aligned_alloc(64, total);
  if (!p) return NULL;
  memcpy(p, &size, sizeof size);
  size_t cur = atomic_fetch_add(&lc_cur_bytes, size) + size;
  size_t peak = atomic_load(&lc_peak_bytes);
  while (cur > peak && !atomic_compare_exchange_weak(&lc_peak_bytes, &peak, cur)) {
  }
  return p + LC_ALLOC_HDR;
}

void *lc_calloc(size_t n, size_t size) {
  size_t t;
  if (__builtin_mul_overflow(n, size, &t)) return NULL;
  void *p = lc_malloc(t);
  if (p) memset(p, 0, t);
  return p;
}

void lc_free(void *ptr) {
  if (!ptr) return;
  unsigned char *p = (unsigned char *)ptr - LC_ALLOC_HDR;
  size_t size;
  memcpy(&size, p, sizeof size);
  atomic_fetch_sub(&lc_cur_bytes, size);
  free(p);
}

size_t lc_alloc_current_bytes(void) { return atomic_load(&lc_cur_bytes); }
size_t lc_alloc_peak_bytes(void) { return atomic_load(&lc_peak_bytes); }
void lc_alloc_reset_peak(void) { atomic_store(&lc_peak_bytes, atomic_load(&lc_cur_bytes)); }
void lc_alloc_fail_after(long n) { atomic_store(&lc_fail_countdown, n > 0 ? n : 0); }
