/* Winograd F(4x4, 3x3) for 3x3, stride 1, dilation 1 fp32 convs (any pads, groups, both layouts):
 * each 4x4 output tile comes from a 6x6 input tile, Y = A^T [ (G g G^T) .* (B^T d B) ] A, i.e. 36
 * GEMMs with K = cin/groups: 4x fewer multiplies than im2col (F(2x2): 2.25x), at the cost of a
 * larger rounding error (the points 0, +-1, +-2, +-1/2: transform entries up to 8 and 1/24;
 * test_conv_winograd measures it against the fp64 reference). The heuristic selector takes it
 * on the AVX2 table from 64 channels at 14x14..80x80 outputs (select.c); the tuner times it against
 * F(2x2) and the other routes. Its weights are transformed when a tuner is on, the route is
 * asked for, or lc_winograd4_auto says AUTO may take it.
 *   U: [group][xi][panel][ic][nr]   (G g G^T, in double then rounded; zero-padded panels)
 *   V: [xi][tile block][ic][mr]     (packed A panels of mr tiles)
 *   M: [xi][T][nr]                  (one weight panel's products)
 * Work: chunks of T tiles per (image, group), split over weight panels when there are fewer
 * chunks than threads. Each output's sum over ic is one GEMM call per xi: the same bits for any
 * T, split or thread count. xi = 6 * row + column of the transformed tile. */
#include <string.h>

#include "conv/route.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

#define CH 64 /* channels per transform call (bounds the local buffers) */
/* Slot size per thread when the budget is unlimited (as F(2x2): V near L2). */
#define W4_CHUNK_BYTES ((size_t)768 << 10)

static int w4_shape_ok(const lc_conv *c) {
  const lc_conv_desc *d = &c->d;
  return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
         d->dilation_w == 1 && !c->depthwise;
}
static size_t w4_panels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, c->ctx->k->nr); }

/* F(4x4) does 1.78x fewer multiplies than F(2x2) but 2.25x the transform work per channel: it won
 * from 64 channels (Zen 3: 1.1-1.5x on 64..512-channel 3x3 layers at 14..80 px; 32-channel ones kept
 * F(2x2)). Only the AVX2 table was refitted (select.c says why); the output size is select.c's. */
int lc_winograd4_auto(const lc_conv *c) {
  return c->ctx->k->isa == LC_ISA_AVX2 && w4_shape_ok(c) && !c->qw && c->cin_g >= 64;
}

lc_status lc_winograd4_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!w4_shape_ok(c) || c->qw) return LC_OK;
  if (!(d->route == LC_ROUTE_WINOGRAD4 || (d->route == LC_ROUTE_AUTO && (c->ctx->tuner || lc_winograd4_auto(c)))))
    return LC_OK;
  size_t nr = c->ctx->k->nr, np = w4_panels(c), cig = (size_t)c->cin_g, cog = (size_t)c->cout_g, n, bytes;
  if (!lc_mul_sz((size_t)d->groups * 36, np, &n) || !lc_mul_sz(n, cig, &n) || !lc_mul_sz(n, nr, &n) ||
      !lc_mul_sz(n, sizeof(float), &bytes))
    return lc_error(LC_ERR_OVERFLOW, "winograd4: transformed weight size overflows");
  if (!(c->wwino4 = lc_calloc(n, sizeof(float))))
    return lc_error(LC_ERR_NO_MEMORY, "winograd4: cannot allocate %zu bytes of weights", bytes);
  c->wwino4_bytes = bytes;
  c->weight_bytes += bytes;
  static const double G[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  for (size_t g = 0; g < (size_t)d->groups; g++)
    for (size_t oc = 0; oc < cog; oc++)
      for (size_t ic = 0; ic < cig; ic++) {
        const float *k = w + ((g * cog + oc) * cig + ic) * 9;
        double t[6][3], u;
        for (int i = 0; i < 6; i++)
          for (int x = 0; x < 3; x++) t[i][x] = G[i][0] * k[x] + G[i][1] * k[3 + x] + G[i][2] * k[6 + x];
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 6; j++) {
            u = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
            size_t xi = (size_t)(6 * i + j);
            c->wwino4[(((g * 36 + xi) * np + oc / nr) * cig + ic) * nr + oc % nr] = (float)u;
          }
      }
  return LC_OK;
}

/* Slot: [V: 36 x T x cig][M: 36 x T x nr][CH zeros], 64-aligned parts (T is a multiple of mr). */
static int w4_slot(const lc_conv *c, size_t T, size_t *bytes) {
  size_t v, m, z = CH * sizeof(float) + 64; /* + 64: run aligns the slot */
  if (!lc_mul_sz(36 * sizeof(float) * (size_t)c->cin_g, T, &v) || !lc_mul_sz(36 * sizeof(float) * c->ctx->k->nr, T, &m))
    return 0;
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z, bytes);
}

lc_status lc_winograd4_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!w4_shape_ok(c)) return lc_error(LC_ERR_UNSUPPORTED, "winograd4: needs a 3x3 kernel, stride 1, dilation 1");
  if (!c->wwino4)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd4: fp32 weights transformed at create (route winograd4 or a tuner)");
  size_t mr = c->ctx->k->mr, nt, one;
  if (!lc_mul_sz(lc_div_up((size_t)p->oh, 4), lc_div_up((size_t)p->ow, 4), &nt) || !w4_slot(c, mr, &one))
    return lc_error(LC_ERR_OVERFLOW, "winograd4: tile count or slot size overflows");
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "winograd4: one chunk of %zu tiles needs %zu bytes, budget is %zu", mr, one,
                    c->ctx->budget);
  size_t target = c->ctx->budget ? c->ctx->budget / (size_t)threads : lc_max_sz(W4_CHUNK_BYTES, one);
  size_t cap = lc_round_up(nt, mr), T = mr, b;
  if (p->hint_tile) {
    T = lc_min_sz(cap, lc_round_up(p->hint_tile, mr));
  } else {
    while (T + mr <= cap && w4_slot(c, T + mr, &b) && b <= target) T += mr;
  }
  if (!w4_slot(c, T, &b)) return lc_error(LC_ERR_OVERFLOW, "winograd4: slot size overflows");
  if (c->ctx->budget && b > target)
    return lc_error(LC_ERR_BUDGET, "winograd4: a chunk of %zu tiles needs %zu bytes per thread, budget is %zu", T, b,
                    c->ctx->budget);
  size_t nch = lc_div_up(nt, T);
  T = lc_min_sz(T, lc_round_up(lc_div_up(nt, nch), mr));
  p->tile = T;
  p->ntiles = lc_div_up(nt, T);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, threads, w4_panels(c));
  w4_slot(c, T, &b);
  return lc_route_planned(p, LC_ROUTE_WINOGRAD4, b, threads);
}

/* B^T d B over n channels: d[r * 6 + x] points at the channels of input pixel (r, x). */
static void w4_in(size_t n, const float *const d[36], float out[36][CH]) {
  float t[36][CH];
  for (int x = 0; x < 6; x++) {
    const float *d0 = d[x], *d1 = d[6 + x], *d2 = d[12 + x], *d3 = d[18 + x], *d4 = d[24 + x], *d5 = d[30 + x];
    for (size_t k = 0; k < n; k++) {
      float a0 = d0[k], a1 = d1[k], a2 = d2[k], a3 = d3[k], a4 = d4[k], a5 = d5[k];
      t[x][k] = 4.0f * a0 - 5.0f * a2 + a4;
      t[6 + x][k] = -4.0f * (a1 + a2) + (a3 + a4);
      t[12 + x][k] = 4.0f * (a1 - a2) + (a4 - a3);
      t[18 + x][k] = 2.0f * (a3 - a1) + (a4 - a2);
      t[24 + x][k] = 2.0f * (a1 - a3) + (a4 - a2);
      t[30 + x][k] = 4.0f * a1 - 5.0f * a3 + a5;
    }
  }
  for (int r = 0; r < 6; r++) {
    const float *t0 = t[6 * r], *t1 = t[6 * r + 1], *t2 = t[6 * r + 2], *t3 = t[6 * r + 3], *t4 = t[6 * r + 4],
                *t5 = t[6 * r + 5];
    for (size_t k = 0; k < n; k++) {
      float a0 = t0[k], a1 = t1[k], a2 = t2[k], a3 = t3[k], a4 = t4[k], a5 = t5[k];
      out[6 * r][k] = 4.0f * a0 - 5.0f * a2 + a4;
      out[6 * r + 1][k] = -4.0f * (a1 + a2) + (a3 + a4);
      out[6 * r + 2][k] = 4.0f * (a1 - a2) + (a4 - a3);
      out[6 * r + 3][k] = 2.0f * (a3 - a1) + (a4 - a2);
      out[6 * r + 4][k] = 2.0f * (a1 - a3) + (a4 - a2);
      out[6 * r + 5][k] = 4.0f * a1 - 5.0f * a3 + a5;
    }
  }
}

/* A^T m A over n <= nr channels: m[xi * xs + k] -> y[dy * 4 + dx][k]. */
static void w4_out(size_t n, const float *m, size_t xs, float y[16][CH]) {
  float t[24][CH]; /* 4 rows x 6 columns */
  for (int x = 0; x < 6; x++) {
    const float *m0 = m + (size_t)x * xs, *m1 = m0 + 6 * xs, *m2 = m0 + 12 * xs, *m3 = m0 + 18 * xs,
                *m4 = m0 + 24 * xs, *m5 = m0 + 30 * xs;
    for (size_t k = 0; k < n; k++) {
      float s12 = m1[k] + m2[k], d12 = m1[k] - m2[k], s34 = m3[k] + m4[k], d34 = m3[k] - m4[k];
      t[x][k] = m0[k] + s12 + s34;
      t[6 + x][k] = d12 + 2.0f * d34;
      t[12 + x][k] = s12 + 4.0f * s34;
      t[18 + x][k] = d12 + 8.0f * d34 + m5[k];
    }
  }
  for (int r = 0; r < 4; r++) {
    const float *a = t[6 * r];
    for (size_t k = 0; k < n; k++) {
      float s12 = a[CH + k] + a[2 * CH + k], d12 = a[CH + k] - a[2 * CH + k];
      float s34 = a[3 * CH + k] + a[4 * CH + k], d34 = a[3 * CH + k] - a[4 * CH + k];
      y[4 * r][k] = a[k] + s12 + s34;
      y[4 * r + 1][k] = d12 + 2.0f * d34;
      y[4 * r + 2][k] = s12 + 4.0f * s34;
      y[4 * r + 3][k] = d12 + 8.0f * d34 + a[5 * CH + k];
    }
  }
}

typedef struct w4_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
  size_t tw, nt;
} w4_job;

/* V of tiles [t0, t0 + n) of one image and group. */
static void w4_input(const w4_job *jb, const float *img_g, size_t t0, size_t n, float *V, size_t T, const float *zero) {
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  size_t cig = (size_t)c->cin_g, mr = c->ctx->k->mr, Tp = lc_round_up(T, mr);
  int nchw = c->d.layout == LC_NCHW;
  size_t cstep = nchw ? p->ihw : 1, pstep = nchw ? 1 : (size_t)c->d.in_channels;
  float buf[36][CH], out[36][CH];
  for (size_t j = 0; j < n; j++) {
    size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
    const float *src[36];
    for (int r = 0; r < 6; r++)
      for (int x = 0; x < 6; x++) {
        int64_t iy = (int64_t)(4 * ty) - p->pt + r, ix = (int64_t)(4 * tx) - p->pl + x;
        int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
        src[r * 6 + x] = inside ? img_g + ((size_t)iy * (size_t)p->iw + (size_t)ix) * pstep : NULL;
      }
    float *vt = V + (j / mr) * cig * mr + j % mr;
    for (size_t ic = 0; ic < cig; ic += CH) {
      size_t nc = lc_min_sz(CH, cig - ic);
      const float *d[36];
      for (int i = 0; i < 36; i++) {
        if (!src[i]) {
          d[i] = zero;
        } else if (!nchw) {
          d[i] = src[i] + ic;
        } else { /* channels of an NCHW pixel lie a plane apart: gather them */
          for (size_t k = 0; k < nc; k++) buf[i][k] = src[i][(ic + k) * cstep];
          d[i] = buf[i];
        }
      }
      w4_in(nc, d, out);
      for (size_t xi = 0; xi < 36; xi++) {
        float *v = vt + xi * Tp * cig + ic * mr;
        for (size_t k = 0; k < nc; k++) v[k * mr] = out[xi][k];
      }
    }
  }
}

static void w4_task(void *arg, size_t task, int thread) {
  const w4_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  size_t np = w4_panels(c), nr = kt->nr, mr = kt->mr, cig = (size_t)c->cin_g, cog = (size_t)c->cout_g;
  lc_task_pos tp = lc_task_decode(p, (size_t)c->d.groups, np, task);
  size_t T = p->tile, Tp = lc_round_up(T, mr), t0 = tp.tile * T, n = lc_min_sz(T, jb->nt - t0);
  const float *img_g = jb->in + tp.n * (size_t)c->d.in_channels * p->ihw +
                       tp.g * cig * (c->d.layout == LC_NCHW ? p->ihw : 1);
  float *img_out = jb->out + tp.n * (size_t)c->d.out_channels * p->ohw;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  slot += (64 - (uintptr_t)slot % 64) % 64;
  float *V = (float *)slot;
  float *M = (float *)(slot + lc_round_up(36 * cig * Tp * sizeof(float), 64));
  float *zero = (float *)((unsigned char *)M + lc_round_up(36 * nr * T * sizeof(float), 64));
  memset(zero, 0, CH * sizeof(float));
  w4_input(jb, img_g, t0, n, V, T, zero);
  lc_gemm_params g0, ep;
  memset(&g0, 0, sizeof g0); /* plain products: bias and activation follow the output transform */
  lc_conv_epilogue(c, &ep);
  int nchw = c->d.layout == LC_NCHW;
  size_t cout = (size_t)c->d.out_channels, oh = (size_t)p->oh, ow = (size_t)p->ow;
  float y[16][CH];
  for (size_t q = tp.q0; q < tp.q1; q++) {
    size_t noc = lc_min_sz(nr, cog - q * nr), oc0 = tp.g * cog + q * nr;
    for (size_t xi = 0; xi < 36; xi++) {
      const float *U = c->wwino4 + ((tp.g * 36 + xi) * np + q) * cig * nr;
      for (size_t j = 0; j < n; j += mr)
        kt->f32_gemm(lc_min_sz(mr, n - j), noc, cig, V + (xi * Tp + j) * cig, 1, mr, U, nr,
                     M + (xi * T + j) * nr, nr, &g0);
    }
    for (size_t j = 0; j < n; j++) {
      size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
      w4_out(noc, M + j * nr, T * nr, y);
      for (size_t v = 0; v < 16; v++) {
        size_t oy = 4 * ty + v / 4, ox = 4 * tx + v % 4;
        if (oy >= oh || ox >= ow) continue;
        for (size_t k = 0; k < noc; k++) {
          float r = y[v][k] + (c->bias ? c->bias[oc0 + k] : 0.0f);
          r = lc_apply_act(r, &ep);
          if (nchw) img_out[(oc0 + k) * p->ohw + oy * ow + ox] = r;
          else img_out[(oy * ow + ox) * cout + oc0 + k] = r;
        }
      }
    }
  }
}

lc_status lc_winograd4_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  w4_job jb = {c, in, out, ws, lc_div_up((size_t)p->ow, 4), 0};
  jb.nt = jb.tw * lc_div_up((size_t)p->oh, 4);
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit;
  lc_pool_run(c->ctx->pool, tasks, p->threads, w4_task, &jb);
  return LC_OK;
}
