/* Bitwise guard for refactors: a checksum of the output of every route x kernel table x weight
 * format x layout over a fixed set of shapes (fixed data), compared with tests/data/conv_checksums.txt.
 * A table this CPU lacks is skipped; outputs the file has no line for are counted, not failed
 * (the file is written on the CPUs at hand). --write keeps the lines of the tables skipped here,
 * so running it on an AVX-512 machine adds theirs. Regenerate only when a result is meant to change:
 *   build/tests/test_conv_checksums --write tests/data/conv_checksums.txt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "testutil.h"

typedef struct ck_shape {
  int cin, cout, groups, k, stride, dil, pad, h, w, act;
} ck_shape;

/* Each route's own cases (1x1, depthwise strides and variants, 3x3 s1 for winograd, odd sizes for
 * ragged tiles, dilation, grouped) and every activation. */
static const ck_shape shapes[] = {
    {16, 24, 1, 1, 1, 1, 0, 9, 11, LC_ACT_RELU},  {64, 40, 1, 1, 1, 1, 0, 1, 2, LC_ACT_NONE},
    {32, 48, 1, 3, 1, 1, 1, 10, 9, LC_ACT_RELU},  {20, 36, 1, 3, 1, 1, 0, 7, 13, LC_ACT_CLIP},
    {3, 16, 1, 3, 2, 1, 1, 17, 15, LC_ACT_HARD_SWISH}, {24, 20, 1, 5, 2, 2, 3, 15, 14, LC_ACT_LEAKY_RELU},
    {32, 32, 32, 3, 1, 1, 1, 12, 10, LC_ACT_RELU}, {24, 24, 24, 3, 2, 1, 1, 15, 13, LC_ACT_CLIP},
    {16, 16, 16, 5, 1, 2, 4, 9, 70, LC_ACT_NONE}, {8, 8, 8, 3, 2, 1, 0, 70, 9, LC_ACT_HARD_SWISH},
    {24, 32, 2, 3, 1, 1, 1, 8, 8, LC_ACT_RELU},   {300, 20, 1, 3, 1, 1, 1, 5, 6, LC_ACT_NONE},
    {16, 20, 1, 2, 1, 1, 0, 6, 7, LC_ACT_LEAKY_RELU},
};

static const char *const fmt_names[] = {"f32", "q8", "q4a", "q4i8"};

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* One line: key and checksum (or the status when the route can't run the case). */
static void run_one(lc_context *ctx, const char *isa, const ck_shape *s, int si, int layout, int fmt, int route,
                    int budget, char *line, size_t cap) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = s->cin, d.out_channels = s->cout, d.groups = s->groups;
  d.kernel_h = d.kernel_w = s->k;
  d.stride_h = d.stride_w = s->stride;
  d.dilation_h = d.dilation_w = s->dil;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = s->pad;
  d.layout = (lc_layout)layout;
  d.activation = (lc_activation)s->act;
  d.act_min = -0.5f, d.act_max = 0.75f, d.act_alpha = 0.1f;
  d.route = (lc_route)route;
  d.weight_format = fmt == 0 ? LC_WEIGHTS_F32 : fmt == 1 ? LC_WEIGHTS_Q8 : LC_WEIGHTS_Q4;
  d.block_size = 32;
  d.asym = fmt >= 2;
  d.int8_activations = fmt == 3;
  size_t nw = (size_t)s->cout * (size_t)(s->cin / s->groups) * (size_t)(s->k * s->k);
  float *w = malloc(nw * sizeof(float)), *b = malloc((size_t)s->cout * sizeof(float));
  tu_seed(1000u + (unsigned)si);
  tu_fill(w, nw, -0.5f, 0.5f);
  tu_fill(b, (size_t)s->cout, -0.2f, 0.2f);
  d.weights = w, d.bias = b;
  int n = 2;
  size_t nin = (size_t)n * (size_t)s->cin * (size_t)s->h * (size_t)s->w;
  float *x = malloc(nin * sizeof(float));
  tu_fill(x, nin, -1.0f, 1.0f);
  int len = snprintf(line, cap, "%s %s s%d %s %s b%d ", isa, lc_route_name(d.route), si, layout ? "nhwc" : "nchw",
                     fmt_names[fmt], budget);
  lc_conv *c = NULL;
  lc_conv_shape sh;
  lc_status st = lc_conv_create(ctx, &d, &c);
  if (!st) st = lc_conv_prepare(c, n, s->h, s->w, &sh);
  if (!st) {
    size_t nout = (size_t)n * (size_t)s->cout * (size_t)(sh.out_h * sh.out_w);
    float *y = malloc(nout * sizeof(float));
    memset(y, 0, nout * sizeof(float));
    st = lc_conv_run(c, x, y, NULL, 0);
    if (!st)
      snprintf(line + len, cap - (size_t)len, "%s %016llx", lc_route_name(sh.route),
               (unsigned long long)fnv1a(y, nout * sizeof(float)));
    free(y);
  }
  if (st) snprintf(line + len, cap - (size_t)len, "- %s", lc_status_name(st));
  lc_conv_destroy(c);
  free(w);
  free(b);
  free(x);
}

/* The golden line for key (the text before the last field pair), or NULL. */
static const char *golden_find(char **lines, int nl, const char *line) {
  const char *sp = strrchr(line, ' ');
  size_t klen = (size_t)(sp - line);
  sp = line + klen;
  while (sp > line && sp[-1] != ' ') sp--; /* start of the route field */
  klen = (size_t)(sp - line);
  for (int i = 0; i < nl; i++)
    if (strncmp(lines[i], line, klen) == 0) return lines[i];
  return NULL;
}

int main(int argc, char **argv) {
  const char *write = argc == 3 && strcmp(argv[1], "--write") == 0 ? argv[2] : NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__);
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "data/conv_checksums.txt");
  char **gold = NULL;
  int ngold = 0;
  {
    FILE *f = fopen(write ? write : path, "r");
    TU_CHECK(f != NULL || write, "cannot open %s", path);
    if (!f && !write) return tu_finish("test_conv_checksums");
    char buf[256];
    while (f && fgets(buf, sizeof buf, f)) {
      buf[strcspn(buf, "\n")] = 0;
      gold = realloc(gold, (size_t)(ngold + 1) * sizeof *gold);
      gold[ngold++] = strdup(buf);
    }
    if (f) fclose(f);
  }
  FILE *out = write ? fopen(write, "w") : NULL;
  if (write && !out) {
    fprintf(stderr, "cannot write %s\n", write);
    return 1;
  }
  static const struct {
    const char *name;
    lc_isa isa;
  } isas[] = {{"scalar", LC_ISA_SCALAR}, {"avx2", LC_ISA_AVX2}, {"avx512", LC_ISA_AVX512}};
  static const size_t budgets[] = {0, 6000};
  int compared = 0, unknown = 0, ran[3] = {0, 0, 0};
  for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++)
    for (size_t bi = 0; bi < 2; bi++) {
      lc_context_params cp;
      lc_context_params_init(&cp);
      cp.isa = isas[ii].isa;
      cp.threads = 2;
      cp.workspace_budget = budgets[bi];
      lc_context *ctx = NULL;
      if (lc_context_create(&cp, &ctx) != LC_OK) {
        printf("skip %s: %s\n", isas[ii].name, lc_last_error());
        continue;
      }
      ran[ii] = 1;
      for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++)
        for (int layout = 0; layout < 2; layout++)
          for (int fmt = 0; fmt < 4; fmt++)
            for (int r = 0; r < LC_ROUTE_COUNT; r++) {
              char line[256];
              run_one(ctx, isas[ii].name, &shapes[si], si, layout, fmt, r, (int)bi, line, sizeof line);
              if (out) {
                fprintf(out, "%s\n", line);
                continue;
              }
              const char *g = golden_find(gold, ngold, line);
              if (!g) {
                unknown++;
                continue;
              }
              TU_CHECK(strcmp(g, line) == 0, "changed:\n  was %s\n  now %s", g, line);
              compared++;
            }
      lc_context_destroy(ctx);
    }
  if (out) { /* keep the lines of the tables this CPU lacks */
    for (int i = 0; i < ngold; i++)
      for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++)
        if (!ran[ii] && strncmp(gold[i], isas[ii].name, strlen(isas[ii].name)) == 0 &&
            gold[i][strlen(isas[ii].name)] == ' ')
          fprintf(out, "%s\n", gold[i]);
    fclose(out);
    return 0;
  }
  printf("%d outputs compared, %d not in the golden file (a table it was not written on)\n", compared, unknown);
  TU_CHECK(compared > 0, "nothing compared");
  for (int i = 0; i < ngold; i++) free(gold[i]);
  free(gold);
  return tu_finish("test_conv_checksums");
}
