/* .npy reader/writer. The header is a Python dict literal; we accept exactly the keys NumPy
 * writes (descr, fortran_order, shape) in any order and reject everything else. */
#include "model/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
  return p;
}

/* Parses "'key': value" pairs out of the header dict. */
/* Little-endian element types the model runner has (one byte: no byte order). */
static const struct { const char *d; lc_dtype t; } DESCR[] = {
    {"<f4", LC_DT_FLOAT}, {"<f8", LC_DT_DOUBLE}, {"<i8", LC_DT_INT64}, {"<i4", LC_DT_INT32},
    {"|i1", LC_DT_INT8},  {"|u1", LC_DT_UINT8},  {"|b1", LC_DT_BOOL}};

static lc_status parse_header(const char *h, size_t n, lc_tensor *t) {
  const char *p = h, *e = h + n;
  int have_descr = 0, have_order = 0, have_shape = 0;
  p = skip_ws(p, e);
  if (p >= e || *p++ != '{') return lc_error(LC_ERR_IO, "npy: header is not a dict");
  for (;;) {
    p = skip_ws(p, e);
    if (p < e && *p == '}') break;
    if (p >= e || *p != '\'') return lc_error(LC_ERR_IO, "npy: bad header near byte %zu", (size_t)(p - h));
    const char *k = ++p;
    while (p < e && *p != '\'') p++;
    if (p >= e) return lc_error(LC_ERR_IO, "npy: unterminated key in header");
    size_t kl = (size_t)(p - k);
    p = skip_ws(p + 1, e);
    if (p >= e || *p++ != ':') return lc_error(LC_ERR_IO, "npy: missing ':' in header");
    p = skip_ws(p, e);
    if (kl == 5 && !memcmp(k, "descr", 5)) {
      if (e - p < 5 || p[0] != '\'' || p[4] != '\'') return lc_error(LC_ERR_IO, "npy: bad descr");
      t->dtype = LC_DT_UNDEFINED;
      for (size_t i = 0; i < sizeof DESCR / sizeof DESCR[0]; i++)
        if (!memcmp(p + 1, DESCR[i].d, 3)) t->dtype = DESCR[i].t;
      if (!t->dtype)
        return lc_error(LC_ERR_IO, "npy: dtype '%.3s' not supported (<f4, <f8, <i8, <i4, |i1, |u1, |b1)", p + 1);
      p += 5;
      have_descr = 1;
    } else if (kl == 13 && !memcmp(k, "fortran_order", 13)) {
      if (e - p >= 5 && !memcmp(p, "False", 5)) p += 5;
      else if (e - p >= 4 && !memcmp(p, "True", 4)) return lc_error(LC_ERR_IO, "npy: Fortran order not supported");
      else return lc_error(LC_ERR_IO, "npy: bad fortran_order");
      have_order = 1;
    } else if (kl == 5 && !memcmp(k, "shape", 5)) {
      if (p >= e || *p++ != '(') return lc_error(LC_ERR_IO, "npy: bad shape");
      t->ndim = 0;
      for (;;) {
        p = skip_ws(p, e);
        if (p < e && *p == ')') { p++; break; }
        if (p >= e || *p < '0' || *p > '9') return lc_error(LC_ERR_IO, "npy: bad shape");
        if (t->ndim >= LC_MAX_DIMS) return lc_error(LC_ERR_IO, "npy: more than %d dims", LC_MAX_DIMS);
        int64_t v = 0;
        while (p < e && *p >= '0' && *p <= '9') {
          if (!lc_mul_i64(v, 10, &v) || !lc_add_i64(v, *p - '0', &v))
            return lc_error(LC_ERR_IO, "npy: shape value too large");
          p++;
        }
        t->dims[t->ndim++] = v;
        p = skip_ws(p, e);
        if (p < e && *p == ',') p++;
      }
      have_shape = 1;
    } else {
      return lc_error(LC_ERR_IO, "npy: unexpected header key '%.*s'", (int)(kl > 32 ? 32 : kl), k);
    }
    p = skip_ws(p, e);
    if (p < e && *p == ',') p++;
  }
  if (!have_descr || !have_order || !have_shape)
    return lc_error(LC_ERR_IO, "npy: header lacks descr, fortran_order or shape");
  return LC_OK;
}

lc_status lc_npy_parse(const void *buf, size_t len, lc_tensor *t) {
  const unsigned char *b = buf;
  if (!b || !t) return lc_error(LC_ERR_INVALID_ARG, "npy: null argument");
  t->data = NULL;
  t->nbytes = 0;
  if (len < 10 || memcmp(b, "\x93NUMPY", 6)) return lc_error(LC_ERR_IO, "npy: not a .npy file (bad magic)");
  size_t hl, off;
  if (b[6] == 1) {
    hl = (size_t)b[8] | (size_t)b[9] << 8;
    off = 10;
  } else if (b[6] == 2 || b[6] == 3) {
    if (len < 12) return lc_error(LC_ERR_IO, "npy: truncated header");
    hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    off = 12;
  } else {
    return lc_error(LC_ERR_IO, "npy: unsupported format version %d", b[6]);
  }
  if (hl > len - off) return lc_error(LC_ERR_IO, "npy: truncated header (%zu bytes announced)", hl);
  lc_status s = parse_header((const char *)b + off, hl, t);
  if (s) return s;
  off += hl;
  size_t numel, nbytes;
  if (lc_tensor_numel(t, &numel) || !lc_mul_sz(numel, lc_dtype_size(t->dtype), &nbytes))
    return lc_error(LC_ERR_IO, "npy: shape too large");
  if (len - off != nbytes)
    return lc_error(LC_ERR_IO, "npy: data has %zu bytes, shape needs %zu", len - off, nbytes);
  t->data = lc_malloc(nbytes ? nbytes : 1);
  if (!t->data) return lc_error(LC_ERR_NO_MEMORY, "npy: out of memory for %zu bytes", nbytes);
  if (nbytes) memcpy(t->data, b + off, nbytes);
  t->nbytes = nbytes;
  return LC_OK;
}

lc_status lc_npy_read(const char *path, lc_tensor *t) {
  FILE *f = fopen(path, "rb");
  if (!f) return lc_error(LC_ERR_IO, "npy: cannot open '%s': %s", path, strerror(errno));
  long sz = -1;
  if (fseek(f, 0, SEEK_END) == 0) sz = ftell(f);
  if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return lc_error(LC_ERR_IO, "npy: cannot size '%s'", path);
  }
  void *buf = lc_malloc((size_t)sz + 1);
  if (!buf) {
    fclose(f);
    return lc_error(LC_ERR_NO_MEMORY, "npy: out of memory reading '%s'", path);
  }
  size_t got = fread(buf, 1, (size_t)sz, f);
  fclose(f);
  lc_status s = got == (size_t)sz ? lc_npy_parse(buf, got, t) : lc_error(LC_ERR_IO, "npy: short read of '%s'", path);
  lc_free(buf);
  if (s) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", lc_last_error());
    return lc_error(s, "%s (in '%s')", msg, path);
  }
  return s;
}

lc_status lc_npy_write(const char *path, const lc_tensor *t) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof DESCR / sizeof DESCR[0]; i++)
    if (DESCR[i].t == t->dtype) descr = DESCR[i].d;
  if (!descr) return lc_error(LC_ERR_UNSUPPORTED, "npy: cannot write element type %s", lc_dtype_name(t->dtype));
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < t->ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)t->dims[i], i + 1 < t->ndim ? " " : "");
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  /* Pad with spaces so data starts on a 64-byte boundary; the header ends with '\n'. */
  size_t total = lc_round_up(10 + (size_t)n + 1, 64), hl = total - 10;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) return lc_error(LC_ERR_IO, "npy: cannot create '%s': %s", path, strerror(errno));
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
  for (size_t i = (size_t)n; ok && i + 1 < hl; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  if (ok && t->nbytes) ok = fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
  if (fclose(f) != 0) ok = 0;
  return ok ? LC_OK : lc_error(LC_ERR_IO, "npy: write to '%s' failed", path);
}
