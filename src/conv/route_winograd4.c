/* Winograd F(4x4, 3x3) for 3x3, stride 1, dilation 1 fp32 convs (any pads, groups, both layouts):
 * each 4x4 output tile comes from a 6x6 input tile, Y = A^T [ (G g G^T) .* (B^T d B) ] A, i.e. 36
 * GEMMs with K = cin/groups: 4x fewer multiplies than im2col (F(2x2): 2.25x), at the cost of a
 * larger rounding error (the points 0, +-1, +-2, +-1/2: transform entries up to 8 and 1/24;
 * test_conv_winograd measures it against the fp64 reference). The heuristic selector takes it
 * on the AVX2 table from 64 channels at 14x14 outputs and up (select.c); the tuner times it against
 * F(2x2) and the other routes. Its weights are transformed when a tuner is on, the route is
 * asked for, or lc_winograd4_auto says AUTO may take it.
 *   U: [group][xi][panel][ic][nr]   (G g G^T, in double then rounded; zero-padded panels)
 *   V: NHWC [xi][tile block][ic][mr] (packed A panels of mr tiles; the transform runs along
 *      channels), NCHW [xi][ic][Tp] (it runs along a row of tiles, read in place; the GEMM's A
 *      with rs_a = 1, cs_a = Tp, as F(2x2))
 *   M: [xi][T][nr]                  (one weight panel's products)
 * Work: chunks of T tiles per (image, group), split over weight panels when there are fewer
 * chunks than threads. Each output's sum over ic is one GEMM call per xi: the same bits for any
 * T, split or thread count. xi = 6 * row + column of the transformed tile. */
#include <stdlib.h>
#include <string.h>

#include "conv/route.h"
#include "kernels/wino.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

#define CH LC_WINO_SEG /* channels (NHWC) or tiles (NCHW) per transform call */
/* Zero floats of a slot: a channel vector (NHWC) or a padding input row of CH tiles (NCHW). */
#define ZLEN (4 * CH + 2)
/* Slot size per thread when the budget is unlimited (as F(2x2): V near L2). */
#define W4_CHUNK_BYTES ((size_t)768 << 10)

static int w4_shape_ok(const lc_conv *c) {
  const lc_conv_desc *d = &c->d;
  return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
         d->dilation_w == 1 && !c->depthwise;
}
static size_t w4_panels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, c->ctx->k->nr); }

/* Q8/Q4 convs hold no fp32 weights; where AUTO or the tuner may take F(4x4) they get its fp32
 * transform of their dequantized weights at prepare, if it is this small (36 x cin x cout floats
 * rounded to panels: PP-OCRv4 det's 96->24 3x3 layers at 160x160 hold 432 KiB). Without it they
 * ran F(2x2): 9.0 vs 5.1 ms each, 7.4 of the 8.5 ms q4 lost to f32 on det (Zen 5, 1 thread). */
#define W4_Q_MAX_BYTES ((size_t)1 << 20)

static int w4_bytes(const lc_conv *c, size_t *bytes) {
  size_t n;
  return lc_mul_sz((size_t)c->d.groups * 36, w4_panels(c), &n) && lc_mul_sz(n, (size_t)c->cin_g, &n) &&
         lc_mul_sz(n, c->ctx->k->nr, &n) && lc_mul_sz(n, sizeof(float), bytes);
}

static int w4_q_small(const lc_conv *c) {
  size_t b;
  return !c->qw || (w4_bytes(c, &b) && b <= W4_Q_MAX_BYTES);
}

/* F(4x4) does 1.78x fewer multiplies than F(2x2) but 2.25x the transform work per channel: it won
 * from 64 channels (Zen 3: 1.1-1.5x on 64..512-channel 3x3 layers at 14..80 px; 32-channel ones kept
 * F(2x2)). On the AVX-512 table (Xeon, 2 MiB L2) it won from 16 channels on large planes (fastest
 * runs F(2x2) / F(4x4), ms: 16@320 18.6 / 11.1, 32@160 6.5 / 3.8, 32->64@320 46.6 / 34.5, 64@160
 * 28.9 / 14.8), so its weights are made from 16 there; the output size is select.c's. */
int lc_winograd4_auto(const lc_conv *c) {
  int isa = c->ctx->k->isa, min_cin = isa == LC_ISA_AVX2 ? 64 : isa == LC_ISA_AVX512 ? 16 : 0;
  return min_cin && w4_shape_ok(c) && w4_q_small(c) && c->cin_g >= min_cin;
}

/* The channel and table rule is lc_winograd4_auto's (known at create, so the F(4x4)
 * weights are transformed only where AUTO may take them); the output size is decided here.
 * At 7x7 F(4x4) computes 8x8 from 4 tiles of 6x6 inputs (half of them padding) and lost to F(2x2).
 * Past 80x80 F(2x2) won while F(4x4) gathered NCHW channels a plane apart and its transforms ran
 * without AVX2; with both fixed F(4x4) won there too (Zen 3, min ms F(2x2) / F(4x4), NCHW: 96->24 at
 * 160 15.1 / 11.2, 256->64 at 160 85 / 48, 64->64 at 320 79 / 66; NHWC 256->64 at 160 100 / 74). */
int lc_wino4_size_first(const lc_conv *c, int64_t oh, int64_t ow) {
  /* AVX-512 (Xeon, 1 thread, fastest runs F(2x2) / F(4x4), ms, two runs): from 80x80 F(4x4) won or
   * tied up to 128 channels (128@80 12.1 / 9.6 and 8.8 / 8.2, 96->24@160 13.3 / 12.7, 64@112 4.9 /
   * 4.9 and 5.1 / 4.2) and with 256 from 160x160 (256->64@160 68 / 55 and 45 / 41), but lost with
   * 256 at 80 (256->64@80 19.3 / 20.9 and 14.4 / 21.1); at 7-56 px it tied or lost (512@7 2.9 / 9.2,
   * 256@14 1.2 / 2.5, 64@56 even). A quiet Xeon (model 167, medians of 5 alternating rounds, ms
   * F(2x2) / F(4x4), docs/benchmarks.md "stop 20") had F(4x4) ahead from 56 px wherever the output
   * channels are at least the input ones (64@56 1.20 / 1.05, 64->128@56 2.13 / 1.68, 128@56,
   * 256@56, 256@80 28.2 / 23.5: 0.79-0.87x) and from 28 px where they are twice (128->256@28 1.90 /
   * 1.74, 128->256@40 0.81x, 32->64 and 256->512@28 0.93x); behind where they are fewer (256->64@56
   * 1.08x, 64->32@56 1.09x) and at 28-48 px with as many (64@28 1.17x, 128@28 1.10x, 64@48 1.10x). */
  if (c->ctx->k->isa == LC_ISA_AVX512) {
    int64_t hw = oh < ow ? oh : ow;
    return lc_winograd4_auto(c) && ((hw >= 80 && (c->cin_g <= 128 || hw >= 160)) ||
                                    (hw >= 56 && c->cout_g >= c->cin_g) || (hw >= 28 && c->cout_g >= 2 * c->cin_g));
  }
  return lc_winograd4_auto(c) && oh >= 14 && ow >= 14;
}

/* Transformed weights of OIHW fp32 w, or (w NULL) of the Q8/Q4 weights dequantized one output
 * channel at a time into row (K floats, (tap, ic) order), whatever the rules (callers check them). */
static lc_status w4_pack(lc_conv *c, const float *w, float *row) {
  const lc_conv_desc *d = &c->d;
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
    for (size_t oc = 0; oc < cog; oc++) {
      if (!w) lc_conv_qrow(c, (int64_t)(g * cog + oc), row);
      for (size_t ic = 0; ic < cig; ic++) {
        float kq[9];
        for (size_t tap = 0; !w && tap < 9; tap++) kq[tap] = row[tap * cig + ic];
        const float *k = w ? w + ((g * cog + oc) * cig + ic) * 9 : kq;
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
    }
  return LC_OK;
}

lc_status lc_winograd4_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!w4_shape_ok(c) || c->qw) return LC_OK;
  if (!(d->route == LC_ROUTE_WINOGRAD4 || (d->route == LC_ROUTE_AUTO && (c->ctx->tuner || lc_winograd4_auto(c)))))
    return LC_OK;
  return w4_pack(c, w, NULL);
}

/* Q8/Q4 weights stay codes unless asked: the F(4x4) transform is an fp32 copy (up to 1.7x the Q4
 * bytes of PP-OCRv4 det), so AUTO and the tuner make it only with LOWCONV_Q_WINO4=1 (PP-OCRv4 det q4
 * 43.5 -> 37.0 ms on Zen 5, 1 thread); a conv created with route winograd4 asked for it. */
static int w4_q_auto_allowed(void) {
  const char *e = getenv("LOWCONV_Q_WINO4");
  return e && !strcmp(e, "1");
}

lc_status lc_winograd4_q_prepare(lc_conv *c, int64_t oh, int64_t ow) {
  const lc_conv_desc *d = &c->d;
  if (!c->qw || c->wwino4 || !w4_shape_ok(c) || c->ctx->budget) return LC_OK;
  if (!(d->route == LC_ROUTE_WINOGRAD4 ||
        (d->route == LC_ROUTE_AUTO && w4_q_auto_allowed() && w4_q_small(c) &&
         (c->ctx->tuner ? lc_winograd4_auto(c) : lc_wino4_size_first(c, oh, ow)))))
    return LC_OK;
  /* One output channel's row at a time: no fp32 copy of the weight tensor (docs/quantization.md). */
  size_t n;
  if (!lc_mul_sz(c->K, sizeof(float), &n)) return lc_error(LC_ERR_OVERFLOW, "winograd4: weight row size overflows");
  float *row = lc_malloc(n);
  if (!row) return lc_error(LC_ERR_NO_MEMORY, "winograd4: cannot allocate %zu bytes for a weight row", n);
  lc_status st = w4_pack(c, NULL, row);
  lc_free(row);
  return st;
}

void lc_winograd4_q_drop(lc_conv *c, lc_route taken) {
  if (!c->qw || !c->wwino4 || taken == LC_ROUTE_WINOGRAD4) return;
  lc_free(c->wwino4);
  c->wwino4 = NULL;
  c->weight_bytes -= c->wwino4_bytes;
  c->wwino4_bytes = 0;
}

/* Slot: [V: 36 x T x cig][M: 36 x T x nr][ZLEN zeros], 64-aligned parts (T is a multiple of mr). */
static int w4_slot(const lc_conv *c, size_t T, size_t *bytes) {
  size_t v, m, z = ZLEN * sizeof(float) + 64; /* + 64: run aligns the slot */
  if (!lc_mul_sz(36 * sizeof(float) * (size_t)c->cin_g, T, &v) || !lc_mul_sz(36 * sizeof(float) * c->ctx->k->nr, T, &m))
    return 0;
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z, bytes);
}

lc_status lc_winograd4_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!w4_shape_ok(c)) return lc_error(LC_ERR_UNSUPPORTED, "winograd4: needs a 3x3 kernel, stride 1, dilation 1");
  if (!c->wwino4)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd4: no transformed weights (fp32: made at create for route winograd4 or a tuner; Q8/Q4: at prepare, up to 1 MiB)");
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
  const lc_wino_kernels *wk = c->ctx->k->wino;
  size_t cig = (size_t)c->cin_g, mr = c->ctx->k->mr, Tp = lc_round_up(T, mr);
  if (c->d.layout == LC_NCHW) {
    float buf[6][4 * CH + 2];
    for (size_t ic = 0; ic < cig; ic++) {
      const float *plane = img_g + ic * p->ihw, *rows[6];
      for (size_t j = 0; j < n;) {
        size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
        size_t nn = lc_min_sz(lc_min_sz(jb->tw - tx, CH), n - j); /* one tile row */
        int64_t x0 = (int64_t)(4 * tx) - p->pl, y0 = (int64_t)(4 * ty) - p->pt;
        /* Tiles that lie inside the row read it in place; the padded ones at its ends go alone
         * (copying whole rows was 13 % of a 96->24 160x160 run). */
        if (x0 < 0) nn = 1;
        else if (x0 + (int64_t)(4 * nn + 2) > p->iw && p->iw - x0 >= 6) nn = lc_min_sz(nn, (size_t)(p->iw - x0 - 2) / 4);
        for (int r = 0; r < 6; r++)
          rows[r] = lc_wino_plane_row(p, wk, plane, y0 + r, x0, (int64_t)(4 * nn + 2), buf[r], zero);
        wk->in_tiles4(nn, rows, V + ic * Tp + j, cig * Tp);
        j += nn;
      }
    }
    return;
  }
  size_t pstep = (size_t)c->d.in_channels;
  float out[36][CH];
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
      for (int i = 0; i < 36; i++) d[i] = src[i] ? src[i] + ic : zero;
      wk->in_channels4(nc, d, out);
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
  const lc_wino_kernels *wk = kt->wino;
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
  memset(zero, 0, ZLEN * sizeof(float));
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
        kt->f32_gemm(lc_min_sz(mr, n - j), noc, cig, V + xi * Tp * cig + j * (nchw ? 1 : cig), 1, nchw ? Tp : mr, U,
                     nr, M + (xi * T + j) * nr, nr, &g0);
    }
    for (size_t j = 0; j < n; j++) {
      size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
      size_t nx = lc_min_sz(4, ow - 4 * tx), ny = lc_min_sz(4, oh - 4 * ty);
      wk->out4(noc, M + j * nr, T * nr, c->bias ? c->bias + oc0 : NULL, &ep, y);
      if (nchw) {
        for (size_t k = 0; k < noc; k++) {
          float *o = img_out + (oc0 + k) * p->ohw + 4 * ty * ow + 4 * tx;
          for (size_t dy = 0; dy < ny; dy++)
            for (size_t dx = 0; dx < nx; dx++) o[dy * ow + dx] = y[4 * dy + dx][k];
        }
      } else {
        for (size_t dy = 0; dy < ny; dy++)
          for (size_t dx = 0; dx < nx; dx++)
            memcpy(img_out + ((4 * ty + dy) * ow + 4 * tx + dx) * cout + oc0, y[4 * dy + dx], noc * sizeof(float));
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
