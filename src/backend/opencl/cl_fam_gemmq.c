/* Kernel family "gemmq" (kernels/conv_gemmq.cl): the implicit GEMM for q8/q4 weights in integer
 * arithmetic (dp4a). gemmq_quant quantizes the input once per run into the conv's workspace, in
 * units of 32 input channels per pixel: q = rint(x * (127 / amax)), seen by the kernels as
 * q * (amax / 127), both divisions correctly rounded so that the host reproduces the codes exactly
 * (lc_cl_gemmq_input_seen; the tuner's reference and the tests use it). Accuracy: an activation
 * moves by at most amax / 254 of its unit, an output by at most sum |w| * amax / 254 over its row.
 * Units of 32 (not gemvq's 8): one int32 sum per unit is scaled in float, 3 float operations per
 * output and unit next to 8 dp4a (half the FMA rate), so 8-channel units would gain nothing over
 * fp32 FMAs (docs/opencl.md).
 * Eligible: q8/q4 weights whose blocks are multiples of 32 channels (or span the tap or row), so
 * a unit lies in one weight block, on devices where dp4a runs (same rule as gemvq). At tuning level
 * none the float GEMM runs (it comes first); above it timing decides.
 * Fused tiles (f64x64, f32x32 and their split-K forms) code the input while staging it (the same
 * codes) and need no quantizing pass: one launch less, which wins at batch 1. */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GQM_U 32 /* input channels per unit (conv_gemmq.cl LCM_U) */

typedef struct gqm_tile {
  int tm, tn, t, split; /* split: K split in chunks, partial sums added by conv_gemm's gemm_reduce */
  int fused;            /* the tile codes its input itself: no gemmq_quant pass, no records */
  double eff; /* share of the dp4a rate the tile can reach (local reads per dp4a, scaling) */
  int slots;  /* work-groups resident per compute unit */
} gqm_tile;

static const char *const gqm_names[] = {"128x128", "128x64", "64x128", "64x64",   "32x32",  "64x64s",
                                        "32x32s",  "f64x64", "f32x32", "f64x64s", "f32x32s"};
static const gqm_tile gqm_tiles[] = {
    {128, 128, 256, 0, 0, 0.80, 1}, {128, 64, 256, 0, 0, 0.70, 2}, {64, 128, 256, 0, 0, 0.70, 2},
    {64, 64, 256, 0, 0, 0.55, 3},   {32, 32, 64, 0, 0, 0.40, 8},   {64, 64, 256, 1, 0, 0.55, 3},
    {32, 32, 64, 1, 0, 0.40, 8},    {64, 64, 256, 0, 1, 0.55, 3},  {32, 32, 64, 0, 1, 0.40, 8},
    {64, 64, 256, 1, 1, 0.55, 3},   {32, 32, 64, 1, 1, 0.40, 8},
};
#define GQM_NV ((int)(sizeof gqm_names / sizeof gqm_names[0]))

static size_t gqm_div_up(size_t a, size_t b) { return (a + b - 1) / b; }

static size_t gqm_cols(const lc_cl_conv *c) { return (size_t)c->a.n * (size_t)c->a.oh * (size_t)c->a.ow; }

/* Unit records of the input: images x groups x units x pixels. */
static size_t gqm_records(const lc_cl_conv *c) {
  return (size_t)c->a.n * (size_t)c->a.groups * gqm_div_up((size_t)c->a.cin_g, GQM_U) * (size_t)c->a.ih *
         (size_t)c->a.iw;
}

static size_t gqm_wgs(const lc_cl_conv *c, const gqm_tile *t) {
  return gqm_div_up(gqm_cols(c), (size_t)t->tn) * gqm_div_up((size_t)c->a.cout_g, (size_t)t->tm) * (size_t)c->a.groups;
}

static size_t gqm_ktiles(const lc_cl_conv *c) {
  return (size_t)c->a.kh * (size_t)c->a.kw * gqm_div_up((size_t)c->a.cin_g, GQM_U);
}

/* K chunks of a split-K tile, in K tiles (units): enough work-groups for one full wave, each
 * chunk at least 4 K tiles (128 rows) so that the partial sums stay small next to the work. */
static void gqm_split(const lc_cl_conv *c, const gqm_tile *t, int *ksplit, int *kchunk) {
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1, nt = gqm_ktiles(c);
  size_t ks = gqm_div_up(cu * (size_t)t->slots, gqm_wgs(c, t)), kmax = nt / 4;
  if (ks > kmax) ks = kmax;
  if (ks > 32) ks = 32;
  if (ks < 1) ks = 1;
  size_t kc = gqm_div_up(nt, ks);
  *kchunk = (int)kc;
  *ksplit = (int)gqm_div_up(nt, kc);
}

/* Split-K partial sums (floats, first), then per record 32 bytes of codes and a scale, and with
 * offsets the scaled code sum. */
static size_t gqm_partials(const lc_cl_conv *c, int v) {
  int ks = 1, kc;
  if (!gqm_tiles[v].split) return 0;
  gqm_split(c, &gqm_tiles[v], &ks, &kc);
  return gqm_div_up((size_t)c->a.groups * (size_t)ks * (size_t)c->a.cout_g * gqm_cols(c) * sizeof(float), 16) * 16;
}

static size_t gqm_ws_need(const lc_cl_conv *c, int v) {
  return gqm_partials(c, v) + (gqm_tiles[v].fused ? 0 : gqm_records(c) * (GQM_U + 4 + (c->asym ? 4 : 0)));
}

/* LOWCONV_CL_DP4A=0 keeps the activations in float; LOWCONV_CL_DP4A_EMU=1 offers the family
 * where dp4a is emulated (the tests on PoCL). */
static int gqm_device(const lc_cl_conv *c) {
  const char *e = getenv("LOWCONV_CL_DP4A_EMU"), *off = getenv("LOWCONV_CL_DP4A");
  if (off && off[0] == '0') return 0;
  return c->rt->info.has_dp4a || (e && e[0] == '1');
}

static size_t gqm_local_bytes(const gqm_tile *t) {
  return (size_t)8 * ((size_t)t->tm + 4) * 4 + (size_t)8 * (size_t)t->tn * 4 + (2 * (size_t)t->tm + 2 * (size_t)t->tn) * 4;
}

static int gqm_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= GQM_NV || c->wfmt == LC_WEIGHTS_F32 || c->depthwise || !gqm_device(c)) return 0;
  const lc_cl_conv_args *a = &c->a;
  if (a->bpt != 0 && a->bsz % GQM_U && a->bsz < a->cin_g) return 0; /* a unit must lie in one weight block */
  const gqm_tile *t = &gqm_tiles[v];
  const lc_cl_dev_info *d = &c->rt->info;
  if ((size_t)t->t > d->max_wg || (size_t)t->t > d->max_wi[0] || gqm_local_bytes(t) > d->local_mem) return 0;
  if (t->split) {
    int ks, kc;
    gqm_split(c, t, &ks, &kc);
    if (ks < 2) return 0;
  }
  /* The kernels index the workspace's bytes with int. */
  return gqm_ws_need(c, v) <= (size_t)INT_MAX;
}

/* Modelled time (us): waves of resident work-groups; each tile's 32-channel unit costs 8 dp4a
 * per output at half the FMA issue rate (the H200's 133 TOP/s int8), ~4 float operations per
 * output at the full rate; plus the quantizing pass (the input read once, the records written). */
/* A tile more than twice the problem along M or N only wastes work (32 is always offered). */
static int gqm_fits(const lc_cl_conv *c, int v) {
  const gqm_tile *t = &gqm_tiles[v];
  size_t M = (size_t)c->a.cout_g, N = gqm_cols(c);
  return !((t->tm > 32 && M <= (size_t)t->tm / 2) || (t->tn > 32 && N <= (size_t)t->tn / 2));
}

static double gqm_model_us(const lc_cl_conv *c, int v) {
  const gqm_tile *t = &gqm_tiles[v];
  double cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1;
  double units = (double)gqm_ktiles(c), ks = 1;
  if (t->split) {
    int s, k;
    gqm_split(c, t, &s, &k);
    ks = s, units = k;
  }
  double wgs = (double)gqm_wgs(c, t) * ks, slots = cu * t->slots, waves = (double)(size_t)((wgs + slots - 1) / slots);
  double wave_us = (double)t->tm * t->tn * units * 20.0 * t->slots / (0.5e6 * t->eff);
  double extra = t->split ? 4.0 + (double)gqm_partials(c, v) * 2 / 4.0e6 : 0.0;
  if (t->fused) /* no quantizing pass; each K tile's staging loads 32 floats per item */
    return waves * wave_us * 1.3 / 2.0 + extra;
  return waves * wave_us / 2.0 + 4.0 + (double)gqm_ws_need(c, v) * 3 / 4.0e6 + extra;
}

static int gqm_offered(const lc_cl_conv *c, int v) { return gqm_eligible(c, v) && gqm_fits(c, v); }

static int gqm_pick(const lc_cl_conv *c) { return lc_cl_model_pick(c, GQM_NV, gqm_offered, gqm_model_us); }

/* Level fast times the gqm_fast() variants the model ranks best (each a kernel to compile) among the
 * plain tiles and as many among the fused ones: timing, not the model, tells whether the saved
 * launch pays (batch 1, H200: fused won at 56 and 28 px, 28.6-30.9 us against the float GEMM's
 * 31-32; it lost at 112 px, f32x32 54 us against plain 32x32's 46). Three, not two: the model's
 * third was the fastest q kernel of resnet34-112's 128 -> 256 3x3 at 28 px (32x32s, 33.5-35.3 us
 * at level normal against the float GEMM's 37.6-38.8 that 12 of 14 fast tunings took; H100,
 * stop 31) and of 64 -> 128 at 56 px (64x64, 35.9 against 36.8-38.0). With three, resnet34-112 b1
 * q / f32 over six independent tunings each (H200, stop 32): q8 0.951-0.983 against 0.965-0.992,
 * q4 0.982-1.009 against 0.989-1.012 (that layer 0.94 / 1.00 against 1.13). LOWCONV_CL_GQM_FAST=N
 * for A/B runs. */
static int gqm_fast(void) {
  const char *e = getenv("LOWCONV_CL_GQM_FAST");
  int n = e && *e ? atoi(e) : 3;
  return n < 1 ? 1 : n;
}
static int gqm_rank(const lc_cl_conv *c, int v) {
  double us = gqm_model_us(c, v);
  int r = 0;
  for (int u = 0; u < GQM_NV; u++)
    if (u != v && gqm_tiles[u].fused == gqm_tiles[v].fused && gqm_offered(c, u) && gqm_model_us(c, u) < us) r++;
  return r;
}

/* The work-group size is the tile's; at level none only the modelled best is offered, above it
 * the best ranked that fit the problem; a variant forced by LOWCONV_CL_VARIANT always (the tests
 * run every tile on every shape). */
static int gqm_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || v < 0 || v >= GQM_NV) return 0;
  const char *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = fv && !strcmp(fv, gqm_names[v]);
  if (!forced && !gqm_fits(c, v)) return 0;
  if (level <= 0 && !forced && gqm_pick(c) != v) return 0;
  if (level == 1 && !forced && gqm_rank(c, v) >= gqm_fast()) return 0;
  lws[0][0] = (size_t)gqm_tiles[v].t, lws[0][1] = 1, lws[0][2] = 1;
  return 1;
}

/* The standard arguments (with sa) plus the workspace (argument 8), then the launch. gemmq's
 * programs are built with correctly rounded division (the quantizer's scales) and, where the probe
 * passed, PTX; gemm_reduce is conv_gemm's. `want` names the program (a tile's holds gemmq_quant too). */
static lc_status gqm_launch(const lc_cl_conv *c, const lc_cl_conv_args *sa, const char *want, const char *name,
                            cl_mem in, cl_mem out, cl_mem res, const size_t gws[3], const size_t lws[3], cl_event *ev) {
  cl_kernel k;
  lc_status s;
  if (!strcmp(name, "gemm_reduce")) {
    s = lc_cl_conv_kernel(c, "conv_gemm", name, &k);
  } else {
    char opt[160];
    int n = snprintf(opt, sizeof opt, "%s -cl-fp32-correctly-rounded-divide-sqrt%s", c->options,
                     c->rt->info.has_dp4a ? " -DLC_PTX" : "");
    if (n < 0 || (size_t)n >= sizeof opt) return lc_error(LC_ERR_INTERNAL, "opencl gemmq: build options too long");
    s = lc_cl_kernel_of(c->rt, "conv_gemmq", opt, want, name, &k);
  }
  cl_mem r = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t sz[9] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                        sizeof(cl_mem), sizeof(cl_mem), sizeof *sa,     sizeof(cl_mem)};
  cl_mem ws = c->ws ? c->ws : out; /* fused tiles without split-K read no workspace */
  const void *val[9] = {&in, &c->w, &c->sc, &c->of, &c->bias, &r, &out, sa, &ws};
  if (!s) s = lc_cl_set_args(c->rt, k, name, 9, sz, val);
  if (!s) s = lc_cl_enqueue(c->rt, k, name, 3, gws, lws, ev);
  return s;
}

/* gemmq_quant over the records, the tile's GEMM, and for split-K gemm_reduce. */
static lc_status gqm_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                             cl_event *first, cl_event *last) {
  const gqm_tile *t = &gqm_tiles[cand->variant];
  size_t need = gqm_ws_need(c, cand->variant);
  if (need && (!c->ws || c->ws_bytes < need))
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): gemmq %s needs %zu bytes of workspace, has %zu",
                    gqm_names[cand->variant], need, c->ws_bytes);
  lc_cl_conv_args sa = c->a;
  sa.ksplit = 1, sa.kchunk = (int)gqm_ktiles(c), sa.wsoff = (int)gqm_partials(c, cand->variant);
  if (t->split) gqm_split(c, t, &sa.ksplit, &sa.kchunk);
  char name[48];
  const char *vn = gqm_names[cand->variant];
  snprintf(name, sizeof name, "gemmq_%.*s", (int)strlen(vn) - t->split, vn);
  size_t ql = 64, qg[3] = {gqm_div_up(gqm_records(c), ql) * ql, 1, 1}, qlws[3] = {ql, 1, 1};
  size_t gws[3] = {(size_t)t->t * gqm_div_up(gqm_cols(c), (size_t)t->tn),
                   gqm_div_up((size_t)c->a.cout_g, (size_t)t->tm), (size_t)c->a.groups * (size_t)sa.ksplit};
  size_t lws[3] = {(size_t)t->t, 1, 1};
  size_t total = (size_t)sa.groups * (size_t)sa.cout_g * gqm_cols(c), rg[3] = {gqm_div_up(total, lws[0]) * lws[0], 1, 1};
  if (t->fused && !t->split) { /* one kernel */
    cl_event ev = NULL;
    lc_status s = gqm_launch(c, &sa, name, name, in, out, res, gws, lws, first || last ? &ev : NULL);
    return s ? s : lc_cl_conv_hand_events(c, ev, name, first, last);
  }
  cl_event e0 = NULL, e1 = NULL;
  lc_status s = t->fused ? LC_OK : gqm_launch(c, &sa, name, "gemmq_quant", in, out, res, qg, qlws, first ? &e0 : NULL);
  cl_event *ge = t->fused && first ? &e0 : last && !t->split ? &e1 : NULL; /* first when fused, last unless split */
  if (!s) s = gqm_launch(c, &sa, name, name, in, out, res, gws, lws, ge);
  if (!s && t->split) s = gqm_launch(c, &sa, "gemm_reduce", "gemm_reduce", in, out, res, rg, lws, last ? &e1 : NULL);
  return lc_cl_conv_end_events(c, s, e0, e1, first, last);
}

/* The device's quantization of one unit of nc channels (stride apart), in the same float
 * operations. */
static void gqm_unit(const float *x, size_t nc, size_t stride, float *xd) {
  float amax = 0.0f;
  int bad = 0;
  for (size_t r = 0; r < nc; r++) {
    float v = x[r * stride];
    bad |= !isfinite(v);
    amax = fmaxf(amax, fabsf(v));
  }
  float s = amax / 127.0f, inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
  for (size_t r = 0; r < nc; r++) xd[r * stride] = bad ? NAN : (float)(int)rintf(x[r * stride] * inv) * s;
}

int lc_cl_gemmq_input_seen(const lc_cl_conv *c, int family, const float *x, size_t n, float *xd) {
  if (family < 0 || family >= lc_cl_nfamilies || lc_cl_families[family] != &lc_cl_family_gemmq) return 0;
  const lc_cl_conv_args *a = &c->a;
  if ((size_t)a->n * (size_t)a->in_sn > n) return 0;
  for (size_t i = 0; i < n; i++) xd[i] = x[i];
  size_t cin = (size_t)a->cin_g, nu = gqm_div_up(cin, GQM_U), sc = (size_t)a->in_sc;
  for (size_t img = 0; img < (size_t)a->n; img++)
    for (size_t g = 0; g < (size_t)a->groups; g++)
      for (size_t u = 0; u < nu; u++)
        for (size_t y = 0; y < (size_t)a->ih; y++)
          for (size_t xx = 0; xx < (size_t)a->iw; xx++) {
            size_t c0 = u * GQM_U, off = img * (size_t)a->in_sn + (g * cin + c0) * sc + y * (size_t)a->in_sh +
                                         xx * (size_t)a->in_sw;
            gqm_unit(x + off, cin - c0 < GQM_U ? cin - c0 : GQM_U, sc, xd + off);
          }
  return 1;
}

static size_t gqm_ws_cand(const lc_cl_conv *c, const lc_cl_cand *x) { return gqm_ws_need(c, x->variant); }

const lc_cl_family lc_cl_family_gemmq = {"gemmq",         "conv_gemmq",     GQM_NV,     gqm_names,
                                         gqm_eligible,    gqm_local_sizes, gqm_ws_cand, gqm_enqueue};
