/* Tuning cache: string key -> string value records for one fingerprint (a device or a CPU), kept in
 * "<dir>/tune-<lc_hash64_hex(fingerprint)>.txt":
 *   lowconv-tune-cache <format version> <lowconv major.minor.patch> <fingerprint>\n
 *   <key>\t<value>\n            (sorted by key, byte order)
 *   checksum <16 hex digits: FNV-1a 64 of every byte before this line>\n
 * The file's contents never make open fail: a missing file is an empty cache; a truncated,
 * corrupt, foreign or stale one is an empty cache, one warning on stderr, and is rewritten by the
 * next save. Not thread-safe: one lc_tune_cache per thread, or a lock around it. */
#ifndef LC_TUNE_TUNE_CACHE_H
#define LC_TUNE_TUNE_CACHE_H

#include <stddef.h>

#include "lowconv.h"
#include "tune/cache_file.h"

#define LC_TUNE_FORMAT_VERSION 1
#define LC_TUNE_MAX_KEY 1024         /* bytes; keys: non-empty, no tab, CR or LF */
#define LC_TUNE_MAX_VALUE 1024       /* bytes; values: no CR or LF (may be empty) */
#define LC_TUNE_MAX_FINGERPRINT 4096 /* bytes; non-empty, no CR or LF */
#define LC_TUNE_MAX_FILE ((size_t)64 << 20)

typedef struct lc_tune_cache lc_tune_cache;

/* dir NULL or "" = in memory only (save does nothing). The directory need not exist (save creates
 * it, mode 0700). Errors: LC_ERR_INVALID_ARG (bad fingerprint), LC_ERR_NO_MEMORY. */
lc_status lc_tune_cache_open(const char *dir, const char *fingerprint, lc_tune_cache **out);

/* The value stored under key, or NULL. Valid until the next put/save/close. */
const char *lc_tune_cache_get(const lc_tune_cache *tc, const char *key);

/* Adds or replaces a record (in memory; save writes it). Errors: LC_ERR_INVALID_ARG (see the limits
 * above), LC_ERR_NO_MEMORY (the cache is unchanged). */
lc_status lc_tune_cache_put(lc_tune_cache *tc, const char *key, const char *value);

/* Writes the file if something was put (or the file on disk was bad): under a lock file
 * ("<dir>/tune-<hash>.lock"), re-reads the file, merges the records other processes wrote since
 * open (records put here win on equal keys), writes a temp file and renames it over. Errors:
 * LC_ERR_IO (directory missing and not creatable, unwritable, ...: the caller warns, it only costs
 * speed; the records stay in memory and the next save tries again), LC_ERR_NO_MEMORY. */
lc_status lc_tune_cache_save(lc_tune_cache *tc);

size_t lc_tune_cache_count(const lc_tune_cache *tc);
/* The file's path, or NULL for a memory-only cache. */
const char *lc_tune_cache_path(const lc_tune_cache *tc);
/* What open found on disk: LC_CACHE_OK (loaded), LC_CACHE_MISSING (or memory only), or why the
 * file was ignored. */
lc_cache_reason lc_tune_cache_open_reason(const lc_tune_cache *tc);
void lc_tune_cache_close(lc_tune_cache *tc);

#endif
