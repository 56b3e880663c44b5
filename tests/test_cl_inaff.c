/* The device conv's input affine (cl_conv_args.h: in_aff, the model runner's BatchNormalization
 * before a conv): every variant of the families that apply it (gemm, gemmq, wino, ref) against
 * the fp64 reference run on x * s[c] + t[c] with zero padding (gemmq: on that input as it rounds it
 * to int8, test_cl_conv.c says why), on random shapes (odd channels, groups,
 * strides 1-3, dilation, pads, batch 1-3, f32/q8/q4 weights, activations, residual). Bound: the
 * plain conv's (1e-4 of max |ref|; Winograd F(4x4) 5e-4, test_cl_conv.c says why): one fma more
 * per input value. Each candidate runs twice (the second run is checked: nothing left over from
 * the first, e.g. in split-K's workspace).
 * LC_TEST_QUICK=1 fewer shapes; LC_REQUIRE_OPENCL=1 fails without a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/opencl/cl_conv.h"
#include "conv/conv.h"
#include "lowconv.h"
#include "testutil.h"

static int runs, skipped, split_runs, gemmq_runs;

/* The bias table [bias | 0 | 1 | 0 | s | t] the kernels read, as cl_ops_mm.c builds it. */
static lc_status set_affine(lc_conv *conv, const float *bias, const float *s, const float *t) {
  lc_cl_conv *cc = conv->dev;
  size_t M = (size_t)(cc->a.groups * cc->a.cout_g), C = (size_t)(cc->a.groups * cc->a.cin_g), n = 4 * M + 2 * C;
  float *tab = calloc(n, sizeof *tab);
  for (size_t o = 0; o < M; o++) tab[o] = bias ? bias[o] : 0.0f, tab[2 * M + o] = 1.0f;
  for (size_t c = 0; c < C; c++) tab[4 * M + c] = s[c], tab[4 * M + C + c] = t[c];
  cl_mem m;
  lc_status st = lc_cl_buffer(cc->rt, n * sizeof *tab, tab, &m);
  free(tab);
  if (st) return st;
  lc_cl_release_mem(cc->rt, &cc->bias);
  cc->bias = m, cc->a.has_bias = 1, cc->a.in_aff = 1;
  return LC_OK;
}

static double act_ref(double v, const lc_conv_desc *d) {
  switch (d->activation) {
    case LC_ACT_RELU: return v > 0 ? v : 0;
    case LC_ACT_CLIP: return v < d->act_min ? d->act_min : v > d->act_max ? d->act_max : v;
    case LC_ACT_LEAKY_RELU: return v < 0 ? v * d->act_alpha : v;
    case LC_ACT_HARD_SWISH: return v * fmin(fmax(v / 6 + 0.5, 0), 1);
    default: return v;
  }
}

static void check(lc_context *ctx, int idx) {
  int n = tu_rand_int(1, 3), g = idx % 4 == 1 ? tu_rand_int(2, 3) : 1, cin_g = tu_rand_int(1, 40), cout_g = tu_rand_int(1, 40);
  if (idx % 6 == 5) n = 1, g = 1, cin_g = tu_rand_int(100, 200), cout_g = tu_rand_int(60, 130); /* deep: split-K runs */
  static const int ks[] = {1, 3, 3, 5};
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = g * cin_g, d.out_channels = g * cout_g, d.groups = g;
  d.kernel_h = d.kernel_w = ks[idx % 4];
  if (idx % 3 == 0) d.stride_h = d.stride_w = 1; /* Winograd's shapes among them */
  else d.stride_h = tu_rand_int(1, 3), d.stride_w = tu_rand_int(1, 3), d.dilation_h = tu_rand_int(1, 2);
  d.pad_top = tu_rand_int(0, 2), d.pad_left = tu_rand_int(0, 2), d.pad_bottom = tu_rand_int(0, 2), d.pad_right = tu_rand_int(0, 2);
  static const lc_weight_format fmts[] = {LC_WEIGHTS_F32, LC_WEIGHTS_Q8, LC_WEIGHTS_Q4};
  d.weight_format = fmts[idx % 3 == 0 ? 0 : idx % 3], d.asym = idx % 2, d.block_size = idx % 5 == 0 ? 16 : 0;
  d.activation = (lc_activation)(idx % 5);
  d.act_min = -0.5f, d.act_max = 0.7f, d.act_alpha = 0.1f;
  int ih = tu_rand_int((int)d.kernel_h * (int)d.dilation_h, 17), iw = tu_rand_int((int)d.kernel_w, 19), use_res = idx % 4 == 2;
  size_t nw = (size_t)(d.out_channels * cin_g * d.kernel_h * d.kernel_w), C = (size_t)d.in_channels;
  float *w = malloc(nw * sizeof(float)), *b = malloc((size_t)d.out_channels * sizeof(float)), *s = malloc(C * 4), *t = malloc(C * 4);
  tu_fill(w, nw, -1.0f, 1.0f), tu_fill(b, (size_t)d.out_channels, -1.0f, 1.0f);
  tu_fill(s, C, 0.2f, 2.0f), tu_fill(t, C, -1.0f, 1.0f);
  d.weights = w, d.bias = b;
  lc_conv *conv = NULL;
  TU_CHECK(lc_conv_create(ctx, &d, &conv) == LC_OK && set_affine(conv, b, s, t) == LC_OK, "shape %d create: %s", idx,
           lc_last_error());
  int64_t oh = lc_conv_out_size(ih, d.kernel_h, d.stride_h, d.dilation_h, d.pad_top, d.pad_bottom);
  int64_t ow = lc_conv_out_size(iw, d.kernel_w, d.stride_w, d.dilation_w, d.pad_left, d.pad_right);
  size_t nin = (size_t)n * C * (size_t)(ih * iw), nout = (size_t)(n * d.out_channels * oh * ow), inner = (size_t)(ih * iw);
  float *x = malloc(nin * 4), *xa = malloc(nin * 4), *r = malloc(nout * 4), *ref = malloc(nout * 4), *got = malloc(nout * 4);
  float *wq = malloc(nw * 4);
  tu_fill(x, nin, -1.0f, 1.0f), tu_fill(r, nout, -1.0f, 1.0f);
  float *xm = malloc(nin * 4), *refm = malloc(nout * 4);
  for (size_t i = 0; i < nin; i++) xa[i] = fmaf(x[i], s[i / inner % C], t[i / inner % C]); /* as the kernels */
  tu_act_int8_grouped(xa, (size_t)n, (size_t)g, (size_t)cin_g, inner, 1, 32, xm);
  lc_conv_desc rd = d;
  TU_CHECK(conv && lc_conv_get_weights(conv, wq) == LC_OK, "weights: %s", lc_last_error());
  rd.weights = wq, rd.weight_format = LC_WEIGHTS_F32, rd.activation = LC_ACT_NONE;
  TU_CHECK(lc_conv_reference(&rd, n, ih, iw, xa, ref) == LC_OK, "reference: %s", lc_last_error());
  TU_CHECK(lc_conv_reference(&rd, n, ih, iw, xm, refm) == LC_OK, "reference: %s", lc_last_error());
  double mx = 0, mxm = 0;
  for (size_t i = 0; i < nout; i++) {
    ref[i] = (float)act_ref((double)ref[i] + (use_res ? r[i] : 0.0), &d);
    refm[i] = (float)act_ref((double)refm[i] + (use_res ? r[i] : 0.0), &d);
    mx = fmax(mx, fabs(ref[i])), mxm = fmax(mxm, fabs(refm[i]));
  }
  lc_buffer *tin = NULL, *tout = NULL, *tres = NULL;
  TU_CHECK(!lc_buffer_create(ctx, nin * 4, &tin) && !lc_buffer_create(ctx, nout * 4, &tout) &&
               !lc_buffer_create(ctx, nout * 4, &tres), "tensors: %s", lc_last_error());
  if (tin && tout && tres && conv) {
    lc_buffer_upload(tin, x, nin * 4);
    lc_buffer_upload(tres, r, nout * 4);
    const lc_cl_family *fams[] = {&lc_cl_family_gemm, &lc_cl_family_wino, &lc_cl_family_ref, &lc_cl_family_gemmq};
    for (int f = 0; f < 4; f++)
      for (int v = 0; v < fams[f]->nvariants; v++) {
        setenv("LOWCONV_CL_FAMILY", fams[f]->name, 1);
        setenv("LOWCONV_CL_VARIANT", fams[f]->variants[v], 1);
        lc_conv_shape sh;
        lc_status st = lc_conv_prepare(conv, n, ih, iw, &sh);
        if (st == LC_ERR_UNSUPPORTED) {
          skipped++;
          continue;
        }
        TU_CHECK(st == LC_OK, "shape %d %s %s prepare: %s", idx, fams[f]->name, fams[f]->variants[v], lc_last_error());
        if (st) continue;
        for (int rep = 0; rep < 2; rep++) { /* the second run is checked */
          for (size_t i = 0; i < nout; i++) got[i] = NAN;
          lc_buffer_upload(tout, got, nout * 4);
          TU_CHECK(lc_conv_run_buffers(conv, tin, tout, use_res ? tres : NULL) == LC_OK &&
                       lc_buffer_download(tout, got, nout * 4) == LC_OK, "run: %s", lc_last_error());
        }
        double err = 0, m = f == 3 ? mxm : mx;
        const float *rf = f == 3 ? refm : ref;
        for (size_t i = 0; i < nout; i++) err = fmax(err, isfinite(got[i]) ? fabs(got[i] - rf[i]) : INFINITY);
        double tol = f == 1 && !strncmp(fams[f]->variants[v], "f4x4", 4) ? 5e-4 : 1e-4;
        runs++;
        split_runs += f == 0 && fams[f]->variants[v][strlen(fams[f]->variants[v]) - 1] == 's';
        gemmq_runs += f == 3;
        TU_CHECK(err <= tol * fmax(m, 1e-30), "shape %d %s %s: err %.3g of max %.3g (n%d g%d cin_g%d cout_g%d %dx%d k%lld s%lld "
                 "fmt%d act%d res%d)", idx, fams[f]->name, fams[f]->variants[v], err, m, n, g, cin_g, cout_g, ih, iw,
                 (long long)d.kernel_h, (long long)d.stride_h, (int)d.weight_format, (int)d.activation, use_res);
      }
  }
  unsetenv("LOWCONV_CL_FAMILY"), unsetenv("LOWCONV_CL_VARIANT");
  lc_buffer_destroy(tin), lc_buffer_destroy(tout), lc_buffer_destroy(tres);
  lc_conv_destroy(conv);
  free(w), free(b), free(s), free(t), free(x), free(xa), free(r), free(ref), free(got), free(wq), free(xm), free(refm);
}

int main(void) {
  tu_seed_from_env(20261202);
  if (tu_no_opencl()) return tu_finish("test_cl_inaff");
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;
  p.tune = LC_TUNE_NONE;
  char dir[] = "/tmp/lc_cl_inaff_XXXXXX";
  p.cache_dir = mkdtemp(dir) ? dir : "";
  lc_context *ctx;
  setenv("LOWCONV_CL_DP4A_EMU", "1", 0); /* gemmq with dp4a emulated where the device has none */
  TU_CHECK(lc_context_create(&p, &ctx) == LC_OK, "context: %s", lc_last_error());
  int nshapes = getenv("LC_TEST_QUICK") && *getenv("LC_TEST_QUICK") == '1' ? 12 : 30;
  for (int i = 0; i < nshapes; i++) check(ctx, i);
  printf("%d family x variant runs checked (%d split-K, %d gemmq), %d not eligible\n", runs, split_runs, gemmq_runs,
         skipped);
  TU_CHECK(runs > nshapes && split_runs > 0 && gemmq_runs > 0, "too few runs (split-K, gemmq)");
  lc_context_destroy(ctx);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (dir[0] && system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return tu_finish("test_cl_inaff");
}
