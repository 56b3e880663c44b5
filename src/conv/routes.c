/* The route table: the one list of routes that the operator (op.c), the selector (select.c), the
 * descriptor names and the CLI read. A new route is one entry here plus its file. */
#include <stdio.h>
#include <string.h>

#include "conv/route.h"
#include "util/error.h"

static lc_status winograd_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  lc_run_winograd(c, in, out, ws);
  return LC_OK;
}

static const lc_route_def routes[LC_ROUTE_COUNT] = {
    [LC_ROUTE_AUTO] = {"auto", "the selector picks one of the others from the shape and the budget", NULL, NULL,
                       LC_WREP_PACKED | LC_WREP_QUANT | LC_WREP_DW | LC_WREP_WINO | LC_WREP_WINO4},
    [LC_ROUTE_DIRECT] = {"direct", "a GEMM call per kernel tap on the input in place; runs any conv",
                         lc_direct_plan, lc_direct_run, LC_WREP_PACKED | LC_WREP_QUANT},
    [LC_ROUTE_GEMM1X1] = {"gemm1x1", "1x1 stride 1 unpadded: the input is the GEMM operand (Q8/Q4 few pixels: GEMV)",
                          lc_gemm1x1_plan, lc_gemm1x1_run, LC_WREP_PACKED | LC_WREP_QUANT},
    [LC_ROUTE_IM2COL] = {"im2col", "patches packed in tiles of K blocks x pixels, then GEMM", lc_im2col_plan,
                         lc_gemm_run, LC_WREP_PACKED | LC_WREP_QUANT},
    [LC_ROUTE_IGEMM] = {"igemm", "indirect GEMM: a pointer per (pixel, tap), whole-K patches per chunk",
                        lc_igemm_plan, lc_gemm_run, LC_WREP_PACKED | LC_WREP_QUANT},
    [LC_ROUTE_DEPTHWISE] = {"depthwise", "groups == in == out channels, stride 1 or 2", lc_depthwise_plan,
                            lc_depthwise_run, LC_WREP_DW},
    [LC_ROUTE_WINOGRAD] = {"winograd", "3x3 stride 1 dilation 1: Winograd F(2x2, 3x3), 2.25x fewer multiplies",
                           lc_winograd_plan, winograd_run, LC_WREP_WINO | LC_WREP_QUANT},
    [LC_ROUTE_WINOGRAD4] = {"winograd4",
                            "3x3 (fp32 also 6x6, 9x9: shifted 3x3s) stride 1 dilation 1: Winograd F(4x4, 3x3), 4x "
                            "fewer multiplies (AUTO on AVX2 from 64 channels, AVX-512 from 16 on large planes, or tuned)",
                            lc_winograd4_plan, lc_winograd4_run, LC_WREP_WINO4 | LC_WREP_QUANT},
    [LC_ROUTE_STEM] = {"stem", "NCHW, 1 group, <= 4 input channels, K <= 160, stride_w <= 4: from stride-phased rows",
                       lc_stem_plan, lc_stem_run, LC_WREP_PACKED | LC_WREP_QUANT},
    [LC_ROUTE_I8GEMM] = {"i8gemm", "Q8/Q4 NCHW with int8 activations: int8 patch panels x weight codes, int32 per block",
                         lc_i8gemm_plan, lc_i8gemm_run, LC_WREP_QUANT},
    [LC_ROUTE_TAPROWS] = {"taprows", "NCHW: B rows (tap, channel) gathered by whole output rows, read in place (3x3 stride 2)",
                        lc_taprows_plan, lc_taprows_run, LC_WREP_PACKED | LC_WREP_QUANT},
};

const lc_route_def *lc_route_def_of(lc_route r) { return (unsigned)r < LC_ROUTE_COUNT ? &routes[r] : NULL; }

/* Padding pixels of value c->padv: Winograd's input rows take it, direct adds what the pixels it
 * leaves out would have (c->wpadv); the others pad with zeros in their kernels. */
lc_status lc_route_plan(const lc_conv *c, lc_route r, lc_conv_plan *p) {
  if (c->padv && r != LC_ROUTE_WINOGRAD && r != LC_ROUTE_WINOGRAD4 && r != LC_ROUTE_DIRECT)
    return lc_error(LC_ERR_UNSUPPORTED, "%s: pads with zeros only (pad_values need winograd, winograd4 or direct)",
                    routes[r].name);
  return routes[r].plan(c, p);
}

const char *lc_route_name(lc_route r) { return (unsigned)r < LC_ROUTE_COUNT ? routes[r].name : "unknown"; }

int lc_route_from_name(const char *name) {
  for (int i = 0; name && i < LC_ROUTE_COUNT; i++)
    if (strcmp(name, routes[i].name) == 0) return i;
  return -1;
}

int lc_conv_has_weights_for(const lc_conv *c, lc_route r) {
  unsigned held = (c->wpack ? LC_WREP_PACKED : 0) | (c->qw ? LC_WREP_QUANT : 0) | (c->wdw ? LC_WREP_DW : 0) |
                  (c->wwino ? LC_WREP_WINO : 0) | (c->wwino4 ? LC_WREP_WINO4 : 0);
  const lc_route_def *d = lc_route_def_of(r);
  return r == LC_ROUTE_AUTO || (d && (held & d->reads) != 0);
}

char *lc_route_names_join(char *buf, size_t cap, const char *sep) {
  size_t n = 0;
  if (cap) buf[0] = 0;
  for (int i = 0; i < LC_ROUTE_COUNT && n < cap; i++) {
    int w = snprintf(buf + n, cap - n, "%s%s", i ? sep : "", routes[i].name);
    n += w > 0 ? (size_t)w : 0;
  }
  return buf;
}

void lc_route_print_help(FILE *f) {
  fprintf(f, "\nroutes (--route):\n");
  for (int i = 0; i < LC_ROUTE_COUNT; i++) fprintf(f, "  %-16s %s\n", routes[i].name, routes[i].help);
}

/* The pass after a route that leaves the residual or PRelu to it: y = post(act(y + r)), NCHW a row
 * per (image, channel), NHWC a row of all channels per pixel, in tasks of about 64 KiB on the
 * conv's threads. */
typedef struct epi_job {
  const lc_conv *c;
  float *out;
  const float *res;
  size_t rows, n, per;
  lc_gemm_params ep; /* the conv's activation and post affine, slope = c->slopes */
} epi_job;

static void epi_task(void *job, size_t t, int thread) {
  (void)thread;
  const epi_job *j = job;
  const lc_conv *c = j->c;
  size_t r0 = t * j->per, r1 = lc_min_sz(r0 + j->per, j->rows), M = (size_t)c->d.out_channels, n = j->n;
  int nchw = c->d.layout == LC_NCHW;
  for (size_t r = r0; r < r1; r++) {
    float *y = j->out + r * n;
    const float *x = j->res ? j->res + r * n : NULL;
    if (x)
      for (size_t i = 0; i < n; i++) y[i] += x[i];
    if (nchw && j->ep.act == 5) {
      lc_prelu_rows(y, 1, n, n, c->slopes + r % M, &j->ep);
    } else if (j->ep.act == 5) {
      for (size_t o = 0; o < n; o++) y[o] = lc_prelu(y[o], c->slopes[o]);
      if (j->ep.post)
        for (size_t o = 0; o < n; o++) y[o] = y[o] * j->ep.post_mul + j->ep.post_add;
    } else if (j->ep.act || j->ep.post) {
      for (size_t i = 0; i < n; i++) y[i] = lc_apply_act(y[i], &j->ep);
    }
  }
}

lc_status lc_conv_run_route(const lc_conv *c, const float *in, float *out, const float *res, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  const lc_route_def *def = lc_route_def_of(p->route);
  int res_in = !res || lc_route_res_inline(p->route), prelu_in = !c->slopes || lc_route_prelu_inline(p->route);
  if (!res && prelu_in) return def->run(c, in, out, ws);
  /* A copy of the operator carries the run's residual; where the route cannot finish the epilogue,
   * the copy has none (bias only) and the pass below applies it. */
  lc_conv cc = *c;
  cc.res = res_in ? res : NULL;
  if (res_in && prelu_in) return def->run(&cc, in, out, ws);
  cc.res = NULL;
  cc.slopes = NULL;
  cc.d.activation = LC_ACT_NONE;
  cc.d.post_mul = 1.0f, cc.d.post_add = 0.0f;
  lc_status st = def->run(&cc, in, out, ws);
  if (st) return st;
  epi_job j = {c, out, res, 0, 0, 0, {0}};
  size_t M = (size_t)c->d.out_channels, N = (size_t)p->n;
  j.rows = c->d.layout == LC_NCHW ? N * M : N * p->ohw;
  j.n = c->d.layout == LC_NCHW ? p->ohw : M;
  j.per = lc_max_sz(1, (16384 + j.n - 1) / j.n);
  lc_conv_epilogue(c, &j.ep);
  lc_pool_run(c->ctx->pool, lc_div_up(j.rows, j.per), p->threads, epi_task, &j);
  return LC_OK;
}
