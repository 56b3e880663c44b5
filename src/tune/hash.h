/* 64-bit FNV-1a: cache file names and checksums. Not cryptographic; chosen because any single-byte
 * change of the input changes the result (xor and multiplication by an odd prime are bijections). */
#ifndef LC_TUNE_HASH_H
#define LC_TUNE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define LC_HASH64_INIT 0xcbf29ce484222325ull
/* 16 hex digits + NUL. */
#define LC_HASH64_HEX_SIZE 17

/* Continues hash h (start from LC_HASH64_INIT) over len bytes; data may be NULL when len is 0. */
uint64_t lc_hash64_update(uint64_t h, const void *data, size_t len);
static inline uint64_t lc_hash64(const void *data, size_t len) { return lc_hash64_update(LC_HASH64_INIT, data, len); }
/* Hash of a NUL-terminated string (without the NUL). */
uint64_t lc_hash64_str(const char *s);
/* Writes h as 16 lower-case hex digits and a NUL into out; returns out. */
char *lc_hash64_hex(uint64_t h, char out[LC_HASH64_HEX_SIZE]);
/* Parses exactly 16 lower-case hex digits, as lc_hash64_hex writes them (so every change of a
 * checksum's text is detected); 1 on success. */
int lc_hash64_parse_hex(const char *s, uint64_t *h);

#endif
