/* `lowconv tune`: fills the CPU tuning cache for a model's convs or for conv descriptors, then
 * shows what was chosen. A front for `info --tune` (models) and `conv --tune` (descriptors), which
 * do the tuning at prepare; a later run with --tune (any level) reads the cache and times nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static const char usage_text[] =
    "usage: lowconv tune MODEL.onnx [--level L] [info options: --shape, --threads, --weights, --budget, ...]\n"
    "       lowconv tune DESC... [--level L] [--layout nchw|nhwc|both] [conv options: --threads, --weights, ...]\n"
    "       lowconv tune --suite NAME [same]\n"
    "\n"
    "Times every route that can run each conv (NORMAL and up: x tile sizes x weight-panel splits;\n"
    "HEAVY: x thread counts), warm-up then medians, and keeps the fastest in the tuning cache\n"
    "($LOWCONV_CACHE_DIR, else $XDG_CACHE_HOME/lowconv, else ~/.cache/lowconv), keyed by CPU model,\n"
    "ISA, threads, shape and format. Runs given --tune then use the cached choice and time nothing.\n"
    "The heuristic's route stays unless another is at least 2% faster.\n"
    "\n"
    "  --level L    fast|normal|heavy (default normal)\n"
    "  --layout L   descriptors only: nchw, nhwc or both (default both: the cache then holds each,\n"
    "               and the two medians show which layout is faster on this CPU)\n"
    "Models: the convs are tuned for the layout the runner uses (NCHW).\n";

static int is_model(const char *a) {
  size_t n = strlen(a);
  return n > 5 && !strcmp(a + n - 5, ".onnx");
}

int cmd_tune(int argc, char **argv) {
  const char *level = "normal", *layout = "both";
  int model = -1;
  char **rest = calloc((size_t)argc + 8, sizeof(char *));
  if (!rest) return 1;
  int n = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      free(rest);
      return 0;
    }
    const char **dst = !strncmp(a, "--level", 7) ? &level : !strncmp(a, "--layout", 8) ? &layout : NULL;
    if (dst) {
      const char *eq = strchr(a, '=');
      if (eq) *dst = eq + 1;
      else if (i + 1 < argc) *dst = argv[++i];
      else {
        fprintf(stderr, "lowconv tune: %s needs a value\n", a);
        free(rest);
        return 2;
      }
      continue;
    }
    if (!strcmp(a, "--tune")) {
      fprintf(stderr, "lowconv tune: use --level\n");
      free(rest);
      return 2;
    }
    if (model < 0 && a[0] != '-' && is_model(a)) model = n;
    rest[n++] = argv[i];
  }
  if (strcmp(level, "fast") && strcmp(level, "normal") && strcmp(level, "heavy")) {
    fprintf(stderr, "lowconv tune: --level needs fast, normal or heavy, got '%s'\n%s", level, usage_text);
    free(rest);
    return 2;
  }
  if (n == 1) {
    fputs(usage_text, stderr);
    free(rest);
    return 2;
  }
  rest[n++] = "--tune";
  rest[n++] = (char *)level;
  int rc;
  if (model > 0) {
    rest[0] = "info";
    rc = cmd_info(n, rest);
  } else {
    rest[0] = "conv";
    int both = !strcmp(layout, "both");
    if (!both && strcmp(layout, "nchw") && strcmp(layout, "nhwc")) {
      fprintf(stderr, "lowconv tune: --layout needs nchw, nhwc or both, got '%s'\n", layout);
      free(rest);
      return 2;
    }
    rest[n] = "--layout";
    rest[n + 1] = (char *)(both ? "nchw" : layout);
    rc = cmd_conv(n + 2, rest);
    if (!rc && both) {
      rest[n + 1] = "nhwc";
      rc = cmd_conv(n + 2, rest);
    }
  }
  free(rest);
  return rc;
}
