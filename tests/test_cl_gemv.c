/* OpenCL gemv and gemvq families on long rows (test_cl_conv's 1x1 shapes have K <= 90, so each work item
 * there reads at most one round of chunks): fully connected and few-pixel 1x1 convs with K up to
 * 4096, every format, symmetry and block size, each gemv variant forced (LOWCONV_CL_VARIANT)
 * and checked against lc_conv_reference on the dequantized weights (1e-4 of max |ref|); gemvq
 * (int8 activations, dp4a; emulated on devices without it) against the reference on the input as
 * it rounds it (tu_act_int8), and against the float input within its stated bound.
 * The fast variants must be eligible where the chunk fits the blocks (K % 8 == 0 for q4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "testutil.h"

static const char *const variants[][2] = {{"gemv", "p1"},  {"gemv", "p1b2"}, {"gemv", "p1b4"},  {"gemv", "p2"},
                                          {"gemv", "p4"},  {"gemv", "p8"},   {"gemv", "r1"},    {"gemv", "r1p4"},
                                          {"gemvq", "b1"}, {"gemvq", "b2"},  {"gemvq", "b4"},   {"gemvq", "b8"},
                                          {"gemvq", "w1"}, {"gemvq", "w2"},  {"gemvq", "w4"},   {"gemvq", "w1u8"},
                                          {"gemvq", "w2u2"}, {"gemvq", "s2"}};

typedef struct fc {
  int n, cin, cout, ih, iw, stride;
  lc_weight_format fmt;
  int asym, block, fast; /* fast: the chunked variants (and gemvq where it applies) must accept it */
} fc;

/* gemvq applies: one output pixel, q8/q4, K a multiple of 8. */
static int gemvq_applies(const fc *s, int64_t oh, int64_t ow) {
  return s->n * oh * ow == 1 && s->fmt != LC_WEIGHTS_F32 && s->cin % 8 == 0;
}

static void check_fc(lc_context *ctx, const fc *s, int idx) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = s->cin, d.out_channels = s->cout, d.kernel_h = d.kernel_w = 1;
  d.stride_h = d.stride_w = s->stride;
  d.weight_format = s->fmt, d.asym = s->asym, d.block_size = s->block;
  d.activation = (lc_activation)(idx % 5), d.act_min = -0.5f, d.act_max = 0.7f, d.act_alpha = 0.1f;
  size_t nw = (size_t)s->cin * s->cout;
  int64_t oh = (s->ih - 1) / s->stride + 1, ow = (s->iw - 1) / s->stride + 1;
  size_t nin = (size_t)s->n * s->cin * s->ih * s->iw, nout = (size_t)(s->n * s->cout * oh * ow);
  float *w = malloc(nw * 4), *wq = malloc(nw * 4), *b = malloc((size_t)s->cout * 4), *x = malloc(nin * 4);
  float *ref = malloc(nout * 4), *refq = malloc(nout * 4), *got = malloc(nout * 4), *xd = malloc(nin * 4);
  float *amax = malloc((size_t)(s->cin / 8 + 1) * 4);
  tu_fill(w, nw, -1, 1), tu_fill(b, (size_t)s->cout, -1, 1), tu_fill(x, nin, -1, 1);
  d.weights = w, d.bias = b;
  lc_conv *c = NULL;
  TU_CHECK(lc_conv_create(ctx, &d, &c) == LC_OK, "fc %d create: %s", idx, lc_last_error());
  if (!c) goto out;
  TU_CHECK(lc_conv_get_weights(c, wq) == LC_OK, "get_weights: %s", lc_last_error());
  lc_conv_desc rd = d;
  rd.weights = wq, rd.weight_format = LC_WEIGHTS_F32;
  TU_CHECK(lc_conv_reference(&rd, s->n, s->ih, s->iw, x, ref) == LC_OK, "reference: %s", lc_last_error());
  /* gemvq's reference: the same conv on the int8-rounded input pixel (the one pixel it reads). */
  int q = gemvq_applies(s, oh, ow);
  memcpy(xd, x, nin * 4);
  if (q) tu_act_int8(x, (size_t)s->cin / 8, (size_t)(s->ih * s->iw), xd, amax);
  TU_CHECK(lc_conv_reference(&rd, s->n, s->ih, s->iw, xd, refq) == LC_OK, "reference: %s", lc_last_error());
  double mx = 0, mxq = 0;
  for (size_t i = 0; i < nout; i++) mx = fmax(mx, fabs(ref[i])), mxq = fmax(mxq, fabs(refq[i]));
  int ran = 0, ranq = 0;
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    int isq = variants[v][0][4] == 'q';
    setenv("LOWCONV_CL_FAMILY", variants[v][0], 1);
    setenv("LOWCONV_CL_VARIANT", variants[v][1], 1);
    lc_conv_shape sh;
    lc_status st = lc_conv_prepare(c, s->n, s->ih, s->iw, &sh);
    if (st == LC_ERR_UNSUPPORTED) {
      TU_CHECK(!(s->fast && v == 0), "fc %d: gemv p1 not eligible", idx);
      TU_CHECK(!(q && isq && (variants[v][1][0] == 'w' || variants[v][1][0] == 's' || !strcmp(variants[v][1], "b1"))),
               "fc %d: gemvq %s not eligible", idx, variants[v][1]);
      continue;
    }
    TU_CHECK(st == LC_OK, "fc %d %s prepare: %s", idx, variants[v][1], lc_last_error());
    if (st) continue;
    lc_conv_device_info info;
    TU_CHECK(lc_conv_device_info_get(c, &info) == LC_OK && !strncmp(info.kernel, variants[v][0], strlen(variants[v][0])),
             "fc %d %s: ran %s", idx, variants[v][1], info.kernel);
    for (size_t i = 0; i < nout; i++) got[i] = NAN;
    TU_CHECK(lc_conv_run(c, x, got, NULL, 0) == LC_OK, "fc %d %s run: %s", idx, variants[v][1], lc_last_error());
    const float *r = isq ? refq : ref;
    double err = 0, m = isq ? mxq : mx;
    for (size_t i = 0; i < nout; i++) err = fmax(err, isfinite(got[i]) ? fabs(got[i] - r[i]) : INFINITY);
    TU_CHECK(err <= 1e-4 * fmax(m, 1e-30), "fc %d %s %s: err %.3g of %.3g (n%d K%d N%d %dx%d s%d fmt%d asym%d block%d)",
             idx, variants[v][0], variants[v][1], err, m, s->n, s->cin, s->cout, s->ih, s->iw, s->stride, (int)s->fmt,
             s->asym, s->block);
    if (isq) {
      /* The stated accuracy against the float input: |got - ref| <= sum_k |w_ok| * amax_unit(k) / 254
       * (before the activation, which is 1-Lipschitz; + fp32 slack). */
      for (int o = 0; o < s->cout; o++) {
        double bound = 1e-4 * mx;
        for (int k = 0; k < s->cin; k++) bound += fabs(wq[(size_t)o * s->cin + k]) * amax[k / 8] / 254.0;
        TU_CHECK(fabs(got[o] - ref[o]) <= bound, "fc %d %s: output %d off the float input by %.3g > bound %.3g",
                 idx, variants[v][1], o, fabs(got[o] - ref[o]), bound);
      }
      ranq++;
    }
    ran++;
  }
  TU_CHECK(ran > 0, "fc %d: no gemv variant ran", idx);
  TU_CHECK(!q || ranq > 0, "fc %d: no gemvq variant ran", idx);
out:
  lc_conv_destroy(c);
  free(w), free(wq), free(b), free(x), free(ref), free(refq), free(got), free(xd), free(amax);
}

int main(void) {
  tu_seed_from_env(20261202);
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL, p.tune = LC_TUNE_NONE, p.cache_dir = ""; /* no on-disk caches */
  lc_context *ctx = NULL;
  if (tu_no_opencl()) return tu_finish("test_cl_gemv");
  TU_CHECK(lc_context_create(&p, &ctx) == LC_OK, "context: %s", lc_last_error());
  if (!ctx) return tu_finish("test_cl_gemv");
  setenv("LOWCONV_CL_DP4A_EMU", "1", 0); /* gemvq with dp4a emulated where the device has none */
  static const fc shapes[] = {
      {1, 4096, 37, 1, 1, 1, LC_WEIGHTS_Q4, 1, 32, 1},  {1, 4096, 21, 1, 1, 1, LC_WEIGHTS_Q8, 0, 64, 1},
      {1, 2048, 13, 1, 1, 1, LC_WEIGHTS_F32, 0, 0, 1},  {2, 1024, 9, 2, 2, 1, LC_WEIGHTS_Q4, 0, 0, 1},
      {3, 512, 8, 1, 1, 1, LC_WEIGHTS_Q8, 1, 128, 1},   {1, 1000, 13, 1, 3, 1, LC_WEIGHTS_Q4, 1, 16, 0},
      {1, 3000, 7, 3, 3, 2, LC_WEIGHTS_Q4, 1, 256, 1},  {1, 1536, 30, 1, 1, 1, LC_WEIGHTS_Q4, 0, 16, 1},
      /* one output pixel for gemvq: odd N, every block size, strided input (NCHW gather) */
      {1, 4096, 45, 1, 1, 1, LC_WEIGHTS_Q8, 0, 32, 1},  {1, 520, 33, 1, 1, 1, LC_WEIGHTS_Q4, 1, 0, 1},
      {1, 200, 5, 3, 3, 3, LC_WEIGHTS_Q8, 1, 16, 1},    {1, 2048, 19, 2, 1, 2, LC_WEIGHTS_Q4, 0, 128, 1},
      {1, 768, 70, 1, 1, 1, LC_WEIGHTS_Q8, 0, 256, 1},  {1, 8, 3, 1, 1, 1, LC_WEIGHTS_Q4, 1, 16, 1},
      {1, 1024, 9, 1, 1, 1, LC_WEIGHTS_Q4, 0, 64, 1},   {1, 640, 17, 1, 1, 1, LC_WEIGHTS_Q8, 1, 0, 1},
      /* the row-group variants (wR): N % 4 = 1, 2, 3, one block, K not a multiple of the block
       * (1000 = 62.5 x 16, 4104 = 64.1 x 64), K past one load round (32 items x U units), K of one
       * unit; a strided, non-contiguous pixel; K % 8 != 0 (gemvq refuses it, gemv runs) */
      {1, 1000, 5, 1, 1, 1, LC_WEIGHTS_Q4, 0, 16, 1},   {1, 4104, 10, 1, 1, 1, LC_WEIGHTS_Q8, 1, 64, 1},
      {1, 2056, 99, 1, 1, 1, LC_WEIGHTS_Q4, 1, 32, 1},  {1, 8, 1, 1, 1, 1, LC_WEIGHTS_Q8, 0, 16, 1},
      {1, 1536, 130, 1, 1, 1, LC_WEIGHTS_Q4, 0, 128, 1}, {1, 264, 402, 2, 2, 2, LC_WEIGHTS_Q8, 0, 256, 1},
      {1, 3072, 7, 1, 1, 1, LC_WEIGHTS_Q4, 1, 0, 1},    {1, 1003, 6, 1, 1, 1, LC_WEIGHTS_Q4, 0, 0, 0},
      {1, 776, 2, 1, 1, 1, LC_WEIGHTS_Q4, 1, 64, 1},    {1, 2048, 811, 1, 1, 1, LC_WEIGHTS_Q8, 1, 32, 1},
      /* with the ones above, the heuristic gives every wR 32..256 items (row groups per
       * work-group 1..8) on a 2-unit PoCL */
      {1, 512, 300, 1, 1, 1, LC_WEIGHTS_Q4, 1, 32, 1},  {1, 256, 1541, 1, 1, 1, LC_WEIGHTS_Q8, 0, 16, 1},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) check_fc(ctx, &shapes[i], (int)i);
  lc_context_destroy(ctx);
  /* Again with the weights uploaded through pinned memory in small pieces (cl_conv.c), as on GPUs
   * for large convs: every piece boundary, scales and offsets included, lands where it should. */
  setenv("LOWCONV_CL_PINNED", "1", 1);
  setenv("LOWCONV_CL_UPLOAD_CHUNK", "65536", 1);
  ctx = NULL;
  TU_CHECK(lc_context_create(&p, &ctx) == LC_OK, "context: %s", lc_last_error());
  for (size_t i = 0; ctx && i < sizeof shapes / sizeof shapes[0]; i++) check_fc(ctx, &shapes[i], (int)i);
  unsetenv("LOWCONV_CL_UPLOAD_CHUNK");
  unsetenv("LOWCONV_CL_PINNED");
  unsetenv("LOWCONV_CL_FAMILY");
  unsetenv("LOWCONV_CL_VARIANT");
  lc_context_destroy(ctx);
  return tu_finish("test_cl_gemv");
}
