/* The depthwise route's C8 variant (8 channels transposed into one zero-padded tile, AVX2):
 * randomized NCHW depthwise shapes (1-41 channels, so every tail of 8; kernels 1-7, not always
 * square; strides 1-2, the route's; dilation 1-2; pads up to the kernel, asymmetric; 1-30 px;
 * batch 1-2; bias, activations, post affine, PRelu; Q8 / Q4 weights) against lc_conv_reference
 * within the conv_cases.h bound, and bitwise equal to the other variants (LOWCONV_DW_C8=0), to 2
 * threads, and to a budget too small for its tile. The tiles here (<= 42 x 42 x 8 floats) are all
 * under the variant's limit, so LOWCONV_DW_C8=1 always takes it. */
#include "conv_cases.h"

#include <stdlib.h>

static lc_context *ctx1, *ctx2, *ctx_tight;

static lc_status run(lc_context *cx, const cc_case *c, const float *in, float *out, int c8, lc_conv_shape *shape) {
  setenv("LOWCONV_DW_C8", c8 ? "1" : "0", 1);
  lc_conv *conv = NULL;
  lc_status st = lc_conv_create(cx, &c->d, &conv);
  if (st == LC_OK) st = lc_conv_prepare(conv, c->n, c->h, c->w, shape);
  if (st == LC_OK) st = lc_conv_run(conv, in, out, NULL, 0);
  lc_conv_destroy(conv);
  unsetenv("LOWCONV_DW_C8");
  return st;
}

/* "" when a and b are the same bits, else where they first differ. */
static const char *first_diff(const cc_case *c, const float *a, const float *b, size_t n) {
  static char buf[160];
  int64_t oh, ow;
  cc_out_size(c, &oh, &ow);
  size_t plane = (size_t)(oh * ow);
  for (size_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(float))) {
      snprintf(buf, sizeof buf, " at channel %zu, y %zu, x %zu: %.9g against %.9g", i / plane % (size_t)c->d.out_channels,
               i % plane / (size_t)ow, i % (size_t)ow, a[i], b[i]);
      return buf;
    }
  return "";
}

static void check(cc_case *c) {
  char dsc[400];
  cc_describe(c, dsc, sizeof dsc);
  size_t nin = cc_in_count(c), nout = cc_out_count(c);
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *a = malloc(nout * sizeof(float));
  float *b = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  lc_conv_shape sh;
  lc_status st = run(ctx1, c, in, a, 1, &sh);
  TU_CHECK(st == LC_OK, "C8: %s [%s]", lc_last_error(), dsc);
  if (st == LC_OK) TU_CHECK(sh.route == LC_ROUTE_DEPTHWISE, "route %s [%s]", lc_route_name(sh.route), dsc);
  /* the reference on the weights as the library holds them (dequantized Q8 / Q4), a copy: c's own
   * weights are what the runs below quantize */
  cc_case fc = *c;
  size_t nw = (size_t)(c->d.out_channels * cc_k(c));
  float *wq = malloc(nw * sizeof(float));
  memcpy(wq, c->wts, nw * sizeof(float));
  lc_conv *conv = NULL;
  if (st == LC_OK && c->d.weight_format != LC_WEIGHTS_F32 && (st = lc_conv_create(ctx1, &c->d, &conv)) == LC_OK)
    st = lc_conv_get_weights(conv, wq);
  lc_conv_destroy(conv);
  fc.d.weight_format = LC_WEIGHTS_F32;
  fc.d.weights = fc.wts = wq;
  cc_bound bd = {0};
  if (st == LC_OK) st = lc_conv_reference(&fc.d, c->n, c->h, c->w, in, ref);
  if (st == LC_OK) st = cc_bound_make(&fc, in, &bd);
  TU_CHECK(st == LC_OK, "reference: %s [%s]", lc_last_error(), dsc);
  if (st == LC_OK) {
    size_t at;
    double r = cc_err_ratio(&bd, LC_ROUTE_DEPTHWISE, a, ref, nout, &at);
    TU_CHECK(r <= 1.0, "C8: element %zu = %g, reference %g (%.2f x bound) [%s]", at, a[at], ref[at], r, dsc);
    lc_status s = run(ctx1, c, in, b, 0, &sh);
    TU_CHECK(s == LC_OK && !memcmp(a, b, nout * sizeof(float)), "C8 differs from the other variants%s [%s]",
             first_diff(c, a, b, nout), dsc);
    s = run(ctx2, c, in, b, 1, &sh);
    TU_CHECK(s == LC_OK && !memcmp(a, b, nout * sizeof(float)), "2 threads differ [%s]", dsc);
    s = run(ctx_tight, c, in, b, 1, &sh);
    TU_CHECK(s == LC_OK && !memcmp(a, b, nout * sizeof(float)), "budget 4 KiB differs: %s [%s]",
             s ? lc_last_error() : "", dsc);
  }
  free(bd.s);
  free(wq);
  free(in), free(ref), free(a), free(b);
}

static void random_case(int i) {
  cc_case c;
  lc_conv_desc_init(&c.d);
  int64_t ch = tu_rand_int(1, 41);
  c.d.in_channels = c.d.out_channels = c.d.groups = ch;
  c.d.kernel_h = tu_rand_int(0, 2) ? 3 + 2 * tu_rand_int(0, 1) : tu_rand_int(1, 7);
  c.d.kernel_w = tu_rand_int(0, 3) ? c.d.kernel_h : tu_rand_int(1, 7);
  c.d.stride_h = tu_rand_int(1, 2), c.d.stride_w = tu_rand_int(0, 2) ? c.d.stride_h : tu_rand_int(1, 2);
  c.d.route = LC_ROUTE_DEPTHWISE; /* AUTO may take im2col or the stem */
  c.d.dilation_h = c.d.dilation_w = tu_rand_int(0, 4) ? 1 : 2;
  c.d.pad_top = tu_rand_int(0, (int)c.d.kernel_h - 1), c.d.pad_bottom = tu_rand_int(0, (int)c.d.kernel_h - 1);
  c.d.pad_left = tu_rand_int(0, (int)c.d.kernel_w - 1), c.d.pad_right = tu_rand_int(0, (int)c.d.kernel_w - 1);
  c.n = tu_rand_int(1, 2);
  int64_t eh = cc_ext(c.d.kernel_h, c.d.dilation_h), ew = cc_ext(c.d.kernel_w, c.d.dilation_w);
  c.h = tu_rand_int(1, 30) + eh - 1 - c.d.pad_top - c.d.pad_bottom;
  c.w = tu_rand_int(1, 30) + ew - 1 - c.d.pad_left - c.d.pad_right;
  if (c.h < 1) c.h = 1;
  if (c.w < 1) c.w = 1;
  if (c.h + c.d.pad_top + c.d.pad_bottom < eh) c.d.pad_bottom += eh - (c.h + c.d.pad_top + c.d.pad_bottom);
  if (c.w + c.d.pad_left + c.d.pad_right < ew) c.d.pad_right += ew - (c.w + c.d.pad_left + c.d.pad_right);
  cc_random_act(&c.d);
  cc_fill(&c, tu_rand_int(0, 2) != 0);
  cc_post_of(&c.d, i);
  cc_prelu_of(&c.d, i);
  if (i % 7 == 3) {
    c.d.weight_format = (lc_weight_format)(1 + i % 2);
    c.d.asym = i % 2;
  }
  check(&c);
  cc_free(&c);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(88);
  size_t start = lc_alloc_current_bytes();
  if (cc_context(LC_ISA_AVX2, 1, 0, &ctx1) != LC_OK) {
    printf("test_conv_dw_c8: no AVX2 on this CPU, skipped\n");
    return 0;
  }
  TU_CHECK(cc_context(LC_ISA_AVX2, 2, 0, &ctx2) == LC_OK, "context");
  TU_CHECK(cc_context(LC_ISA_AVX2, 1, 4096, &ctx_tight) == LC_OK, "context");
  int count = cc_quick() ? 60 : 200;
  for (int i = 0; i < count; i++) random_case(i);
  lc_context_destroy(ctx1), lc_context_destroy(ctx2), lc_context_destroy(ctx_tight);
  TU_CHECK(lc_alloc_current_bytes() == start, "leak: %zu bytes", lc_alloc_current_bytes() - start);
  return tu_finish("test_conv_dw_c8");
}
