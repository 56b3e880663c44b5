/* Bad input must give the right status and a message, never a crash or a leak; so must every
 * injected allocation failure in create, prepare and run. */
#include <math.h>
#include "conv_cases.h"

static size_t start_bytes;

static void expect(lc_status got, lc_status want, const char *what) {
  TU_CHECK(got == want, "%s: got %s, want %s (%s)", what, lc_status_name(got), lc_status_name(want), lc_last_error());
  if (got != LC_OK) TU_CHECK(lc_last_error()[0] != 0, "%s: empty lc_last_error()", what);
}

/* Either of two statuses is right (which check fires first is the library's choice). */
static void expect2(lc_status got, lc_status a, lc_status b, const char *what) {
  TU_CHECK(got == a || got == b, "%s: got %s, want %s or %s (%s)", what, lc_status_name(got), lc_status_name(a),
           lc_status_name(b), lc_last_error());
  TU_CHECK(got == LC_OK || lc_last_error()[0] != 0, "%s: empty lc_last_error()", what);
}

static float g_w[6 * 4 * 11 * 11]; /* room for the 11x3 kernel case */
static float g_in[2 * 4 * 16 * 16], g_out[2 * 6 * 16 * 16], g_ref[2 * 6 * 16 * 16];

/* 4 -> 6 channels, 3x3, pad 1: a shape every general route can run. */
static lc_conv_desc base_desc(void) {
  lc_conv_desc d = cc_desc(4, 6, 3, 1);
  d.weights = g_w;
  return d;
}

/* lc_conv_create on a modified descriptor; destroys the operator if it got one. */
static lc_status try_create(lc_context *ctx, const lc_conv_desc *d) {
  lc_conv *c = NULL;
  lc_status st = lc_conv_create(ctx, d, &c);
  if (st == LC_OK) lc_conv_destroy(c);
  return st;
}

/* create + prepare on a descriptor and input size. */
static lc_status try_prepare(lc_context *ctx, const lc_conv_desc *d, int64_t n, int64_t h, int64_t w) {
  lc_conv *c = NULL;
  lc_status st = lc_conv_create(ctx, d, &c);
  if (st != LC_OK) return st;
  lc_conv_shape s;
  st = lc_conv_prepare(c, n, h, w, &s);
  lc_conv_destroy(c);
  return st;
}

static void test_context_args(void) {
  lc_context_params p;
  lc_context_params_init(&p);
  expect(lc_context_create(&p, NULL), LC_ERR_INVALID_ARG, "context: out NULL");
  lc_context *ctx = NULL;
  p.threads = -1;
  expect(lc_context_create(&p, &ctx), LC_ERR_INVALID_ARG, "context: threads -1");
  lc_context_params_init(&p);
  p.isa = (lc_isa)42;
  expect(lc_context_create(&p, &ctx), LC_ERR_INVALID_ARG, "context: isa 42");
}

static void test_desc(lc_context *ctx) {
  const int64_t big = (int64_t)1 << 40;
  lc_conv_desc d;
#define BAD(field_edit, want, what) \
  do {                              \
    d = base_desc();                \
    field_edit;                     \
    expect(try_create(ctx, &d), want, what); \
  } while (0)
  BAD((void)0, LC_OK, "base descriptor");
  expect(lc_conv_create(NULL, &d, &(lc_conv *){NULL}), LC_ERR_INVALID_ARG, "create: ctx NULL");
  expect(lc_conv_create(ctx, NULL, &(lc_conv *){NULL}), LC_ERR_INVALID_ARG, "create: desc NULL");
  expect(lc_conv_create(ctx, &d, NULL), LC_ERR_INVALID_ARG, "create: out NULL");
  BAD(d.weights = NULL, LC_ERR_INVALID_ARG, "weights NULL");
  BAD(d.in_channels = 0, LC_ERR_INVALID_ARG, "in_channels 0");
  BAD(d.in_channels = -4, LC_ERR_INVALID_ARG, "in_channels -4");
  BAD(d.out_channels = 0, LC_ERR_INVALID_ARG, "out_channels 0");
  BAD(d.groups = 0, LC_ERR_INVALID_ARG, "groups 0");
  BAD(d.groups = -2, LC_ERR_INVALID_ARG, "groups -2");
  BAD(d.groups = 3, LC_ERR_INVALID_ARG, "in_channels 4 not divisible by groups 3");
  BAD((d.groups = 4, d.out_channels = 6), LC_ERR_INVALID_ARG, "out_channels 6 not divisible by groups 4");
  BAD(d.kernel_h = 0, LC_ERR_INVALID_ARG, "kernel_h 0");
  BAD(d.kernel_w = -1, LC_ERR_INVALID_ARG, "kernel_w -1");
  BAD(d.stride_h = 0, LC_ERR_INVALID_ARG, "stride_h 0");
  BAD(d.stride_w = -2, LC_ERR_INVALID_ARG, "stride_w -2");
  BAD(d.dilation_h = 0, LC_ERR_INVALID_ARG, "dilation_h 0");
  BAD(d.pad_top = -1, LC_ERR_INVALID_ARG, "pad_top -1");
  BAD(d.pad_right = -5, LC_ERR_INVALID_ARG, "pad_right -5");
  BAD(d.auto_pad = (lc_auto_pad)9, LC_ERR_INVALID_ARG, "auto_pad 9");
  BAD(d.layout = (lc_layout)7, LC_ERR_INVALID_ARG, "layout 7");
  BAD(d.activation = (lc_activation)11, LC_ERR_INVALID_ARG, "activation 11");
  BAD(d.post_mul = NAN, LC_ERR_INVALID_ARG, "post_mul NaN");
  BAD(d.post_add = INFINITY, LC_ERR_INVALID_ARG, "post_add inf");
  BAD(d.post_mul = 0.0f, LC_OK, "post_mul 0");
  static const float slopes_ok[6] = {0.25f, -1.0f, 0.0f, 2.0f, 0.5f, 1.0f};
  static const float slopes_nan[6] = {0.25f, -1.0f, NAN, 2.0f, 0.5f, 1.0f};
  BAD(d.activation = LC_ACT_PRELU, LC_ERR_INVALID_ARG, "PRelu without slopes");
  BAD((d.activation = LC_ACT_PRELU, d.act_slopes = slopes_nan), LC_ERR_INVALID_ARG, "PRelu slope NaN");
  BAD((d.activation = LC_ACT_PRELU, d.act_slopes = slopes_ok), LC_OK, "PRelu");
  static const float padv_inf[8] = {0.5f, -1.0f, INFINITY, 0.0f, 0.5f, 1.0f, 2.0f, -3.0f};
  static const float padv_ok[8] = {0.5f, -1.0f, 0.0f, 0.0f, 0.5f, 1.0f, 2.0f, -3.0f};
  BAD(d.pad_values = padv_inf, LC_ERR_INVALID_ARG, "pad value inf");
  BAD(d.pad_values = padv_ok, LC_OK, "pad values");
  d = base_desc(), d.pad_values = padv_ok, d.route = LC_ROUTE_IM2COL;
  expect(try_prepare(ctx, &d, 1, 8, 8), LC_ERR_UNSUPPORTED, "pad values on im2col (zeros only)");
  d.route = LC_ROUTE_AUTO;
  expect(try_prepare(ctx, &d, 1, 8, 8), LC_OK, "pad values, AUTO skips im2col");
  BAD(d.route = (lc_route)LC_ROUTE_COUNT, LC_ERR_INVALID_ARG, "route out of range");
  BAD(d.weight_format = (lc_weight_format)9, LC_ERR_INVALID_ARG, "weight_format 9");
  /* Products that overflow: weights count (2^80 floats), kernel area. The weights pointer is tiny:
   * the library must fail before reading it. */
  BAD((d.in_channels = big, d.out_channels = big), LC_ERR_OVERFLOW, "channels 2^40 x 2^40");
  BAD((d.kernel_h = big, d.kernel_w = big), LC_ERR_OVERFLOW, "kernel 2^40 x 2^40");
  BAD((d.out_channels = big, d.kernel_h = (int64_t)1 << 30), LC_ERR_OVERFLOW, "out 2^40 x kernel 2^30");
#undef BAD
  /* Dilated extent (k-1)*d overflows int64: at create or at prepare. */
  d = base_desc();
  d.dilation_h = (int64_t)1 << 62;
  expect2(try_prepare(ctx, &d, 1, 8, 8), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG, "dilation 2^62");
}

static void test_prepare(lc_context *ctx) {
  lc_conv_desc d = base_desc();
  expect(try_prepare(ctx, &d, 1, 8, 8), LC_OK, "prepare base");
  expect(try_prepare(ctx, &d, 0, 8, 8), LC_ERR_INVALID_ARG, "batch 0");
  expect(try_prepare(ctx, &d, -1, 8, 8), LC_ERR_INVALID_ARG, "batch -1");
  expect(try_prepare(ctx, &d, 1, 0, 8), LC_ERR_INVALID_ARG, "in_h 0");
  expect(try_prepare(ctx, &d, 1, 8, -3), LC_ERR_INVALID_ARG, "in_w -3");
  lc_conv_shape s;
  expect(lc_conv_prepare(NULL, 1, 8, 8, &s), LC_ERR_INVALID_ARG, "prepare: conv NULL");
  /* Kernel larger than the padded input. */
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 0;
  expect(try_prepare(ctx, &d, 1, 2, 8), LC_ERR_INVALID_ARG, "3x3 kernel on 2x8 unpadded");
  d.auto_pad = LC_PAD_VALID;
  d.pad_top = 5; /* ignored under VALID */
  expect(try_prepare(ctx, &d, 1, 8, 2), LC_ERR_INVALID_ARG, "3x3 VALID on 8x2");
  d = base_desc();
  d.kernel_h = 11;
  d.pad_top = d.pad_bottom = 2;
  expect(try_prepare(ctx, &d, 1, 6, 8), LC_ERR_INVALID_ARG, "11x3 kernel on 6+4 padded rows");
  d.dilation_w = 5;
  d.kernel_h = 1;
  expect(try_prepare(ctx, &d, 1, 8, 8), LC_ERR_INVALID_ARG, "3x3 dilation 5 (extent 11) on 8+2");
  d = base_desc();
  d.auto_pad = LC_PAD_SAME_UPPER;
  expect(try_prepare(ctx, &d, 1, 1, 1), LC_OK, "SAME_UPPER on 1x1");
  /* Sizes whose products overflow. One dimension beyond the library's per-dimension limit may
   * be rejected as invalid; dimensions each within it whose product overflows must be OVERFLOW. */
  d = base_desc();
  const int64_t s31 = (int64_t)1 << 31, s30 = (int64_t)1 << 30;
  expect2(try_prepare(ctx, &d, s31, s31, s31), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG, "batch, h, w 2^31");
  expect2(try_prepare(ctx, &d, 1, (int64_t)1 << 62, (int64_t)1 << 62), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG,
          "h, w 2^62");
  expect(try_prepare(ctx, &d, s30, s30, s30), LC_ERR_OVERFLOW, "batch, h, w 2^30 (product 2^92)");
  expect(try_prepare(ctx, &d, 1, s30, s30), LC_ERR_OVERFLOW, "h, w 2^30 x 6 channels x 4 bytes = 2^65");
  expect2(try_prepare(ctx, &d, 1, INT64_MAX, 8), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG, "h INT64_MAX + pads");
  d.pad_top = INT64_MAX;
  expect2(try_prepare(ctx, &d, 1, 8, 8), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG, "pad_top INT64_MAX");
  d = base_desc();
  d.stride_h = INT64_MAX;
  /* Valid ONNX (one output row), but a library may cap strides: any clean answer will do. */
  lc_status st = try_prepare(ctx, &d, 1, 8, 8);
  TU_CHECK(st == LC_OK || lc_last_error()[0] != 0, "stride INT64_MAX: %s without a message", lc_status_name(st));
}

static void test_run(lc_context *ctx) {
  lc_conv_desc d = base_desc();
  d.route = LC_ROUTE_IM2COL; /* needs a workspace */
  lc_conv *c = NULL;
  expect(lc_conv_create(ctx, &d, &c), LC_OK, "create im2col");
  if (!c) return;
  expect(lc_conv_run(c, g_in, g_out, NULL, 0), LC_ERR_STATE, "run before prepare");
  lc_conv_shape s;
  expect(lc_conv_prepare(c, 2, 16, 16, &s), LC_OK, "prepare im2col 16x16");
  expect(lc_conv_run(NULL, g_in, g_out, NULL, 0), LC_ERR_INVALID_ARG, "run: conv NULL");
  expect(lc_conv_run(c, NULL, g_out, NULL, 0), LC_ERR_INVALID_ARG, "run: input NULL");
  expect(lc_conv_run(c, g_in, NULL, NULL, 0), LC_ERR_INVALID_ARG, "run: output NULL");
  TU_CHECK(s.workspace_bytes > 0, "im2col reported no workspace");
  if (s.workspace_bytes > 0) {
    unsigned char *ws = malloc(s.workspace_bytes);
    expect(lc_conv_run(c, g_in, g_out, ws, s.workspace_bytes - 1), LC_ERR_INVALID_ARG, "workspace 1 byte short");
    expect(lc_conv_run(c, g_in, g_out, ws, s.workspace_bytes), LC_OK, "workspace exact");
    free(ws);
  }
  /* The residual: NULL, or overlapping the output, is refused; beside it, it runs. */
  static float res[2 * 6 * 16 * 16];
  expect(lc_conv_run_residual(c, g_in, NULL, g_out, NULL, 0), LC_ERR_INVALID_ARG, "residual NULL");
  expect(lc_conv_run_residual(c, g_in, g_out, g_out, NULL, 0), LC_ERR_INVALID_ARG, "residual = output");
  expect(lc_conv_run_residual(c, g_in, g_out + 7, g_out, NULL, 0), LC_ERR_INVALID_ARG, "residual overlaps the output");
  expect(lc_conv_run_residual(c, g_in, res, g_out, NULL, 0), LC_OK, "residual");
  lc_conv_destroy(c);
  lc_conv_destroy(NULL); /* allowed, like free */

  /* Budget smaller than the route needs. */
  lc_context *small = NULL;
  expect(cc_context(LC_ISA_AUTO, 1, 64, &small), LC_OK, "context with 64-byte budget");
  if (small) {
    expect(try_prepare(small, &d, 2, 16, 16), LC_ERR_BUDGET, "im2col in 64 bytes");
    d.route = LC_ROUTE_IGEMM;
    lc_status st = try_prepare(small, &d, 2, 16, 16);
    expect(st, LC_ERR_BUDGET, "igemm in 64 bytes");
    lc_context_destroy(small);
  }
}

static void test_reference(void) {
  lc_conv_desc d = base_desc();
  expect(lc_conv_reference(&d, 1, 8, 8, g_in, g_out), LC_OK, "reference base");
  expect(lc_conv_reference(NULL, 1, 8, 8, g_in, g_out), LC_ERR_INVALID_ARG, "reference: desc NULL");
  expect(lc_conv_reference(&d, 1, 8, 8, NULL, g_out), LC_ERR_INVALID_ARG, "reference: input NULL");
  expect(lc_conv_reference(&d, 1, 8, 8, g_in, NULL), LC_ERR_INVALID_ARG, "reference: output NULL");
  expect(lc_conv_reference(&d, 0, 8, 8, g_in, g_out), LC_ERR_INVALID_ARG, "reference: batch 0");
  expect(lc_conv_reference(&d, 1, 8, -8, g_in, g_out), LC_ERR_INVALID_ARG, "reference: in_w -8");
  const int64_t s31 = (int64_t)1 << 31;
  expect2(lc_conv_reference(&d, s31, s31, s31, g_in, g_out), LC_ERR_OVERFLOW, LC_ERR_INVALID_ARG,
          "reference: 2^31 sizes");
  const int64_t s30 = (int64_t)1 << 30;
  expect(lc_conv_reference(&d, s30, s30, s30, g_in, g_out), LC_ERR_OVERFLOW, "reference: 2^30 sizes");
  d.groups = 3;
  expect(lc_conv_reference(&d, 1, 8, 8, g_in, g_out), LC_ERR_INVALID_ARG, "reference: groups 3");
  d = base_desc();
  d.weights = NULL;
  expect(lc_conv_reference(&d, 1, 8, 8, g_in, g_out), LC_ERR_INVALID_ARG, "reference: weights NULL");
  TU_CHECK(lc_conv_out_size(2, 3, 1, 1, 0, 0) == -1, "out_size of a 3-kernel on 2 must be -1");
  TU_CHECK(lc_conv_out_size(8, 3, 2, 1, 1, 1) == 4, "out_size(8, k3, s2, p1) must be 4");
}

/* Fails the n-th allocation for n = 1, 2, ... until the call succeeds; each failure must be
 * LC_ERR_NO_MEMORY and leave the allocated bytes where they were. */
#define INJECT(stage, call, on_success)                                                                  \
  do {                                                                                                   \
    size_t before_ = lc_alloc_current_bytes();                                                           \
    for (long n_ = 1; n_ < 1000; n_++) {                                                                 \
      lc_alloc_fail_after(n_);                                                                           \
      lc_status st_ = (call);                                                                            \
      lc_alloc_fail_after(0);                                                                            \
      if (st_ == LC_OK) {                                                                                \
        printf("%s: succeeded after %ld injected allocation failures\n", stage, n_ - 1);                  \
        on_success;                                                                                      \
        break;                                                                                           \
      }                                                                                                  \
      TU_CHECK(st_ == LC_ERR_NO_MEMORY, "%s: allocation %ld failed gave %s (%s)", stage, n_,            \
               lc_status_name(st_), lc_last_error());                                                    \
      TU_CHECK(lc_last_error()[0] != 0, "%s: empty message", stage);                                     \
      TU_CHECK(lc_alloc_current_bytes() == before_, "%s: leak of %zu bytes after allocation %ld failed", \
               stage, lc_alloc_current_bytes() - before_, n_);                                           \
      if (st_ != LC_ERR_NO_MEMORY) break;                                                                \
    }                                                                                                    \
  } while (0)

static void test_alloc_failures(void) {
  lc_context *ctx = NULL;
  INJECT("context create, 1 thread", cc_context(LC_ISA_AUTO, 1, 0, &ctx), lc_context_destroy(ctx));
  ctx = NULL;
  expect(cc_context(LC_ISA_AUTO, 2, 0, &ctx), LC_OK, "context, 2 threads");
  if (!ctx) return;
  for (int r = 0; r < LC_ROUTE_COUNT; r++) {
    lc_conv_desc d = base_desc();
    if (r == LC_ROUTE_GEMM1X1) d.kernel_h = d.kernel_w = 1, d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 0;
    if (r == LC_ROUTE_DEPTHWISE) d.groups = d.in_channels = d.out_channels = 4;
    d.route = (lc_route)r;
    d.bias = g_w;
    char name[64];
    lc_conv *c = NULL;
    lc_status st0 = try_prepare(ctx, &d, 2, 16, 16);
    if (st0 != LC_OK) {
      printf("injection: route %s can't run the test shape (%s): skipped\n", lc_route_name((lc_route)r),
             lc_status_name(st0));
      continue;
    }
    snprintf(name, sizeof name, "create %s", lc_route_name((lc_route)r));
    INJECT(name, lc_conv_create(ctx, &d, &c), (void)0);
    if (!c) continue;
    lc_conv_shape s;
    snprintf(name, sizeof name, "prepare %s", lc_route_name((lc_route)r));
    INJECT(name, lc_conv_prepare(c, 2, 16, 16, &s), (void)0);
    snprintf(name, sizeof name, "run %s", lc_route_name((lc_route)r));
    INJECT(name, lc_conv_run(c, g_in, g_out, NULL, 0), (void)0);
    /* The output after the failed attempts is still right. */
    lc_status st = lc_conv_reference(&d, 2, 16, 16, g_in, g_ref);
    size_t n = (size_t)(2 * d.out_channels * 16 * 16);
    TU_CHECK(st == LC_OK && tu_max_abs_diff(g_out, g_ref, n) < 1e-4, "%s: wrong output after injected failures",
             lc_route_name((lc_route)r));
    lc_conv_destroy(c);
  }
  lc_context_destroy(ctx);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* keep what was printed if the library crashes */
  tu_seed_from_env(7);
  tu_fill(g_w, sizeof g_w / sizeof g_w[0], -1.0f, 1.0f);
  tu_fill(g_in, sizeof g_in / sizeof g_in[0], -1.0f, 1.0f);
  start_bytes = lc_alloc_current_bytes();
  test_context_args();
  lc_context *ctx = NULL;
  expect(cc_context(LC_ISA_AUTO, 2, 0, &ctx), LC_OK, "context");
  if (ctx) {
    test_desc(ctx);
    test_prepare(ctx);
    test_run(ctx);
    lc_context_destroy(ctx);
  }
  test_reference();
  TU_CHECK(lc_alloc_current_bytes() == start_bytes, "leak: %zu bytes still allocated",
           lc_alloc_current_bytes() - start_bytes);
  test_alloc_failures();
  /* Last: a thread pool failing half-way (a crash here would hide everything above). */
  lc_context *ctx2 = NULL;
  INJECT("context create, 3 threads", cc_context(LC_ISA_AUTO, 3, 0, &ctx2), lc_context_destroy(ctx2));
  TU_CHECK(lc_alloc_current_bytes() == start_bytes, "leak after injection: %zu bytes",
           lc_alloc_current_bytes() - start_bytes);
  return tu_finish("test_conv_bad_input");
}
