/* Depthwise rows read in place (each table's f32_dw_row_unpadded): cycles per output vector of 8 on
 * rows in L1, thread CPU time, best of 7. The clock is taken from the argument (GHz), not measured.
 * Usage: bench_dw_rows OW ROWS K STRIDE [GHz, default 3.1] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/registry.h"
#include "util/alloc.h"
#include "util/timer.h"

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: bench_dw_rows OW ROWS K STRIDE [GHz]\n");
    return 2;
  }
  const size_t ow = (size_t)atoi(argv[1]), R = (size_t)atoi(argv[2]), k = (size_t)atoi(argv[3]),
               s = (size_t)atoi(argv[4]);
  const double ghz = argc > 5 ? atof(argv[5]) : 3.1;
  if (ow < 1 || ow > 4096 || (k != 3 && k != 5) || (s != 1 && s != 2) || R < 1 || R > 64) {
    fprintf(stderr, "bench_dw_rows: OW 1..4096, ROWS 1..64, K 3 or 5, STRIDE 1 or 2\n");
    return 2;
  }
  const size_t iw = ow * s, pl = k / 2, ni = s * (R - 1) + k;
  float *in = lc_malloc(ni * iw * sizeof(float)), *out = lc_malloc(R * ow * sizeof(float)), w[25];
  const float *rows[160];
  if (!in || !out) return 1;
  for (size_t i = 0; i < ni * iw; i++) in[i] = (float)(i % 7) * 0.1f;
  for (size_t i = 0; i < ni; i++) rows[i] = in + i * iw;
  for (int i = 0; i < 25; i++) w[i] = 0.01f * (float)i;
  lc_gemm_params p;
  memset(&p, 0, sizeof p);
  p.final = 1;
  for (size_t t = 0; t < lc_kernels_count(); t++) {
    const lc_kernels *kt = lc_kernels_at(t);
    if (!lc_kernels_runs_here(kt) || !kt->f32_dw_row_unpadded) continue;
    double best = 1e30;
    for (int rep = 0; rep < 7; rep++) {
      long n = 0;
      double t0 = lc_thread_cpu_ms(), el;
      do {
        for (int i = 0; i < 1000; i++) kt->f32_dw_row_unpadded(ow, R, ow, s, k, pl, iw, rows, w, out, &p);
        n += 1000;
      } while ((el = lc_thread_cpu_ms() - t0) < 100.0);
      if (el / (double)n < best) best = el / (double)n;
    }
    printf("%-8s ow %zu rows %zu k %zu stride %zu: %.2f cycles per output vector\n", kt->name, ow, R, k, s,
           best * 1e6 * ghz / ((double)R * (double)ow / 8.0));
  }
  lc_free(in), lc_free(out);
  return 0;
}
