/* File plumbing shared by the blob and tuning caches: why a cache file was rejected, bounded
 * whole-file reads, atomic replacement (unique temp file + rename) and an inter-process lock. */
#ifndef LC_TUNE_CACHE_FILE_H
#define LC_TUNE_CACHE_FILE_H

#include <stddef.h>

#include "lowconv.h"

/* Why a cache file was not used. Meaningful when the read returned LC_ERR_IO. */
typedef enum lc_cache_reason {
  LC_CACHE_OK = 0,
  LC_CACHE_MISSING,    /* no such file: the normal cold start, not worth a warning */
  LC_CACHE_UNREADABLE, /* exists but cannot be opened or read (permissions, a directory, I/O error) */
  LC_CACHE_TRUNCATED,  /* shorter than its header says */
  LC_CACHE_CORRUPT,    /* checksum mismatch, bad magic, malformed, trailing bytes, too large */
  LC_CACHE_FOREIGN,    /* valid, but written for another key / fingerprint */
  LC_CACHE_STALE       /* another file-format or lowconv version */
} lc_cache_reason;

/* "ok", "missing", "unreadable", "truncated", "corrupt", "foreign", "stale". */
const char *lc_cache_reason_name(lc_cache_reason r);

/* strerror_r into buf (thread-safe); returns buf. */
const char *lc_errno_str(int err, char *buf, size_t n);

/* Reads the whole regular file at path into one lc_malloc block (at least 1 byte even when the file
 * is empty; caller frees with lc_free). A file larger than max is LC_CACHE_CORRUPT, so a bad file can
 * never make us allocate more than max. Errors: LC_ERR_IO with *why set, LC_ERR_NO_MEMORY. */
lc_status lc_file_read_all(const char *path, size_t max, void **data, size_t *len, lc_cache_reason *why);

/* Replaces path with the concatenation of n parts, atomically: readers see the old file or the new
 * one, never a mix, and concurrent writers each leave a complete file (the last rename wins).
 * A part with length 0 may be NULL. Errors: LC_ERR_IO (message names the path), LC_ERR_NO_MEMORY. */
lc_status lc_file_write_atomic(const char *path, const void *const *parts, const size_t *lens, int n);

/* Takes an exclusive lock on lock_path (created if missing), blocking; returns an fd for
 * lc_file_unlock, or -1 with a message (LC_ERR_IO) when the file cannot be created. Where the file
 * system has no locks the fd is still returned: locking is then best effort. */
int lc_file_lock(const char *lock_path);
void lc_file_unlock(int fd);

#endif
