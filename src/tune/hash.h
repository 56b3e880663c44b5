/* TEMP until branch tune lands */
#ifndef LC_TUNE_HASH_H
#define LC_TUNE_HASH_H
#include <stddef.h>
#include <stdint.h>
uint64_t lc_hash64(const void *data, size_t len);
#endif
