#include "tune/blob.h"
#include "util/error.h"
lc_status lc_blob_write(const char *path, uint32_t magic, const char *key, const void *data, size_t len) {
  (void)path; (void)magic; (void)key; (void)data; (void)len; return lc_error(LC_ERR_IO, "blob: temp");
}
lc_status lc_blob_read(const char *path, uint32_t magic, const char *key, void **data, size_t *len) {
  (void)path; (void)magic; (void)key; (void)data; (void)len; return lc_error(LC_ERR_IO, "blob: temp missing");
}
