#include "tune/tune_cache.h"

#include <stdio.h>
#include <string.h>

#include "tune/blob.h"
#include "tune/cache_dir.h"
#include "tune/hash.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

typedef struct tc_entry {
  char *key; /* one block: key NUL value NUL */
  char *value;
  int mine; /* put since the last save: wins over the file's record when merging */
} tc_entry;

struct lc_tune_cache {
  char *dir, *path, *lock_path, *fingerprint; /* one block */
  tc_entry *e;
  size_t n, cap;
  int dirty;
  lc_cache_reason open_reason;
};

static const char tc_magic[] = "lowconv-tune-cache ";
static const char tc_trailer[] = "checksum ";
#define TC_TRAILER_LEN (sizeof tc_trailer - 1 + 16 + 1)

static int has_crlf(const char *s, size_t n) { return memchr(s, '\n', n) || memchr(s, '\r', n); }

static int valid_kv(const char *k, size_t kl, const char *v, size_t vl) {
  return kl > 0 && kl <= LC_TUNE_MAX_KEY && vl <= LC_TUNE_MAX_VALUE && !has_crlf(k, kl) && !memchr(k, '\t', kl) &&
         !has_crlf(v, vl);
}

/* Index of key, or of where it would go (*found = 0). */
static size_t find(const lc_tune_cache *tc, const char *k, size_t kl, int *found) {
  size_t lo = 0, hi = tc->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *mk = tc->e[mid].key;
    size_t ml = (size_t)(tc->e[mid].value - mk) - 1;
    int c = memcmp(mk, k, lc_min_sz(ml, kl));
    if (c == 0) c = ml < kl ? -1 : ml > kl;
    if (c == 0) {
      *found = 1;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  *found = 0;
  return lo;
}

/* Sets key to value; mine = 0 (from the file) never replaces a record put here. */
static lc_status set(lc_tune_cache *tc, const char *k, size_t kl, const char *v, size_t vl, int mine) {
  int found;
  size_t i = find(tc, k, kl, &found);
  if (found) {
    tc_entry *e = &tc->e[i];
    if (e->mine && !mine) return LC_OK;
    if (strlen(e->value) == vl && memcmp(e->value, v, vl) == 0) {
      e->mine |= mine;
      return LC_OK;
    }
  } else if (tc->n == tc->cap) {
    size_t cap = tc->cap ? tc->cap * 2 : 16, bytes;
    if (!lc_mul_sz(cap, sizeof(tc_entry), &bytes)) return lc_error(LC_ERR_OVERFLOW, "tuning cache too large");
    tc_entry *ne = lc_malloc(bytes);
    if (!ne) return lc_error(LC_ERR_NO_MEMORY, "no memory for the tuning cache (%zu records)", cap);
    if (tc->n) memcpy(ne, tc->e, tc->n * sizeof(tc_entry));
    lc_free(tc->e);
    tc->e = ne;
    tc->cap = cap;
  }
  char *b = lc_malloc(kl + vl + 2); /* both bounded by the limits: no overflow */
  if (!b) return lc_error(LC_ERR_NO_MEMORY, "no memory for a tuning cache record");
  memcpy(b, k, kl);
  b[kl] = '\0';
  memcpy(b + kl + 1, v, vl);
  b[kl + 1 + vl] = '\0';
  if (found) {
    lc_free(tc->e[i].key);
  } else {
    memmove(tc->e + i + 1, tc->e + i, (tc->n - i) * sizeof(tc_entry));
    tc->n++;
  }
  tc->e[i] = (tc_entry){b, b + kl + 1, mine};
  return LC_OK;
}

static lc_status bad(lc_cache_reason *why, lc_cache_reason r, const char *path, const char *what) {
  *why = r;
  return lc_error(LC_ERR_IO, "tuning cache %s is %s", path, what);
}

/* The header line we write, without its "\n"; returns its length or 0 if it does not fit. */
static size_t header(char *buf, size_t n, const char *fp) {
  int w = snprintf(buf, n, "%s%d %d.%d.%d %s", tc_magic, LC_TUNE_FORMAT_VERSION, LOWCONV_VERSION_MAJOR,
                   LOWCONV_VERSION_MINOR, LOWCONV_VERSION_PATCH, fp);
  return w > 0 && (size_t)w < n ? (size_t)w : 0;
}

/* Validates the whole file image first, then merges its records (so a bad file adds nothing). */
static lc_status load(lc_tune_cache *tc, const char *b, size_t n, lc_cache_reason *why) {
  const char *path = tc->path;
  size_t ml = sizeof tc_magic - 1;
  if (memcmp(b, tc_magic, lc_min_sz(n, ml)) != 0) return bad(why, LC_CACHE_CORRUPT, path, "corrupt (not a tuning cache)");
  const char *nl = memchr(b, '\n', n);
  if (n <= ml || !nl) return bad(why, LC_CACHE_TRUNCATED, path, "truncated (no complete header)");
  char want[LC_TUNE_MAX_FINGERPRINT + 64];
  size_t hl = header(want, sizeof want, tc->fingerprint);
  size_t vl = (size_t)(strchr(strchr(want + ml, ' ') + 1, ' ') + 1 - want); /* magic + both versions */
  if ((size_t)(nl - b) < vl || memcmp(b, want, vl) != 0)
    return bad(why, LC_CACHE_STALE, path, "stale (written by another lowconv version)");
  size_t body = (size_t)(nl + 1 - b);
  if (n < body + TC_TRAILER_LEN || b[n - 1] != '\n' ||
      memcmp(b + n - TC_TRAILER_LEN, tc_trailer, sizeof tc_trailer - 1) != 0 ||
      (n - TC_TRAILER_LEN > 0 && b[n - TC_TRAILER_LEN - 1] != '\n'))
    return bad(why, LC_CACHE_TRUNCATED, path, "truncated (no checksum line)");
  uint64_t sum;
  if (!lc_hash64_parse_hex(b + n - 17, &sum) || sum != lc_hash64(b, n - TC_TRAILER_LEN))
    return bad(why, LC_CACHE_CORRUPT, path, "corrupt (checksum mismatch)");
  if ((size_t)(nl - b) != hl || memcmp(b, want, hl) != 0)
    return bad(why, LC_CACHE_FOREIGN, path, "foreign (written for another fingerprint)");
  const char *end = b + n - TC_TRAILER_LEN;
  for (int pass = 0; pass < 2; pass++) {
    for (const char *p = b + body; p < end;) {
      const char *le = memchr(p, '\n', (size_t)(end - p)); /* found: end[-1] is '\n' */
      const char *tab = memchr(p, '\t', (size_t)(le - p));
      if (!tab || !valid_kv(p, (size_t)(tab - p), tab + 1, (size_t)(le - tab - 1)))
        return bad(why, LC_CACHE_CORRUPT, path, "corrupt (malformed record)");
      if (pass == 1) {
        lc_status s = set(tc, p, (size_t)(tab - p), tab + 1, (size_t)(le - tab - 1), 0);
        if (s) return s;
      }
      p = le + 1;
    }
  }
  *why = LC_CACHE_OK;
  return LC_OK;
}

/* Reads and merges the file; a missing or bad file adds nothing (*why says which). */
static lc_status read_merge(lc_tune_cache *tc, lc_cache_reason *why) {
  void *buf;
  size_t n;
  lc_status s = lc_file_read_all(tc->path, LC_TUNE_MAX_FILE, &buf, &n, why);
  if (s) return s;
  s = load(tc, buf, n, why);
  lc_free(buf);
  return s;
}

lc_status lc_tune_cache_open(const char *dir, const char *fingerprint, lc_tune_cache **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "tuning cache open: null out");
  *out = NULL;
  if (!fingerprint) return lc_error(LC_ERR_INVALID_ARG, "tuning cache open: null fingerprint");
  size_t fl = strlen(fingerprint), dl = dir ? strlen(dir) : 0;
  if (fl == 0 || fl > LC_TUNE_MAX_FINGERPRINT || has_crlf(fingerprint, fl))
    return lc_error(LC_ERR_INVALID_ARG, "tuning cache: fingerprint must be 1..%d bytes without line breaks",
                    LC_TUNE_MAX_FINGERPRINT);
  lc_tune_cache *tc = lc_calloc(1, sizeof *tc);
  if (!tc) return lc_error(LC_ERR_NO_MEMORY, "no memory for a tuning cache");
  /* dir, path and lock path ("<dir>/tune-<16 hex>.txt" / ".lock"), fingerprint in one block. */
  size_t name = 6 + 16 + 5, total = 0;
  int ok = lc_add_sz(dl, 1, &total) && lc_add_sz(total, 2 * (dl + 1 + name + 1), &total) &&
           lc_add_sz(total, fl + 1, &total);
  char *blk = ok ? lc_malloc(total) : NULL;
  if (!blk) {
    lc_free(tc);
    return lc_error(LC_ERR_NO_MEMORY, "no memory for a tuning cache");
  }
  char hex[LC_HASH64_HEX_SIZE];
  lc_hash64_hex(lc_hash64(fingerprint, fl), hex);
  tc->dir = blk;
  memcpy(tc->dir, dir ? dir : "", dl + 1);
  tc->path = tc->dir + dl + 1;
  sprintf(tc->path, "%s/tune-%s.txt", tc->dir[0] ? dir : "", hex);
  tc->lock_path = tc->path + dl + 1 + name + 1;
  sprintf(tc->lock_path, "%s/tune-%s.lock", tc->dir[0] ? dir : "", hex);
  tc->fingerprint = tc->lock_path + dl + 1 + name + 1;
  memcpy(tc->fingerprint, fingerprint, fl + 1);
  tc->open_reason = LC_CACHE_MISSING;
  if (dl == 0) {
    tc->path = tc->lock_path = NULL;
    *out = tc;
    return LC_OK;
  }
  lc_status s = read_merge(tc, &tc->open_reason);
  if (s == LC_ERR_IO) {
    if (tc->open_reason != LC_CACHE_MISSING) {
      fprintf(stderr, "lowconv: warning: %s; using an empty tuning cache, the file will be rewritten\n",
              lc_last_error());
      tc->dirty = 1;
    }
    s = LC_OK;
  }
  if (s) {
    lc_tune_cache_close(tc);
    return s;
  }
  *out = tc;
  return LC_OK;
}

const char *lc_tune_cache_get(const lc_tune_cache *tc, const char *key) {
  if (!tc || !key) return NULL;
  int found;
  size_t i = find(tc, key, strlen(key), &found);
  return found ? tc->e[i].value : NULL;
}

lc_status lc_tune_cache_put(lc_tune_cache *tc, const char *key, const char *value) {
  if (!tc || !key || !value) return lc_error(LC_ERR_INVALID_ARG, "tuning cache put: null argument");
  size_t kl = strlen(key), vl = strlen(value);
  if (!valid_kv(key, kl, value, vl))
    return lc_error(LC_ERR_INVALID_ARG,
                    "tuning cache put: key must be 1..%d bytes without tab or line break, value at most %d bytes "
                    "without line break",
                    LC_TUNE_MAX_KEY, LC_TUNE_MAX_VALUE);
  const char *old = lc_tune_cache_get(tc, key);
  if (old && strcmp(old, value) == 0) return LC_OK;
  lc_status s = set(tc, key, kl, value, vl, 1);
  if (!s) tc->dirty = 1;
  return s;
}

static lc_status write_file(lc_tune_cache *tc) {
  char hdr[LC_TUNE_MAX_FINGERPRINT + 64];
  size_t hl = header(hdr, sizeof hdr, tc->fingerprint), total = hl + 1 + TC_TRAILER_LEN;
  for (size_t i = 0; i < tc->n; i++)
    if (!lc_add_sz(total, strlen(tc->e[i].key) + strlen(tc->e[i].value) + 2, &total)) total = SIZE_MAX;
  /* A bigger file would be rejected by the next open. */
  if (total > LC_TUNE_MAX_FILE)
    return lc_error(LC_ERR_IO, "tuning cache %s not saved: %zu records exceed %zu bytes", tc->path, tc->n,
                    LC_TUNE_MAX_FILE);
  char *b = lc_malloc(total), *p = b;
  if (!b) return lc_error(LC_ERR_NO_MEMORY, "no memory to write tuning cache %s", tc->path);
  memcpy(p, hdr, hl);
  p += hl;
  *p++ = '\n';
  for (size_t i = 0; i < tc->n; i++) {
    size_t kl = strlen(tc->e[i].key), vl = strlen(tc->e[i].value);
    memcpy(p, tc->e[i].key, kl);
    p += kl;
    *p++ = '\t';
    memcpy(p, tc->e[i].value, vl);
    p += vl;
    *p++ = '\n';
  }
  char hex[LC_HASH64_HEX_SIZE];
  lc_hash64_hex(lc_hash64(b, (size_t)(p - b)), hex);
  memcpy(p, tc_trailer, sizeof tc_trailer - 1);
  p += sizeof tc_trailer - 1;
  memcpy(p, hex, 16);
  p[16] = '\n';
  const void *parts[1] = {b};
  size_t lens[1] = {total};
  lc_status s = lc_file_write_atomic(tc->path, parts, lens, 1);
  lc_free(b);
  return s;
}

lc_status lc_tune_cache_save(lc_tune_cache *tc) {
  if (!tc) return lc_error(LC_ERR_INVALID_ARG, "tuning cache save: null cache");
  if (!tc->dirty || !tc->path) return LC_OK;
  lc_status s = lc_mkdir_p(tc->dir, 0700);
  if (s) return s;
  int fd = lc_file_lock(tc->lock_path);
  if (fd < 0) return LC_ERR_IO;
  lc_cache_reason why;
  s = read_merge(tc, &why);
  if (s == LC_ERR_IO) s = LC_OK; /* missing or bad: ours replaces it */
  if (!s) s = write_file(tc);
  lc_file_unlock(fd);
  if (s) return s;
  for (size_t i = 0; i < tc->n; i++) tc->e[i].mine = 0;
  tc->dirty = 0;
  return LC_OK;
}

size_t lc_tune_cache_count(const lc_tune_cache *tc) { return tc ? tc->n : 0; }
const char *lc_tune_cache_path(const lc_tune_cache *tc) { return tc ? tc->path : NULL; }
lc_cache_reason lc_tune_cache_open_reason(const lc_tune_cache *tc) { return tc ? tc->open_reason : LC_CACHE_MISSING; }

void lc_tune_cache_close(lc_tune_cache *tc) {
  if (!tc) return;
  for (size_t i = 0; i < tc->n; i++) lc_free(tc->e[i].key);
  lc_free(tc->e);
  lc_free(tc->dir);
  lc_free(tc);
}
