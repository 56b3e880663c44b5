/* The strided gather kernels (im2col packing of strided convs) and the three-tap stride-2 gather
 * (taprows) against plain loops, with the source allocated to end exactly at the last element read
 * so an over-read trips ASan, and a guard after each output. */
#include <stdlib.h>
#include <string.h>

#include "kernels/registry.h"
#include "testutil.h"

static void check_table(const lc_kernels *k) {
  for (size_t stride = 1; stride <= 4; stride++)
    for (size_t n = 0; n <= 70; n++) {
      size_t len = n ? (n - 1) * stride + 1 : 1;
      float *src = malloc(len * sizeof(float)), *dst = malloc((n + 1) * sizeof(float));
      for (size_t i = 0; i < len; i++) src[i] = (float)i * 0.5f - 3.0f;
      dst[n] = 12345.0f; /* guard */
      k->f32_gather(dst, src, n, stride);
      int ok = dst[n] == 12345.0f;
      for (size_t j = 0; j < n; j++) ok &= dst[j] == src[j * stride];
      TU_CHECK(ok, "%s gather n=%zu stride=%zu", k->name, n, stride);
      free(src);
      free(dst);
    }
}

static void check_gather3(const lc_kernels *k) {
  if (!k->f32_gather3_s2) return;
  for (size_t n = 0; n <= 70; n++) {
    size_t len = 2 * n + 1;
    float *src = malloc(len * sizeof(float)), *d[3];
    for (size_t i = 0; i < len; i++) src[i] = (float)i * 0.25f - 5.0f;
    for (int t = 0; t < 3; t++) {
      d[t] = malloc((n + 1) * sizeof(float));
      d[t][n] = 12345.0f; /* guard */
    }
    k->f32_gather3_s2(d[0], d[1], d[2], src, n);
    int ok = 1;
    for (int t = 0; t < 3; t++) {
      ok &= d[t][n] == 12345.0f;
      for (size_t j = 0; j < n; j++) ok &= d[t][j] == src[2 * j + (size_t)t];
      free(d[t]);
    }
    TU_CHECK(ok, "%s gather3_s2 n=%zu", k->name, n);
    free(src);
  }
}

int main(void) {
  for (size_t t = 0; t < lc_kernels_count(); t++)
    if (lc_kernels_runs_here(lc_kernels_at(t))) {
      check_table(lc_kernels_at(t));
      check_gather3(lc_kernels_at(t));
    }
  return tu_finish("test_gather");
}
