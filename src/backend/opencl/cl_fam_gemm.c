/* Kernel family "gemm": the local-memory tiled implicit GEMM (kernels/conv_gemm.cl). Per group,
 * C[cout_g][n*oh*ow] = weights[cout_g][K] x gathered input[K][n*oh*ow]; tiles from 128x128 (big
 * problems) to 32x32 (small maps at batch 1), and split-K tiles for deep layers with few output
 * pixels, whose partial sums go through the conv's workspace. docs/opencl.md says why. */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tm x tn output tile, tk rows of K per stage, t work items (fixed by the register tile), split:
 * K split in chunks, partial sums reduced by gemm_reduce (in the tile's program). Same tiles as
 * conv_gemm.cl. */
typedef struct gemm_tile {
  const char *kernel; /* kernel gemm_<kernel>, split-K or not (by the arguments' ksplit) */
  int tm, tn, tk, t, rm, split; /* rm: rows of the register tile */
  double eff; /* share of peak FMA rate the tile can reach (register tile, loads per FMA) */
  int slots;  /* work-groups resident per compute unit (registers, local memory) */
} gemm_tile;

static const char *const gemm_names[] = {"128x128", "128x128k16", "128x64", "64x128", "64x64",
                                         "32x32",   "64x64s",     "32x32s", "32x128", "32x128s"};
/* eff and slots: 8x8 register tiles need 4 float4 local reads per 64 FMAs, 8x4 and 4x8 3 per 32, 4x4
 * 2 per 16; ~128 registers per work item bound residency to 64K / (128 t) work-groups. */
static const gemm_tile gemm_tiles[] = {
    {"128x128", 128, 128, 8, 256, 8, 0, 0.80, 2}, {"128x128k16", 128, 128, 16, 256, 8, 0, 0.82, 2},
    {"128x64", 128, 64, 8, 128, 8, 0, 0.75, 4},   {"64x128", 64, 128, 8, 128, 8, 0, 0.75, 4},
    /* 16 rows of K per stage for the small tiles: a batch-1 layer's few work-groups wait on the
     * dependent load + barrier rounds of a long K, not on FMAs; half as many rounds ran them
     * 0.78x (32x32) / 0.83x (64x64) at batch 1 and 0.92x (64x64) at batch 32 (H200, 06:53 run) */
    {"64x64", 64, 64, 16, 128, 8, 0, 0.60, 4},    {"32x32", 32, 32, 16, 64, 4, 0, 0.40, 8},
    {"64x64", 64, 64, 16, 128, 8, 1, 0.60, 4},    {"32x32", 32, 32, 16, 64, 4, 1, 0.40, 8},
    /* few output channels on many pixels (PP-OCR-det's 9x9 convs to 24 channels): the 4x8 register
     * tile of 64x64's intensity without its rows of zeros */
    {"32x128", 32, 128, 8, 128, 4, 0, 0.60, 4},   {"32x128", 32, 128, 8, 128, 4, 1, 0.60, 4},
};
#define GEMM_NV ((int)(sizeof gemm_names / sizeof gemm_names[0]))

static size_t gemm_div_up(size_t a, size_t b) { return (a + b - 1) / b; }

static size_t gemm_cols(const lc_cl_conv *c) { return (size_t)c->a.n * (size_t)c->a.oh * (size_t)c->a.ow; }

/* Work-groups of one K chunk: column tiles x row tiles x groups. */
static size_t gemm_wgs(const lc_cl_conv *c, const gemm_tile *t) {
  return gemm_div_up(gemm_cols(c), (size_t)t->tn) * gemm_div_up((size_t)c->a.cout_g, (size_t)t->tm) *
         (size_t)c->a.groups;
}

/* K chunks of a split-K tile: enough work-groups for one full wave of the device (resident
 * work-groups on every compute unit), each chunk at least 8 K tiles so that the partial sums'
 * traffic stays small next to the FMAs, at most 32 chunks. kchunk is a multiple of tk. */
static void gemm_split(const lc_cl_conv *c, const gemm_tile *t, int *ksplit, int *kchunk) {
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1;
  size_t want = cu * (size_t)t->slots, wgs = gemm_wgs(c, t), K = (size_t)c->a.K;
  size_t ks = gemm_div_up(want, wgs), kmax = K / (8 * (size_t)t->tk);
  if (ks > kmax) ks = kmax;
  if (ks > 32) ks = 32;
  if (ks < 1) ks = 1;
  size_t kc = gemm_div_up(gemm_div_up(K, ks), (size_t)t->tk) * (size_t)t->tk;
  *kchunk = (int)kc;
  *ksplit = (int)gemm_div_up(K, kc);
}

/* The staging slices (conv_gemm.cl's LC_LDA / LC_LDB) and, for tiles of at most
 * GEMM_EPI_LOCAL_MAX outputs, the local C rows of one epilogue pass. */
#define GEMM_EPI_LOCAL_MAX 4096 /* conv_gemm.cl LC_EPI_LOCAL_MAX */
static size_t gemm_local_bytes(const gemm_tile *t) {
  size_t tpr = (size_t)(t->t / t->tk), ldb = (size_t)t->tn + (tpr < 32 ? tpr : 0);
  size_t cs = t->tm * t->tn <= GEMM_EPI_LOCAL_MAX ? 4 * (size_t)t->tm / (size_t)t->rm * (size_t)t->tn : 0;
  return ((size_t)t->tk * ((size_t)t->tm + 4) + (size_t)t->tk * ldb + cs) * sizeof(float);
}

int lc_cl_gemm_tile_size(int tm, int tn, size_t *items, size_t *local_bytes) {
  for (int v = 0; v < GEMM_NV; v++) /* the first of a kernel's rows: the non-split one */
    if (gemm_tiles[v].tm == tm && gemm_tiles[v].tn == tn) {
      *items = (size_t)gemm_tiles[v].t, *local_bytes = gemm_local_bytes(&gemm_tiles[v]);
      return 0;
    }
  return -1;
}

static size_t gemm_ws_need(const lc_cl_conv *c, int v) {
  const gemm_tile *t = &gemm_tiles[v];
  if (!t->split) return 0;
  int ks, kc;
  gemm_split(c, t, &ks, &kc);
  return (size_t)c->a.groups * (size_t)ks * (size_t)c->a.cout_g * gemm_cols(c) * sizeof(float);
}

/* Every non-depthwise conv. A tile more than twice the problem along M or N only wastes work, so
 * it is not offered (32 always is); split-K only where it makes at least 2 chunks. The partial
 * sums are indexed with int: their count must stay below 2^31. */
static int gemm_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= GEMM_NV || c->depthwise) return 0;
  const gemm_tile *t = &gemm_tiles[v];
  const lc_cl_dev_info *d = &c->rt->info;
  size_t M = (size_t)c->a.cout_g, N = gemm_cols(c);
  if ((size_t)t->t > d->max_wg || (size_t)t->t > d->max_wi[0] || gemm_local_bytes(t) > d->local_mem) return 0;
  if ((t->tm > 32 && M <= (size_t)t->tm / 2) || (t->tn > 32 && N <= (size_t)t->tn / 2)) return 0;
  if (t->split) {
    int ks, kc;
    gemm_split(c, t, &ks, &kc);
    if (ks < 2 || gemm_ws_need(c, v) / sizeof(float) >= ((size_t)1 << 31)) return 0;
  }
  return 1;
}

/* Modelled time (us) of a candidate: waves of resident work-groups, each wave the FMAs of `slots`
 * tiles at the tile's share of one compute unit's rate (2 x 128 lanes x ~2 GHz, the H200's; only
 * ratios matter elsewhere), plus for split-K a second launch and the partials' round trip. */
static double gemm_model_us(const lc_cl_conv *c, int v) {
  const gemm_tile *t = &gemm_tiles[v];
  double cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1, kc = c->a.K, ks = 1;
  if (t->split) {
    int s, k;
    gemm_split(c, t, &s, &k);
    ks = s, kc = k;
  }
  double wgs = (double)gemm_wgs(c, t) * ks, slots = cu * t->slots;
  double waves = (double)(size_t)((wgs + slots - 1) / slots);
  double wave_us = 2.0 * t->tm * t->tn * kc * t->slots / (0.5e6 * t->eff);
  double extra = t->split ? 4.0 + (double)gemm_ws_need(c, v) * 2 / 4.0e6 : 0.0;
  return waves * wave_us + extra;
}

/* The variant the heuristic (tuning level none) runs: the lowest modelled time. */
static int gemm_pick(const lc_cl_conv *c) { return lc_cl_model_pick(c, GEMM_NV, gemm_eligible, gemm_model_us); }

/* Tuning level fast times the GEMM_FAST variants the model ranks best (each is a kernel to
 * compile on a cold start: about 1 s each on the H200 with the driver's JIT cache off). */
#define GEMM_FAST 3
static int gemm_rank(const lc_cl_conv *c, int v) {
  return lc_cl_model_rank(c, v, GEMM_NV, gemm_eligible, gemm_model_us);
}

/* Of level fast's list, a tile over 64x64 whose work-groups do not give every compute unit one
 * is left out: it cannot beat a smaller tile there (the model ranks it by its efficiency, not
 * by the lanes it leaves idle), and these builds are the slowest (1.3-2.5 s cold on the H200). */
/* The 32x128 tiles, made for few output channels, only where there are few (<= 32): on
 * resnet34-112 (H200, every candidate timed at batch 1) they were within 0-5 % of 32x32s / 64x64s
 * where they won, and they are a program of their own on IResNet-34's cold start. */
static int gemm_fast_skip(const lc_cl_conv *c, int v) {
  const gemm_tile *t = &gemm_tiles[v];
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1;
  if (!lc_cl_fast_short()) return 0;
  if (t->tm == 32 && t->tn == 128 && c->a.cout_g > 32) return 1;
  return t->tm * t->tn > 64 * 64 && gemm_wgs(c, t) < cu;
}

/* The work-group size is fixed by the tile. At level none only the modelled best variant offers
 * it, so the tuner's first-eligible rule runs that one; a variant forced by LOWCONV_CL_VARIANT
 * (tests, the CLI) is offered anyway. */
static int gemm_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || v < 0 || v >= GEMM_NV) return 0;
  const char *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = fv && !strcmp(fv, gemm_names[v]);
  if (level <= 0 && !forced && gemm_pick(c) != v) return 0;
  if (level == 1 && !forced && (gemm_rank(c, v) >= GEMM_FAST || gemm_fast_skip(c, v))) return 0;
  lws[0][0] = (size_t)gemm_tiles[v].t, lws[0][1] = 1, lws[0][2] = 1;
  return 1;
}

static lc_status gemm_launch(const lc_cl_conv *c, const char *want, const char *name, const size_t *sz,
                             const void *const *val, const size_t gws[3], const size_t lws[3], cl_event *ev) {
  return lc_cl_conv_launch(c, "conv_gemm", want, name, 9, sz, val, gws, lws, ev);
}

/* The tile's kernel (split-K: then gemm_reduce) with the standard arguments plus, for split-K,
 * the workspace; the arguments' ksplit and kchunk are this candidate's. */
static lc_status gemm_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                              cl_event *first, cl_event *last) {
  const gemm_tile *t = &gemm_tiles[cand->variant];
  lc_cl_conv_args sa = c->a;
  sa.ksplit = 1, sa.kchunk = sa.K;
  if (t->split) gemm_split(c, t, &sa.ksplit, &sa.kchunk);
  size_t need = gemm_ws_need(c, cand->variant);
  if (need && (!c->ws || c->ws_bytes < need))
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): gemm %s needs %zu bytes of workspace, has %zu",
                    gemm_names[cand->variant], need, c->ws_bytes);
  char name[48];
  snprintf(name, sizeof name, "gemm_%s", t->kernel);
  size_t gws[3] = {(size_t)t->t * gemm_div_up(gemm_cols(c), (size_t)t->tn),
                   gemm_div_up((size_t)sa.cout_g, (size_t)t->tm), (size_t)sa.groups * (size_t)sa.ksplit};
  size_t lws[3] = {(size_t)t->t, 1, 1};
  size_t total = (size_t)sa.groups * (size_t)sa.cout_g * gemm_cols(c);
  size_t rg[3] = {gemm_div_up(total, lws[0]) * lws[0], 1, 1};
  cl_mem r = res ? res : c->bias; /* never read when has_res is 0 */
  cl_mem ws = c->ws ? c->ws : out;  /* written only with ksplit > 1 */
  const size_t sz[9] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                        sizeof(cl_mem), sizeof(cl_mem), sizeof sa,        sizeof(cl_mem)};
  const void *val[9] = {&in, &c->w, &c->sc, &c->of, &c->bias, &r, &out, &sa, &ws};
  cl_event e0 = NULL, e1 = NULL;
  lc_status s = gemm_launch(c, name, name, sz, val, gws, lws, first || (last && !t->split) ? &e0 : NULL);
  if (!s && t->split) s = gemm_launch(c, name, "gemm_reduce", sz, val, rg, lws, last ? &e1 : NULL);
  if (!s && !t->split && first && last && e0) {
    cl_int err = c->rt->cl->RetainEvent(e0);
    if (err != CL_SUCCESS) s = lc_cl_fail(c->rt, err, "clRetainEvent (%s)", name);
  }
  if (s) {
    if (e0) c->rt->cl->ReleaseEvent(e0);
    if (e1) c->rt->cl->ReleaseEvent(e1);
    return s;
  }
  if (first) *first = e0;
  if (last) *last = t->split ? e1 : e0;
  return LC_OK;
}

static size_t gemm_ws_cand(const lc_cl_conv *c, const lc_cl_cand *x) { return gemm_ws_need(c, x->variant); }

const lc_cl_family lc_cl_family_gemm = {"gemm",        "conv_gemm",           GEMM_NV,     gemm_names,
                                        gemm_eligible, gemm_local_sizes, gemm_ws_cand, gemm_enqueue};
