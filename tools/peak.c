/* Peak FMA throughput, measured once per CPU model and ISA and cached (peak.h). A loop of
 * independent FMA chains runs at the core's issue limit, so its rate is the peak the kernels can
 * approach; measuring it (rather than assuming a width and a clock) covers turbo and the number of
 * FMA pipes. */
#include "peak.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "util/timer.h"

#define CHAINS 12
#define ITERS 4096

/* Twelve named accumulators (not an array) so they stay in registers: 12 chains cover the FMA
 * latency of every current core (4-5 cycles x 2 pipes). */
#define FMA_LOOP(T, set1, fma, add)                                                               \
  T b = set1(0.999f), c = set1(1e-3f), a0 = set1(0), a1 = set1(1), a2 = set1(2), a3 = set1(3), a4 = set1(4),   \
    a5 = set1(5), a6 = set1(6), a7 = set1(7), a8 = set1(8), a9 = set1(9), a10 = set1(10), a11 = set1(11);       \
  for (int i = 0; i < ITERS; i++) {                                                               \
    a0 = fma(a0, b, c), a1 = fma(a1, b, c), a2 = fma(a2, b, c), a3 = fma(a3, b, c);                \
    a4 = fma(a4, b, c), a5 = fma(a5, b, c), a6 = fma(a6, b, c), a7 = fma(a7, b, c);                \
    a8 = fma(a8, b, c), a9 = fma(a9, b, c), a10 = fma(a10, b, c), a11 = fma(a11, b, c);            \
  }                                                                                               \
  T sum = add(add(add(add(a0, a1), add(a2, a3)), add(add(a4, a5), add(a6, a7))), add(add(a8, a9), add(a10, a11)))

static inline __m128 mul_add_sse(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }

/* Each returns the flops done; x keeps the chains alive. */
__attribute__((target("avx512f"))) static double fma_avx512(float *x) {
  FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps);
  *x += _mm512_reduce_add_ps(sum);
  return 2.0 * 16 * CHAINS * ITERS;
}

__attribute__((target("avx2,fma"))) static double fma_avx2(float *x) {
  FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps);
  *x += _mm_cvtss_f32(_mm256_castps256_ps128(sum));
  return 2.0 * 8 * CHAINS * ITERS;
}

/* The scalar table is built for baseline x86-64: SSE2 multiply then add. */
static double fma_sse(float *x) {
  FMA_LOOP(__m128, _mm_set1_ps, mul_add_sse, _mm_add_ps);
  *x += _mm_cvtss_f32(sum);
  return 2.0 * 4 * CHAINS * ITERS;
}

static double measure(const char *isa) {
  double (*fn)(float *) = !strcmp(isa, "avx512") ? fma_avx512 : !strcmp(isa, "avx2") ? fma_avx2 : fma_sse;
  float sink = 0;
  double best = 0;
  for (int rep = 0; rep < 5; rep++) { /* best of 5 slices of ~20 ms: another process may take the core */
    double t0 = lc_now_s(), flops = 0, t;
    do flops += fn(&sink);
    while ((t = lc_now_s() - t0) < 0.02);
    if (flops / t > best) best = flops / t;
  }
  if (sink == 42.0f) fputc(' ', stderr);
  return best * 1e-9;
}

static void cpu_model(char *buf, size_t len) {
  snprintf(buf, len, "unknown-cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    const char *c = strchr(line, ':');
    if (strncmp(line, "model name", 10) || !c) continue;
    c++;
    while (*c == ' ') c++;
    snprintf(buf, len, "%s", c);
    buf[strcspn(buf, "\n\t")] = 0;
    break;
  }
  fclose(f);
}

static int cache_path(char *dir, size_t dlen, char *file, size_t flen) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(dir, dlen, "%s/lowconv", xdg);
  else if (home && *home) snprintf(dir, dlen, "%s/.cache/lowconv", home);
  else return -1;
  int n = snprintf(file, flen, "%s/peak", dir);
  return n > 0 && (size_t)n < flen ? 0 : -1;
}

/* Cache lines: "ISA<TAB>CPU MODEL<TAB>GFLOPS per core". */
static int cache_lookup(const char *file, const char *isa, const char *model, double *v) {
  FILE *f = fopen(file, "r");
  if (!f) return -1;
  char line[768];
  int found = -1;
  while (found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t2) continue;
    *t1 = *t2 = 0;
    char *end;
    double x = strtod(t2 + 1, &end);
    if (!strcmp(line, isa) && !strcmp(t1 + 1, model) && !*end && x > 0 && isfinite(x)) *v = x, found = 0;
  }
  fclose(f);
  return found;
}

int peak_gflops_per_core(const char *isa, double *gflops, const char **source, char *err, size_t errlen) {
  const char *env = getenv("LOWCONV_PEAK_GFLOPS");
  if (env && *env) {
    char *end;
    double v = strtod(env, &end);
    if (*end || !(v > 0.0) || !isfinite(v)) {
      snprintf(err, errlen, "LOWCONV_PEAK_GFLOPS='%s' is not a positive number", env);
      return -1;
    }
    *gflops = v, *source = "LOWCONV_PEAK_GFLOPS";
    return 0;
  }
  char model[256], dir[3072], file[3200];
  cpu_model(model, sizeof model);
  int have_path = cache_path(dir, sizeof dir, file, sizeof file) == 0;
  if (have_path && cache_lookup(file, isa, model, gflops) == 0) {
    *source = "cached";
    return 0;
  }
  *gflops = measure(isa);
  *source = "measured";
  if (have_path && opts_mkdirs(dir) == 0) {
    FILE *f = fopen(file, "a");
    if (f) {
      fprintf(f, "%s\t%s\t%.3f\n", isa, model, *gflops);
      fclose(f);
    }
  }
  return 0;
}
