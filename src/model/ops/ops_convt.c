/* ConvTranspose (1-D and 2-D, groups, dilations, output padding) with the fused activation and
 * residual. With constant weights it is a GEMM and a col2im: col[(m, kh, kw)][ih, iw] =
 * sum_c W[c][m][kh][kw] x[c][ih][iw] is a 1x1 conv of M/group * KH * KW output channels per group
 * (run by the conv library's GEMM routes), then each col row is added into the output at
 * (ih * s + kh * d - pad, iw * s + kw * d - pad), a slab of input rows at a time. PP-OCRv4 det's
 * 24->24 k2 s2 on 160x160: 30 ms on the row route below, less than half this way (docs/benchmarks.md).
 * A kernel width of 2 equal to the stride, no pads (the usual 2x upsampling) skips the column matrix:
 * every output is one dot product, written once by vm->convt2_row (5.4 -> ~2.5 ms on that layer). */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/checked.h"

static lc_status convt_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  return lcop_conv_infer_common(n, in, n_in, out, n_out, 1);
}

/* The row route, when the column matrix of the GEMM route would not fit the memory cap (or the
 * weights are not constant). One task = (image, group, block of output channels). For each input row it computes
 * col[(m, kh, kw)][iw] = sum_c W[c][m][kh][kw] * x[c][ih][iw] (axpy over contiguous rows, vectorizes),
 * then scatter-adds each col row into its output row. Scratch per thread is one input row's worth of
 * col (block * KH * KW * W floats), not a whole column matrix. 64->64 k2 s2 on 56x56: 43 ms as a
 * per-pixel scatter, 9.5 ms this way (one thread). */
typedef struct convt_job {
  const conv_geom *g;
  const float *X, *Wt, *B, *res;
  float *Y, *col;
  const int64_t *rng;
  const conv_act *act;
  int64_t blk, nblk;
  size_t col_per_thread;
} convt_job;

static void convt_task(void *arg, size_t task, int thread) {
  const convt_job *j = arg;
  const conv_geom *g = j->g;
  int64_t Cg = g->C / g->group, Mg = g->M / g->group, K = g->KH * g->KW, plane = g->OH * g->OW;
  int64_t blk = (int64_t)task % j->nblk, bg = (int64_t)task / j->nblk, grp = bg % g->group, b = bg / g->group;
  int64_t m0 = blk * j->blk, m1 = m0 + j->blk < Mg ? m0 + j->blk : Mg, R = (m1 - m0) * K;
  float *col = j->col + (size_t)thread * j->col_per_thread;
  float *Yb = j->Y + ((b * g->M + grp * Mg + m0) * plane);
  for (int64_t m = m0; m < m1; m++) {
    float bias = j->B ? j->B[grp * Mg + m] : 0.0f, *yp = Yb + (m - m0) * plane;
    for (int64_t i = 0; i < plane; i++) yp[i] = bias;
  }
  for (int64_t ih = 0; ih < g->H; ih++) {
    memset(col, 0, (size_t)(R * g->W) * sizeof(float));
    for (int64_t c = 0; c < Cg; c++) {
      const float *xr = j->X + ((b * g->C + grp * Cg + c) * g->H + ih) * g->W;
      const float *w = j->Wt + (grp * Cg + c) * Mg * K + m0 * K;
      for (int64_t r = 0; r < R; r++) {
        float wv = w[r], *cr = col + r * g->W;
        for (int64_t iw = 0; iw < g->W; iw++) cr[iw] += wv * xr[iw];
      }
    }
    for (int64_t r = 0; r < R; r++) {
      int64_t mm = r / K, kh = (r % K) / g->KW, kw = r % g->KW;
      int64_t oh = ih * g->s[0] - g->pb[0] + kh * g->d[0], off = kw * g->d[1] - g->pb[1];
      if (oh < 0 || oh >= g->OH) continue;
      float *yr = Yb + (mm * g->OH + oh) * g->OW;
      const float *cr = col + r * g->W;
      int64_t lo = j->rng[2 * kw], hi = j->rng[2 * kw + 1], sw = g->s[1];
      for (int64_t iw = lo; iw < hi; iw++) yr[iw * sw + off] += cr[iw];
    }
  }
  size_t n = (size_t)((m1 - m0) * plane), o = (size_t)(Yb - j->Y);
  lcop_act_epilogue(Yb, j->res ? j->res + o : NULL, n, j->act);
}

static lc_status convt_rows(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, lc_exec_ctx *x) {
  conv_geom g;
  lc_status s = lcop_conv_geometry(n, in, 1, &g);
  if (s) return s;
  conv_act act;
  if ((s = lcop_read_act(n, &act))) return s;
  convt_job j = {&g, in[0]->data, in[1]->data, lcop_has(in, n_in, 2) ? in[2]->data : NULL,
                 lcop_conv_has_residual(n) ? in[n_in - 1]->data : NULL, out->data, NULL, NULL, &act, 0, 0, 0};
  if (out->nbytes == 0) return LC_OK;
  int threads = lcop_threads(x);
  int64_t Mg = g.M / g.group, jobs = g.N * g.group;
  /* Split output channels only when images x groups leave threads idle. */
  j.nblk = jobs >= 2 * threads || Mg < 2 ? 1 : (2 * threads + jobs - 1) / jobs;
  if (j.nblk > Mg) j.nblk = Mg;
  j.blk = (Mg + j.nblk - 1) / j.nblk;
  j.nblk = (Mg + j.blk - 1) / j.blk;
  size_t total;
  int64_t f[3] = {j.blk * g.KH * g.KW, g.W, threads};
  if (!lc_mul_n(&j.col_per_thread, 2, f) || !lc_mul_n(&total, 3, f) || total > ((size_t)1 << 36))
    return lcop_fail(n, LC_ERR_OVERFLOW, "scratch size overflows");
  if (lcop_budget(x) && total > lcop_budget(x) / sizeof(float))
    return lcop_fail(n, LC_ERR_BUDGET, "column buffer of %zu bytes exceeds the %zu bytes the memory cap leaves",
                     total * sizeof(float), lcop_budget(x));
  float *col = lc_malloc((total ? total : 1) * sizeof(float));
  int64_t *rng = lc_malloc((size_t)(2 * g.KW) * sizeof(int64_t));
  if (!col || !rng) {
    lc_free(col), lc_free(rng);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  }
  for (int64_t kw = 0; kw < g.KW; kw++)
    lcop_tap_range(g.OW, g.W, g.s[1], kw * g.d[1] - g.pb[1], &rng[2 * kw], &rng[2 * kw + 1]);
  j.col = col, j.rng = rng;
  lcop_parallel(x, (size_t)(jobs * j.nblk), convt_task, &j);
  lc_free(col);
  lc_free(rng);
  return LC_OK;
}


/* ---------------------------------------------------------------- GEMM + col2im route */

/* The input in slabs of `ht` rows (all channels copied together, so the 1x1 conv reads a plain
 * NCHW image), each slab's column block (~256 KiB) added into the output while it is in cache:
 * the whole column matrix would be KH * KW * M / C times the input, written and read back. */
typedef struct convt_state {
  float *wp;               /* the direct k = s = 2 route: [group][m][kh][c][kw]; conv is NULL then */
  size_t wp_bytes;
  lc_conv *conv;           /* prepared for 1 x C x ht x W */
  lc_conv_shape shape;
  int64_t ht;              /* input rows per slab, a divisor of H */
  size_t slab_bytes, col_bytes;
} convt_state;

static size_t convt_ws(const convt_state *st) {
  if (st->wp) return 0;
  return lc_round_up(st->slab_bytes, 64) + lc_round_up(st->col_bytes, 64) + st->shape.workspace_bytes;
}

static void convt_fini(void *state) {
  convt_state *st = state;
  if (!st) return;
  lc_conv_destroy(st->conv);
  lc_free(st->wp);
  lc_free(st);
}

static void convt_describe(const void *state, lc_op_info *info) {
  const convt_state *st = state;
  info->route = st->wp ? "k2s2" : "gemm+col2im";
  info->workspace_bytes = convt_ws(st);
  info->packed_bytes = st->wp ? st->wp_bytes : lc_conv_weight_bytes(st->conv);
  info->packed_inputs = 2u; /* the weights live in the 1x1 conv */
}

static int convt_exact(const conv_geom *g) {
  return g->s[0] == g->KH && g->s[1] == g->KW && g->d[0] == 1 && g->d[1] == 1 && !g->pb[0] && !g->pb[1] &&
         g->OH == g->H * g->KH && g->OW == g->W * g->KW;
}

/* The direct route's weights: per group, output channel and kernel row, C/group pairs (kw 0, 1). */
static lc_status convt2_init(const lc_node *n, const conv_geom *g, const float *w, void **state) {
  int64_t Cg = g->C / g->group, Mg = g->M / g->group, R = Mg * g->KH * 2;
  size_t bytes;
  if (!lc_mul_n(&bytes, 4, (int64_t[]){g->group, R, Cg, 4})) return lcop_fail(n, LC_ERR_OVERFLOW, "weights overflow");
  convt_state *st = lc_calloc(1, sizeof *st);
  float *wp = lc_malloc(bytes ? bytes : 1);
  if (!st || !wp) {
    lc_free(st), lc_free(wp);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  }
  for (int64_t grp = 0; grp < g->group; grp++)
    for (int64_t c = 0; c < Cg; c++)
      for (int64_t r = 0; r < R; r++) /* r = (m KH + kh) 2 + kw, as in W[c][m][kh][kw] */
        wp[(grp * R + r - r % 2) * Cg + 2 * c + r % 2] = w[(grp * Cg + c) * R + r];
  st->wp = wp, st->wp_bytes = bytes;
  *state = st;
  return LC_OK;
}

static lc_status convt_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                            lc_exec_ctx *x, void **state) {
  *state = NULL;
  if (!x || !x->lc || !(x->const_inputs & 2u) || !in[1]->data || lc_context_backend(x->lc) != LC_BACKEND_CPU)
    return LC_OK; /* the row route */
  conv_geom g;
  lc_status s = lcop_conv_geometry(n, in, 1, &g);
  if (s) return s;
  if (convt_exact(&g) && g.KW == 2) return convt2_init(n, &g, in[1]->data, state);
  int64_t Cg = g.C / g.group, R = g.M / g.group * g.KH * g.KW, Rt = R * g.group;
  if (Rt > INT32_MAX || g.C > INT32_MAX || g.W > INT32_MAX || g.H < 1 || g.W < 1) return LC_OK;
  int64_t ht = 65536 / (Rt * g.W > 0 ? Rt * g.W : 1);
  ht = ht < 1 ? 1 : ht > g.H ? g.H : ht;
  while (g.H % ht) ht--;
  size_t col_bytes, slab_bytes, wt_bytes;
  if (!lc_mul_n(&col_bytes, 4, (int64_t[]){Rt, ht, g.W, 4}) || !lc_mul_n(&slab_bytes, 4, (int64_t[]){g.C, ht, g.W, 4}) ||
      !lc_mul_n(&wt_bytes, 3, (int64_t[]){Rt, Cg, 4}))
    return LC_OK;
  float *wt = lc_malloc(wt_bytes ? wt_bytes : 1);
  convt_state *st = lc_calloc(1, sizeof *st);
  if (!wt || !st) {
    lc_free(wt), lc_free(st);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  }
  const float *w = in[1]->data; /* [C][M/group][KH][KW]: per input channel, R contiguous values */
  for (int64_t grp = 0; grp < g.group; grp++)
    for (int64_t c = 0; c < Cg; c++)
      for (int64_t r = 0; r < R; r++) wt[(grp * R + r) * Cg + c] = w[(grp * Cg + c) * R + r];
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = g.C, d.out_channels = Rt, d.groups = g.group;
  d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1, d.dilation_h = d.dilation_w = 1;
  d.auto_pad = LC_PAD_NOTSET;
  d.layout = LC_NCHW;
  d.weights = wt;
  s = lc_conv_create(x->lc, &d, &st->conv);
  lc_free(wt);
  if (!s) s = lc_conv_prepare(st->conv, 1, ht, g.W, &st->shape);
  if (s) {
    convt_fini(st);
    return lcop_fail(n, s, "GEMM setup failed: %s", lc_last_error());
  }
  st->ht = ht, st->col_bytes = col_bytes, st->slab_bytes = slab_bytes;
  if (lcop_budget(x) && convt_ws(st) > lcop_budget(x) / 2) { /* the row route needs less */
    convt_fini(st);
    return LC_OK;
  }
  *state = st;
  return LC_OK;
}

typedef struct c2i_job {
  const conv_geom *g;
  const float *col, *B, *res;
  float *Y;                /* this image's output */
  const int64_t *rng;
  const conv_act *act;
  int64_t ih0, ht;         /* the slab's input rows */
  int exact, phase;        /* exact: k == s, each output written once; phase 0 fill, 1 add, 2 epilogue */
} c2i_job;

/* One output channel for one slab: its KH * KW column rows added (or, exact, written) in. */
static void c2i_task(void *arg, size_t task, int thread) {
  const c2i_job *j = arg;
  const conv_geom *g = j->g;
  (void)thread;
  int64_t Mg = g->M / g->group, K = g->KH * g->KW, plane = g->OH * g->OW, HW = j->ht * g->W;
  int64_t oc = (int64_t)task, grp = oc / Mg, m = oc % Mg;
  float *y = j->Y + oc * plane, bias = j->B ? j->B[oc] : 0.0f;
  const float *res = j->res ? j->res + oc * plane : NULL;
  if (j->phase == 0) {
    for (int64_t i = 0; i < plane; i++) y[i] = bias;
    return;
  }
  if (j->phase == 2) {
    lcop_act_epilogue(y, res, (size_t)plane, j->act);
    return;
  }
  const float *col = j->col + (grp * Mg * K + m * K) * HW;
  if (j->exact) {
    for (int64_t il = 0; il < j->ht; il++)
      for (int64_t kh = 0; kh < g->KH; kh++) {
        int64_t oh = (j->ih0 + il) * g->KH + kh;
        float *yr = y + oh * g->OW;
        for (int64_t kw = 0; kw < g->KW; kw++) {
          const float *c = col + (kh * g->KW + kw) * HW + il * g->W;
          for (int64_t iw = 0; iw < g->W; iw++) yr[iw * g->KW + kw] = c[iw] + bias;
        }
      }
    int64_t r0 = j->ih0 * g->KH * g->OW, len = j->ht * g->KH * g->OW;
    lcop_act_epilogue(y + r0, res ? res + r0 : NULL, (size_t)len, j->act);
    return;
  }
  for (int64_t kh = 0; kh < g->KH; kh++)
    for (int64_t kw = 0; kw < g->KW; kw++) {
      const float *cr = col + (kh * g->KW + kw) * HW;
      int64_t off = kw * g->d[1] - g->pb[1], lo = j->rng[2 * kw], hi = j->rng[2 * kw + 1], sw = g->s[1];
      for (int64_t il = 0; il < j->ht; il++) {
        int64_t oh = (j->ih0 + il) * g->s[0] - g->pb[0] + kh * g->d[0];
        if (oh < 0 || oh >= g->OH) continue;
        float *yr = y + oh * g->OW + off;
        const float *c = cr + il * g->W;
        if (sw == 1)
          for (int64_t iw = lo; iw < hi; iw++) yr[iw] += c[iw];
        else
          for (int64_t iw = lo; iw < hi; iw++) yr[iw * sw] += c[iw];
      }
    }
}

/* The direct route, one task per (image, group, input row): its KH output rows of every channel
 * of the group, then their epilogue while they are in cache. */
typedef struct convt2_job {
  const conv_geom *g;
  const float *X, *wp, *bj, *res; /* bj: the bias of each (m, kh), all groups */
  float *Y;
  const conv_act *act;
  const lc_vmath_kernels *vm;
} convt2_job;

static void convt2_task(void *arg, size_t task, int thread) {
  const convt2_job *j = arg;
  const conv_geom *g = j->g;
  (void)thread;
  int64_t Cg = g->C / g->group, Mg = g->M / g->group, nj = Mg * g->KH, ih = (int64_t)task % g->H;
  int64_t bg = (int64_t)task / g->H, grp = bg % g->group, b = bg / g->group, plane = g->OH * g->OW;
  const float *x = j->X + ((b * g->C + grp * Cg) * g->H + ih) * g->W;
  float *Y = j->Y + (b * g->M + grp * Mg) * plane + ih * g->KH * g->OW;
  float *rows[48]; /* a multiple of 3, the AVX2 kernel's block */
  for (int64_t j0 = 0; j0 < nj; j0 += 48) {
    int64_t cnt = nj - j0 < 48 ? nj - j0 : 48;
    for (int64_t r = 0; r < cnt; r++) rows[r] = Y + ((j0 + r) / g->KH) * plane + ((j0 + r) % g->KH) * g->OW;
    j->vm->convt2_row(rows, x, (size_t)(g->H * g->W), (size_t)Cg, (size_t)g->W, j->wp + (grp * nj + j0) * Cg * 2,
                      j->bj + grp * nj + j0, (size_t)cnt);
  }
  for (int64_t m = 0; m < Mg; m++) {
    size_t o = (size_t)(Y - j->Y) + (size_t)(m * plane);
    lcop_act_epilogue(j->Y + o, j->res ? j->res + o : NULL, (size_t)(g->KH * g->OW), j->act);
  }
}

static lc_status convt2_run(const lc_node *n, const convt_state *st, const lc_tensor *const *in, int n_in,
                            lc_tensor *out, lc_exec_ctx *x) {
  conv_geom g;
  conv_act act;
  lc_status s = lcop_conv_geometry(n, in, 1, &g);
  if (!s) s = lcop_read_act(n, &act);
  if (s || out->nbytes == 0) return s;
  const float *B = lcop_has(in, n_in, 2) ? in[2]->data : NULL;
  float *bj = lc_malloc((size_t)(g.M * g.KH) * sizeof(float)); /* M KH <= the packed weights' count */
  if (!bj) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  for (int64_t r = 0; r < g.M * g.KH; r++) bj[r] = B ? B[r / g.KH] : 0.0f;
  convt2_job j = {&g, in[0]->data, st->wp, bj, lcop_conv_has_residual(n) ? in[n_in - 1]->data : NULL, out->data,
                  &act, lcop_vm(x)};
  lcop_parallel(x, (size_t)(g.N * g.group * g.H), convt2_task, &j);
  lc_free(bj);
  return LC_OK;
}

static lc_status convt_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  convt_state *st = state;
  if (!st) return convt_rows(n, in, n_in, out, x);
  if (st->wp) return convt2_run(n, st, in, n_in, out, x);
  conv_geom g;
  conv_act act;
  lc_status s = lcop_conv_geometry(n, in, 1, &g);
  if (!s) s = lcop_read_act(n, &act);
  if (s || out->nbytes == 0) return s;
  size_t need = convt_ws(st), so = lc_round_up(st->slab_bytes, 64), co = so + lc_round_up(st->col_bytes, 64);
  char *buf = x && x->scratch && x->scratch_bytes >= need ? x->scratch : NULL, *own = NULL;
  if (!buf && !(buf = own = lc_malloc(need))) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for %zu bytes", need);
  float *slab = (float *)buf, *col = (float *)(buf + so);
  int64_t rng[2 * 64], *rp = g.KW <= 64 ? rng : lc_malloc((size_t)(2 * g.KW) * sizeof(int64_t));
  if (!rp) {
    lc_free(own);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  }
  for (int64_t kw = 0; kw < g.KW; kw++)
    lcop_tap_range(g.OW, g.W, g.s[1], kw * g.d[1] - g.pb[1], &rp[2 * kw], &rp[2 * kw + 1]);
  const float *res = lcop_conv_has_residual(n) ? in[n_in - 1]->data : NULL;
  size_t img_in = (size_t)(g.C * g.H * g.W), img_out = (size_t)(g.M * g.OH * g.OW), row = (size_t)(st->ht * g.W);
  c2i_job j = {&g, col, lcop_has(in, n_in, 2) ? in[2]->data : NULL, NULL, NULL, rp, &act, 0, st->ht, convt_exact(&g), 0};
  for (int64_t b = 0; !s && b < g.N; b++) {
    const float *X = (const float *)in[0]->data + (size_t)b * img_in;
    j.Y = (float *)out->data + (size_t)b * img_out, j.res = res ? res + (size_t)b * img_out : NULL;
    if (!j.exact) j.phase = 0, lcop_parallel(x, (size_t)g.M, c2i_task, &j);
    for (int64_t ih0 = 0; !s && ih0 < g.H; ih0 += st->ht) {
      const float *src = X + (size_t)ih0 * (size_t)g.W;
      if (st->ht < g.H) {
        for (int64_t c = 0; c < g.C; c++) memcpy(slab + (size_t)c * row, src + (size_t)c * (size_t)(g.H * g.W), row * 4);
        src = slab;
      }
      if ((s = lc_conv_run(st->conv, src, col, buf + co, need - co))) {
        s = lcop_fail(n, s, "GEMM failed: %s", lc_last_error());
        break;
      }
      j.ih0 = ih0, j.phase = 1;
      lcop_parallel(x, (size_t)g.M, c2i_task, &j);
    }
    if (!s && !j.exact) j.phase = 2, lcop_parallel(x, (size_t)g.M, c2i_task, &j);
  }
  if (rp != rng) lc_free(rp);
  lc_free(own);
  return s;
}

const lc_op_impl lcop_convt_ops[] = {
    {"ConvTranspose", convt_infer, convt_init, convt_fini, convt_run, 0, convt_describe},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
