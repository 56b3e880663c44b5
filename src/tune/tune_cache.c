#include "tune/tune_cache.h"
#include <stdlib.h>
lc_status lc_tune_cache_open(const char *dir, const char *fingerprint, lc_tune_cache **out) { (void)dir; (void)fingerprint; *out = NULL; return LC_OK; }
const char *lc_tune_cache_get(const lc_tune_cache *tc, const char *key) { (void)tc; (void)key; return NULL; }
lc_status lc_tune_cache_put(lc_tune_cache *tc, const char *key, const char *value) { (void)tc; (void)key; (void)value; return LC_OK; }
lc_status lc_tune_cache_save(lc_tune_cache *tc) { (void)tc; return LC_OK; }
void lc_tune_cache_close(lc_tune_cache *tc) { (void)tc; }
