/* TEMP until branch tune lands */
#ifndef LC_TUNE_CACHE_H
#define LC_TUNE_CACHE_H
#include <stddef.h>
#include "lowconv.h"
typedef struct lc_tune_cache lc_tune_cache;
lc_status lc_tune_cache_open(const char *dir, const char *fingerprint, lc_tune_cache **out);
const char *lc_tune_cache_get(const lc_tune_cache *tc, const char *key);
lc_status lc_tune_cache_put(lc_tune_cache *tc, const char *key, const char *value);
lc_status lc_tune_cache_save(lc_tune_cache *tc);
void lc_tune_cache_close(lc_tune_cache *tc);
#endif
