/* All library allocations go through here so tests can count bytes and inject failures. */
#ifndef LC_ALLOC_H
#define LC_ALLOC_H

#include <stddef.h>

/* 64-byte aligned; NULL on failure (or injected failure). size 0 returns NULL. */
void *lc_malloc(size_t size);
void *lc_calloc(size_t n, size_t size);
void lc_free(void *p);

#endif
