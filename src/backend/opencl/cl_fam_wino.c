/* Kernel family "wino": Winograd F(2x2, 3x3) and F(4x4, 3x3) for 3x3 stride-1 convs of one group
 * (kernels/conv_wino.cl): input transform, 16 or 36 GEMMs over the tiles, output transform with the
 * epilogue. 2.25x or 4x fewer multiplications than the direct product, paid for with three
 * launches and the transformed input and products in the workspace, so the tuner keeps it only
 * where it measures faster. The X GEMMs are family gemm's tiles (a 1x1 conv of X groups), so they
 * share its programs. With fp32 weights the transformed weights U (16 or 36 fp32 per 9 weights)
 * are made on the device from the packed weights before a candidate runs, and released if the
 * family is not chosen. With q8/q4 weights there is no U: the GEMM tiles are built with LCG_WQ and
 * make each staged row of U from the 3x3 codes (conv_gemm.cl), so the codes stay the only copy of
 * the weights on the device; that costs more than it saves on the H100, so q is offered it from
 * level normal only (wino_local_sizes). */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per transform, three of conv_gemm's square tiles: 128x128 (8x8 per work item), 64x64 (8x4),
 * 32x32 (4x4). A 64 x 128 F(4x4) tile ran 1.3-1.5x the 64x64's time on an H100 in f32, 0.95-1.31x
 * in q4 (docs/opencl.md). */
static const char *const wino_names[] = {"f2x2_128x128", "f2x2_64x64", "f2x2_32x32",
                                         "f4x4_128x128", "f4x4_64x64", "f4x4_32x32"};
static const int wino_tile[] = {128, 64, 32, 128, 64, 32}, wino_m[] = {2, 2, 2, 4, 4, 4};
#define WINO_NV 6
#define WINO_KPAD 16 /* V rows per channel padded with zeros to a multiple of this */

static size_t wino_up(size_t a, size_t b) { return (a + b - 1) / b * b; }

typedef struct wino_dims {
  size_t X, P, Pp, Cp, Op; /* values per tile, tiles, column stride, padded channels, U's rows (oc4 blocks) */
} wino_dims;

static void wino_size(const lc_cl_conv *c, int v, wino_dims *d) {
  size_t m = (size_t)wino_m[v], th = ((size_t)c->a.oh + m - 1) / m, tw = ((size_t)c->a.ow + m - 1) / m;
  d->X = (m + 2) * (m + 2);
  d->P = (size_t)c->a.n * th * tw;
  d->Pp = wino_up(d->P, (size_t)wino_tile[v]);
  d->Cp = wino_up((size_t)c->a.cin_g, WINO_KPAD);
  d->Op = wino_up((size_t)c->a.cout_g, 4);
}

static size_t wino_ws(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= WINO_NV) return 0;
  wino_dims d;
  wino_size(c, v, &d);
  return d.X * (d.Cp + (size_t)c->a.cout_g) * d.Pp * sizeof(float); /* M, then V */
}

#define WINO_QOPT " -DLCG_WQ=4" /* the longest of q's build options (" -DLCG_WQ=2" the other) */

static int wino_eligible(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  if (v < 0 || v >= WINO_NV || a->groups != 1 || a->kh != 3 || a->kw != 3 || a->sh != 1 || a->sw != 1 ||
      a->dh != 1 || a->dw != 1)
    return 0;
  if (c->wfmt != LC_WEIGHTS_F32 && strlen(c->options) + sizeof WINO_QOPT > sizeof c->options) return 0;
  size_t t, lmem;
  if (lc_cl_gemm_tile_size(wino_tile[v], wino_tile[v], &t, &lmem)) return 0;
  if (t > c->rt->info.max_wg || t > c->rt->info.max_wi[0] || lmem > c->rt->info.local_mem) return 0;
  /* a tile more than twice the problem along M or N only wastes work (32 always runs) */
  size_t th = ((size_t)a->oh + wino_m[v] - 1) / (size_t)wino_m[v], tw = ((size_t)a->ow + wino_m[v] - 1) / (size_t)wino_m[v];
  size_t P = (size_t)a->n * th * tw;
  if (wino_tile[v] > 32 && ((size_t)a->cout_g <= (size_t)wino_tile[v] / 2 || P <= (size_t)wino_tile[v] / 2)) return 0;
  wino_dims d;
  wino_size(c, v, &d);
  /* the kernels index with int */
  return d.X * (d.Cp + d.Op) * d.Pp < ((size_t)1 << 31) && d.X * d.Cp * d.Op < ((size_t)1 << 31);
}

/* Of transform v's tiles, the widest eligible one that still gives every compute unit two
 * work-groups (the 32 if none does). */
static int wino_pick(const lc_cl_conv *c, int v) {
  int v0 = v / 3 * 3;
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1;
  for (int u = v0; u < v0 + 2; u++) {
    if (!wino_eligible(c, u)) continue;
    wino_dims d;
    wino_size(c, u, &d);
    if (d.X * (d.Pp / (size_t)wino_tile[u]) * (d.Op / (size_t)wino_tile[u]) >= 2 * cu) return u;
  }
  return v0 + 2;
}

/* Not offered at level none (the heuristic keeps the GEMM, which needs no workspace); fast times
 * F(4x4)'s picked tile only (4 programs to compile on a cold start: F(4x4) does fewer
 * multiplications and moves less through the workspace than F(2x2) on every layer big enough to
 * gain from either), normal F(2x2)'s picked tile too, heavy every tile. q8/q4 from level normal:
 * making U costs each staged row ~9 dequantizations where fp32 loads one, ~85 % more work per item
 * with 32 columns per tile; on the H100 at batch 1 F(4x4) ran 1.3-1.7x the fp32 Winograd's time
 * (s1.conv1.first q4 59 / f32 40 us), slower than q's GEMMs (44-48 us), so level fast does not pay
 * its programs' builds (docs/opencl.md, "Winograd from codes"). */
static int wino_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || v < 0 || v >= WINO_NV) return 0;
  const char *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = fv && !strcmp(fv, wino_names[v]);
  if (!forced && c->wfmt != LC_WEIGHTS_F32 && level < LC_TUNE_NORMAL) return 0;
  if (!forced && (level <= 0 || (level <= 2 && wino_pick(c, v) != v) || (level == 1 && wino_m[v] != 4))) return 0;
  size_t lmem;
  if (lc_cl_gemm_tile_size(wino_tile[v], wino_tile[v], &lws[0][0], &lmem)) return 0;
  lws[0][1] = 1, lws[0][2] = 1;
  return 1;
}

static lc_status wino_launch(const lc_cl_conv *c, const char *prog, const char *name, int nargs, const size_t *sz,
                             const void *const *val, int dims, const size_t *gws, const size_t *lws, cl_event *ev) {
  cl_kernel k;
  lc_status s = lc_cl_conv_kernel(c, prog, name, &k);
  if (!s) s = lc_cl_set_args(c->rt, k, name, nargs, sz, val);
  if (!s) s = lc_cl_enqueue(c->rt, k, name, dims, gws, lws, ev);
  return s;
}

/* The X GEMMs as family gemm's 1x1 conv: X groups of Cp -> cout_g channels over a 1 x P image
 * whose channel planes are V's rows (Pp apart, voff floats into the workspace), written to M at
 * the workspace's start with no epilogue. */
static void wino_gemm_args(const lc_cl_conv *c, const wino_dims *d, int voff, lc_cl_conv_args *g) {
  const int X = (int)d->X, Cp = (int)d->Cp, P = (int)d->P, Pp = (int)d->Pp, M = c->a.cout_g;
  memset(g, 0, sizeof *g);
  g->n = 1, g->groups = X, g->cin_g = Cp, g->cout_g = M;
  g->ih = 1, g->iw = P, g->oh = 1, g->ow = P;
  g->kh = g->kw = g->sh = g->sw = g->dh = g->dw = 1;
  g->K = Cp, g->ob = (M + 3) / 4, g->nblk = 1, g->bsz = 1 << 30, g->ksplit = 1, g->kchunk = Cp;
  g->in_sn = X * Cp * Pp, g->in_sc = Pp, g->in_sh = P, g->in_sw = 1, g->in_off = voff;
  g->out_sn = X * M * Pp, g->out_sc = Pp, g->out_sh = P, g->out_sw = 1;
  if (c->wfmt != LC_WEIGHTS_F32) /* U made from the 3x3 codes: their blocks and rows (conv_gemm.cl LCG_WQ) */
    g->nblk = c->a.nblk, g->bpt = c->a.bpt, g->bsz = c->a.bsz, g->wq_cin = c->a.cin_g;
}

lc_status lc_cl_wino_ready(lc_cl_conv *c, int v) {
  if (c->wfmt != LC_WEIGHTS_F32) return LC_OK; /* q8/q4: no U */
  wino_dims d;
  wino_size(c, v, &d);
  if (c->wu && c->wu_m == wino_m[v] && c->wu_op == (int)d.Op) return LC_OK;
  lc_cl_wino_release(c);
  size_t bytes = d.X * d.Cp * d.Op * sizeof(float);
  lc_status s = lc_cl_buffer(c->rt, bytes, NULL, &c->wu);
  if (s) return s;
  int Cp = (int)d.Cp, Op = (int)d.Op;
  const size_t sz[4] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a, sizeof(int)};
  const void *val[4] = {&c->w, &c->wu, &c->a, &Cp};
  const size_t gws[2] = {wino_up(d.Op, 64), d.Cp}, lws[2] = {64, 1};
  s = wino_launch(c, "conv_wino", wino_m[v] == 2 ? "wino_wtrans2" : "wino_wtrans4", 4, sz, val, 2, gws, lws, NULL);
  if (s) {
    lc_cl_release_mem(c->rt, &c->wu);
    return s;
  }
  c->wu_bytes = bytes, c->wu_m = wino_m[v], c->wu_op = Op;
  return LC_OK;
}

void lc_cl_wino_release(lc_cl_conv *c) {
  lc_cl_release_mem(c->rt, &c->wu);
  c->wu_bytes = 0, c->wu_m = 0, c->wu_op = 0;
}

static lc_status wino_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                              cl_event *first, cl_event *last) {
  int v = cand->variant;
  wino_dims d;
  wino_size(c, v, &d);
  size_t need = wino_ws(c, v);
  const int f32 = c->wfmt == LC_WEIGHTS_F32;
  if (!c->rt->dry && ((f32 && (!c->wu || c->wu_m != wino_m[v] || c->wu_op != (int)d.Op)) || !c->ws || c->ws_bytes < need))
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): wino %s without its weights or %zu bytes of workspace",
                    wino_names[v], need);
  /* q8/q4: the GEMM tiles' program with LCG_WQ (the transforms' programs are c's) */
  lc_cl_conv q;
  if (!f32) {
    q = *c;
    snprintf(q.options + strlen(q.options), sizeof q.options - strlen(q.options), " -DLCG_WQ=%d", wino_m[v]);
  }
  const lc_cl_conv *gc = f32 ? c : &q;
  if (f32 && lc_cl_collecting(c->rt)) { /* name the weight transform too, so it is built with the rest */
    cl_kernel k;
    lc_status s = lc_cl_conv_kernel(c, "conv_wino", wino_m[v] == 2 ? "wino_wtrans2" : "wino_wtrans4", &k);
    if (s) return s;
  }
  /* M and V share the workspace: V starts voff floats in (an argument: sub-buffers would cost
   * an object per run and need aligned origins). */
  int Cp = (int)d.Cp, Pp = (int)d.Pp, M = c->a.cout_g, zero = 0, voff = (int)(d.X * (size_t)M * d.Pp);
  cl_mem r0 = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t szi[7] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a, sizeof(int), sizeof(int), sizeof(cl_mem), sizeof(int)};
  const void *vi[7] = {&in, &c->ws, &c->a, &Cp, &Pp, &c->bias, &voff};
  const size_t gi[2] = {d.Pp, d.Cp}, li[2] = {64, 1};
  lc_cl_conv_args ga;
  wino_gemm_args(c, &d, voff, &ga);
  const size_t szg[9] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                         sizeof(cl_mem), sizeof(cl_mem), sizeof ga,      sizeof(cl_mem)};
  const void *vg[9] = {&c->ws, f32 ? &c->wu : &c->w, &c->sc, &c->of, &c->bias, &c->bias, &c->ws, &ga, &c->ws};
  const size_t tl = (size_t)wino_tile[v];
  const size_t gg[3] = {(d.P + tl - 1) / tl * cand->lws[0], ((size_t)M + tl - 1) / tl, d.X};
  const size_t szo[8] = {sizeof(cl_mem), sizeof(int),      sizeof(cl_mem), sizeof(cl_mem),
                         sizeof(cl_mem), sizeof c->a, sizeof(int),    sizeof(int)};
  const void *vo[8] = {&c->ws, &zero, &c->bias, &r0, &out, &c->a, &M, &Pp};
  const size_t go[2] = {d.P, (size_t)c->a.cout_g}, lo[2] = {64, 1};
  char gname[32], iname[16], oname[16];
  snprintf(gname, sizeof gname, "gemm_%dx%d", wino_tile[v], wino_tile[v]);
  snprintf(iname, sizeof iname, "wino_itrans%d", wino_m[v]);
  snprintf(oname, sizeof oname, "wino_otrans%d", wino_m[v]);
  cl_event e0 = NULL, e1 = NULL;
  lc_status s = wino_launch(c, "conv_wino", iname, 7, szi, vi, 2, gi, li, first ? &e0 : NULL);
  if (!s) s = wino_launch(gc, "conv_gemm", gname, 9, szg, vg, 3, gg, cand->lws, NULL);
  if (!s) s = wino_launch(c, "conv_wino", oname, 8, szo, vo, 2, go, lo, last ? &e1 : NULL);
  return lc_cl_conv_end_events(c, s, e0, e1, first, last);
}

static size_t wino_ws_cand(const lc_cl_conv *c, const lc_cl_cand *x) { return wino_ws(c, x->variant); }

const lc_cl_family lc_cl_family_wino = {"wino",        "conv_wino",      WINO_NV, wino_names,
                                        wino_eligible, wino_local_sizes, wino_ws_cand, wino_enqueue};
