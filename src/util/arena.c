#include "util/arena.h"

#include <stdint.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"

struct lc_arena_chunk {
  lc_arena_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *lc_arena_alloc(lc_arena *a, size_t n) {
  n = lc_round_up(n ? n : 1, 16);
  if (n > SIZE_MAX / 2) return NULL;
  lc_arena_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = lc_max_sz(n, 64u << 10);
    c = lc_malloc(sizeof(*c) + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *lc_arena_strndup(lc_arena *a, const char *s, size_t n) {
  char *p = lc_arena_alloc(a, n + 1);
  if (p && n) memcpy(p, s, n);
  return p;
}

void lc_arena_free(lc_arena *a) {
  while (a->head) {
    lc_arena_chunk *n = a->head->next;
    lc_free(a->head);
    a->head = n;
  }
}
