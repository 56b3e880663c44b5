/* Shared device buffers for activations: values whose lifetimes do not meet share a buffer. */
#ifndef LC_MODEL_SLOTS_H
#define LC_MODEL_SLOTS_H

#include <stddef.h>

#include "lowconv.h"

typedef struct lc_slot_item {
  size_t bytes;
  int first, last; /* steps at which it is written first and read last, inclusive */
} lc_slot_item;

/* Assigns every item a buffer (slot[i] in 0..*n_slots-1, slot_bytes sized by the caller for n
 * entries) so that two items of one buffer never live at the same step and every buffer holds
 * its items; the smaller total of two greedy orders (by size, by the steps' breadth). */
lc_status lc_assign_slots(const lc_slot_item *it, int n, int *slot, size_t *slot_bytes, int *n_slots, size_t *total);

#endif
