/* Checked size arithmetic: every size product that can overflow goes through these. */
#ifndef LC_CHECKED_H
#define LC_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* *r = a * b; returns 0 on overflow (r untouched). */
static inline int lc_mul_sz(size_t a, size_t b, size_t *r) {
  size_t t;
  if (__builtin_mul_overflow(a, b, &t)) return 0;
  *r = t;
  return 1;
}
static inline int lc_add_sz(size_t a, size_t b, size_t *r) {
  size_t t;
  if (__builtin_add_overflow(a, b, &t)) return 0;
  *r = t;
  return 1;
}
/* Product of n factors, all >= 0; 0 on overflow or a negative factor. */
static inline int lc_mul_n(size_t *r, int n, const int64_t *f) {
  size_t acc = 1;
  for (int i = 0; i < n; i++) {
    if (f[i] < 0 || (uint64_t)f[i] > SIZE_MAX) return 0;
    if (!lc_mul_sz(acc, (size_t)f[i], &acc)) return 0;
  }
  *r = acc;
  return 1;
}
static inline int lc_mul_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline int lc_add_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

static inline size_t lc_min_sz(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t lc_max_sz(size_t a, size_t b) { return a > b ? a : b; }
static inline size_t lc_round_up(size_t a, size_t m) { return (a + m - 1) / m * m; }
static inline size_t lc_div_up(size_t a, size_t m) { return (a + m - 1) / m; }

#endif
