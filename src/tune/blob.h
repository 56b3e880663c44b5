/* TEMP until branch tune lands */
#ifndef LC_TUNE_BLOB_H
#define LC_TUNE_BLOB_H
#include <stddef.h>
#include <stdint.h>
#include "lowconv.h"
lc_status lc_blob_write(const char *path, uint32_t magic, const char *key, const void *data, size_t len);
lc_status lc_blob_read(const char *path, uint32_t magic, const char *key, void **data, size_t *len);
#endif
