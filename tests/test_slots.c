/* Shared activation buffers (model/slots.c): on random lifetimes, no two items of a buffer live
 * at the same step, every buffer holds its items, and the total lies between the peak of live
 * bytes (no assignment can do better) and the sum of all items. */
#include <stdio.h>
#include <stdlib.h>

#include "lowconv.h"
#include "model/slots.h"
#include "testutil.h"
#include "util/alloc.h"

static void check(const lc_slot_item *it, int n, const char *what) {
  int slot[400], ns = -1;
  size_t bytes[400], total = 0, all = 0, peak = 0;
  lc_status s = lc_assign_slots(it, n, slot, bytes, &ns, &total);
  TU_CHECK(s == LC_OK, "%s: %s", what, lc_last_error());
  if (s) return;
  size_t sum = 0;
  for (int b = 0; b < ns; b++) sum += bytes[b];
  TU_CHECK(sum == total && ns <= n, "%s: total %zu, buffers sum %zu, %d buffers", what, total, sum, ns);
  int bad = 0, lo = 0, hi = 0;
  for (int i = 0; i < n; i++) {
    all += it[i].bytes;
    if (it[i].first < lo) lo = it[i].first;
    if (it[i].last > hi) hi = it[i].last;
    bad |= slot[i] < 0 || slot[i] >= ns || bytes[slot[i]] < it[i].bytes;
    for (int j = 0; j < i && !bad; j++)
      bad |= slot[i] == slot[j] && it[i].first <= it[j].last && it[j].first <= it[i].last;
  }
  for (int t = lo; t <= hi; t++) {
    size_t live = 0;
    for (int i = 0; i < n; i++) live += it[i].first <= t && t <= it[i].last ? it[i].bytes : 0;
    if (live > peak) peak = live;
  }
  TU_CHECK(!bad, "%s: two items of one buffer live together, or a buffer too small", what);
  TU_CHECK(total >= peak && total <= all, "%s: total %zu outside [%zu, %zu]", what, total, peak, all);
}

int main(void) {
  tu_seed_from_env(7);
  size_t base = lc_alloc_current_bytes();
  lc_slot_item it[400];
  int slot[1];
  size_t bytes[1], total = 1;
  int ns = 1;
  TU_CHECK(lc_assign_slots(it, 0, slot, bytes, &ns, &total) == LC_OK && ns == 0 && total == 0, "empty");
  for (int c = 0; c < 200; c++) {
    int n = tu_rand_int(1, c < 150 ? 40 : 400), steps = tu_rand_int(1, 300);
    for (int i = 0; i < n; i++) {
      int a = tu_rand_int(-1, steps), len = tu_rand_int(0, c % 3 ? 4 : steps);
      it[i] = (lc_slot_item){(size_t)tu_rand_int(1, c % 2 ? 64 : 1 << 20) * 4, a, a + len};
    }
    char what[32];
    snprintf(what, sizeof what, "case %d (n %d)", c, n);
    check(it, n, what);
  }
  for (int i = 0; i < 10; i++) it[i] = (lc_slot_item){100, i, i + 1}; /* a chain: two buffers */
  lc_assign_slots(it, 10, (int[10]){0}, (size_t[10]){0}, &ns, &total);
  TU_CHECK(ns == 2 && total == 200, "chain: %d buffers, %zu bytes", ns, total);
  it[0] = (lc_slot_item){10, 5, 2};
  TU_CHECK(lc_assign_slots(it, 1, slot, bytes, &ns, &total) == LC_ERR_INTERNAL, "reversed lifetime refused");
  TU_CHECK(lc_alloc_current_bytes() == base, "leak");
  return tu_finish("test_slots");
}
