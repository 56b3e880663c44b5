/* Where the on-disk caches live. */
#ifndef LC_TUNE_CACHE_DIR_H
#define LC_TUNE_CACHE_DIR_H

#include <stddef.h>
#include <sys/types.h>

#include "lowconv.h"

/* The default cache directory into buf (n bytes): $LOWCONV_CACHE_DIR if set (set but empty gives ""
 * = on-disk caches off), else $XDG_CACHE_HOME/lowconv (if absolute), else $HOME/.cache/lowconv.
 * Nothing is created. Errors: LC_ERR_IO when none of these is set, LC_ERR_OVERFLOW when the path does
 * not fit, LC_ERR_INVALID_ARG. */
lc_status lc_cache_dir_default(char *buf, size_t n);

/* Creates path and its missing parents with this mode (existing directories are left as they are).
 * Errors: LC_ERR_IO naming the component that failed (e.g. a parent that is a regular file),
 * LC_ERR_INVALID_ARG, LC_ERR_NO_MEMORY. */
lc_status lc_mkdir_p(const char *path, mode_t mode);

#endif
