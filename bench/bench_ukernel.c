/* GEMM microkernel throughput of each kernel table on packed operands.
 * A is one mr x k panel, B a set of k x nr panels totalling <= 256 KiB (L2-resident); each call
 * computes one full tile. Reports the best of a few runs, timed in thread CPU time so that other
 * processes sharing the core do not count against the kernel.
 * Usage: bench_ukernel [seconds per measurement, default 0.2] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu.h"
#include "kernels/registry.h"
#include "util/alloc.h"
#include "util/timer.h"

#define NOMINAL_PEAK 99.0 /* GFLOP/s per core: 2 FMA pipes x 8 lanes x 2 flops x ~3.1 GHz */

/* Measured FMA peak: 10 independent ymm FMA chains (2 pipes x 4-cycle latency + margin). */
__attribute__((target("avx2,fma"))) static double fma_peak(double secs) {
  __m256 acc[10];
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
  for (int i = 0; i < 10; i++) acc[i] = _mm256_set1_ps((float)i);
  const long iters = 1 << 20;
  double best = 0;
  for (int rep = 0; rep < 3; rep++) {
    long n = 0;
    const double t0 = (lc_thread_cpu_ms() * 1e-3);
    double t;
    do {
      for (long it = 0; it < iters; it++) {
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
      }
      n += iters;
      t = (lc_thread_cpu_ms() * 1e-3) - t0;
    } while (t < secs);
    const double g = 10.0 * 16.0 * (double)n / t * 1e-9;
    if (g > best) best = g;
  }
  float sink[8];
  __m256 s = acc[0];
  for (int i = 1; i < 10; i++) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(sink, s);
  if (sink[0] == 12345.0f) printf(" ");
  return best;
}

/* Best GFLOP/s of m x n tiles (m <= mr, n <= nr) at depth k. */
static double gemm_gflops(const lc_kernels *kt, size_t m, size_t n, size_t k, double secs) {
  const size_t mr = kt->mr, nr = kt->nr;
  size_t nb = (256u << 10) / (nr * k * sizeof(float));
  if (nb < 1) nb = 1;
  float *a = lc_malloc(mr * k * sizeof(float));
  float *b = lc_malloc(nb * nr * k * sizeof(float));
  float *c = lc_malloc(nb * mr * nr * sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "bench_ukernel: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < mr * k; i++) a[i] = (float)(i % 7) * 1e-3f;
  for (size_t i = 0; i < nb * nr * k; i++) b[i] = (float)(i % 5) * 1e-3f;
  lc_gemm_params p;
  memset(&p, 0, sizeof(p));
  p.final = 1;
  double best = 0;
  for (int rep = 0; rep < 3; rep++) {
    size_t calls = 0;
    const double t0 = (lc_thread_cpu_ms() * 1e-3);
    double t;
    do {
      for (int it = 0; it < 64; it++)
        for (size_t j = 0; j < nb; j++)
          kt->f32_gemm(m, n, k, a, 1, mr, b + j * nr * k, nr, c + j * mr * nr, nr, &p), calls++;
      t = (lc_thread_cpu_ms() * 1e-3) - t0;
    } while (t < secs);
    const double g = 2.0 * (double)(m * n * k) * (double)calls / t * 1e-9;
    if (g > best) best = g;
  }
  lc_free(a), lc_free(b), lc_free(c);
  return best;
}

int main(int argc, char **argv) {
  const double secs = argc > 1 ? atof(argv[1]) : 0.2;
  const int has_avx2 = (lc_cpu_features() & LC_CPU_AVX2_FMA) != 0;
  const double peak = has_avx2 ? fma_peak(secs) : 0;
  if (has_avx2) printf("measured FMA peak (1 core, ymm): %.1f GFLOP/s\n", peak);
  printf("%-8s %-6s %6s %10s %8s %8s\n", "table", "tile", "k", "GFLOP/s", "%of99", "%ofpeak");
  const size_t ks[] = {64, 256, 1024};
  for (size_t t = 0; t < lc_kernels_count(); t++) {
    const lc_kernels *kt = lc_kernels_at(t);
    if (!lc_kernels_runs_here(kt)) continue;
    char tile[48];
    snprintf(tile, sizeof(tile), "%zux%zu", kt->mr, kt->nr);
    for (int i = 0; i < 3; i++) {
      const double g = gemm_gflops(kt, kt->mr, kt->nr, ks[i], secs);
      printf("%-8s %-6s %6zu %10.1f %7.0f%% %7.0f%%\n", kt->name, tile, ks[i], g, 100 * g / NOMINAL_PEAK,
             peak > 0 ? 100 * g / peak : 0.0);
    }
    /* A ragged edge tile (masked B loads and stores). */
    const size_t em = kt->mr > 1 ? kt->mr - 1 : 1, en = kt->nr > 3 ? kt->nr - 3 : 1;
    const double g = gemm_gflops(kt, em, en, 256, secs);
    snprintf(tile, sizeof(tile), "%zux%zu", em, en);
    printf("%-8s %-6s %6d %10.1f %7.0f%% %7.0f%%  (edge tile)\n", kt->name, tile, 256, g, 100 * g / NOMINAL_PEAK,
           peak > 0 ? 100 * g / peak : 0.0);
  }
  return 0;
}
