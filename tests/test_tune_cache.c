/* Persistent caches (src/tune): hash, blob files, tuning cache files, cache directory.
 * Every truncation and single-byte corruption of small files, foreign/stale/garbage files, an
 * unwritable directory, two processes saving at once, and every allocation failing in turn. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lowconv.h"
#include "testutil.h"
#include "tune/blob.h"
#include "tune/cache_dir.h"
#include "tune/hash.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"

#define MAGIC 0x4c435447u /* any value: the caller's */

static char tmp[256];

static const char *at(char *buf, const char *name) {
  snprintf(buf, 512, "%s/%s", tmp, name);
  return buf;
}

static void put_file(const char *path, const void *b, size_t n) {
  unlink(path); /* a new file, not a truncated one: ext4 flushes on truncate-and-rewrite, which is slow */
  FILE *f = fopen(path, "wb");
  TU_CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

/* Whole file into buf (cap bytes); returns its length. */
static size_t get_file(const char *path, unsigned char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(buf, 1, cap, f) : 0;
  if (f) fclose(f);
  return n;
}

static void test_hash(void) {
  char hex[LC_HASH64_HEX_SIZE];
  uint64_t h;
  /* Published FNV-1a 64 test vectors. */
  TU_CHECK(lc_hash64_str("") == 0xcbf29ce484222325ull, "empty");
  TU_CHECK(lc_hash64_str("a") == 0xaf63dc4c8601ec8cull, "a");
  TU_CHECK(lc_hash64_str("foobar") == 0x85944171f73967e8ull, "foobar");
  TU_CHECK(lc_hash64_update(lc_hash64("foo", 3), "bar", 3) == lc_hash64_str("foobar"), "incremental");
  TU_CHECK(!strcmp(lc_hash64_hex(0x0123456789abcdefull, hex), "0123456789abcdef"), "hex %s", hex);
  TU_CHECK(lc_hash64_parse_hex(hex, &h) && h == 0x0123456789abcdefull, "parse");
  TU_CHECK(!lc_hash64_parse_hex("0123456789ABCDEF", &h) && !lc_hash64_parse_hex("0123", &h), "strict parse");
}

static lc_cache_reason blob_why(const char *path, const char *key) {
  void *d = (void *)1;
  size_t n = 1;
  lc_cache_reason why = LC_CACHE_OK;
  lc_status s = lc_blob_read_why(path, MAGIC, key, &d, &n, &why);
  TU_CHECK(s == LC_ERR_IO && d == NULL && n == 0 && why != LC_CACHE_OK, "read gave %d", s);
  if (s == LC_OK) lc_free(d);
  return why;
}

/* Every truncation of the file image must be rejected as truncated, every single-byte change
 * (several bit patterns at each offset) as something other than ok or missing. */
static void each_damage(const unsigned char *img, size_t n, lc_cache_reason (*reject)(const unsigned char *, size_t)) {
  static unsigned char bad[4096];
  for (size_t len = 0; len < n; len++) {
    lc_cache_reason why = reject(img, len);
    TU_CHECK(why == LC_CACHE_TRUNCATED, "length %zu: %s", len, lc_cache_reason_name(why));
  }
  static const int flips[] = {0x01, 0x20, 0x80, 0xff};
  for (size_t i = 0; i < n; i++) {
    for (int f = 0; f < 4; f++) {
      memcpy(bad, img, n);
      bad[i] ^= (unsigned char)flips[f];
      lc_cache_reason why = reject(bad, n);
      TU_CHECK(why != LC_CACHE_OK && why != LC_CACHE_MISSING, "byte %zu ^ %#x: %s", i, flips[f],
               lc_cache_reason_name(why));
    }
  }
}

static lc_cache_reason blob_reject(const unsigned char *b, size_t n) {
  char p[512];
  put_file(at(p, "c.bin"), b, n);
  return blob_why(p, "k1");
}

static void test_blob(void) {
  char p[512], q[512];
  static unsigned char buf[200000], img[512], bad[512];
  const char *key = "dev=NVIDIA H200|src=0123456789abcdef|opts=-cl-fast-relaxed-math";
  size_t sizes[] = {0, 1, 1000, 150000};
  for (size_t t = 0; t < 4; t++) {
    for (size_t i = 0; i < sizes[t]; i++) buf[i] = (unsigned char)tu_rand_u64();
    TU_CHECK(lc_blob_write(at(p, "a.bin"), MAGIC, key, buf, sizes[t]) == LC_OK, "%s", lc_last_error());
    void *d = NULL;
    size_t n = 0;
    lc_status s = lc_blob_read(p, MAGIC, key, &d, &n);
    TU_CHECK(s == LC_OK && d && n == sizes[t] && !memcmp(d, buf, n), "round trip %zu: %s", sizes[t], lc_last_error());
    lc_free(d);
  }
  TU_CHECK(blob_why(at(p, "none.bin"), key) == LC_CACHE_MISSING && strstr(lc_last_error(), "missing"), "%s",
           lc_last_error());
  /* A small blob: every truncation, every single-byte corruption. */
  TU_CHECK(lc_blob_write(at(p, "s.bin"), MAGIC, "k1", "0123456789abcdefghij", 20) == LC_OK, "%s", lc_last_error());
  size_t n = get_file(p, img, sizeof img);
  TU_CHECK(n == LC_BLOB_HEADER_SIZE + 2 + 20, "size %zu", n);
  each_damage(img, n, blob_reject);
  memcpy(bad, img, n);
  bad[n] = 'x';
  put_file(at(q, "c.bin"), bad, n + 1);
  TU_CHECK(blob_why(q, "k1") == LC_CACHE_CORRUPT, "trailing byte");
  /* Foreign key, other magic, old versions (checksum made valid, so only the version differs). */
  TU_CHECK(blob_why(at(p, "s.bin"), "k2") == LC_CACHE_FOREIGN && strstr(lc_last_error(), "foreign"), "foreign");
  TU_CHECK(blob_why(p, "k") == LC_CACHE_FOREIGN && blob_why(p, "k12") == LC_CACHE_FOREIGN, "key prefix");
  void *d;
  size_t dn;
  lc_cache_reason why;
  TU_CHECK(lc_blob_read_why(p, MAGIC + 1, "k1", &d, &dn, &why) == LC_ERR_IO && why == LC_CACHE_CORRUPT, "magic");
  for (int field = 4; field <= 8; field += 4) {
    memcpy(bad, img, n);
    bad[field] ^= 1;
    uint64_t h = lc_hash64_update(lc_hash64(bad, 24), bad + 32, n - 32);
    for (int b = 0; b < 8; b++) bad[24 + b] = (unsigned char)(h >> (8 * b));
    put_file(q, bad, n);
    TU_CHECK(blob_why(q, "k1") == LC_CACHE_STALE && strstr(lc_last_error(), "stale"), "version field %d", field);
  }
  /* A huge length in a checksum-valid header must not be trusted for the allocation. */
  memcpy(bad, img, n);
  bad[16 + 5] = 1; /* payload length + 2^40 */
  uint64_t h = lc_hash64_update(lc_hash64(bad, 24), bad + 32, n - 32);
  for (int b = 0; b < 8; b++) bad[24 + b] = (unsigned char)(h >> (8 * b));
  put_file(q, bad, n);
  lc_alloc_reset_peak();
  why = blob_why(q, "k1");
  TU_CHECK(why == LC_CACHE_CORRUPT && lc_alloc_peak_bytes() < lc_alloc_current_bytes() + 4096, "huge length: %s",
           lc_cache_reason_name(why));
  for (size_t i = 0; i < sizeof bad; i++) bad[i] = (unsigned char)tu_rand_u64();
  put_file(q, bad, sizeof bad);
  TU_CHECK(blob_why(q, "k1") == LC_CACHE_CORRUPT, "garbage");
  TU_CHECK(blob_why(tmp, "k1") == LC_CACHE_UNREADABLE, "a directory");
  /* Unwritable: the parent is a regular file (chmod does not stop root). */
  put_file(at(p, "file"), "x", 1);
  lc_status s = lc_blob_write(at(p, "file/sub/x.bin"), MAGIC, "k1", "abc", 3);
  TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), "file/sub/x.bin"), "unwritable: %d %s", s, lc_last_error());
  TU_CHECK(lc_blob_write(at(p, "s.bin"), MAGIC, "", "abc", 3) == LC_ERR_INVALID_ARG, "empty key");
  TU_CHECK(lc_blob_write(p, MAGIC, "k", NULL, 3) == LC_ERR_INVALID_ARG, "null data");
  TU_CHECK(lc_blob_read(p, MAGIC, "k", NULL, &dn) == LC_ERR_INVALID_ARG, "null out");
}

#define FP "cpu: AMD EPYC 9654 | avx512f avx512vnni | 2 cores"

static lc_tune_cache *open_tc(const char *dir, const char *fp, int want_warnings) {
  lc_tune_cache *tc = NULL;
  tu_stderr_begin();
  lc_status s = lc_tune_cache_open(dir, fp, &tc);
  int w = tu_stderr_end();
  TU_CHECK(s == LC_OK && tc, "open: %s", lc_last_error());
  TU_CHECK(w == want_warnings, "%d warnings, want %d: %s", w, want_warnings, tu_stderr_text);
  return tc;
}

/* Opens the file image as the tuning cache of FP: it must be rejected with one warning. */
static lc_cache_reason tc_reject(const char *dir, const unsigned char *b, size_t n) {
  char path[600], hex[LC_HASH64_HEX_SIZE];
  snprintf(path, sizeof path, "%s/tune-%s.txt", dir, lc_hash64_hex(lc_hash64_str(FP), hex));
  put_file(path, b, n);
  lc_tune_cache *tc = open_tc(dir, FP, 1);
  lc_cache_reason why = lc_tune_cache_open_reason(tc);
  TU_CHECK(lc_tune_cache_count(tc) == 0 && why != LC_CACHE_OK && why != LC_CACHE_MISSING, "count %zu why %s",
           lc_tune_cache_count(tc), lc_cache_reason_name(why));
  TU_CHECK(strstr(tu_stderr_text, lc_cache_reason_name(why)) && strstr(tu_stderr_text, "rewritten"), "warning: %s", tu_stderr_text);
  lc_tune_cache_close(tc);
  return why;
}

static char small_dir[512];
static lc_cache_reason tc_reject_small(const unsigned char *b, size_t n) { return tc_reject(small_dir, b, n); }

static void test_tune_basic(void) {
  char d[512], p[512];
  static unsigned char img[4096], bad[4096];
  at(d, "tc");
  lc_tune_cache *tc = open_tc(d, FP, 0);
  TU_CHECK(lc_tune_cache_open_reason(tc) == LC_CACHE_MISSING && lc_tune_cache_count(tc) == 0, "fresh");
  TU_CHECK(lc_tune_cache_save(tc) == LC_OK && access(lc_tune_cache_path(tc), F_OK) != 0, "clean save writes nothing");
  TU_CHECK(lc_tune_cache_put(tc, "conv 3x3 c64", "c4h1w2 16x4") == LC_OK, "put");
  TU_CHECK(lc_tune_cache_put(tc, "gemv q4 4096x14336", "wg128") == LC_OK, "put");
  TU_CHECK(lc_tune_cache_put(tc, "empty", "") == LC_OK, "empty value");
  TU_CHECK(lc_tune_cache_put(tc, "conv 3x3 c64", "c8h2w1 8x8") == LC_OK, "replace");
  TU_CHECK(lc_tune_cache_put(tc, "", "v") == LC_ERR_INVALID_ARG && lc_tune_cache_put(tc, "a\tb", "v") != LC_OK &&
               lc_tune_cache_put(tc, "a\nb", "v") != LC_OK && lc_tune_cache_put(tc, "a", "v\n") != LC_OK &&
               lc_tune_cache_put(tc, "a", "v\r") != LC_OK,
           "bad records rejected");
  static char long_key[LC_TUNE_MAX_KEY + 2];
  memset(long_key, 'k', LC_TUNE_MAX_KEY + 1);
  TU_CHECK(lc_tune_cache_put(tc, long_key, "v") == LC_ERR_INVALID_ARG, "long key");
  long_key[LC_TUNE_MAX_KEY] = '\0';
  TU_CHECK(lc_tune_cache_put(tc, long_key, "v") == LC_OK, "longest key");
  TU_CHECK(lc_tune_cache_count(tc) == 4 && !strcmp(lc_tune_cache_get(tc, "conv 3x3 c64"), "c8h2w1 8x8") &&
               !lc_tune_cache_get(tc, "conv"),
           "get");
  TU_CHECK(lc_tune_cache_save(tc) == LC_OK, "save: %s", lc_last_error());
  snprintf(p, sizeof p, "%s", lc_tune_cache_path(tc));
  lc_tune_cache_close(tc);
  tc = open_tc(d, FP, 0);
  TU_CHECK(lc_tune_cache_open_reason(tc) == LC_CACHE_OK && lc_tune_cache_count(tc) == 4 &&
               !strcmp(lc_tune_cache_get(tc, "gemv q4 4096x14336"), "wg128") && !strcmp(lc_tune_cache_get(tc, "empty"), ""),
           "reload");
  lc_tune_cache_close(tc);
  lc_tune_cache *t2 = NULL;
  TU_CHECK(lc_tune_cache_open(d, "a\nb", &t2) == LC_ERR_INVALID_ARG && !t2, "fingerprint with a newline");
  TU_CHECK(lc_tune_cache_open(d, "", &t2) == LC_ERR_INVALID_ARG, "empty fingerprint");
  /* Memory only. */
  for (int i = 0; i < 2; i++) {
    tc = open_tc(i ? "" : NULL, FP, 0);
    TU_CHECK(!lc_tune_cache_path(tc) && lc_tune_cache_put(tc, "k", "v") == LC_OK && lc_tune_cache_save(tc) == LC_OK &&
                 !strcmp(lc_tune_cache_get(tc, "k"), "v"),
             "memory only");
    lc_tune_cache_close(tc);
  }

  /* A small file: every truncation, every single-byte change, foreign, stale, garbage. */
  tc = open_tc(d, FP, 0);
  for (int i = 0; i < 4; i++) {
    char k[8];
    snprintf(k, sizeof k, "k%d", i);
    lc_tune_cache_put(tc, k, "v");
  }
  lc_tune_cache_save(tc);
  lc_tune_cache_close(tc);
  char *sd = small_dir;
  at(sd, "small");
  lc_mkdir_p(sd, 0700);
  size_t n = get_file(p, img, sizeof img);
  TU_CHECK(n > 0 && !memcmp(img, "lowconv-tune-cache 1 ", 21), "header");
  each_damage(img, n, tc_reject_small);
  memcpy(bad, img, n);
  memcpy(bad + n, "x\tv\n", 4);
  tc_reject(sd, bad, n + 4);
  /* Foreign: the file of another fingerprint under this one's name. */
  tc = open_tc(d, "another device", 0);
  lc_tune_cache_put(tc, "k", "v");
  lc_tune_cache_save(tc);
  size_t fn = get_file(lc_tune_cache_path(tc), bad, sizeof bad);
  lc_tune_cache_close(tc);
  TU_CHECK(tc_reject(sd, bad, fn) == LC_CACHE_FOREIGN, "foreign");
  /* Stale: another format or lowconv version, with a valid checksum. */
  const char *stale[] = {"lowconv-tune-cache 2 %d.%d.%d " FP "\nk\tv\n", "lowconv-tune-cache 1 %d.%d.%d " FP "\nk\tv\n"};
  for (int i = 0; i < 2; i++) {
    int w = snprintf((char *)bad, sizeof bad, stale[i], LOWCONV_VERSION_MAJOR, LOWCONV_VERSION_MINOR + i,
                     LOWCONV_VERSION_PATCH);
    char hex[LC_HASH64_HEX_SIZE];
    w += snprintf((char *)bad + w, sizeof bad - (size_t)w, "checksum %s\n", lc_hash64_hex(lc_hash64(bad, (size_t)w), hex));
    TU_CHECK(tc_reject(sd, bad, (size_t)w) == LC_CACHE_STALE, "stale %d", i);
  }
  for (size_t i = 0; i < sizeof bad; i++) bad[i] = (unsigned char)tu_rand_u64();
  TU_CHECK(tc_reject(sd, bad, sizeof bad) == LC_CACHE_CORRUPT, "garbage");
  /* After a rejected file, save rewrites it even with nothing put; the next open is clean. */
  tc = open_tc(sd, FP, 1);
  TU_CHECK(lc_tune_cache_save(tc) == LC_OK, "rewrite: %s", lc_last_error());
  lc_tune_cache_close(tc);
  tc = open_tc(sd, FP, 0);
  TU_CHECK(lc_tune_cache_open_reason(tc) == LC_CACHE_OK, "rewritten file valid");
  lc_tune_cache_close(tc);

  /* Unwritable directory: a status and a message; the records stay usable in memory. */
  put_file(at(p, "file"), "x", 1);
  tc = open_tc(at(p, "file/sub"), FP, 0);
  TU_CHECK(lc_tune_cache_put(tc, "k", "v") == LC_OK, "put");
  lc_status s = lc_tune_cache_save(tc);
  TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), "file"), "unwritable: %d %s", s, lc_last_error());
  TU_CHECK(!strcmp(lc_tune_cache_get(tc, "k"), "v"), "still in memory");
  lc_tune_cache_close(tc);
}

static void test_tune_merge(void) {
  char d[512];
  at(d, "merge");
  lc_tune_cache *a = open_tc(d, FP, 0), *b = open_tc(d, FP, 0), *c = open_tc(d, FP, 0);
  lc_tune_cache_put(a, "x", "a");
  lc_tune_cache_put(a, "shared", "a");
  lc_tune_cache_put(b, "y", "b");
  lc_tune_cache_put(b, "shared", "b");
  lc_tune_cache_put(c, "z", "c");
  TU_CHECK(!lc_tune_cache_save(a) && !lc_tune_cache_save(b) && !lc_tune_cache_save(c), "saves");
  lc_tune_cache_close(a);
  lc_tune_cache_close(b);
  a = open_tc(d, FP, 0);
  TU_CHECK(lc_tune_cache_count(a) == 4 && !strcmp(lc_tune_cache_get(a, "x"), "a") &&
               !strcmp(lc_tune_cache_get(a, "y"), "b") && !strcmp(lc_tune_cache_get(a, "z"), "c") &&
               !strcmp(lc_tune_cache_get(a, "shared"), "b"),
           "merged: the last saver wins its own keys; c did not put 'shared' so kept b's");
  /* c saved last and now knows all records; a record it did not put follows the file. */
  TU_CHECK(lc_tune_cache_count(c) == 4 && !strcmp(lc_tune_cache_get(c, "shared"), "b"), "c merged");
  lc_tune_cache_close(a);
  lc_tune_cache_close(c);
}

static void test_tune_processes(void) {
  char d[512];
  at(d, "procs");
  int rounds = getenv("LC_TEST_QUICK") && *getenv("LC_TEST_QUICK") ? 30 : 100;
  pid_t pid[2];
  for (int c = 0; c < 2; c++) {
    pid[c] = fork();
    if (pid[c] == 0) {
      int bad = 0;
      for (int i = 0; i < rounds; i++) {
        lc_tune_cache *tc = NULL;
        char k[32], v[32];
        snprintf(k, sizeof k, "p%d-%d", c, i);
        snprintf(v, sizeof v, "value %d", i);
        if (lc_tune_cache_open(d, FP, &tc) || lc_tune_cache_put(tc, k, v) || lc_tune_cache_save(tc)) bad = 1;
        lc_tune_cache_close(tc);
      }
      _exit(bad);
    }
  }
  for (int c = 0; c < 2; c++) {
    int st = 0;
    TU_CHECK(pid[c] > 0 && waitpid(pid[c], &st, 0) == pid[c] && WIFEXITED(st) && WEXITSTATUS(st) == 0,
             "child %d", c);
  }
  lc_tune_cache *tc = open_tc(d, FP, 0);
  TU_CHECK(lc_tune_cache_open_reason(tc) == LC_CACHE_OK && lc_tune_cache_count(tc) == (size_t)(2 * rounds),
           "final file: %s, %zu records", lc_cache_reason_name(lc_tune_cache_open_reason(tc)), lc_tune_cache_count(tc));
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < rounds; i++) {
      char k[32], v[32];
      snprintf(k, sizeof k, "p%d-%d", c, i);
      snprintf(v, sizeof v, "value %d", i);
      const char *got = lc_tune_cache_get(tc, k);
      TU_CHECK(got && !strcmp(got, v), "%s", k);
    }
  lc_tune_cache_close(tc);
}

/* One run of every operation; 1 when it completed (no injected failure hit). */
static int alloc_scenario(const char *d) {
  lc_tune_cache *tc = NULL;
  lc_status s = lc_tune_cache_open(d, FP, &tc);
  if (s) {
    TU_CHECK(s == LC_ERR_NO_MEMORY && !tc, "open: %d", s);
    return 0;
  }
  int ok = 1;
  for (int i = 0; i < 20 && ok; i++) { /* past the first growth of the record array */
    char k[16];
    snprintf(k, sizeof k, "new%02d", i);
    s = lc_tune_cache_put(tc, k, "v2");
    TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "put: %d", s);
    ok = s == LC_OK;
  }
  if (ok) {
    s = lc_tune_cache_save(tc);
    TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "save: %d %s", s, lc_last_error());
    ok = s == LC_OK;
  }
  lc_tune_cache_close(tc);
  char p[512];
  void *data = NULL;
  size_t n;
  if (ok) {
    s = lc_blob_write(at(p, "oom/b.bin"), MAGIC, "key", "payload", 7);
    TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "blob write: %d", s);
    ok = s == LC_OK;
  }
  if (ok) {
    s = lc_blob_read(p, MAGIC, "key", &data, &n);
    TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "blob read: %d", s);
    ok = s == LC_OK;
    lc_free(data);
  }
  if (ok) {
    s = lc_mkdir_p(at(p, "oom/a/b"), 0700);
    TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "mkdir: %d", s);
    ok = s == LC_OK;
  }
  return ok;
}

static void test_alloc_failures(void) {
  char d[512];
  at(d, "oom");
  lc_tune_cache *tc = open_tc(d, FP, 0);
  for (int i = 0; i < 10; i++) {
    char k[16];
    snprintf(k, sizeof k, "old%02d", i);
    lc_tune_cache_put(tc, k, "v1");
  }
  TU_CHECK(lc_tune_cache_save(tc) == LC_OK, "seed file");
  /* Each run starts from the same file, so every index hits the same allocation. */
  static unsigned char seed[4096];
  char path[512];
  snprintf(path, sizeof path, "%s", lc_tune_cache_path(tc));
  size_t seed_n = get_file(path, seed, sizeof seed);
  lc_tune_cache_close(tc);
  size_t base = lc_alloc_current_bytes();
  int done = 0;
  long i;
  for (i = 1; i < 1000 && !done; i++) {
    put_file(path, seed, seed_n);
    lc_alloc_fail_after(i);
    done = alloc_scenario(d);
    lc_alloc_fail_after(0);
    TU_CHECK(lc_alloc_current_bytes() == base, "failure at allocation %ld leaked %zu bytes", i,
             lc_alloc_current_bytes() - base);
  }
  TU_CHECK(done && i > 5, "scenario completed after %ld injected failures", i - 1);
  tc = open_tc(d, FP, 0);
  TU_CHECK(lc_tune_cache_open_reason(tc) == LC_CACHE_OK && lc_tune_cache_count(tc) == 30, "file after: %zu",
           lc_tune_cache_count(tc));
  lc_tune_cache_close(tc);
}

static void test_cache_dir(void) {
  char buf[512], p[512];
  const char *saved[3] = {getenv("LOWCONV_CACHE_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME")};
  char keep[3][512];
  for (int i = 0; i < 3; i++) snprintf(keep[i], sizeof keep[i], "%s", saved[i] ? saved[i] : "");
  setenv("LOWCONV_CACHE_DIR", "/x/lc", 1);
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_OK && !strcmp(buf, "/x/lc"), "%s", buf);
  TU_CHECK(lc_cache_dir_default(buf, 4) == LC_ERR_OVERFLOW, "small buffer");
  setenv("LOWCONV_CACHE_DIR", "", 1);
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_OK && !strcmp(buf, ""), "empty = off");
  unsetenv("LOWCONV_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  setenv("HOME", "/x/home", 1);
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_OK && !strcmp(buf, "/x/xdg/lowconv"), "%s", buf);
  setenv("XDG_CACHE_HOME", "relative", 1);
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_OK && !strcmp(buf, "/x/home/.cache/lowconv"), "%s", buf);
  unsetenv("XDG_CACHE_HOME");
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_OK && !strcmp(buf, "/x/home/.cache/lowconv"), "%s", buf);
  unsetenv("HOME");
  TU_CHECK(lc_cache_dir_default(buf, sizeof buf) == LC_ERR_IO, "nothing set");
  const char *names[3] = {"LOWCONV_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; i++)
    if (saved[i]) setenv(names[i], keep[i], 1);
  TU_CHECK(lc_mkdir_p(at(p, "m/a//b/"), 0700) == LC_OK && lc_mkdir_p(p, 0700) == LC_OK, "%s", lc_last_error());
  struct stat st;
  TU_CHECK(stat(at(p, "m/a/b"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "made");
  put_file(at(p, "m/f"), "x", 1);
  TU_CHECK(lc_mkdir_p(at(p, "m/f/sub"), 0700) == LC_ERR_IO && strstr(lc_last_error(), "m/f"), "%s", lc_last_error());
}

int main(void) {
  tu_seed_from_env(12);
  const char *t = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/lc-tune-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  size_t base = lc_alloc_current_bytes();
  test_hash();
  test_blob();
  test_tune_basic();
  test_tune_merge();
  test_tune_processes();
  test_alloc_failures();
  test_cache_dir();
  TU_CHECK(lc_alloc_current_bytes() == base, "leaked %zu bytes", lc_alloc_current_bytes() - base);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  TU_CHECK(system(cmd) == 0, "cleanup");
  return tu_finish("test_tune_cache");
}
