#include "tune/cache_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tune/cache_file.h"
#include "util/alloc.h"
#include "util/error.h"

static lc_status fill(char *buf, size_t n, const char *a, const char *b) {
  int w = snprintf(buf, n, "%s%s", a, b);
  if (w < 0 || (size_t)w >= n) {
    if (n) buf[0] = '\0';
    return lc_error(LC_ERR_OVERFLOW, "cache directory path %s%s does not fit in %zu bytes", a, b, n);
  }
  return LC_OK;
}

lc_status lc_cache_dir_default(char *buf, size_t n) {
  if (!buf || n == 0) return lc_error(LC_ERR_INVALID_ARG, "cache dir: no buffer");
  buf[0] = '\0';
  const char *e = getenv("LOWCONV_CACHE_DIR");
  if (e) return fill(buf, n, e, "");
  /* The XDG spec says a relative $XDG_CACHE_HOME is to be ignored. */
  e = getenv("XDG_CACHE_HOME");
  if (e && e[0] == '/') return fill(buf, n, e, "/lowconv");
  e = getenv("HOME");
  if (e && *e) return fill(buf, n, e, "/.cache/lowconv");
  return lc_error(LC_ERR_IO, "no cache directory: none of LOWCONV_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
}

static lc_status mkdir_one(const char *p, mode_t mode) {
  char eb[128];
  if (mkdir(p, mode) == 0) return LC_OK;
  int e = errno;
  struct stat st;
  if (e == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return LC_OK;
  if (e == EEXIST) e = ENOTDIR;
  return lc_error(LC_ERR_IO, "cannot create cache directory %s: %s", p, lc_errno_str(e, eb, sizeof eb));
}

lc_status lc_mkdir_p(const char *path, mode_t mode) {
  if (!path || !*path) return lc_error(LC_ERR_INVALID_ARG, "mkdir: empty path");
  size_t len = strlen(path);
  char *p = lc_malloc(len + 1);
  if (!p) return lc_error(LC_ERR_NO_MEMORY, "no memory for path %s", path);
  memcpy(p, path, len + 1);
  lc_status s = LC_OK;
  for (size_t i = 1; i <= len && !s; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    if (p[i - 1] == '/') continue; /* "//" or a trailing '/' */
    char c = p[i];
    p[i] = '\0';
    s = mkdir_one(p, mode);
    p[i] = c;
  }
  lc_free(p);
  return s;
}
