/* What storing the first n lanes of a ymm costs: vmaskmovps against 128 / 64 / 32-bit stores (the
 * way lc_avx2_store_n writes row tails) and against a full store. AMD's masked store is microcoded
 * (a Zen 3: ~4.4 ns against ~1.2), Intel's about one cycle. Thread CPU time, best of 3.
 * Usage: bench_store_tail [lanes 1..7, default 7] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu.h"
#include "util/timer.h"

#define N 10000000
static float buf[64 * 16 + 16] __attribute__((aligned(64)));

/* each store's value depends on the last (an add of ~3 cycles), so a store can't be skipped */
__attribute__((target("avx2"), noinline)) static void masked(int n, __m256 v) {
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int i = 0; i < N; i++) {
    _mm256_maskstore_ps(buf + (i & 63) * 16 + 1, m, v);
    v = _mm256_add_ps(v, v);
  }
}

__attribute__((target("avx2"), noinline)) static void partial(int n, __m256 v) {
  for (int i = 0; i < N; i++) {
    float *d = buf + (i & 63) * 16 + 1;
    __m128 x = _mm256_castps256_ps128(v);
    int k = n;
    if (k >= 4) _mm_storeu_ps(d, x), x = _mm256_extractf128_ps(v, 1), d += 4, k -= 4;
    if (k >= 2) _mm_storel_pi((__m64 *)(void *)d, x), x = _mm_movehl_ps(x, x), d += 2, k -= 2;
    if (k) _mm_store_ss(d, x);
    v = _mm256_add_ps(v, v);
  }
}

__attribute__((target("avx2"), noinline)) static void full(__m256 v) {
  for (int i = 0; i < N; i++) {
    _mm256_storeu_ps(buf + (i & 63) * 16 + 1, v);
    v = _mm256_add_ps(v, v);
  }
}

__attribute__((target("avx2"))) static double best_ns(int kind, int n) {
  double best = 1e30;
  for (int r = 0; r < 3; r++) {
    const __m256 v = _mm256_set1_ps(1.0f);
    double t0 = lc_thread_cpu_ms();
    if (kind == 0) masked(n, v);
    else if (kind == 1) partial(n, v);
    else full(v);
    double t = (lc_thread_cpu_ms() - t0) * 1e6 / N;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 7;
  if (n < 1 || n > 7) n = 7;
  if (!(lc_cpu_features() & LC_CPU_AVX2_FMA)) {
    printf("bench_store_tail: no AVX2 on this CPU\n");
    return 0;
  }
  printf("%d lanes of a ymm, ns a store: vmaskmovps %.2f, 128/64/32-bit stores %.2f, full store %.2f\n", n,
         best_ns(0, n), best_ns(1, n), best_ns(2, n));
  return 0;
}
