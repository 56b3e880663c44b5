#include "tune/blob.h"

#include <string.h>

#include "tune/hash.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static uint64_t blob_checksum(const unsigned char *hdr, const void *key, size_t klen, const void *data, size_t len) {
  uint64_t h = lc_hash64_update(LC_HASH64_INIT, hdr, 24);
  h = lc_hash64_update(h, key, klen);
  return lc_hash64_update(h, data, len);
}

lc_status lc_blob_write(const char *path, uint32_t magic, const char *key, const void *data, size_t len) {
  if (!path || !*path || !key || (!data && len)) return lc_error(LC_ERR_INVALID_ARG, "blob write: null argument");
  size_t klen = strlen(key);
  if (klen == 0 || klen > LC_BLOB_MAX_KEY)
    return lc_error(LC_ERR_INVALID_ARG, "blob write: key length %zu not in 1..%u", klen, LC_BLOB_MAX_KEY);
  size_t total;
  if (!lc_add_sz(LC_BLOB_HEADER_SIZE + klen, len, &total) || total > LC_BLOB_MAX_FILE)
    return lc_error(LC_ERR_INVALID_ARG, "blob write: %zu bytes is more than a cache file may hold", len);
  unsigned char hdr[LC_BLOB_HEADER_SIZE];
  put_u32(hdr, magic);
  put_u32(hdr + 4, LC_BLOB_FORMAT_VERSION);
  put_u32(hdr + 8, lc_cache_lowconv_version());
  put_u32(hdr + 12, (uint32_t)klen);
  put_u64(hdr + 16, (uint64_t)len);
  put_u64(hdr + 24, blob_checksum(hdr, key, klen, data, len));
  const void *parts[3] = {hdr, key, data};
  size_t lens[3] = {sizeof hdr, klen, len};
  return lc_file_write_atomic(path, parts, lens, 3);
}

static lc_status bad(lc_cache_reason *why, lc_cache_reason r, const char *path, const char *what) {
  *why = r;
  return lc_error(LC_ERR_IO, "cache file %s %s", path, what);
}

/* Checks the file image; the order puts the most specific reason first: versions before the
 * checksum (another format may checksum differently), the key last (a corrupt key is corrupt). */
static lc_status blob_check(const unsigned char *b, size_t n, const char *path, uint32_t magic, const char *key,
                            lc_cache_reason *why) {
  if (n < LC_BLOB_HEADER_SIZE) return bad(why, LC_CACHE_TRUNCATED, path, "truncated (shorter than its header)");
  if (get_u32(b) != magic) return bad(why, LC_CACHE_CORRUPT, path, "corrupt (not a cache file of this kind)");
  if (get_u32(b + 4) != LC_BLOB_FORMAT_VERSION || get_u32(b + 8) != lc_cache_lowconv_version())
    return bad(why, LC_CACHE_STALE, path, "stale (written by another lowconv version)");
  uint64_t klen = get_u32(b + 12), plen = get_u64(b + 16);
  if (klen == 0 || klen > LC_BLOB_MAX_KEY || plen > LC_BLOB_MAX_FILE)
    return bad(why, LC_CACHE_CORRUPT, path, "corrupt (impossible length in header)");
  uint64_t total = LC_BLOB_HEADER_SIZE + klen + plen; /* no overflow: both bounded above */
  if (total > n) return bad(why, LC_CACHE_TRUNCATED, path, "truncated");
  if (total < n) return bad(why, LC_CACHE_CORRUPT, path, "corrupt (trailing bytes)");
  const unsigned char *k = b + LC_BLOB_HEADER_SIZE;
  if (blob_checksum(b, k, (size_t)klen, k + klen, (size_t)plen) != get_u64(b + 24))
    return bad(why, LC_CACHE_CORRUPT, path, "corrupt (checksum mismatch)");
  if (klen != strlen(key) || memcmp(k, key, (size_t)klen) != 0)
    return bad(why, LC_CACHE_FOREIGN, path, "foreign (written for another device or build)");
  return LC_OK;
}

lc_status lc_blob_read_why(const char *path, uint32_t magic, const char *key, void **data, size_t *len,
                           lc_cache_reason *why) {
  lc_cache_reason dummy;
  if (!why) why = &dummy;
  *why = LC_CACHE_UNREADABLE;
  if (!path || !key || !data || !len) return lc_error(LC_ERR_INVALID_ARG, "blob read: null argument");
  *data = NULL;
  *len = 0;
  void *buf;
  size_t n;
  lc_status s = lc_file_read_all(path, LC_BLOB_MAX_FILE, &buf, &n, why);
  if (s) return s;
  s = blob_check(buf, n, path, magic, key, why);
  if (s) {
    lc_free(buf);
    return s;
  }
  /* Hand out the file's own block with the payload moved to its front: one allocation, one read. */
  size_t off = LC_BLOB_HEADER_SIZE + strlen(key), plen = n - off;
  memmove(buf, (unsigned char *)buf + off, plen);
  *data = buf;
  *len = plen;
  return LC_OK;
}

lc_status lc_blob_read(const char *path, uint32_t magic, const char *key, void **data, size_t *len) {
  return lc_blob_read_why(path, magic, key, data, len, NULL);
}
