/* Option tables: parsing and --help from the same entries (opts.h). */
#include "opts.h"

#include "lowconv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/checked.h"

const char *const opts_tune_levels[] = {"none", "fast", "normal", "heavy", NULL};
const char *const opts_weight_formats[] = {"f32", "q8", "q4", NULL};

int opts_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lowconv %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(lowconv %s --help for usage)\n", cmd);
  return 2;
}

int opts_parse_bytes(const char *s, size_t *out) {
  if (!s || *s < '0' || *s > '9') return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return 0;
  size_t mult = 1;
  if (*end) {
    switch (*end) {
      case 'k': case 'K': mult = (size_t)1 << 10; break;
      case 'm': case 'M': mult = (size_t)1 << 20; break;
      case 'g': case 'G': mult = (size_t)1 << 30; break;
      default: return 0;
    }
    end++;
    if (*end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return 0;
  }
  if (v > SIZE_MAX) return 0;
  return lc_mul_sz((size_t)v, mult, out);
}

static void choice_list(char *buf, size_t len, const char *const *choices) {
  buf[0] = 0;
  for (int k = 0; choices[k]; k++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", k ? "|" : "", choices[k]);
  }
}

static const opt_def *find(const opt_cmd *c, const char *key) {
  for (int i = 0; i < c->n_opts; i++)
    if (!strcmp(c->opts[i].name, key)) return &c->opts[i];
  return NULL;
}

/* Stores one value; 0 or 2 after the message. */
static int store(const opt_cmd *c, const opt_def *o, const char *val, void *out) {
  char *field = (char *)out + o->off, *end;
  switch (o->kind) {
    case OPT_FLAG: *(int *)field = 1; return 0;
    case OPT_INT: {
      errno = 0;
      long long v = strtoll(val, &end, 10);
      if (!*val || *end || errno || v < o->lo || v > o->hi)
        return opts_usage(c->name, "%s needs an integer in %lld..%lld, got '%s'", o->name, o->lo, o->hi, val);
      *(int *)field = (int)v;
      return 0;
    }
    case OPT_BYTES:
      if (!opts_parse_bytes(val, (size_t *)(void *)field))
        return opts_usage(c->name, "%s needs bytes with an optional K/M/G suffix (512M, 2G), got '%s'", o->name, val);
      return 0;
    case OPT_DOUBLE: {
      double v = strtod(val, &end);
      if (!*val || *end || !(v >= (double)o->lo))
        return opts_usage(c->name, "%s needs a number >= %lld, got '%s'", o->name, o->lo, val);
      *(double *)(void *)field = v;
      return 0;
    }
    case OPT_CHOICE:
      for (int k = 0; o->choices[k]; k++)
        if (!strcmp(val, o->choices[k])) {
          *(int *)field = k;
          return 0;
        }
      {
        char list[256];
        choice_list(list, sizeof list, o->choices);
        return opts_usage(c->name, "unknown %s '%s' for %s (%s)", o->name + 2, val, o->name, list);
      }
    case OPT_STRING: *(const char **)(void *)field = val; return 0;
    case OPT_LIST: {
      opt_list *l = (opt_list *)(void *)field;
      if (l->n == OPT_LIST_MAX) return opts_usage(c->name, "more than %d %s options", OPT_LIST_MAX, o->name);
      l->v[l->n++] = val;
      return 0;
    }
  }
  return 2;
}

int opts_parse(const opt_cmd *c, int argc, char **argv, void *out, const char **pos, int *npos) {
  *npos = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      opts_help(c, out, stdout);
      return -1;
    }
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (strncmp(s, "--", 2) || !s[2]) {
      if (*npos == c->max_pos)
        return c->max_pos == 1 ? opts_usage(c->name, "more than one %s ('%s')", c->pos_name, s)
                               : opts_usage(c->name, "unexpected argument '%s'", s);
      pos[(*npos)++] = s;
      continue;
    }
    const char *eq = strchr(s, '=');
    char key[48];
    size_t kl = eq ? (size_t)(eq - s) : strlen(s);
    const opt_def *o = NULL;
    if (kl < sizeof key) {
      memcpy(key, s, kl);
      key[kl] = 0;
      o = find(c, key);
    }
    if (!o) return opts_usage(c->name, "unknown option '%s'", s);
    const char *val = NULL;
    if (o->kind == OPT_FLAG) {
      if (eq) return opts_usage(c->name, "%s takes no value", o->name);
    } else if (eq) {
      val = eq + 1;
    } else if (i + 1 < argc) {
      val = argv[++i];
    } else {
      return opts_usage(c->name, "option %s needs a value", o->name);
    }
    int r = store(c, o, val, out);
    if (r) return r;
  }
  return 0;
}

/* The default as the help shows it, "" when there is none worth showing. */
static void default_text(const opt_def *o, const void *dflt, char *buf, size_t len) {
  const char *field = (const char *)dflt + o->off;
  buf[0] = 0;
  switch (o->kind) {
    case OPT_INT: snprintf(buf, len, "%d", *(const int *)field); break;
    case OPT_BYTES: {
      size_t v = *(const size_t *)(const void *)field;
      if (v) snprintf(buf, len, "%zu", v);
      break;
    }
    case OPT_DOUBLE: snprintf(buf, len, "%g", *(const double *)(const void *)field); break;
    case OPT_CHOICE: /* < 0: not given; the help says what that means */
      if (*(const int *)field >= 0) snprintf(buf, len, "%s", o->choices[*(const int *)field]);
      break;
    case OPT_STRING: {
      const char *v = *(const char *const *)(const void *)field;
      if (v) snprintf(buf, len, "%s", v);
      break;
    }
    default: break;
  }
}

void opts_help(const opt_cmd *c, const void *dflt, FILE *f) {
  fprintf(f, "usage: lowconv %s %s\n", c->name, c->usage);
  if (c->about) fprintf(f, "\n%s", c->about);
  fprintf(f, "\noptions (--opt VALUE or --opt=VALUE):\n");
  for (int i = 0; i < c->n_opts; i++) {
    const opt_def *o = &c->opts[i];
    char head[64], text[1024], dv[64], list[256];
    snprintf(head, sizeof head, "%s%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "",
             o->kind == OPT_LIST ? "..." : "");
    snprintf(text, sizeof text, "%s", o->help);
    if (o->kind == OPT_CHOICE) {
      choice_list(list, sizeof list, o->choices);
      size_t l = strlen(text);
      snprintf(text + l, sizeof text - l, ": %s", list);
    }
    default_text(o, dflt, dv, sizeof dv);
    if (dv[0] && !strstr(o->help, "default") && !strstr(o->help, "required")) {
      size_t l = strlen(text);
      snprintf(text + l, sizeof text - l, " (default %s)", dv);
    }
    /* continuation lines of the help line up under its first line */
    const char *p = text;
    int first = 1;
    while (*p) {
      const char *nl = strchr(p, '\n');
      int n = nl ? (int)(nl - p) : (int)strlen(p);
      fprintf(f, "  %-20s %.*s\n", first ? head : "", n, p);
      first = 0;
      p += n + (nl != NULL);
    }
  }
  if (c->epilog) fprintf(f, "\n%s", c->epilog);
  fprintf(f, "\nexit status: 0 ok, 1 a failure (file, run, check), 2 bad usage.\n");
}

int opts_device(const char *cmd, const char *device) {
  lc_context_params p;
  lc_context_params_init(&p);
  if (!device || !lc_device_parse(device, &p)) return 0;
  fprintf(stderr, "lowconv %s: --device: %s\n", cmd, lc_last_error());
  return 2;
}

int opts_online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int opts_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char keep = buf[i];
    buf[i] = 0;
    struct stat st;
    if (stat(buf, &st)) {
      if (mkdir(buf, 0777) && errno != EEXIST) return -1;
    } else if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return -1;
    }
    buf[i] = keep;
  }
  return 0;
}
