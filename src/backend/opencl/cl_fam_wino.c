/* Kernel family "wino": Winograd F(2x2, 3x3) for 3x3 stride-1 convs of one group with fp32
 * weights (kernels/conv_wino.cl): input transform, 16 GEMMs over the tiles, output transform with
 * the epilogue. 2.25x fewer multiplications than the direct product, paid for with three launches
 * and the transformed input and products in the workspace, so the tuner keeps it only where it
 * measures faster. The transformed weights U (16 per 9 weights, fp32) are made on the device from
 * the packed weights when the family is first tried, and released if it is not chosen; q8/q4 convs
 * are not offered (their weights would have to be fp32 on the device). */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wino_names[] = {"f2x2_64x64", "f2x2_32x32"};
static const int wino_tile[] = {64, 32};
#define WINO_NV 2
#define WINO_OPAD 64 /* U's output channels are padded for the widest tile */
#define WINO_KPAD 16 /* LCW_TK of conv_wino.cl */

static size_t wino_up(size_t a, size_t b) { return (a + b - 1) / b * b; }

typedef struct wino_dims {
  size_t P, Pp, Cp, Op; /* tiles, and the padded sizes of the GEMMs */
} wino_dims;

static void wino_size(const lc_cl_conv *c, int v, wino_dims *d) {
  size_t th = ((size_t)c->a.oh + 1) / 2, tw = ((size_t)c->a.ow + 1) / 2;
  d->P = (size_t)c->a.n * th * tw;
  d->Pp = wino_up(d->P, (size_t)wino_tile[v]);
  d->Cp = wino_up((size_t)c->a.cin_g, WINO_KPAD);
  d->Op = wino_up((size_t)c->a.cout_g, WINO_OPAD);
}

static size_t wino_ws(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= WINO_NV) return 0;
  wino_dims d;
  wino_size(c, v, &d);
  return 16 * (d.Cp + d.Op) * d.Pp * sizeof(float);
}

static int wino_eligible(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  if (v < 0 || v >= WINO_NV || c->wfmt != LC_WEIGHTS_F32 || a->groups != 1 || a->kh != 3 || a->kw != 3 ||
      a->sh != 1 || a->sw != 1 || a->dh != 1 || a->dw != 1)
    return 0;
  size_t t = (size_t)(wino_tile[v] / 4) * (size_t)(wino_tile[v] / 4);
  if (t > c->rt->info.max_wg || t > c->rt->info.max_wi[0]) return 0;
  wino_dims d;
  wino_size(c, v, &d);
  /* the kernels index with int */
  return 16 * (d.Cp + d.Op) * d.Pp < ((size_t)1 << 31) && 16 * d.Cp * d.Op < ((size_t)1 << 31);
}

/* The 64-wide tile where it gives at least two work-groups per compute unit, else the 32. */
static int wino_pick(const lc_cl_conv *c) {
  wino_dims d;
  wino_size(c, 0, &d);
  size_t wgs = 16 * (d.Pp / 64) * wino_up((size_t)c->a.cout_g, 64) / 64, cu = c->rt->info.compute_units;
  return wgs >= 2 * (cu ? cu : 1) ? 0 : 1;
}

/* Not offered at level none (the heuristic keeps the GEMM, which needs no workspace); fast times
 * the picked tile, normal and heavy both. */
static int wino_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || v < 0 || v >= WINO_NV) return 0;
  const char *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = fv && !strcmp(fv, wino_names[v]);
  if (!forced && (level <= 0 || (level == 1 && wino_pick(c) != v))) return 0;
  lws[0][0] = (size_t)(wino_tile[v] / 4) * (size_t)(wino_tile[v] / 4), lws[0][1] = 1, lws[0][2] = 1;
  return 1;
}

static lc_status wino_launch(const lc_cl_conv *c, const char *name, int nargs, const size_t *sz,
                             const void *const *val, int dims, const size_t *gws, const size_t *lws, cl_event *ev) {
  cl_kernel k;
  lc_status s = lc_cl_conv_kernel(c, "conv_wino", name, &k);
  if (!s) s = lc_cl_set_args(c->rt, k, name, nargs, sz, val);
  if (!s) s = lc_cl_enqueue(c->rt, k, name, dims, gws, lws, ev);
  return s;
}

lc_status lc_cl_wino_ready(lc_cl_conv *c) {
  if (c->wu) return LC_OK;
  wino_dims d;
  wino_size(c, 0, &d);
  size_t bytes = 16 * d.Cp * d.Op * sizeof(float);
  lc_status s = lc_cl_buffer(c->rt, bytes, NULL, &c->wu);
  if (s) return s;
  int Cp = (int)d.Cp, Op = (int)d.Op;
  const size_t sz[5] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a, sizeof(int), sizeof(int)};
  const void *val[5] = {&c->w, &c->wu, &c->a, &Cp, &Op};
  const size_t gws[2] = {d.Op, d.Cp}, lws[2] = {64, 1};
  s = wino_launch(c, "wino_wtrans", 5, sz, val, 2, gws, lws, NULL);
  if (s) {
    lc_cl_release_mem(c->rt, &c->wu);
    return s;
  }
  c->wu_bytes = bytes;
  return LC_OK;
}

void lc_cl_wino_release(lc_cl_conv *c) {
  lc_cl_release_mem(c->rt, &c->wu);
  c->wu_bytes = 0;
}

static lc_status wino_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                              cl_event *first, cl_event *last) {
  int v = cand->variant;
  wino_dims d;
  wino_size(c, v, &d);
  size_t need = wino_ws(c, v);
  if (!c->rt->dry && (!c->wu || !c->ws || c->ws_bytes < need))
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): wino %s without its weights or %zu bytes of workspace",
                    wino_names[v], need);
  if (c->rt->dry == LC_CL_COLLECT) { /* name the weight transform too, so it is built with the rest */
    cl_kernel k;
    lc_status s = lc_cl_conv_kernel(c, "conv_wino", "wino_wtrans", &k);
    if (s) return s;
  }
  /* V and M share the workspace: M starts moff floats in (an argument: sub-buffers would cost
   * an object per run and need aligned origins). */
  int Cp = (int)d.Cp, Op = (int)d.Op, Pp = (int)d.Pp, moff = (int)(16 * d.Cp * d.Pp);
  cl_mem r0 = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t szi[5] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a, sizeof(int), sizeof(int)};
  const void *vi[5] = {&in, &c->ws, &c->a, &Cp, &Pp};
  const size_t gi[2] = {d.Pp, d.Cp}, li[2] = {64, 1};
  const size_t szg[6] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(int), sizeof(int), sizeof(int), sizeof(int)};
  const void *vg[6] = {&c->wu, &c->ws, &moff, &Cp, &Op, &Pp};
  const size_t gg[3] = {d.Pp / (size_t)wino_tile[v] * cand->lws[0],
                        wino_up((size_t)c->a.cout_g, (size_t)wino_tile[v]) / (size_t)wino_tile[v], 16};
  const size_t szo[8] = {sizeof(cl_mem), sizeof(int),      sizeof(cl_mem), sizeof(cl_mem),
                         sizeof(cl_mem), sizeof c->a, sizeof(int),    sizeof(int)};
  const void *vo[8] = {&c->ws, &moff, &c->bias, &r0, &out, &c->a, &Op, &Pp};
  const size_t go[2] = {d.P, (size_t)c->a.cout_g}, lo[2] = {64, 1};
  char gname[32];
  snprintf(gname, sizeof gname, "wino_gemm_%dx%d", wino_tile[v], wino_tile[v]);
  cl_event e0 = NULL, e1 = NULL;
  lc_status s = wino_launch(c, "wino_itrans", 5, szi, vi, 2, gi, li, first ? &e0 : NULL);
  if (!s) s = wino_launch(c, gname, 6, szg, vg, 3, gg, cand->lws, NULL);
  if (!s) s = wino_launch(c, "wino_otrans", 8, szo, vo, 2, go, lo, last ? &e1 : NULL);
  if (s) {
    if (e0) c->rt->cl->ReleaseEvent(e0);
    if (e1) c->rt->cl->ReleaseEvent(e1);
    return s;
  }
  if (first) *first = e0;
  if (last) *last = e1;
  return LC_OK;
}

const lc_cl_family lc_cl_family_wino = {"wino",        "conv_wino",      WINO_NV, wino_names,
                                        wino_eligible, wino_local_sizes, wino_ws, wino_enqueue};
