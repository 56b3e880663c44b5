/* Kernel family "wino9": Winograd F(3x3, 3x3) over the nine 3x3 sub-kernels of a 9x9 conv (stride
 * and dilation 1, one group, at most 32 output channels, any weight format; kernels/conv_wino9.cl says
 * how). PP-OCR det's 9x9 convs to 24 channels ran at 30-36 TFLOP/s with family wide on the H200, a
 * third of them spent on multiplications Winograd removes (3.24x fewer). The 25 products over the
 * tile grid are one grouped 3x3 conv that family wide's tile kernel runs as it stands (its
 * variants and local sizes are this family's), so only the two transforms are new. Workspace:
 * wide's partial sums, then V (aligned for wide's float4 row loads). With fp32 weights U, the
 * transformed weights (25 fp32 per 9 weights), lives in the conv's Winograd buffer, made before a
 * candidate runs and released when another family wins. With q8/q4 weights there is no U: wide's
 * tile kernel, built with LCW_W9, transforms each sub-kernel from the codes as it stages a
 * channel's weights in local memory (9 dequantized weights per staged value), so the codes stay
 * the only copy of the weights on the device. */
#include "backend/opencl/cl_conv.h"
#include "util/checked.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

/* Family wide's variants, in its order (cl_fam_wide.c wide_names). */
static const char *const w9_names[] = {"f3c8w4", "f3c12w4", "f3c16w4", "f3c24w4", "f3c24w2", "f3c8w8", "f3c12w8"};
#define W9_NV ((int)(sizeof w9_names / sizeof w9_names[0]))
#define W9_WU_M 9 /* c->wu_m when wu holds this family's U */
#define W9_OPT " -DLCW_W9=1"

static size_t w9_up(size_t a, size_t b) { return (a + b - 1) / b * b; }

typedef struct w9_dims {
  size_t TY, TX, TYp, TXp; /* output tiles; the input grid with its halo, rows padded to 4 */
} w9_dims;

static void w9_size(const lc_cl_conv *c, w9_dims *d) {
  d->TY = ((size_t)c->a.oh + 2) / 3, d->TX = ((size_t)c->a.ow + 2) / 3;
  d->TYp = d->TY + 2, d->TXp = w9_up(d->TX + 2, 4);
}

static size_t w9_vfloats(const lc_cl_conv *c, const w9_dims *d) {
  return (size_t)c->a.n * 25 * (size_t)c->a.cin_g * d->TYp * d->TXp;
}

/* V and the 25 products index with int (and so do the grouped conv's strides, w9_shadow): both
 * counted without overflow and below 2^31 before anything else is computed from them. */
static int w9_fits(const lc_cl_conv *c, const w9_dims *d) {
  const int64_t fv[5] = {c->a.n, 25, c->a.cin_g, (int64_t)d->TYp, (int64_t)d->TXp};
  const int64_t fm[5] = {c->a.n, 25, c->a.cout_g, (int64_t)d->TY, (int64_t)d->TX};
  size_t v, m;
  return lc_mul_n(&v, 5, fv) && lc_mul_n(&m, 5, fm) && v < ((size_t)1 << 31) && m < ((size_t)1 << 31);
}

/* The 25-group 3x3 conv over the tile grid, as family wide sees it: V read in_off floats into the
 * workspace (set by the caller, w9_voff), no epilogue (wino9_otrans applies the conv's). */
static void w9_shadow(const lc_cl_conv *c, const w9_dims *d, lc_cl_conv *s) {
  *s = *c;
  s->depthwise = 0, s->is1x1 = 0;
  const int q = c->wfmt != LC_WEIGHTS_F32; /* codes transformed while staged (conv_wide.cl LCW_W9) */
  if (!q) s->w = c->wu, s->sc = s->of = c->bias, s->asym = 0;
  else if (strlen(c->options) + sizeof W9_OPT <= sizeof s->options) strcat(s->options, W9_OPT); /* else w9_eligible: 0 */
  lc_cl_conv_args *g = &s->a;
  const int C = c->a.cin_g, O = c->a.cout_g, TYp = (int)d->TYp, TXp = (int)d->TXp, TY = (int)d->TY, TX = (int)d->TX;
  memset(g, 0, sizeof *g);
  g->n = c->a.n, g->groups = 25, g->cin_g = C, g->cout_g = O;
  g->ih = TYp, g->iw = TXp, g->oh = TY, g->ow = TX;
  g->kh = g->kw = 3, g->sh = g->sw = g->dh = g->dw = 1;
  g->K = 9 * C, g->ob = (O + 3) / 4, g->nblk = 1, g->bsz = 1 << 30, g->ksplit = 1, g->kchunk = C;
  if (q) g->K = c->a.K, g->nblk = c->a.nblk, g->bpt = c->a.bpt, g->bsz = c->a.bsz; /* the 9x9's weight addressing */
  g->in_sn = 25 * C * TYp * TXp, g->in_sc = TYp * TXp, g->in_sh = TXp, g->in_sw = 1;
  g->out_sn = 25 * O * TY * TX, g->out_sc = TY * TX, g->out_sh = TX, g->out_sw = 1;
}

/* Split multiplier of a candidate (wide's: lws[2]). */
static size_t w9_mul(const size_t lws[3]) { return lws[2] == 2 || lws[2] == 4 ? lws[2] : 1; }

/* V's offset (floats) for the grouped conv s: after the partial sums of variant v with multiplier
 * mul, 16-byte aligned. */
static size_t w9_voff(const lc_cl_conv *s, int v, size_t mul) {
  return w9_up(lc_cl_wide_partial_bytes(s, v, mul) / sizeof(float), 64);
}

static int w9_eligible(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  if (c->wfmt != LC_WEIGHTS_F32 && strlen(c->options) + sizeof W9_OPT > sizeof c->options) return 0;
  if (v < 0 || v >= W9_NV || a->groups != 1 || a->kh != 9 || a->kw != 9 || a->sh != 1 ||
      a->sw != 1 || a->dh != 1 || a->dw != 1 || a->in_aff || a->cout_g > 32)
    return 0;
  w9_dims d;
  w9_size(c, &d);
  if (!w9_fits(c, &d)) return 0;
  lc_cl_conv s;
  w9_shadow(c, &d, &s);
  /* the kernels index with int: V and its offset (the largest split's partials), U */
  if (w9_vfloats(c, &d) + w9_voff(&s, v, 4) >= ((size_t)1 << 31) || 225 * (size_t)a->ob * 4 * a->cin_g >= ((size_t)1 << 31))
    return 0;
  return lc_cl_wide_eligible(&s, v);
}

/* Level fast: the tiles that won on the H200 (c8w4 and c8w8 on PP-OCR det's 9x9s, c12w4 close),
 * with the local sizes of level normal (c8w8's best, 8 x 8, is the sixth). */
static int w9_fast(int v) { return v == 0 || v == 1 || v == 5; }

/* Never the heuristic's (three launches and a workspace); tuned as wide tunes the grouped conv. */
static int w9_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || !w9_eligible(c, v)) return 0;
  const char *ff = getenv("LOWCONV_CL_FAMILY"), *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = (ff && !strcmp(ff, "wino9")) || (fv && !strcmp(fv, w9_names[v]));
  if (level <= 0 && !forced) return 0;
  w9_dims d;
  w9_size(c, &d);
  lc_cl_conv s;
  w9_shadow(c, &d, &s);
  if (level == 1 && !forced && lc_cl_fast_short() && !w9_fast(v)) return 0;
  return lc_cl_wide_local_sizes(&s, v, forced ? 0 : level == 1 ? 2 : level, lws, max);
}

static size_t w9_ws(const lc_cl_conv *c, const lc_cl_cand *x) {
  if (!w9_eligible(c, x->variant)) return 0;
  w9_dims d;
  w9_size(c, &d);
  lc_cl_conv s;
  w9_shadow(c, &d, &s);
  return (w9_voff(&s, x->variant, w9_mul(x->lws)) + w9_vfloats(c, &d)) * sizeof(float);
}

lc_status lc_cl_wino9_ready(lc_cl_conv *c) {
  if (c->wfmt != LC_WEIGHTS_F32 || (c->wu && c->wu_m == W9_WU_M)) return LC_OK; /* q8/q4: no U */
  lc_cl_wino_release(c);
  size_t bytes = 225 * (size_t)c->a.ob * 4 * (size_t)c->a.cin_g * sizeof(float);
  lc_status s = lc_cl_buffer(c->rt, bytes, NULL, &c->wu);
  if (s) return s;
  const size_t sz[3] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a};
  const void *val[3] = {&c->w, &c->wu, &c->a};
  const size_t gws[3] = {w9_up(4 * (size_t)c->a.ob, 32), (size_t)c->a.cin_g, 9}, lws[3] = {32, 1, 1};
  s = lc_cl_conv_launch(c, "conv_wino9", "wino9_wtrans", "wino9_wtrans", 3, sz, val, gws, lws, NULL);
  if (s) {
    lc_cl_release_mem(c->rt, &c->wu);
    return s;
  }
  c->wu_bytes = bytes, c->wu_m = W9_WU_M, c->wu_op = 4 * c->a.ob;
  return LC_OK;
}

static lc_status w9_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                            cl_event *first, cl_event *last) {
  const int v = cand->variant;
  w9_dims d;
  w9_size(c, &d);
  /* The candidate came from w9_local_sizes (or the cache, checked the same way): no eligibility
   * test per run, only the grouped conv and V's place, once. */
  lc_cl_conv s;
  w9_shadow(c, &d, &s);
  const int voff = (int)w9_voff(&s, v, w9_mul(cand->lws));
  s.a.in_off = voff;
  const size_t need = ((size_t)voff + w9_vfloats(c, &d)) * sizeof(float);
  const int f32 = c->wfmt == LC_WEIGHTS_F32;
  if (!c->rt->dry && ((f32 && (!c->wu || c->wu_m != W9_WU_M)) || !c->ws || c->ws_bytes < need))
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): wino9 %s without its weights or %zu bytes of workspace",
                    w9_names[v], need);
  if (f32 && lc_cl_collecting(c->rt)) { /* name the weight transform too, so it is built with the rest */
    cl_kernel k;
    lc_status e = lc_cl_conv_kernel(c, "conv_wino9", "wino9_wtrans", &k);
    if (e) return e;
  }
  const int TY = (int)d.TY, TX = (int)d.TX, TYp = (int)d.TYp, TXp = (int)d.TXp;
  cl_mem r0 = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t szi[6] = {sizeof(cl_mem), sizeof(cl_mem), sizeof c->a, sizeof(int), sizeof(int), sizeof(int)};
  const void *vi[6] = {&in, &c->ws, &c->a, &TYp, &TXp, &voff};
  const size_t gi[3] = {w9_up(d.TYp * d.TXp, 64), (size_t)c->a.n * (size_t)c->a.cin_g, 1}, l1[3] = {64, 1, 1};
  cl_event e0 = NULL, e1 = NULL;
  lc_status st = lc_cl_conv_launch(c, "conv_wino9", "wino9_itrans", "wino9_itrans", 6, szi, vi, gi, l1,
                                   first ? &e0 : NULL);
  int ks = 1;
  if (!st) st = lc_cl_wide_partials(&s, v, cand->lws, c->ws, &ks, NULL);
  const size_t szo[8] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                         sizeof c->a,    sizeof(int),    sizeof(int),    sizeof(int)};
  const void *vo[8] = {&c->ws, &c->bias, &r0, &out, &c->a, &TY, &TX, &ks};
  const size_t go[3] = {w9_up(d.TY * d.TX, 64), (size_t)c->a.n * (size_t)c->a.cout_g, 1};
  if (!st) st = lc_cl_conv_launch(c, "conv_wino9", "wino9_otrans", "wino9_otrans", 8, szo, vo, go, l1, last ? &e1 : NULL);
  return lc_cl_conv_end_events(c, st, e0, e1, first, last);
}

const lc_cl_family lc_cl_family_wino9 = {"wino9", "conv_wino9", W9_NV, w9_names, w9_eligible, w9_local_sizes, w9_ws,
                                         w9_enqueue};
