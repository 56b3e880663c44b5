/* OpenCL program and tuning caches end to end: a cold start builds and tunes; a warm start (a new
 * context on the same folder) builds nothing and times nothing; corrupt, truncated and swapped
 * (foreign) program files and a garbage tuning file are rebuilt, with the results still right; an
 * unusable folder only costs speed. Blob and tuning-file formats are tested in test_tune_cache. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lowconv.h"
#include "testutil.h"
#include "tune/hash.h"

#define NCONV 3
static const int shapes[NCONV][6] = {/* cin, cout, k, stride, h, w */ {8, 12, 3, 1, 9, 11}, {16, 8, 1, 1, 6, 5},
                                     {6, 6, 5, 2, 13, 12}};

typedef struct start {
  int built, candidates, cached;
  double err;
} start;

/* Creates the convs on a fresh context over `dir`, runs them and checks the results. */
static lc_status one_start(const char *dir, lc_weight_format fmt, start *st) {
  memset(st, 0, sizeof *st);
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL, p.cache_dir = dir, p.tune = LC_TUNE_FAST;
  lc_context *ctx;
  lc_status s = lc_context_create(&p, &ctx);
  if (s) return s;
  for (int i = 0; i < NCONV && !s; i++) {
    const int *S = shapes[i];
    lc_conv_desc d;
    lc_conv_desc_init(&d);
    d.in_channels = S[0], d.out_channels = S[1], d.kernel_h = d.kernel_w = S[2], d.stride_h = d.stride_w = S[3];
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = S[2] / 2;
    d.weight_format = fmt, d.block_size = 0;
    size_t nw = (size_t)(S[0] * S[1] * S[2] * S[2]), nin = (size_t)(S[0] * S[4] * S[5]);
    float *w = malloc(nw * 4), *wq = malloc(nw * 4), *x = malloc(nin * 4);
    tu_seed((uint64_t)(i + 1)); /* the same weights in every start */
    tu_fill(w, nw, -1, 1);
    tu_fill(x, nin, -1, 1);
    d.weights = w;
    lc_conv *c = NULL;
    lc_conv_shape sh;
    lc_conv_device_info info;
    if (!(s = lc_conv_create(ctx, &d, &c)) && !(s = lc_conv_prepare(c, 1, S[4], S[5], &sh)) &&
        !(s = lc_conv_device_info_get(c, &info))) {
      st->built += info.programs_built, st->candidates += info.candidates, st->cached += info.from_cache;
      size_t nout = (size_t)(S[1] * sh.out_h * sh.out_w);
      float *y = malloc(nout * 4), *ref = malloc(nout * 4);
      if (!(s = lc_conv_run(c, x, y, NULL, 0)) && !(s = lc_conv_get_weights(c, wq))) {
        d.weights = wq, d.weight_format = LC_WEIGHTS_F32;
        lc_conv_reference(&d, 1, S[4], S[5], x, ref);
        double mx = 0, e = 0;
        for (size_t j = 0; j < nout; j++) mx = fmax(mx, fabs(ref[j])), e = fmax(e, fabs(y[j] - ref[j]));
        st->err = fmax(st->err, e / mx);
      }
      free(y), free(ref);
    }
    lc_conv_destroy(c);
    free(w), free(wq), free(x);
  }
  lc_context_destroy(ctx); /* saves the tuning cache */
  return s;
}

/* Applies fn to every file of dir whose name starts with prefix; returns how many. */
static int for_files(const char *dir, const char *prefix, void (*fn)(const char *path, int i)) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) || strstr(e->d_name, ".lock")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    fn(path, n++);
  }
  if (d) closedir(d);
  return n;
}

static void corrupt(const char *path, int i) {
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, n / 2 + i, SEEK_SET);
  int c = fgetc(f);
  fseek(f, n / 2 + i, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
}
static void truncate_half(const char *path, int i) {
  (void)i;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  if (truncate(path, n / 2)) perror("truncate");
}
/* Foreign entries: every program file gets the content of the next one (a rotation). */
static char paths[64][1024];
static int npaths;
static void collect(const char *path, int i) {
  if (i < 64) snprintf(paths[i], sizeof paths[i], "%s", path), npaths = i + 1;
}
static void rotate_files(void) {
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s.first'", paths[0], paths[0]);
  if (system(cmd)) fprintf(stderr, "cp failed\n");
  for (int i = 0; i + 1 < npaths; i++) {
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", paths[i + 1], paths[i]);
    if (system(cmd)) fprintf(stderr, "cp failed\n");
  }
  snprintf(cmd, sizeof cmd, "mv '%s.first' '%s'", paths[0], paths[npaths - 1]);
  if (system(cmd)) fprintf(stderr, "mv failed\n");
}
static void swap_in_first(const char *path, int i) {
  collect(path, i);
}
static void garbage(const char *path, int i) {
  (void)i;
  FILE *f = fopen(path, "wb");
  if (f) fputs("not a tuning file\n\x01\x02", f), fclose(f);
}

/* Every record's local size becomes 3 x 1 x 1 (no family offers it, and it is within any device's
 * limits), with the checksum redone: the file is valid, its choices stale, as after a kernel
 * change that keeps lowconv's version. */
static int nstale;
static void stale_lws(const char *path, int i) {
  (void)i;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  static char in[1 << 20], out[1 << 20];
  size_t n = fread(in, 1, sizeof in - 1, f), o = 0;
  fclose(f);
  in[n] = 0;
  char *line = in, *sum = strstr(in, "\nchecksum ");
  if (!sum) return;
  sum[1] = 0;
  while (*line) {
    char *nl = strchr(line, '\n'), fam[32], var[32], rest[64];
    if (!nl) break;
    *nl = 0;
    char *tab = strchr(line, '\t');
    unsigned long long l0, l1, l2;
    if (tab && sscanf(tab + 1, "%31s %31s %llu %llu %llu %63s", fam, var, &l0, &l1, &l2, rest) == 6) {
      o += (size_t)snprintf(out + o, sizeof out - o, "%.*s\t%s %s 3 1 1 %s\n", (int)(tab - line), line, fam, var, rest);
      nstale++;
    } else {
      o += (size_t)snprintf(out + o, sizeof out - o, "%s\n", line);
    }
    line = nl + 1;
  }
  char hex[LC_HASH64_HEX_SIZE];
  o += (size_t)snprintf(out + o, sizeof out - o, "checksum %s\n", lc_hash64_hex(lc_hash64(out, o), hex));
  f = fopen(path, "wb");
  if (f) fwrite(out, 1, o, f), fclose(f);
}

int main(void) {
  /* PoCL's programs are not saved by default (cl_program.c): this test is about saving them. */
  setenv("LOWCONV_CL_PROGRAM_BINARIES", "1", 1);
  if (tu_no_opencl()) return tu_finish("test_cl_cache");
  char dir[] = "/tmp/lc_cl_cache_XXXXXX";
  TU_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  start s;
  lc_weight_format fmt = LC_WEIGHTS_Q4;
  TU_CHECK(one_start(dir, fmt, &s) == LC_OK, "cold: %s", lc_last_error());
  TU_CHECK(s.built > 0 && s.candidates > 0 && s.cached == 0, "cold start builds and tunes (%d built, %d timed)",
           s.built, s.candidates);
  TU_CHECK(s.err < 1e-4, "cold results: %g", s.err);
  TU_CHECK(one_start(dir, fmt, &s) == LC_OK, "warm: %s", lc_last_error());
  TU_CHECK(s.built == 0 && s.candidates == 0 && s.cached == NCONV, "warm start: %d built, %d timed, %d cached",
           s.built, s.candidates, s.cached);
  TU_CHECK(s.err < 1e-4, "warm results: %g", s.err);

  void (*damage[])(const char *, int) = {corrupt, truncate_half, swap_in_first};
  const char *what[] = {"corrupt", "truncated", "foreign"};
  for (int k = 0; k < 3; k++) {
    int n = for_files(dir, "prog-", damage[k]);
    if (damage[k] == swap_in_first) rotate_files();
    TU_CHECK(n > (damage[k] == swap_in_first), "%s: program files found (%d)", what[k], n);
    TU_CHECK(one_start(dir, fmt, &s) == LC_OK, "%s programs: %s", what[k], lc_last_error());
    TU_CHECK(s.built > 0 && s.err < 1e-4, "%s programs rebuilt (%d) and right (%g)", what[k], s.built, s.err);
    TU_CHECK(one_start(dir, fmt, &s) == LC_OK && s.built == 0, "after %s: rewritten entries load (%d built)", what[k],
             s.built);
  }
  TU_CHECK(for_files(dir, "tune-", stale_lws) == 1 && nstale > 0, "tuning file's local sizes made stale (%d)", nstale);
  TU_CHECK(one_start(dir, fmt, &s) == LC_OK && s.candidates > 0 && s.err < 1e-4,
           "stale local sizes: retuned (%d timed), right (%g): %s", s.candidates, s.err, lc_last_error());
  TU_CHECK(for_files(dir, "tune-", garbage) == 1, "one tuning file");
  TU_CHECK(one_start(dir, fmt, &s) == LC_OK && s.candidates > 0 && s.err < 1e-4, "garbage tuning file: retuned (%d)",
           s.candidates);
  TU_CHECK(one_start(dir, fmt, &s) == LC_OK && s.candidates == 0, "then cached again (%d timed)", s.candidates);

  /* A folder that can't exist (its parent is a file): works, uncached. */
  char bad[1100];
  snprintf(bad, sizeof bad, "%s/prog-file-as-parent", dir);
  FILE *f = fopen(bad, "w");
  if (f) fclose(f);
  strcat(bad, "/sub");
  TU_CHECK(one_start(bad, fmt, &s) == LC_OK && s.err < 1e-4, "unusable cache folder: %s", lc_last_error());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) fprintf(stderr, "cleanup failed\n");
  return tu_finish("test_cl_cache");
}
