/* The strided gather kernels (im2col packing of strided convs) and the three-tap stride-2 gather
 * (taprows) against plain loops, with the source allocated to end exactly at the last element read
 * so an over-read trips ASan, and a guard after each output. The row-block stride-2 gather
 * (f32_gather_s2_rows) reads a source that starts right after or ends right at a PROT_NONE page
 * (masked SIMD loads are not ASan-checked), its outputs between guards. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* n floats ending at a guard page (front = 0) or starting right after one (front = 1); *base, *len
 * for munmap. */
static float *guarded(size_t n, int front, void **base, size_t *len) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = (n * sizeof(float) + pg - 1) / pg;
  *len = (pages + 1) * pg;
  unsigned char *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) abort();
  *base = m;
  if (front) {
    mprotect(m, pg, PROT_NONE);
    return (float *)(void *)(m + pg);
  }
  mprotect(m + pages * pg, pg, PROT_NONE);
  return (float *)(void *)(m + pages * pg - n * sizeof(float));
}

static void check_rows(const lc_kernels *k) {
  if (!k->f32_gather_s2_rows) return;
  for (int it = 0; it < 3000; it++) {
    size_t iw = (size_t)tu_rand_int(1, 80), rows = (size_t)tu_rand_int(1, 5), srs = iw + (size_t)tu_rand_int(0, 40);
    size_t n = (size_t)tu_rand_int(1, (int)(iw + 4) / 2 + 2), drs = n + (size_t)tu_rand_int(0, 20);
    ptrdiff_t x0 = tu_rand_int(-3, 2);
    int three = tu_rand_int(0, 1), front = it % 2;
    size_t slen = (rows - 1) * srs + iw, dlen = rows * drs + 1;
    void *base;
    size_t blen;
    float *src = guarded(slen, front, &base, &blen), *d[3];
    for (size_t i = 0; i < slen; i++) src[i] = (float)i * 0.25f + 1.0f;
    for (int t = 0; t < 3; t++) {
      d[t] = malloc(dlen * sizeof(float));
      for (size_t i = 0; i < dlen; i++) d[t][i] = 12345.0f; /* guards: the gaps between rows and the end */
    }
    k->f32_gather_s2_rows(d[0], three ? d[1] : NULL, three ? d[2] : NULL, drs, src, srs, rows, n, x0, iw);
    int ok = 1;
    for (int t = 0; t < 3; t++)
      for (size_t r = 0; r < rows; r++)
        for (size_t x = 0; x < drs; x++) {
          ptrdiff_t col = 2 * (ptrdiff_t)x + t + x0;
          float want = 12345.0f;
          if (x < n && (t == 0 || three)) want = col >= 0 && col < (ptrdiff_t)iw ? src[r * srs + (size_t)col] : 0.0f;
          ok &= d[t][r * drs + x] == want;
        }
    for (int t = 0; t < 3; t++) {
      ok &= d[t][rows * drs] == 12345.0f;
      free(d[t]);
    }
    TU_CHECK(ok, "%s gather_s2_rows iw=%zu rows=%zu srs=%zu n=%zu drs=%zu x0=%td three=%d front=%d", k->name, iw,
             rows, srs, n, drs, x0, three, front);
    munmap(base, blen);
  }
}

int main(void) {
  for (size_t t = 0; t < lc_kernels_count(); t++)
    if (lc_kernels_runs_here(lc_kernels_at(t))) {
      check_table(lc_kernels_at(t));
      check_gather3(lc_kernels_at(t));
      check_rows(lc_kernels_at(t));
    }
  return tu_finish("test_gather");
}
