/* Buffers shared by activations whose lifetimes do not meet, each value a whole buffer (see
 * exec_device.c for why not views into one arena). Greedy orders, the smallest result kept:
 * largest first into the smallest free buffer; and the steps with the most live bytes first,
 * their values largest first into the smallest free buffer that holds them, else the largest free
 * one grown (the "breadth" order of shared-object planners). */
#include "model/slots.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

typedef struct plan {
  const lc_slot_item *it;
  int *slot, *next, *head; /* per item: its buffer, the next item of that buffer; per buffer: first item */
  size_t *bytes;
  int ns;
} plan;

static int meets(const lc_slot_item *a, const lc_slot_item *b) { return a->first <= b->last && b->first <= a->last; }

static int free_all_along(const plan *p, int b, int i) {
  for (int u = p->head[b]; u >= 0; u = p->next[u])
    if (meets(&p->it[u], &p->it[i])) return 0;
  return 1;
}

static void put(plan *p, int i) {
  int fit = -1, big = -1;
  for (int b = 0; b < p->ns; b++) {
    if (!free_all_along(p, b, i)) continue;
    if (p->bytes[b] >= p->it[i].bytes && (fit < 0 || p->bytes[b] < p->bytes[fit])) fit = b;
    if (big < 0 || p->bytes[b] > p->bytes[big]) big = b;
  }
  int b = fit >= 0 ? fit : big;
  if (b < 0) b = p->ns++, p->head[b] = -1, p->bytes[b] = 0;
  if (p->bytes[b] < p->it[i].bytes) p->bytes[b] = p->it[i].bytes;
  p->slot[i] = b, p->next[i] = p->head[b], p->head[b] = i;
}

static const lc_slot_item *sort_it;
static int by_bytes_desc(const void *a, const void *b) {
  size_t x = sort_it[*(const int *)a].bytes, y = sort_it[*(const int *)b].bytes;
  return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}
static int by_first(const void *a, const void *b) {
  const lc_slot_item *x = &sort_it[*(const int *)a], *y = &sort_it[*(const int *)b];
  return x->first != y->first ? (x->first < y->first ? -1 : 1) : x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}
static const double *sort_w;
static int by_weight_desc(const void *a, const void *b) {
  double x = sort_w[*(const int *)a], y = sort_w[*(const int *)b];
  return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}

/* Steps by live bytes, then each step's unplaced values largest first. */
static void breadth_order(plan *p, int n, int lo, int steps, int *order, double *w, int *step_ix) {
  memset(w, 0, (size_t)steps * sizeof *w);
  for (int i = 0; i < n; i++)
    for (int t = p->it[i].first; t <= p->it[i].last; t++) w[t - lo] += (double)p->it[i].bytes;
  for (int t = 0; t < steps; t++) step_ix[t] = t;
  sort_w = w;
  qsort(step_ix, (size_t)steps, sizeof *step_ix, by_weight_desc);
  for (int k = 0; k < steps; k++) {
    int t = step_ix[k] + lo, m = 0;
    for (int i = 0; i < n; i++)
      if (p->slot[i] < 0 && p->it[i].first <= t && t <= p->it[i].last) order[m++] = i;
    qsort(order, (size_t)m, sizeof *order, by_bytes_desc);
    for (int j = 0; j < m; j++) put(p, order[j]);
  }
}

static double *sort_key;
static int by_key_desc(const void *a, const void *b) {
  double x = sort_key[*(const int *)a], y = sort_key[*(const int *)b];
  return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}

static size_t sum(const plan *p, int *overflow);

/* The largest-first order with each size scaled by a random factor in [0.7, 1.3] (fixed seed, so a
 * plan is reproducible), as many tries as ~4e7 steps of put allow, up to 256; the smallest result
 * goes into *best. PP-OCRv4 det: 33.4 MB by the orders above, 31.1 MB after these. */
static void perturbed(const lc_slot_item *it, int n, plan *t, plan *best, size_t *tbest, int *order, double *key) {
  int tries = (int)(4e7 / ((double)n * n + 1));
  if (tries > 256) tries = 256;
  unsigned long long r = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < tries; k++) {
    for (int i = 0; i < n; i++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      key[i] = (double)it[i].bytes * (0.7 + 0.6 * (double)(r >> 11) / 9007199254740992.0);
      order[i] = i, t->slot[i] = -1;
    }
    t->ns = 0;
    sort_key = key;
    qsort(order, (size_t)n, sizeof *order, by_key_desc);
    for (int j = 0; j < n; j++) put(t, order[j]);
    int ov = 0;
    size_t tt = sum(t, &ov);
    if (ov || tt >= *tbest) continue;
    *tbest = tt, best->ns = t->ns;
    memcpy(best->slot, t->slot, (size_t)n * sizeof *t->slot);
    memcpy(best->bytes, t->bytes, (size_t)t->ns * sizeof *t->bytes);
  }
}

static size_t sum(const plan *p, int *overflow) {
  size_t t = 0;
  for (int b = 0; b < p->ns; b++)
    if (!lc_add_sz(t, p->bytes[b], &t)) *overflow = 1;
  return t;
}

lc_status lc_assign_slots(const lc_slot_item *it, int n, int *slot, size_t *slot_bytes, int *n_slots, size_t *total) {
  *n_slots = 0, *total = 0;
  if (n <= 0) return LC_OK;
  int lo = it[0].first, hi = it[0].last;
  for (int i = 0; i < n; i++) {
    if (it[i].first > it[i].last) return lc_error(LC_ERR_INTERNAL, "slots: item %d ends before it starts", i);
    if (it[i].first < lo) lo = it[i].first;
    if (it[i].last > hi) hi = it[i].last;
  }
  int steps = hi - lo + 1;
  size_t nn = (size_t)n + 1, ns = (size_t)steps + 1;
  int *buf = lc_malloc((14 * nn + ns) * sizeof(int));
  size_t *bytes = lc_malloc(5 * nn * sizeof(size_t));
  double *w = lc_malloc((ns > nn ? ns : nn) * sizeof(double));
  if (!buf || !bytes || !w) {
    lc_free(buf), lc_free(bytes), lc_free(w);
    return lc_error(LC_ERR_NO_MEMORY, "slots: out of memory");
  }
  plan a = {it, buf, buf + nn, buf + 2 * nn, bytes, 0}, b = {it, buf + 3 * nn, buf + 4 * nn, buf + 5 * nn, bytes + nn, 0};
  plan c = {it, buf + 6 * nn, buf + 7 * nn, buf + 8 * nn, bytes + 2 * nn, 0};
  int *order = buf + 9 * nn, *step_ix = buf + 10 * nn;
  for (int i = 0; i < n; i++) order[i] = i, a.slot[i] = b.slot[i] = c.slot[i] = -1;
  sort_it = it;
  qsort(order, (size_t)n, sizeof *order, by_bytes_desc);
  for (int j = 0; j < n; j++) put(&a, order[j]);
  int ova = 0, ovb = 0, ovc = 0;
  size_t ta = sum(&a, &ova), tb = SIZE_MAX, tc;
  qsort(order, (size_t)n, sizeof *order, by_first);
  for (int j = 0; j < n; j++) put(&c, order[j]);
  tc = sum(&c, &ovc);
  if ((double)n * steps <= 4e7) { /* the second order costs values x steps */
    breadth_order(&b, n, lo, steps, order, w, step_ix);
    tb = sum(&b, &ovb);
  }
  const plan *best = !ovb && tb < ta ? &b : &a;
  size_t tbest = best == &a ? ta : tb;
  int ov = best == &a ? ova : ovb;
  if (!ovc && tc < tbest) best = &c, tbest = tc, ov = 0;
  int *more = buf + 10 * nn + ns; /* after step_ix: the best perturbed plan's slots, then a trial's */
  plan e = {it, more, NULL, NULL, bytes + 4 * nn, 0};
  plan t = {it, more + nn, more + 2 * nn, more + 3 * nn, bytes + 3 * nn, 0};
  size_t te = ov ? SIZE_MAX : tbest;
  perturbed(it, n, &t, &e, &te, order, w);
  if (te < tbest || ov) {
    if (te != SIZE_MAX && e.ns) best = &e, tbest = te, ov = 0;
  }
  lc_status s = ov ? lc_error(LC_ERR_OVERFLOW, "slots: buffer bytes overflow") : LC_OK;
  memcpy(slot, best->slot, (size_t)n * sizeof *slot);
  memcpy(slot_bytes, best->bytes, (size_t)best->ns * sizeof *slot_bytes);
  *n_slots = best->ns, *total = tbest;
  lc_free(buf), lc_free(bytes), lc_free(w);
  return s;
}
