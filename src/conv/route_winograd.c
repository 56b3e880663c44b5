/* Winograd F(2x2, 3x3) route for 3x3, stride 1, dilation 1 convs (any pads, any groups, NCHW and
 * NHWC). Each 2x2 output tile comes from a 4x4 input tile d:  Y = A^T [ (G g G^T) .* (B^T d B) ] A,
 * so the conv becomes 16 GEMMs with K = cin/groups (2.25x fewer multiplies than im2col), framed by
 * an input transform (adds only) and an output transform (adds, then bias and activation).
 *   NCHW: M[xi] (oc x tiles) = U[xi] (oc x ic) * V[xi] (ic x tiles); U packed as A panels of mr oc,
 *         V as B panels of nr tiles ([xi][panel][ic][nr]).
 *   NHWC: M[xi] (tiles x oc) = V[xi] (tiles x ic) * U[xi] (ic x oc); V rows of ic read in place as A
 *         (rs_a = ic), U packed as B panels of nr oc.
 * Both store U as [group][xi][panel][ic][pw], the layout of wpack with K = ic.
 * Work is split in chunks of T tiles per (image, group); a thread slot holds V (16 x ic x T) and M for
 * one weight panel (16 x pw x T). K is summed in LC_KC blocks in a fixed order, so the output does
 * not depend on the chunk size or the thread count.
 * Transform index xi = 4 * row + column of the 4x4 transformed tile. */
#include <string.h>

#include "conv/conv.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* Default slot size when the budget is unlimited: V and M stay in a 1 MiB L2 with room for the
 * weight panel being streamed (see bench_winograd). */
#define LC_WINO_CHUNK_BYTES ((size_t)512 << 10)
/* Tiles per transform segment (bounds the local buffers); >= any panel width. */
#define SEG 64

static int wino_shape_ok(const lc_conv_desc *d) {
  return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
         d->dilation_w == 1 && d->weight_format == LC_WEIGHTS_F32;
}

/* Tiles per panel of V: the GEMM's panel width on the tile side. */
static size_t tile_pp(const lc_conv *c) { return c->d.layout == LC_NCHW ? c->ctx->k->nr : c->ctx->k->mr; }

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

lc_status lc_winograd_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!wino_shape_ok(d)) return LC_OK;
  /* Transformed weights cost 16/9 of the packed ones: only keep them where the route may run. */
  if (d->route != LC_ROUTE_AUTO && d->route != LC_ROUTE_WINOGRAD) return LC_OK;
  if (d->route == LC_ROUTE_AUTO && c->depthwise) return LC_OK;
  size_t pw = c->pw, cig = (size_t)c->cin_g, n, bytes;
  if (!lc_mul_sz((size_t)d->groups * 16, c->npanels, &n) || !lc_mul_sz(n, cig, &n) || !lc_mul_sz(n, pw, &n) ||
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
          c->wwino[((((size_t)g * 16 + xi) * c->npanels + q) * cig + ic) * pw + i] = (float)u[xi];
      }
  return LC_OK;
}

/* Slot: [V: 16 x cig x T][M: 16 x pw x T][zero vector: cig (NHWC padding)], each 64-aligned. */
static int slot_bytes(const lc_conv *c, size_t T, size_t *bytes) {
  size_t v, m, z = lc_round_up((size_t)c->cin_g * sizeof(float), 64);
  if (!lc_mul_sz(16 * sizeof(float), (size_t)c->cin_g, &v) || !lc_mul_sz(v, T, &v)) return 0;
  if (!lc_mul_sz(16 * sizeof(float) * c->pw, T, &m)) return 0;
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z, bytes);
}

lc_status lc_plan_winograd(const lc_conv *c, lc_plan *p) {
  if (!wino_shape_ok(&c->d))
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: needs a 3x3 f32 kernel, stride 1, dilation 1");
  if (!c->wwino)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: weights not transformed at create (route %s, depthwise %d)",
                    lc_route_name(c->d.route), c->depthwise);
  size_t pp = tile_pp(c), one, nt;
  if (pp > SEG || c->pw > SEG)
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
  if (threads > 1 && tasks < (size_t)threads) p->ocsplit = lc_min_sz(c->npanels, lc_div_up((size_t)threads, tasks));
  slot_bytes(c, T, &p->ws_thread);
  p->threads = threads;
  return LC_OK;
}

/* ------------------------------------------------------------------ transforms
 * Written as unit-stride loops over tiles (NCHW) or channels (NHWC) with one store stream per loop,
 * so gcc vectorizes them; local arrays keep the loads and stores free of aliasing. */

static void sub_n(float *restrict d, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t k = 0; k < n; k++) d[k] = a[k] - b[k];
}
static void add_n(float *restrict d, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t k = 0; k < n; k++) d[k] = a[k] + b[k];
}

/* Column pass of B^T d B: h[r][x] holds row r's row-transformed values; dst[xi * xs + k]. */
static void in_cols(size_t n, float h[4][4][SEG], float *dst, size_t xs) {
  for (int x = 0; x < 4; x++) {
    sub_n(dst + (size_t)(0 + x) * xs, h[0][x], h[2][x], n);
    add_n(dst + (size_t)(4 + x) * xs, h[1][x], h[2][x], n);
    sub_n(dst + (size_t)(8 + x) * xs, h[2][x], h[1][x], n);
    sub_n(dst + (size_t)(12 + x) * xs, h[1][x], h[3][x], n);
  }
}

/* NCHW: n tiles side by side; rows[r] is input row r of the tiles from the first tile's column,
 * 2n + 2 values (tile k reads rows[r][2k .. 2k+3]). */
static void in_tiles_row(size_t n, const float *const rows[4], float *dst, size_t xs) {
  float h[4][4][SEG];
  for (int r = 0; r < 4; r++) {
    const float *s = rows[r];
    for (size_t k = 0; k < n; k++) {
      float d0 = s[2 * k], d1 = s[2 * k + 1], d2 = s[2 * k + 2], d3 = s[2 * k + 3];
      h[r][0][k] = d0 - d2;
      h[r][1][k] = d1 + d2;
      h[r][2][k] = d2 - d1;
      h[r][3][k] = d1 - d3;
    }
  }
  in_cols(n, h, dst, xs);
}

/* NHWC: one tile, n channels; src[r*4+x] points at the channel vector of input pixel (r, x). */
static void in_tile_channels(size_t n, const float *const src[16], float *dst, size_t xs) {
  float h[4][4][SEG];
  for (int r = 0; r < 4; r++) {
    const float *s0 = src[r * 4], *s1 = src[r * 4 + 1], *s2 = src[r * 4 + 2], *s3 = src[r * 4 + 3];
    for (size_t k = 0; k < n; k++) {
      h[r][0][k] = s0[k] - s2[k];
      h[r][1][k] = s1[k] + s2[k];
      h[r][2][k] = s2[k] - s1[k];
      h[r][3][k] = s1[k] - s3[k];
    }
  }
  in_cols(n, h, dst, xs);
}

/* A^T M A for n tiles (NCHW) or channels (NHWC): m[xi * xs + k] -> y[dy * 2 + dx][k]. */
static void out_tiles(size_t n, const float *m, size_t xs, float y[4][SEG]) {
  float t0[4][SEG], t1[4][SEG];
  for (int r = 0; r < 4; r++) {
    const float *a = m + (size_t)(r * 4) * xs, *b = a + xs, *cc = b + xs, *d = cc + xs;
    for (size_t k = 0; k < n; k++) {
      t0[r][k] = a[k] + b[k] + cc[k];
      t1[r][k] = b[k] - cc[k] - d[k];
    }
  }
  for (size_t k = 0; k < n; k++) {
    y[0][k] = t0[0][k] + t0[1][k] + t0[2][k];
    y[1][k] = t1[0][k] + t1[1][k] + t1[2][k];
    y[2][k] = t0[1][k] - t0[2][k] - t0[3][k];
    y[3][k] = t1[1][k] - t1[2][k] - t1[3][k];
  }
}

/* Bias (per element bv[k], or the scalar b when bv is NULL) and activation; the switch is outside
 * the loops so each loop vectorizes. */
static void bias_act(float *y, size_t n, const float *bv, const float *b, const lc_gemm_params *p) {
  if (bv)
    for (size_t k = 0; k < n; k++) y[k] += bv[k];
  else if (b)
    for (size_t k = 0; k < n; k++) y[k] += *b;
  switch (p->act) {
    case LC_ACT_RELU:
      for (size_t k = 0; k < n; k++) y[k] = y[k] > 0.0f ? y[k] : 0.0f;
      break;
    case LC_ACT_CLIP: {
      float lo = p->act_min, hi = p->act_max;
      for (size_t k = 0; k < n; k++) y[k] = y[k] < lo ? lo : (y[k] > hi ? hi : y[k]);
      break;
    }
    case LC_ACT_LEAKY_RELU: {
      float al = p->act_alpha;
      for (size_t k = 0; k < n; k++) y[k] = y[k] < 0.0f ? al * y[k] : y[k];
      break;
    }
    case LC_ACT_NONE: break;
    default:
      for (size_t k = 0; k < n; k++) y[k] = lc_apply_act(y[k], p);
      break;
  }
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
 * the span is inside, else a copy in buf. */
static const float *plane_row(const lc_plan *p, const float *plane, int64_t iy, int64_t x0, int64_t w, float *buf) {
  if (iy >= 0 && iy < p->ih && x0 >= 0 && x0 + w <= p->iw) return plane + iy * p->iw + x0;
  memset(buf, 0, (size_t)w * sizeof(float));
  if (iy < 0 || iy >= p->ih) return buf;
  int64_t lo = x0 < 0 ? -x0 : 0, hi = p->iw - x0 < w ? p->iw - x0 : w;
  if (hi > lo) memcpy(buf + lo, plane + iy * p->iw + x0 + lo, (size_t)(hi - lo) * sizeof(float));
  return buf;
}

/* V for tiles [t0, t0 + nt) of one image and group. */
static void input_chunk(const wino_job *jb, const float *img_g, size_t t0, size_t nt, float *V, size_t T,
                        const float *zero) {
  const lc_conv *c = jb->c;
  const lc_plan *p = &c->plan;
  size_t cig = (size_t)c->cin_g, pp = tile_pp(c), xs = cig * T, tw = jb->tw;
  if (c->d.layout == LC_NCHW) {
    float buf[4][2 * SEG + 2];
    for (size_t j = 0; j < nt;) {
      size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
      size_t n = lc_min_sz(lc_min_sz(tw - tx, pp - j % pp), nt - j); /* one tile row, one panel */
      float *dst = V + (j / pp) * cig * pp + j % pp;
      int64_t x0 = (int64_t)(2 * tx) - p->pl, y0 = (int64_t)(2 * ty) - p->pt;
      for (size_t ic = 0; ic < cig; ic++) {
        const float *plane = img_g + ic * p->ihw, *rows[4];
        for (int r = 0; r < 4; r++) rows[r] = plane_row(p, plane, y0 + r, x0, (int64_t)(2 * n + 2), buf[r]);
        in_tiles_row(n, rows, dst + ic * pp, xs);
      }
      j += n;
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
      in_tile_channels(lc_min_sz(SEG, cig - ic), s, V + j * cig + ic, xs);
    }
  }
}

/* Output transform of weight panel q (noc channels from oc0) for tiles [t0, t0 + nt). */
static void output_chunk(const wino_job *jb, float *img_out, const float *M, size_t T, size_t oc0, size_t noc,
                         size_t t0, size_t nt) {
  const lc_conv *c = jb->c;
  const lc_plan *p = &c->plan;
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  size_t pw = c->pw, xs = pw * T, tw = jb->tw, ow = (size_t)p->ow, oh = (size_t)p->oh;
  float y[4][SEG];
  if (c->d.layout == LC_NCHW) {
    for (size_t i = 0; i < noc; i++) {
      float *plane = img_out + (oc0 + i) * p->ohw;
      const float *b = c->bias ? c->bias + oc0 + i : NULL;
      for (size_t j = 0; j < nt;) {
        size_t tt = t0 + j, ty = tt / tw, tx = tt % tw, n = lc_min_sz(lc_min_sz(tw - tx, SEG), nt - j);
        out_tiles(n, M + i * T + j, xs, y);
        for (int v = 0; v < 4; v++) bias_act(y[v], n, NULL, b, &ep);
        size_t ox = 2 * tx, pairs = 2 * (tx + n) <= ow ? n : n - 1; /* last tile may be clipped */
        for (size_t dy = 0; dy < 2 && 2 * ty + dy < oh; dy++) {
          float *o = plane + (2 * ty + dy) * ow + ox;
          const float *ya = y[2 * dy], *yb = y[2 * dy + 1];
          for (size_t k = 0; k < pairs; k++) {
            o[2 * k] = ya[k];
            o[2 * k + 1] = yb[k];
          }
          if (pairs < n) o[2 * pairs] = ya[pairs];
        }
        j += n;
      }
    }
    return;
  }
  size_t cout = (size_t)c->d.out_channels;
  const float *bv = c->bias ? c->bias + oc0 : NULL;
  for (size_t j = 0; j < nt; j++) {
    size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
    out_tiles(noc, M + j * pw, xs, y);
    for (int v = 0; v < 4; v++) bias_act(y[v], noc, bv, NULL, &ep);
    for (size_t dy = 0; dy < 2; dy++)
      for (size_t dx = 0; dx < 2; dx++)
        if (2 * ty + dy < oh && 2 * tx + dx < ow)
          memcpy(img_out + ((2 * ty + dy) * ow + 2 * tx + dx) * cout + oc0, y[dy * 2 + dx], noc * sizeof(float));
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
  size_t T = p->tile, cig = (size_t)c->cin_g, coutg = (size_t)c->cout_g, pw = c->pw, pp = tile_pp(c);
  size_t ntl = lc_div_up((size_t)p->oh, 2) * jb->tw;
  size_t t0 = chunk * T, nt = lc_min_sz(T, ntl - t0);
  size_t cin = (size_t)c->d.in_channels, cout = (size_t)c->d.out_channels;
  int nchw = c->d.layout == LC_NCHW;
  const float *img_g = jb->in + n * cin * p->ihw + g * cig * (nchw ? p->ihw : 1);
  float *img_out = jb->out + n * cout * p->ohw;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  float *V = (float *)slot;
  float *M = (float *)(slot + lc_round_up(16 * cig * T * sizeof(float), 64));
  float *zero = (float *)((unsigned char *)M + lc_round_up(16 * pw * T * sizeof(float), 64));
  if (!nchw) memset(zero, 0, cig * sizeof(float));
  input_chunk(jb, img_g, t0, nt, V, T, zero);

  lc_gemm_params ep;
  memset(&ep, 0, sizeof ep); /* final = 0: bias and activation follow the output transform */
  size_t q0 = c->npanels * split / p->ocsplit, q1 = c->npanels * (split + 1) / p->ocsplit;
  for (size_t q = q0; q < q1; q++) {
    size_t noc = lc_min_sz(pw, coutg - q * pw);
    for (size_t xi = 0; xi < 16; xi++) {
      const float *U = c->wwino + ((g * 16 + xi) * c->npanels + q) * cig * pw;
      const float *Vx = V + xi * cig * T;
      float *Mx = M + xi * pw * T;
      for (size_t k0 = 0; k0 < cig; k0 += LC_KC) {
        size_t kn = lc_min_sz(LC_KC, cig - k0);
        ep.accumulate = k0 > 0;
        for (size_t j = 0; j < nt; j += pp) {
          size_t nj = lc_min_sz(pp, nt - j);
          if (nchw)
            kt->f32_gemm(noc, nj, kn, U + k0 * pw, 1, pw, Vx + j * cig + k0 * pp, pp, Mx + j, T, &ep);
          else
            kt->f32_gemm(nj, noc, kn, Vx + j * cig + k0, cig, 1, U + k0 * pw, pw, Mx + j * pw, pw, &ep);
        }
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
