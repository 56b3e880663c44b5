/* NCHW <-> NHWC conversion of one activation (layout.c decides where): per image, a [rows][cols]
 * float matrix transposed in 16 x 16 blocks (each block's 16 source rows stay in L1 while its
 * destination lines fill), the blocks dealt to the pool in bands of rows. */
#include "model/ops/ops_internal.h"
#include "util/transpose4.h"

#define TB 16

typedef struct tr_job {
  const float *src;
  float *dst;
  size_t rows, cols, bands; /* per image: src [rows][cols] -> dst [cols][rows] */
} tr_job;

static void tr_task(void *arg, size_t task, int thread) {
  const tr_job *j = arg;
  (void)thread;
  size_t img = task / j->bands, b = task % j->bands, r0 = b * TB, r1 = r0 + TB < j->rows ? r0 + TB : j->rows;
  const float *s = j->src + img * j->rows * j->cols;
  float *d = j->dst + img * j->rows * j->cols;
  for (size_t c0 = 0; c0 < j->cols; c0 += TB) {
    size_t c1 = c0 + TB < j->cols ? c0 + TB : j->cols;
#if LC_HAVE_TR4
    if (r1 - r0 == TB && c1 - c0 == TB) {
      for (size_t r = 0; r < TB; r += 4)
        for (size_t c = 0; c < TB; c += 4)
          lc_tr4(s + (r0 + r) * j->cols + c0 + c, j->cols, d + (c0 + c) * j->rows + r0 + r, j->rows);
      continue;
    }
#endif
    for (size_t c = c0; c < c1; c++)
      for (size_t r = r0; r < r1; r++) d[c * j->rows + r] = s[r * j->cols + c];
  }
}

void lcop_layout_convert(lc_exec_ctx *x, const float *src, float *dst, size_t n, size_t c, size_t hw, int to_nhwc) {
  tr_job j = {src, dst, to_nhwc ? c : hw, to_nhwc ? hw : c, 0};
  j.bands = (j.rows + TB - 1) / TB;
  if (n && j.rows && j.cols) lcop_parallel(x, n * j.bands, tr_task, &j);
}
