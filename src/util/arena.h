/* Bump allocator: many small blocks freed at once (every string and array of a loaded model). */
#ifndef LC_UTIL_ARENA_H
#define LC_UTIL_ARENA_H

#include <stddef.h>

typedef struct lc_arena_chunk lc_arena_chunk;
typedef struct lc_arena {
  lc_arena_chunk *head;
} lc_arena;

void *lc_arena_alloc(lc_arena *a, size_t n); /* zeroed, 16-byte aligned; NULL on failure */
char *lc_arena_strndup(lc_arena *a, const char *s, size_t n);
void lc_arena_free(lc_arena *a);

#endif
