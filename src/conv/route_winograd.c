/* Winograd F(2x2, 3x3) route for 3x3, stride 1, dilation 1 convs (any pads, any groups, NCHW and
 * NHWC). Each 2x2 output tile comes from a 4x4 input tile d:  Y = A^T [ (G g G^T) .* (B^T d B) ] A,
 * so the conv becomes 16 GEMMs with K = cin/groups (2.25x fewer multiplies than im2col), framed by
 * an input transform (adds only) and an output transform (adds, then bias and activation).
 * Both layouts use one orientation: M[xi] (tiles x oc) = V[xi] (tiles x ic) * U[xi] (ic x oc), tiles
 * on the microkernel's mr side, output channels on its nr side. Small images have few tiles (49 at
 * 14x14) and panels of mr = 6..8 tiles waste less than panels of nr = 16..32 would.
 *   U: [group][xi][panel][ic][nr], packed B panels of nr output channels (transformed at create).
 *   V: NCHW [xi][ic][T] (the transform runs along tiles; A read with rs_a = 1, cs_a = T),
 *      NHWC [xi][T][ic] (the transform runs along channels; rs_a = ic, cs_a = 1).
 *   M: [xi][T][nr] for one weight panel; the output transform runs along channels.
 * Work is split in chunks of T tiles per (image, group); a thread slot holds V, M and a zero row.
 * K is summed in LC_KC blocks in a fixed order, so the output doesn't depend on T or the threads.
 * Transform index xi = 4 * row + column of the 4x4 transformed tile. */
#include <stdint.h>
#include <string.h>

#include "conv/conv.h"
#include "kernels/wino.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* Slot size when the budget is unlimited. Of 256, 512, 768 and 1024 KiB, 768 was best or close on
 * the ResNet-34 layers (bench_winograd, Zen4, 1 MiB L2): larger chunks stream the weights fewer
 * times, smaller ones keep V in L2. */
#define LC_WINO_CHUNK_BYTES ((size_t)768 << 10)
/* Fewest input channels per group for which AUTO convs keep Winograd weights. */
/* Tiles per transform segment (bounds the local buffers); >= any panel width. */
#define SEG LC_WINO_SEG

static int wino_shape_ok(const lc_conv_desc *d) {
  return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
         d->dilation_w == 1 && d->weight_format == LC_WEIGHTS_F32;
}

/* Tiles per GEMM row panel, output channels per weight panel, and weight panels per group. */
static size_t tile_pp(const lc_conv *c) { return c->ctx->k->mr; }
static size_t wpw(const lc_conv *c) { return c->ctx->k->nr; }
static size_t wpanels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, wpw(c)); }

/* U = G g G^T in double, rounded once to fp32 (the test's error bound counts one rounding). */
static void weight_tile(const float *g, double u[16]) {
  double t[4][3];
  for (int j = 0; j < 3; j++) {
    double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5 * (g0 + g1 + g2);
    t[2][j] = 0.5 * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int r = 0; r < 4; r++) {
    u[r * 4 + 0] = t[r][0];
    u[r * 4 + 1] = 0.5 * (t[r][0] + t[r][1] + t[r][2]);
    u[r * 4 + 2] = 0.5 * (t[r][0] - t[r][1] + t[r][2]);
    u[r * 4 + 3] = t[r][2];
  }
}

/* Where AUTO takes winograd (bench_winograd, 1 thread, Zen 4): NCHW wins from 16 input channels
 * per group (1.2x at 16, 1.4-2.0x from 32), NHWC from 8 (im2col is weaker there); stems of 3
 * channels run 1.5-2.5x slower than im2col. */
int lc_winograd_auto(const lc_conv *c) {
  int64_t min_cin = c->d.layout == LC_NCHW ? 16 : 8;
  return wino_shape_ok(&c->d) && !c->depthwise && c->cin_g >= min_cin;
}

lc_status lc_winograd_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!wino_shape_ok(d)) return LC_OK;
  /* Transformed weights cost 16/9 of the packed ones: only keep them where the route may run and,
   * under AUTO, may win (depthwise has its own route; stems of < 4 input channels run 1.5-2.5x slower
   * than im2col, bench_winograd --shape 3,64,112). */
  if (d->route != LC_ROUTE_AUTO && d->route != LC_ROUTE_WINOGRAD) return LC_OK;
  if (d->route == LC_ROUTE_AUTO && !lc_winograd_auto(c)) return LC_OK;
  size_t pw = wpw(c), np = wpanels(c), cig = (size_t)c->cin_g, n, bytes;
  if (!lc_mul_sz((size_t)d->groups * 16, np, &n) || !lc_mul_sz(n, cig, &n) || !lc_mul_sz(n, pw, &n) ||
      !lc_mul_sz(n, sizeof(float), &bytes))
    return lc_error(LC_ERR_OVERFLOW, "winograd: transformed weight size overflows");
  c->wwino = lc_calloc(n, sizeof(float)); /* zero padding of the last panel */
  if (!c->wwino) return lc_error(LC_ERR_NO_MEMORY, "winograd: cannot allocate %zu bytes of weights", bytes);
  c->weight_bytes += bytes;
  for (int64_t g = 0; g < d->groups; g++)
    for (int64_t o = 0; o < c->cout_g; o++)
      for (size_t ic = 0; ic < cig; ic++) {
        double u[16];
        weight_tile(w + (((size_t)(g * c->cout_g + o)) * cig + ic) * 9, u);
        size_t q = (size_t)o / pw, i = (size_t)o % pw;
        for (size_t xi = 0; xi < 16; xi++)
          c->wwino[((((size_t)g * 16 + xi) * np + q) * cig + ic) * pw + i] = (float)u[xi];
      }
  return LC_OK;
}

/* Zero floats a slot holds for padding: a channel vector (NHWC) or an input row segment (NCHW). */
static size_t zero_len(const lc_conv *c) { return lc_max_sz((size_t)c->cin_g, 2 * SEG + 2); }

/* Slot: [V: 16 x cig x T][M: 16 x T x nr][zeros: zero_len], each 64-aligned. */
static int slot_bytes(const lc_conv *c, size_t T, size_t *bytes) {
  size_t v, m, z = lc_round_up(zero_len(c) * sizeof(float), 64);
  if (!lc_mul_sz(16 * sizeof(float), (size_t)c->cin_g, &v) || !lc_mul_sz(v, T, &v)) return 0;
  if (!lc_mul_sz(16 * sizeof(float) * wpw(c), T, &m)) return 0;
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z, bytes);
}

lc_status lc_plan_winograd(const lc_conv *c, lc_plan *p) {
  if (!wino_shape_ok(&c->d))
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: needs a 3x3 f32 kernel, stride 1, dilation 1");
  if (!c->wwino)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: weights not transformed at create (route %s, depthwise %d)",
                    lc_route_name(c->d.route), c->depthwise);
  size_t pp = tile_pp(c), one, nt;
  if (pp > SEG || wpw(c) > SEG)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: GEMM tile %zux%zu wider than %d", c->ctx->k->mr, c->ctx->k->nr, SEG);
  if (!lc_mul_sz(lc_div_up((size_t)p->oh, 2), lc_div_up((size_t)p->ow, 2), &nt) || !slot_bytes(c, pp, &one))
    return lc_error(LC_ERR_OVERFLOW, "winograd: tile count or slot size overflows");
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "winograd: one chunk of %zu tiles x %lld channels needs %zu bytes, budget is %zu",
                    pp, (long long)c->cin_g, one, c->ctx->budget);
  size_t target = c->ctx->budget ? c->ctx->budget / (size_t)threads : lc_max_sz(LC_WINO_CHUNK_BYTES, one);
  /* Largest T (multiple of pp, <= all tiles) whose slot fits the target: slot bytes grow by per_pp per pp. */
  size_t two, per_pp, T = pp, cap = lc_round_up(nt, pp);
  if (slot_bytes(c, 2 * pp, &two) && two > one) {
    per_pp = two - one;
    size_t extra = target > one ? (target - one) / per_pp : 0;
    T = lc_min_sz(cap, pp + lc_min_sz(extra, cap / pp) * pp);
    size_t b;
    while (T > pp && (!slot_bytes(c, T, &b) || b > target)) T -= pp;
  }
  /* Equal chunks, then split the weight panels when there are fewer tasks than threads. */
  size_t nch = lc_div_up(nt, T);
  T = lc_min_sz(T, lc_round_up(lc_div_up(nt, nch), pp));
  p->route = LC_ROUTE_WINOGRAD;
  p->tile = T; /* tiles (2x2 output pixels) per chunk */
  p->ntiles = lc_div_up(nt, T);
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles;
  p->ocsplit = 1;
  if (threads > 1 && tasks < (size_t)threads) p->ocsplit = lc_min_sz(wpanels(c), lc_div_up((size_t)threads, tasks));
  if (!slot_bytes(c, T, &p->ws_thread)) return lc_error(LC_ERR_OVERFLOW, "winograd: slot size overflows");
  p->threads = threads;
  return LC_OK;
}

/* Transforms of the context's ISA: AVX2 whenever the GEMM table is a SIMD one (all give the same bits). */
static const lc_wino_kernels *wino_kernels(const lc_conv *c) {
  int simd = strcmp(c->ctx->k->name, "scalar") != 0 && (c->ctx->cpu & LC_CPU_AVX2_FMA);
  return simd ? &lc_wino_avx2 : &lc_wino_scalar;
}

/* ------------------------------------------------------------------ run */

typedef struct wino_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
  size_t tw; /* tiles per row */
} wino_job;

/* Row `iy` of a plane, columns [x0, x0 + w), zero outside the image: a pointer into the plane when
 * the span is inside, the zero row when the row is padding, else a copy in buf. */
static const float *plane_row(const lc_plan *p, const lc_wino_kernels *wk, const float *plane, int64_t iy, int64_t x0,
                              int64_t w, float *buf, const float *zero) {
  if (iy < 0 || iy >= p->ih) return zero;
  if (x0 >= 0 && x0 + w <= p->iw) return plane + iy * p->iw + x0;
  int64_t lo = x0 < 0 ? -x0 : 0, hi = p->iw - x0 < w ? p->iw - x0 : w;
  if (lo > w) lo = w;
  if (hi < lo) hi = lo;
  /* src is only read in [lo, hi): offset it there so no pointer leaves the plane. */
  const float *src = hi > lo ? plane + iy * p->iw + x0 + lo : NULL;
  wk->pad_row(buf + lo, src, 0, (size_t)(hi - lo), (size_t)(w - lo));
  for (int64_t k = 0; k < lo; k++) buf[k] = 0.0f;
  return buf;
}

/* V for tiles [t0, t0 + nt) of one image and group. */
static void input_chunk(const wino_job *jb, const float *img_g, size_t t0, size_t nt, float *V, size_t T,
                        const float *zero) {
  const lc_conv *c = jb->c;
  const lc_wino_kernels *wk = wino_kernels(c);
  const lc_plan *p = &c->plan;
  size_t cig = (size_t)c->cin_g, xs = cig * T, tw = jb->tw;
  if (c->d.layout == LC_NCHW) {
    float buf[4][2 * SEG + 2];
    for (size_t ic = 0; ic < cig; ic++) {
      const float *plane = img_g + ic * p->ihw, *rows[4] = {NULL, NULL, NULL, NULL};
      float *b[4] = {buf[0], buf[1], buf[2], buf[3]}, *t;
      size_t pty = SIZE_MAX, ptx = 0, pn = 0;
      for (size_t j = 0; j < nt;) {
        size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
        size_t n = lc_min_sz(lc_min_sz(tw - tx, SEG), nt - j); /* one tile row */
        int64_t x0 = (int64_t)(2 * tx) - p->pl, y0 = (int64_t)(2 * ty) - p->pt;
        int r0 = 0;
        if (ty == pty + 1 && tx == ptx && n == pn) { /* the tile row below: its rows 0-1 are our rows 2-3 */
          rows[0] = rows[2], rows[1] = rows[3];
          t = b[0], b[0] = b[2], b[2] = t;
          t = b[1], b[1] = b[3], b[3] = t;
          r0 = 2;
        }
        for (int r = r0; r < 4; r++) rows[r] = plane_row(p, wk, plane, y0 + r, x0, (int64_t)(2 * n + 2), b[r], zero);
        wk->in_tiles(n, rows, V + ic * T + j, xs);
        pty = ty, ptx = tx, pn = n;
        j += n;
      }
    }
    return;
  }
  size_t cin = (size_t)c->d.in_channels;
  for (size_t j = 0; j < nt; j++) {
    size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
    const float *src[16];
    for (int r = 0; r < 4; r++)
      for (int x = 0; x < 4; x++) {
        int64_t iy = (int64_t)(2 * ty) - p->pt + r, ix = (int64_t)(2 * tx) - p->pl + x;
        int in = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
        src[r * 4 + x] = in ? img_g + ((size_t)iy * (size_t)p->iw + (size_t)ix) * cin : zero;
      }
    for (size_t ic = 0; ic < cig; ic += SEG) {
      const float *s[16];
      for (int i = 0; i < 16; i++) s[i] = src[i] + ic;
      wk->in_channels(lc_min_sz(SEG, cig - ic), s, V + j * cig + ic, xs);
    }
  }
}

/* Output transform of one weight panel (noc channels from oc0) for tiles [t0, t0 + nt); M[xi][T][nr]. */
static void output_chunk(const wino_job *jb, float *img_out, const float *M, size_t T, size_t oc0, size_t noc,
                         size_t t0, size_t nt) {
  const lc_conv *c = jb->c;
  const lc_plan *p = &c->plan;
  const lc_wino_kernels *wk = wino_kernels(c);
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  size_t pw = wpw(c), xs = pw * T, tw = jb->tw, ow = (size_t)p->ow, oh = (size_t)p->oh;
  size_t cout = (size_t)c->d.out_channels;
  const float *bv = c->bias ? c->bias + oc0 : NULL;
  int nchw = c->d.layout == LC_NCHW;
  float y[4][SEG];
  for (size_t j = 0; j < nt; j++) {
    size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
    wk->out(noc, M + j * pw, xs, bv, NULL, &ep, y);
    for (size_t dy = 0; dy < 2; dy++)
      for (size_t dx = 0; dx < 2; dx++) {
        size_t oy = 2 * ty + dy, ox = 2 * tx + dx;
        if (oy >= oh || ox >= ow) continue;
        const float *v = y[dy * 2 + dx];
        if (nchw) {
          float *o = img_out + oc0 * p->ohw + oy * ow + ox;
          for (size_t i = 0; i < noc; i++) o[i * p->ohw] = v[i];
        } else {
          memcpy(img_out + (oy * ow + ox) * cout + oc0, v, noc * sizeof(float));
        }
      }
  }
}

static void wino_task(void *arg, size_t task, int thread) {
  const wino_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  size_t split = task % p->ocsplit;
  task /= p->ocsplit;
  size_t chunk = task % p->ntiles;
  size_t g = (task / p->ntiles) % (size_t)c->d.groups, n = task / p->ntiles / (size_t)c->d.groups;
  size_t T = p->tile, cig = (size_t)c->cin_g, coutg = (size_t)c->cout_g, pw = wpw(c), pp = tile_pp(c);
  size_t np = wpanels(c), ntl = lc_div_up((size_t)p->oh, 2) * jb->tw;
  size_t t0 = chunk * T, nt = lc_min_sz(T, ntl - t0);
  size_t cin = (size_t)c->d.in_channels, cout = (size_t)c->d.out_channels;
  int nchw = c->d.layout == LC_NCHW;
  const float *img_g = jb->in + n * cin * p->ihw + g * cig * (nchw ? p->ihw : 1);
  float *img_out = jb->out + n * cout * p->ohw;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  float *V = (float *)slot;
  float *M = (float *)(slot + lc_round_up(16 * cig * T * sizeof(float), 64));
  float *zero = (float *)((unsigned char *)M + lc_round_up(16 * pw * T * sizeof(float), 64));
  memset(zero, 0, zero_len(c) * sizeof(float));
  input_chunk(jb, img_g, t0, nt, V, T, zero);

  lc_gemm_params ep;
  memset(&ep, 0, sizeof ep); /* final = 0: bias and activation follow the output transform */
  /* A (tiles x ic) element (i, k): NCHW V[k * T + i], NHWC V[i * cig + k]. */
  size_t rs_a = nchw ? 1 : cig, cs_a = nchw ? T : 1;
  size_t q0 = np * split / p->ocsplit, q1 = np * (split + 1) / p->ocsplit;
  for (size_t q = q0; q < q1; q++) {
    size_t noc = lc_min_sz(pw, coutg - q * pw);
    for (size_t xi = 0; xi < 16; xi++) {
      const float *U = c->wwino + ((g * 16 + xi) * np + q) * cig * pw;
      const float *Vx = V + xi * cig * T;
      float *Mx = M + xi * pw * T;
      for (size_t k0 = 0; k0 < cig; k0 += LC_KC) {
        size_t kn = lc_min_sz(LC_KC, cig - k0);
        ep.accumulate = k0 > 0;
        for (size_t j = 0; j < nt; j += pp)
          kt->f32_gemm(lc_min_sz(pp, nt - j), noc, kn, Vx + j * rs_a + k0 * cs_a, rs_a, cs_a, U + k0 * pw, pw,
                       Mx + j * pw, pw, &ep);
      }
    }
    output_chunk(jb, img_out, M, T, g * coutg + q * pw, noc, t0, nt);
  }
}

void lc_run_winograd(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_plan *p = &c->plan;
  wino_job jb = {c, in, out, ws, lc_div_up((size_t)p->ow, 2)};
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit;
  lc_pool_run(c->ctx->pool, tasks, p->threads, wino_task, &jb);
}
