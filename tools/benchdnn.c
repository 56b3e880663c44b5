/* benchdnn convolution descriptor parser. Meanings follow oneDNN's tests/benchdnn conv driver
 * (str2desc + sanitize_desc); the differences are listed in `lowconv conv --help`. */
#include "benchdnn.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Larger values are certainly typos and would make size products meaningless. */
#define BD_MAX_VALUE 1000000000LL

enum { F_G, F_MB, F_IC, F_IH, F_IW, F_OC, F_OH, F_OW, F_KH, F_KW, F_SH, F_SW, F_PH, F_PW, F_DH, F_DW, F_N };
static const char *const bd_keys[F_N] = {"g",  "mb", "ic", "ih", "iw", "oc", "oh", "ow",
                                         "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* One spatial dimension: input, kernel, output, stride, pad (begin), dilation; end pad out. */
typedef struct dim {
  int64_t i, k, o, s, p, d, pend;
} dim;

/* benchdnn: an absent output is computed (pad 0 if absent too); an absent pad with a given output
 * is derived as floor(total/2), the rest going to the end pad. A negative end pad (rows the
 * stride skips) becomes 0 as long as the output size stays the same. */
static int resolve_dim(dim *x, char c, char *err, size_t len) {
  if (x->i <= 0) return fail(err, len, "i%c is required and must be > 0", c);
  if (x->k <= 0) return fail(err, len, "k%c is required and must be > 0", c);
  const int64_t ext = (x->k - 1) * (x->d + 1) + 1;
  if (x->o == 0) {
    if (x->p < 0) x->p = 0;
    if (x->i + 2 * x->p < ext)
      return fail(err, len, "kernel extent %lld exceeds padded input %lld in %c", (long long)ext,
                  (long long)(x->i + 2 * x->p), c);
    x->o = (x->i + 2 * x->p - ext) / x->s + 1;
    x->pend = x->p;
    return 0;
  }
  const int64_t total = (x->o - 1) * x->s - x->i + ext;
  if (x->p < 0) x->p = total / 2;
  if (x->p < 0)
    return fail(err, len, "o%c%lld is too small for i%c%lld k%c%lld s%c%lld", c, (long long)x->o, c,
                (long long)x->i, c, (long long)x->k, c, (long long)x->s);
  int64_t pend = total - x->p;
  if (pend < 0) pend = 0;
  const int64_t span = x->i + x->p + pend - ext;
  const int64_t o = span < 0 ? 0 : span / x->s + 1;
  if (o != x->o)
    return fail(err, len, "o%c%lld does not match i%c%lld k%c%lld s%c%lld p%c%lld d%c%lld (gives o%c%lld)", c,
                (long long)x->o, c, (long long)x->i, c, (long long)x->k, c, (long long)x->s, c,
                (long long)x->p, c, (long long)x->d, c, (long long)o);
  x->pend = pend;
  return 0;
}

static int parse_name(const char **ps, char *name, size_t cap, char *err, size_t len) {
  const char *s = *ps + 1; /* past 'n' */
  size_t n;
  if (*s == '"') {
    const char *q = strchr(s + 1, '"');
    if (!q) return fail(err, len, "unterminated quoted name");
    n = (size_t)(q - s - 1);
    s++;
    *ps = q + 1;
  } else { /* benchdnn: an unquoted name runs to the end */
    n = strlen(s);
    *ps = s + n;
  }
  if (n >= cap) return fail(err, len, "name longer than %zu characters", cap - 1);
  memcpy(name, s, n);
  name[n] = '\0';
  return 0;
}

int bd_parse(const char *str, bd_conv *out, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!str || !*str) return fail(err, errlen, "empty descriptor");
  int64_t v[F_N];
  int given[F_N] = {0};
  memset(v, 0, sizeof v);
  bd_conv c;
  memset(&c, 0, sizeof c);
  const char *s = str;
  while (*s) {
    if (*s == '_') {
      s++;
      continue;
    }
    if (*s == 'n') {
      if (c.name[0]) return fail(err, errlen, "name given twice");
      if (parse_name(&s, c.name, sizeof c.name, err, errlen)) return -1;
      continue;
    }
    if (s[1] == 'd' && strchr("iokspd", s[0]))
      return fail(err, errlen, "3-D descriptors (%.2s) are not supported", s);
    int f = -1;
    for (int i = 0; i < F_N; i++) {
      size_t kl = strlen(bd_keys[i]);
      if (strncmp(s, bd_keys[i], kl) == 0) {
        f = i;
        s += kl;
        break;
      }
    }
    if (f < 0) return fail(err, errlen, "unexpected '%.8s' at offset %d", s, (int)(s - str));
    if (*s < '0' || *s > '9') return fail(err, errlen, "%s needs a non-negative number", bd_keys[f]);
    if (given[f]) return fail(err, errlen, "%s given twice", bd_keys[f]);
    int64_t x = 0;
    while (*s >= '0' && *s <= '9') {
      x = x * 10 + (*s++ - '0');
      if (x > BD_MAX_VALUE) return fail(err, errlen, "%s value too large", bd_keys[f]);
    }
    v[f] = x;
    given[f] = 1;
  }

  const int nonzero[] = {F_G, F_MB, F_IC, F_IH, F_IW, F_OC, F_OH, F_OW, F_KH, F_KW, F_SH, F_SW};
  for (size_t i = 0; i < sizeof nonzero / sizeof nonzero[0]; i++)
    if (given[nonzero[i]] && v[nonzero[i]] == 0) return fail(err, errlen, "%s must be > 0", bd_keys[nonzero[i]]);
  if (!given[F_IC] || !given[F_OC]) return fail(err, errlen, "ic and oc are required");

  c.has_groups = given[F_G];
  c.g = given[F_G] ? v[F_G] : 1;
  c.mb = given[F_MB] ? v[F_MB] : BD_DEFAULT_MB;
  c.ic = v[F_IC];
  c.oc = v[F_OC];
  if (c.ic % c.g || c.oc % c.g)
    return fail(err, errlen, "ic%lld and oc%lld must be multiples of g%lld", (long long)c.ic, (long long)c.oc,
                (long long)c.g);

  /* Absent pads are -1 (derive), absent strides 1, absent dilations 0, as in benchdnn. */
  dim h = {v[F_IH], v[F_KH], v[F_OH], given[F_SH] ? v[F_SH] : 1, given[F_PH] ? v[F_PH] : -1, v[F_DH], 0};
  dim w = {v[F_IW], v[F_KW], v[F_OW], given[F_SW] ? v[F_SW] : 1, given[F_PW] ? v[F_PW] : -1, v[F_DW], 0};
  const int has_h = h.i || h.k || h.o || h.d || h.s != 1 || h.p >= 1;
  const int has_w = w.i || w.k || w.o || w.d || w.s != 1 || w.p >= 1;
  if (!has_h && !has_w) return fail(err, errlen, "no spatial size: give at least ih and kh");
  if (has_h && has_w) { /* extension: benchdnn rejects a missing iw/kw here */
    if (!w.i) w.i = h.i;
    if (!w.k) w.k = h.k;
  }
  if (has_h && resolve_dim(&h, 'h', err, errlen)) return -1;
  if (has_w && resolve_dim(&w, 'w', err, errlen)) return -1;
  if (!has_w) w = h; /* square: every w value copies h */
  if (!has_h) h = (dim){1, 1, 1, 1, 0, 0, 0}; /* 1-D problem along w */

  c.ih = h.i, c.kh = h.k, c.oh = h.o, c.sh = h.s, c.ph = h.p, c.pb = h.pend, c.dh = h.d;
  c.iw = w.i, c.kw = w.k, c.ow = w.o, c.sw = w.s, c.pw = w.p, c.pr = w.pend, c.dw = w.d;
  *out = c;
  return 0;
}

/* Appends key and value, truncating silently if buf is full. */
static void app(char *buf, size_t len, size_t *pos, const char *key, int64_t x) {
  char piece[32];
  snprintf(piece, sizeof piece, "%.2s%lld", key, (long long)x);
  for (const char *q = piece; *q && *pos + 1 < len; q++) buf[(*pos)++] = *q;
  buf[*pos] = '\0';
}

void bd_format(const bd_conv *c, char *buf, size_t len) {
  if (!buf || !len) return;
  buf[0] = '\0';
  size_t p = 0;
  const int sq = c->ih == c->iw && c->oh == c->ow && c->kh == c->kw && c->sh == c->sw && c->ph == c->pw &&
                 c->dh == c->dw;
  if (c->has_groups || c->g != 1) app(buf, len, &p, "g", c->g);
  app(buf, len, &p, "mb", c->mb);
  app(buf, len, &p, "ic", c->ic);
  app(buf, len, &p, "ih", c->ih);
  if (!sq) app(buf, len, &p, "iw", c->iw);
  app(buf, len, &p, "oc", c->oc);
  app(buf, len, &p, "oh", c->oh);
  if (!sq) app(buf, len, &p, "ow", c->ow);
  app(buf, len, &p, "kh", c->kh);
  if (!sq) app(buf, len, &p, "kw", c->kw);
  if (!sq || c->sh != 1) {
    app(buf, len, &p, "sh", c->sh);
    if (!sq) app(buf, len, &p, "sw", c->sw);
  }
  app(buf, len, &p, "ph", c->ph);
  if (!sq) app(buf, len, &p, "pw", c->pw);
  if (!sq || c->dh != 0) {
    app(buf, len, &p, "dh", c->dh);
    if (!sq) app(buf, len, &p, "dw", c->dw);
  }
  if (c->name[0] && p + 4 + strlen(c->name) < len) {
    memcpy(buf + p, "_n\"", 3);
    memcpy(buf + p + 3, c->name, strlen(c->name));
    p += 3 + strlen(c->name);
    buf[p++] = '"';
    buf[p] = '\0';
  }
}

double bd_flops(const bd_conv *c) {
  return 2.0 * (double)c->mb * (double)c->oc * (double)c->oh * (double)c->ow * (double)(c->ic / c->g) *
         (double)c->kh * (double)c->kw;
}
