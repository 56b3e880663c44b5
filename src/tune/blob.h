/* One binary blob per file (the OpenCL program cache stores one compiled program per file).
 *
 * Layout, little-endian, 32-byte header then key then payload:
 *   u32 magic (the caller's), u32 LC_BLOB_FORMAT_VERSION, u32 lowconv version (major<<16|minor<<8|patch),
 *   u32 key length, u64 payload length, u64 FNV-1a 64 over bytes 0..23 + key + payload,
 *   key bytes (no NUL), payload bytes.
 * Written atomically (temp file + rename); every field is checked on read. */
#ifndef LC_TUNE_BLOB_H
#define LC_TUNE_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"
#include "tune/cache_file.h"

#define LC_BLOB_FORMAT_VERSION 1u
#define LC_BLOB_HEADER_SIZE 32u
#define LC_BLOB_MAX_KEY (64u * 1024u)
/* Bigger files are rejected unread as corrupt: a program binary is megabytes at most. */
#define LC_BLOB_MAX_FILE ((size_t)1 << 30)

/* Writes data (len bytes; NULL allowed when len is 0) under key to path, replacing any old file.
 * key: non-empty, at most LC_BLOB_MAX_KEY bytes (stored in full: device fingerprint + source hash +
 * build options, ...). Errors: LC_ERR_INVALID_ARG, LC_ERR_IO (unwritable: only costs speed),
 * LC_ERR_NO_MEMORY. */
lc_status lc_blob_write(const char *path, uint32_t magic, const char *key, const void *data, size_t len);

/* Reads the blob at path; it must carry this magic, this format and lowconv version and exactly this
 * key. On success *data (lc_malloc, at least 1 byte even for an empty payload; free with lc_free)
 * and *len are set. On LC_ERR_IO the message says why ("... missing", "... truncated", ...) and
 * *why (if not NULL) tells it apart: MISSING is a cold start, the others deserve one warning and a
 * rebuild (the next lc_blob_write replaces the file). Other errors: LC_ERR_INVALID_ARG,
 * LC_ERR_NO_MEMORY. */
lc_status lc_blob_read_why(const char *path, uint32_t magic, const char *key, void **data, size_t *len,
                           lc_cache_reason *why);
/* The same without the reason. */
lc_status lc_blob_read(const char *path, uint32_t magic, const char *key, void **data, size_t *len);

/* The lowconv version as stored in cache headers. */
static inline uint32_t lc_cache_lowconv_version(void) {
  return (uint32_t)LOWCONV_VERSION_MAJOR << 16 | (uint32_t)LOWCONV_VERSION_MINOR << 8 | (uint32_t)LOWCONV_VERSION_PATCH;
}

#endif
