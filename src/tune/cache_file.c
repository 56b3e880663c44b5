#include "tune/cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

const char *lc_cache_reason_name(lc_cache_reason r) {
  switch (r) {
    case LC_CACHE_OK: return "ok";
    case LC_CACHE_MISSING: return "missing";
    case LC_CACHE_UNREADABLE: return "unreadable";
    case LC_CACHE_TRUNCATED: return "truncated";
    case LC_CACHE_CORRUPT: return "corrupt";
    case LC_CACHE_FOREIGN: return "foreign";
    case LC_CACHE_STALE: return "stale";
  }
  return "unknown";
}

const char *lc_errno_str(int err, char *buf, size_t n) {
  /* The XSI strerror_r (we build with _POSIX_C_SOURCE, not _GNU_SOURCE). */
  if (strerror_r(err, buf, n) != 0) snprintf(buf, n, "error %d", err);
  return buf;
}

/* The message carries the reason's name, so a caller's warning can just print it. */
static lc_status read_fail(lc_cache_reason *why, lc_cache_reason r, const char *path, const char *what) {
  *why = r;
  if (r == LC_CACHE_MISSING) return lc_error(LC_ERR_IO, "cache file %s missing", path);
  return lc_error(LC_ERR_IO, "cache file %s %s (%s)", path, lc_cache_reason_name(r), what);
}

lc_status lc_file_read_all(const char *path, size_t max, void **data, size_t *len, lc_cache_reason *why) {
  char eb[128];
  *data = NULL;
  *len = 0;
  *why = LC_CACHE_UNREADABLE;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return read_fail(why, LC_CACHE_MISSING, path, "");
    return read_fail(why, LC_CACHE_UNREADABLE, path, lc_errno_str(errno, eb, sizeof eb));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return read_fail(why, LC_CACHE_UNREADABLE, path, "not a regular file");
  }
  if (st.st_size < 0 || (uint64_t)st.st_size > max) {
    close(fd);
    return read_fail(why, LC_CACHE_CORRUPT, path, "larger than any valid cache file");
  }
  size_t n = (size_t)st.st_size;
  unsigned char *buf = lc_malloc(lc_max_sz(n, 1));
  if (!buf) {
    close(fd);
    return lc_error(LC_ERR_NO_MEMORY, "no memory to read cache file %s (%zu bytes)", path, n);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      lc_free(buf);
      return read_fail(why, LC_CACHE_UNREADABLE, path, lc_errno_str(e, eb, sizeof eb));
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  close(fd);
  *why = LC_CACHE_OK;
  *data = buf;
  *len = got;
  return LC_OK;
}

static int write_full(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

lc_status lc_file_write_atomic(const char *path, const void *const *parts, const size_t *lens, int n) {
  char eb[128];
  static const char suffix[] = ".tmp-XXXXXX";
  size_t pl = strlen(path), tl;
  if (!lc_add_sz(pl, sizeof suffix, &tl)) return lc_error(LC_ERR_OVERFLOW, "cache path too long");
  char *tmp = lc_malloc(tl);
  if (!tmp) return lc_error(LC_ERR_NO_MEMORY, "no memory to write cache file %s", path);
  memcpy(tmp, path, pl);
  memcpy(tmp + pl, suffix, sizeof suffix);
  /* The temp file is in the target's directory so the rename never crosses file systems. */
  int fd = mkstemp(tmp);
  if (fd < 0) {
    lc_status s = lc_error(LC_ERR_IO, "cannot write cache file %s: %s", path, lc_errno_str(errno, eb, sizeof eb));
    lc_free(tmp);
    return s;
  }
  int err = 0;
  for (int i = 0; i < n && !err; i++)
    if (lens[i] && write_full(fd, parts[i], lens[i]) != 0) err = errno ? errno : EIO;
  /* No fsync: after a crash the reader detects a short or empty file and the entry is rebuilt. */
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  lc_status s = LC_OK;
  if (err) {
    unlink(tmp);
    s = lc_error(LC_ERR_IO, "cannot write cache file %s: %s", path, lc_errno_str(err, eb, sizeof eb));
  }
  lc_free(tmp);
  return s;
}

/* fcntl locks only exclude other processes; this mutex excludes our own threads. */
static pthread_mutex_t lc_lock_mu = PTHREAD_MUTEX_INITIALIZER;

int lc_file_lock(const char *lock_path) {
  char eb[128];
  pthread_mutex_lock(&lc_lock_mu);
  int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    lc_error(LC_ERR_IO, "cannot create cache lock %s: %s", lock_path, lc_errno_str(errno, eb, sizeof eb));
    pthread_mutex_unlock(&lc_lock_mu);
    return -1;
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  while (fcntl(fd, F_SETLKW, &fl) != 0 && errno == EINTR) {
  }
  return fd;
}

void lc_file_unlock(int fd) {
  if (fd < 0) return;
  close(fd); /* releases the fcntl lock */
  pthread_mutex_unlock(&lc_lock_mu);
}
