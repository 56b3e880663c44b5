/* OpenCL failure paths: the n-th fallible OpenCL call fails (lc_cl_inject_fault) for every n
 * through context create, conv create (weights upload, program build), prepare (tuning), run and
 * tensor transfers; each must return a status with a message, and nothing may leak (the
 * sanitizer suite runs this under LeakSanitizer). Also: no OpenCL library, bad device indices. */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "backend/opencl/cl_api.h"
#include "backend/opencl/cl_rt.h"
#include "lowconv.h"
#include "testutil.h"
#include "util/error.h"

static lc_status one_pass(const char *cache_dir, int tune) {
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;
  p.cache_dir = cache_dir;
  p.tune = (lc_tune_level)tune;
  lc_context *ctx = NULL;
  lc_conv *c = NULL;
  lc_buffer *ti = NULL, *to = NULL;
  float w[8 * 6 * 9], b[8], x[6 * 7 * 5], y[8 * 7 * 5];
  tu_fill(w, sizeof w / 4, -1, 1);
  tu_fill(b, 8, -1, 1);
  tu_fill(x, sizeof x / 4, -1, 1);
  lc_status s = lc_context_create(&p, &ctx);
  if (s) return s;
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = 6, d.out_channels = 8, d.kernel_h = d.kernel_w = 3;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.weights = w, d.bias = b, d.weight_format = LC_WEIGHTS_Q4, d.block_size = 0, d.asym = 1;
  lc_conv_shape sh;
  if (!s) s = lc_conv_create(ctx, &d, &c);
  if (!s) s = lc_conv_prepare(c, 1, 7, 5, &sh);
  if (!s) s = lc_conv_run(c, x, y, NULL, 0);
  if (!s) s = lc_buffer_create(ctx, sizeof x, &ti);
  if (!s) s = lc_buffer_create(ctx, sizeof y, &to);
  if (!s) s = lc_buffer_upload(ti, x, sizeof x);
  if (!s) s = lc_conv_run_buffers(c, ti, to, NULL);
  if (!s) s = lc_buffer_download(to, y, sizeof y);
  if (!s) s = lc_context_sync(ctx);
  lc_buffer_destroy(ti);
  lc_buffer_destroy(to);
  lc_conv_destroy(c);
  lc_context_destroy(ctx);
  return s;
}

/* The device opened on a thread of its own (lc_context_create_async, the model runner's start):
 * each fault of the open gives at lc_context_wait (twice) the status and message a synchronous
 * open gives; a context destroyed while it opens, or after its open failed, leaks nothing. */
static void async_open_faults(void) {
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;
  p.cache_dir = "";
  const long big = 1L << 40;
  lc_context *c = NULL;
  lc_cl_inject_fault(big);
  TU_CHECK(lc_context_create(&p, &c) == LC_OK, "open: %s", lc_last_error());
  long calls = big - lc_cl_fault_left();
  lc_cl_inject_fault(0);
  lc_context_destroy(c);
  int same = 0;
  for (long n = 1; n <= calls + 1; n++) {
    char want[512];
    lc_cl_inject_fault(n);
    lc_status ws = lc_context_create(&p, &c);
    snprintf(want, sizeof want, "%s", lc_last_error());
    if (!ws) lc_context_destroy(c);
    lc_cl_inject_fault(n);
    lc_status s = lc_context_create_async(&p, &c);
    TU_CHECK(s == LC_OK, "fault %ld: the async start failed: %s", n, lc_last_error());
    if (s) continue;
    lc_clear_error();
    for (int k = 0; k < 2; k++) {
      s = lc_context_wait(c);
      TU_CHECK(s == ws && (!s || !strcmp(lc_last_error(), want)), "fault %ld, wait %d: %s '%s', a synchronous open: %s '%s'",
               n, k, lc_status_name(s), s ? lc_last_error() : "", lc_status_name(ws), want);
    }
    if (!s) {
      lc_conv_desc d;
      lc_conv_desc_init(&d);
      float w[8 * 4] = {0};
      d.in_channels = 4, d.out_channels = 8, d.kernel_h = d.kernel_w = 1, d.weights = w;
      lc_conv *cv = NULL;
      lc_cl_inject_fault(0);
      TU_CHECK(lc_conv_create(c, &d, &cv) == LC_OK, "fault %ld: a conv on the waited context: %s", n, lc_last_error());
      lc_conv_destroy(cv);
    }
    lc_context_destroy(c);
    same += s == ws;
    lc_cl_inject_fault(n);
    if (lc_context_create_async(&p, &c) == LC_OK) lc_context_destroy(c); /* while it opens */
  }
  lc_cl_inject_fault(0);
  /* the open's own errors, found on its thread: bad indices, a bad LOWCONV_OPENCL_DEVICE */
  for (int k = 0; k < 3; k++) {
    lc_context_params q = p;
    if (k == 0) q.cl_platform = 99;
    if (k == 1) q.cl_platform = 0, q.cl_device = 99;
    if (k == 2) setenv("LOWCONV_OPENCL_DEVICE", "zero", 1);
    char want[512];
    lc_status ws = lc_context_create(&q, &c);
    snprintf(want, sizeof want, "%s", lc_last_error());
    TU_CHECK(ws != LC_OK, "case %d opened", k);
    if (!ws) lc_context_destroy(c);
    TU_CHECK(lc_context_create_async(&q, &c) == LC_OK, "case %d: async start: %s", k, lc_last_error());
    lc_status s = lc_context_wait(c);
    TU_CHECK(s == ws && !strcmp(lc_last_error(), want), "case %d: %s '%s' against '%s'", k, lc_status_name(s),
             lc_last_error(), want);
    lc_context_destroy(c);
    if (k == 2) unsetenv("LOWCONV_OPENCL_DEVICE");
  }
  printf("async open: %ld fallible OpenCL calls failed in turn, %d gave the synchronous open's status and message\n",
         calls, same);
}

int main(void) {
  tu_seed_from_env(7);
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;

  /* One program per kernel, or per group of kernels the tuner times together (NVIDIA). */
  char o[192], tiny[24];
  TU_CHECK(!lc_cl_kernel_options(0, "-DWFMT=2", "conv_c4h1w2", o, sizeof o) &&
               !strcmp(o, "-DWFMT=2 -DLC_ONE_KERNEL -DLC_WANT_conv_c4h1w2"), "one kernel: '%s'", o);
  TU_CHECK(!lc_cl_kernel_options(1, "-DWFMT=2", "conv_c4h1w2", o, sizeof o) &&
               !strcmp(o, "-DWFMT=2 -DLC_ONE_KERNEL -DLC_WANT_conv_c4h1w1 -DLC_WANT_conv_c4h1w2 -DLC_WANT_conv_c8h2w1"),
           "group: '%s'", o);
  TU_CHECK(!lc_cl_kernel_options(1, "", "split_c8", o, sizeof o) &&
               !strcmp(o, " -DLC_ONE_KERNEL -DLC_WANT_split_c4 -DLC_WANT_split_c8"), "last of a group: '%s'", o);
  TU_CHECK(!lc_cl_kernel_options(1, "", "conv_c4h1", o, sizeof o) && !strcmp(o, " -DLC_ONE_KERNEL -DLC_WANT_conv_c4h1"),
           "a prefix is no member: '%s'", o);
  TU_CHECK(lc_cl_kernel_options(1, "-DWFMT=2", "gemm_32x32", tiny, sizeof tiny) == -1, "too long: not refused");
  if (tu_no_opencl()) return tu_finish("test_cl_faults");
  async_open_faults();
  lc_context *ctx;

  /* Bad indices name what exists. */
  p.cl_platform = 99;
  TU_CHECK(lc_context_create(&p, &ctx) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "platform 99"),
           "platform 99: %s", lc_last_error());
  p.cl_platform = 0, p.cl_device = 99;
  TU_CHECK(lc_context_create(&p, &ctx) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "device 99"),
           "device 99: %s", lc_last_error());
  TU_CHECK(lc_device_parse("opencl:x", &p) == LC_ERR_INVALID_ARG, "opencl:x parses");
  TU_CHECK(lc_device_parse("cuda", &p) == LC_ERR_INVALID_ARG, "cuda parses");

  /* Every fallible call fails once, in turn, with tuning on and off (no disk cache: the faults
   * hit the builds). Each pass must fail cleanly until n passes the number of calls made. */
  for (int tune = 0; tune <= 1; tune++) {
    int n, clean = 0;
    /* Without tuning every index is hit; with it (hundreds of calls, one candidate after another)
     * the first 60 indices and then every 41st. */
    for (n = 1; n < 5000; n += tune && n >= 60 ? 41 : 1) {
      lc_cl_inject_fault(n);
      lc_status s = one_pass("", tune);
      lc_cl_inject_fault(0);
      if (s == LC_OK) {
        clean = 1;
        break;
      }
      TU_CHECK(lc_last_error()[0] != 0, "fault %d: status %s without a message", n, lc_status_name(s));
      TU_CHECK(strstr(lc_last_error(), "opencl") || strstr(lc_last_error(), "conv"), "fault %d: message '%s'", n,
               lc_last_error());
    }
    TU_CHECK(clean, "tune %d: still failing after %d injected faults", tune, n);
    printf("tune %d: about %d fallible OpenCL calls, each failure tried was handled\n", tune, n - 1);
  }
  /* The weights uploaded from pinned memory in pieces (cl_conv.c): every call of a clean pass
   * fails in turn; a failed pinning falls back to plain memory, so a pass may then succeed. */
  setenv("LOWCONV_CL_PINNED", "1", 1);
  setenv("LOWCONV_CL_UPLOAD_CHUNK", "400", 1);
  const long big = 1L << 40;
  lc_cl_inject_fault(big);
  TU_CHECK(one_pass("", 0) == LC_OK, "pinned pieces: %s", lc_last_error());
  long calls = big - lc_cl_fault_left(), ok = 0;
  for (long n = 1; n <= calls; n++) {
    lc_cl_inject_fault(n);
    lc_status s = one_pass("", 0);
    lc_cl_inject_fault(0);
    if (s == LC_OK) {
      ok++;
      continue;
    }
    TU_CHECK(lc_last_error()[0] && (strstr(lc_last_error(), "opencl") || strstr(lc_last_error(), "conv")),
             "pinned pieces, fault %ld: status %s, message '%s'", n, lc_status_name(s), lc_last_error());
  }
  printf("pinned pieces: %ld fallible OpenCL calls failed in turn, %ld of them fell back\n", calls, ok);
  unsetenv("LOWCONV_CL_PINNED");
  unsetenv("LOWCONV_CL_UPLOAD_CHUNK");
  return tu_finish("test_cl_faults");
}
