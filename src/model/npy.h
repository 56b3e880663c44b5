/* .npy files (NumPy format v1/v2/v3): float32 and int64, little-endian, C order. */
#ifndef LC_MODEL_NPY_H
#define LC_MODEL_NPY_H

#include <stddef.h>

#include "model/tensor.h"

/* Parses an in-memory .npy image. t->data is a fresh lc_malloc buffer (free with lc_free);
 * t->name is left untouched. Malformed input returns LC_ERR_IO with a message. */
lc_status lc_npy_parse(const void *buf, size_t len, lc_tensor *t);
lc_status lc_npy_read(const char *path, lc_tensor *t);
/* Writes a v1 header (v2 if the shape makes the header longer than 65535 bytes). */
lc_status lc_npy_write(const char *path, const lc_tensor *t);

#endif
