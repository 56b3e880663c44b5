/* TEMP until branch tune lands */
#ifndef LC_TUNE_CACHE_DIR_H
#define LC_TUNE_CACHE_DIR_H
#include <stddef.h>
#include "lowconv.h"
lc_status lc_cache_dir_default(char *buf, size_t n);
lc_status lc_mkdir_p(const char *path, unsigned mode);
#endif
