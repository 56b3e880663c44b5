/* Conv, ConvTranspose, Gemm and MatMul on the device. Conv is the node's lc_conv created on the
 * OpenCL context (the families and the tuner choose the kernel; the activation stays fused even
 * after a residual add). Gemm and MatMul with constant weights are 1x1 convs over rows (batch =
 * rows), so q8/q4 weights stay codes and run through the GEMV/GEMM kernels; other products and
 * ConvTranspose have their own kernels (kernels/ops_mm.cl). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops_int.h"
#include "conv/conv.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/parallel.h"

static clop_launch *conv_launch(lc_clop *op, lc_conv *c, int res_slot, cl_mem res_mem) {
  clop_launch *l = clop_copy(op, 0, 0, 0);
  if (!l) return NULL;
  l->kind = CLOP_CONV, l->conv = c, l->res = res_slot, l->res_mem = res_mem;
  return l;
}

static lc_status post_affine(lc_clop *op, const lc_node *n, const lc_tensor *out) {
  float mul = lc_attr_float(n, "_post_mul", 1.0f), add = lc_attr_float(n, "_post_add", 0.0f);
  if (mul == 1.0f && add == 0.0f) return LC_OK;
  return clop_affine(op, 0, clop_numel(out), mul, add);
}

/* fuse_device.c's per-channel tables: the conv's bias buffer becomes [bias | PRelu slope |
 * affine mul | affine add] (M each) that the kernels' lc_store reads, then, for an input affine,
 * [in mul | in add] (C each, cl_conv_args.h). Set before prepare: the tuner runs with them. */
typedef struct chan_arg {
  lc_clop *op;
  const lc_node *n;
  const lc_tensor *const *in;
  int n_in;
} chan_arg;

static lc_status chan_tables(lc_conv *c, void *arg) {
  const chan_arg *ca0 = arg;
  const lc_node *n = ca0->n;
  const lc_attr *pr = lc_node_attr(n, "_prelu"), *cm = lc_node_attr(n, "_chan_mul"), *ca = lc_node_attr(n, "_chan_add");
  const lc_attr *im = lc_node_attr(n, "_in_mul"), *ia = lc_node_attr(n, "_in_add"), *hs = lc_node_attr(n, "_hsig");
  lc_cl_conv *cc = c->dev;
  if (hs && hs->n == 2) /* a HardSigmoid after the conv (fuse_device.c) as the kernels' activation */
    cc->a.act = LC_CL_ACT_HARD_SIGMOID, cc->a.act_alpha = hs->floats[0], cc->a.act_beta = hs->floats[1];
  if (!pr && !cm && !im) return LC_OK;
  size_t M = (size_t)cc->a.groups * (size_t)cc->a.cout_g, C = (size_t)cc->a.groups * (size_t)cc->a.cin_g;
  if ((pr && pr->n != M) || !cm != !ca || (cm && (cm->n != M || ca->n != M)) || !im != !ia ||
      (im && (im->n != C || ia->n != C)))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "per-channel tables do not match the %zu output, %zu input channels", M, C);
  size_t nt = 4 * M + (im ? 2 * C : 0);
  float *t = lc_calloc(nt + 1, sizeof *t);
  if (!t) return lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory");
  const float *b = lcop_has(ca0->in, ca0->n_in, 2) ? ca0->in[2]->data : NULL;
  for (size_t o = 0; o < M; o++) {
    t[o] = b ? b[o] : 0.0f;
    t[M + o] = pr ? pr->floats[o] : 0.0f;
    t[2 * M + o] = cm ? cm->floats[o] : 1.0f;
    t[3 * M + o] = cm ? ca->floats[o] : 0.0f;
  }
  for (size_t i = 0; im && i < C; i++) t[4 * M + i] = im->floats[i], t[4 * M + C + i] = ia->floats[i];
  cl_mem m;
  lc_status s = lc_cl_buffer(ca0->op->rt, nt * sizeof *t, t, &m);
  lc_free(t);
  if (s) return s;
  lc_cl_release_mem(ca0->op->rt, &cc->bias);
  cc->bias = m;
  cc->weight_bytes += (nt - (b ? M : 0)) * sizeof(float);
  c->weight_bytes = cc->weight_bytes;
  cc->a.has_bias = 1;
  cc->a.epi = (pr ? 1 : 0) | (cm ? 2 : 0);
  cc->a.in_aff = im != NULL;
  return LC_OK;
}

/* A residual that fuse_device.c took from before a nearest Resize by f ("_res_up"): the kernels'
 * lc_store reads it at (y / f, x / f), for a packed NCHW output and residual only; anything else
 * goes back to the CPU conv, which upsamples it itself. */
static lc_status set_res_up(lc_conv *c, const lc_node *n, const lc_tensor *r, int64_t f) {
  lc_cl_conv *cc = c->dev;
  const lc_cl_conv_args *a = &cc->a;
  int64_t M = (int64_t)a->groups * a->cout_g, P = (int64_t)a->oh * a->ow;
  int packed = a->out_sw == 1 && a->out_sh == a->ow && a->out_sc == P && a->out_sn == M * P;
  if (!packed || f < 2 || f > a->oh || f > a->ow || a->oh % f || a->ow % f || r->ndim != 4 || r->dims[0] != a->n ||
      r->dims[1] != M || r->dims[2] * f != a->oh || r->dims[3] * f != a->ow)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "upsampled residual (x%lld) of another shape or layout", (long long)f);
  cc->a.res_up = (int)f;
  return LC_OK;
}

/* fuse_device.c's squeeze-and-excitation node: out = x * gate, gate the conv of inputs 0..2 on one
 * pixel, x input 3. The conv is made (the tuner packs its weights, chan_tables sets the HardSigmoid)
 * but never launched: one se_scale kernel (conv_gemv.cl) recomputes gate c in work-group c and scales
 * plane c of x. Anything else goes back to the CPU conv (LOWCONV_CL_SE=cpu forces that: tests). */
static lc_status make_se(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                         const lc_exec_ctx *x, unsigned cm) {
  const char *env = getenv("LOWCONV_CL_SE");
  if (env && !strcmp(env, "cpu")) return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE on the CPU (LOWCONV_CL_SE=cpu)");
  if (n_in != 4 || !in[3] || (cm & 1u) || (cm & 8u) || lc_attr_int(n, "_residual", 0) || lc_node_attr(n, "_res_up") ||
      lc_node_attr(n, "_in_mul") || lc_attr_float(n, "_post_mul", 1.0f) != 1.0f ||
      lc_attr_float(n, "_post_add", 0.0f) != 0.0f)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE conv with a constant input, residual, input or post affine");
  const lc_tensor *xt = in[3];
  if (xt->ndim != 4 || xt->dims[0] != 1 || out->ndim != 4 || memcmp(out->dims, xt->dims, 4 * sizeof(int64_t)))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE input of batch > 1 or another shape than the output");
  int64_t cnt = clop_numel(xt), M = xt->dims[1], P = cnt > 0 && M > 0 ? cnt / M : 0; /* N = 1 */
  if (cnt < 0 || M < 1 || P < 1 || clop_numel(in[0]) < 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE tensor of 2^31 elements or more");
  if (xt->nbytes != (size_t)cnt * sizeof(float) || out->nbytes != xt->nbytes) /* the kernel reads packed NCHW planes */
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE input not packed NCHW");
  lc_exec_ctx dx = *x;
  dx.lc = op->ctx;
  lc_conv_shape sh;
  chan_arg ca = {op, n, in, 3};
  lc_status s = lcop_conv_make_hooked(n, in, 3, &dx, 1, chan_tables, &ca, &op->convs[0], &sh);
  if (s) return s;
  lc_cl_conv *cc = op->convs[0]->dev;
  lc_cl_conv_args a = cc->a;
  if (a.groups != 1 || a.groups * a.cout_g != M || a.n != 1 || a.oh != 1 || a.ow != 1 || a.kh != 1 || a.kw != 1 ||
      a.pt || a.pl || a.in_aff || a.res_up > 1)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE gate conv is not a 1x1 conv on one unpadded pixel");
  /* the kernel's view of x and the output: packed NCHW [1, M, H, W] */
  a.oh = (lc_cl_int)xt->dims[2], a.ow = (lc_cl_int)xt->dims[3];
  a.out_sw = 1, a.out_sh = a.ow, a.out_sc = (lc_cl_int)P, a.out_sn = (lc_cl_int)cnt;
  a.has_res = 0;
  size_t L = 256, lim = op->rt->info.max_wg < op->rt->info.max_wi[0] ? op->rt->info.max_wg : op->rt->info.max_wi[0];
  while (L > 1 && L > lim) L >>= 1; /* a power of two: the kernel's tree reduction */
  /* Slices of about 4 L elements (a float4 per item) per work-group: od96's first SE block has 72
   * channels of 80x80 at 640x640, 72 work-groups for 132 compute units of an H100 otherwise. */
  int64_t chunk = 4 * (int64_t)L, S = (P + chunk - 1) / chunk;
  chunk = ((P + S - 1) / S + 3) / 4 * 4; /* even slices, multiples of 4 (float4 alignment) */
  S = (P + chunk - 1) / chunk;
  if ((uint64_t)M * (uint64_t)S > (uint64_t)INT_MAX / L) return lcop_fail(n, LC_ERR_UNSUPPORTED, "SE grid too large");
  cl_mem am = clop_upload(op, &a, sizeof a);
  op->packed |= 6u;
  op->route = "se";
  clop_launch *l = clop_kernel_opt(op, "conv_gemv", cc->options, "se_scale", (size_t)(M * S) * L, L);
  clop_args(op, l, "IMMMMIOMNN", 0, cc->w, cc->sc ? cc->sc : cc->w, cc->of ? cc->of : cc->w, cc->bias ? cc->bias : cc->w,
            3, 0, am, S, chunk);
  return clop_status(op);
}

static lc_status make_conv(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                           const lc_tensor *out, const lc_exec_ctx *x, unsigned cm) {
  if (lc_attr_int(n, "_se", 0)) return make_se(op, n, in, n_in, out, x, cm);
  int res = lc_attr_int(n, "_residual", 0) != 0;
  if ((cm & 1u) || (res && (cm >> (n_in - 1) & 1u)))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input or residual (folded on the host)");
  lc_exec_ctx dx = *x;
  dx.lc = op->ctx;
  lc_conv_shape sh;
  chan_arg ca = {op, n, in, n_in};
  lc_status s = lcop_conv_make_hooked(n, in, n_in, &dx, 1, chan_tables, &ca, &op->convs[0], &sh);
  if (s) return s;
  int64_t up = lc_attr_int(n, "_res_up", 0);
  if (res && up && (s = set_res_up(op->convs[0], n, in[n_in - 1], up))) return s;
  op->packed |= 6u;
  op->route = "conv";
  conv_launch(op, op->convs[0], res ? n_in - 1 : -1, NULL);
  if ((s = clop_status(op))) return s;
  return post_affine(op, n, out);
}

static lc_status make_convt(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                            const lc_tensor *out, unsigned cm) {
  conv_geom g;
  lc_status s = lcop_conv_geometry(n, in, 1, &g);
  if (s) return s;
  int res = lc_attr_int(n, "_residual", 0) != 0, bias = lcop_has(in, n_in, 2);
  if ((cm & 1u) || !(cm & 2u) || (bias && !(cm & 4u)) || (res && (cm >> (n_in - 1) & 1u)))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "ConvTranspose on the device needs constant weights and bias");
  int64_t cnt = clop_numel(out), act = lc_attr_int(n, "_act", LC_ACT_NONE);
  if (cnt < 0 || clop_numel(in[0]) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  if (act < LC_ACT_NONE || act > LC_ACT_HARD_SWISH) return lcop_fail(n, LC_ERR_UNSUPPORTED, "activation %lld", (long long)act);
  int64_t geo[19] = {g.N, g.C, g.H, g.W, g.M, g.group, g.KH, g.KW, g.OH, g.OW, g.s[0], g.s[1], g.d[0], g.d[1],
                     g.pb[0], g.pb[1], act, bias, res};
  float f[5] = {lc_attr_float(n, "_act_min", -INFINITY), lc_attr_float(n, "_act_max", INFINITY),
                lc_attr_float(n, "_act_alpha", 0.01f), lc_attr_float(n, "_post_mul", 1.0f),
                lc_attr_float(n, "_post_add", 0.0f)};
  cl_mem gm = clop_ints(op, geo, 19), fm = clop_upload(op, f, sizeof f);
  cl_mem w = clop_upload(op, in[1]->data, in[1]->nbytes), b = bias ? clop_upload(op, in[2]->data, in[2]->nbytes) : w;
  op->packed |= bias ? 6u : 2u;
  op->route = "convt";
  if (!cnt) return clop_status(op);
  int k2s2 = g.KH == 2 && g.KW == 2 && g.s[0] == 2 && g.s[1] == 2 && g.d[0] == 1 && g.d[1] == 1 && !g.pb[0] &&
             !g.pb[1] && g.OH == 2 * g.H && g.OW == 2 * g.W;
  clop_launch *l = clop_kernel(op, "ops_mm", k2s2 ? "conv_transpose_k2s2" : "conv_transpose",
                               (size_t)(k2s2 ? cnt / 4 : cnt), 64);
  clop_args(op, l, "IMM", 0, w, b);
  if (res) clop_in(op, l, n_in - 1);
  else clop_mem(op, l, w);
  clop_args(op, l, "OMMN", 0, gm, fm, (int64_t)(k2s2 ? cnt / 4 : cnt));
  return clop_status(op);
}

typedef struct tr_job {
  const float *B;
  float *w;
  int64_t K, N;
  int tb;
  float scale;
} tr_job;

/* Columns [32 t0, 32 t1) of w = scale * B^T, in 32x32 tiles: column by column, IResNet's
 * 25088x512 FC took 0.4 s of a 0.8 s start. */
static int transpose_tiles(void *arg, size_t t0, size_t t1) {
  const tr_job *a = arg;
  int64_t K = a->K, N = a->N, j1 = (int64_t)t1 * 32 < N ? (int64_t)t1 * 32 : N;
  for (int64_t j0 = (int64_t)t0 * 32; j0 < j1; j0 += 32)
    for (int64_t p0 = 0; p0 < K; p0 += 32)
      for (int64_t j = j0; j < j0 + 32 && j < j1; j++)
        for (int64_t p = p0; p < p0 + 32 && p < K; p++)
          a->w[j * K + p] = a->scale * (a->tb ? a->B[j * K + p] : a->B[p * N + j]);
  return 0;
}

/* Weights of a product as a 1x1 conv: W[j][p] = scale * B(p, j), B K x N (or N x K when tb). */
static lc_status fc_conv(lc_clop *op, const lc_node *n, const float *B, int64_t M, int64_t K, int64_t N, int tb,
                         float scale, const float *bias, const lc_exec_ctx *x, lc_conv **out) {
  size_t nw;
  if (!lc_mul_sz((size_t)K, (size_t)N, &nw)) return lcop_fail(n, LC_ERR_OVERFLOW, "weight size overflows");
  float *w = tb && scale == 1.0f ? NULL : lc_malloc((nw ? nw : 1) * sizeof(float));
  if (!w && !(tb && scale == 1.0f)) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  if (w) {
    tr_job j = {B, w, K, N, tb, scale};
    lc_parallel_ranges((size_t)lc_div_up((size_t)N, 32), 4, 8, transpose_tiles, &j);
  }
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = K, d.out_channels = N, d.kernel_h = d.kernel_w = 1;
  d.weights = w ? w : B, d.bias = bias;
  d.weight_format = (lc_weight_format)x->weight_format;
  if (d.weight_format == LC_WEIGHTS_Q4 && x->q4_policy == LC_Q4_MIXED) d.weight_format = LC_WEIGHTS_Q8; /* as fc_pack */
  d.block_size = d.weight_format == LC_WEIGHTS_F32 ? 0 : x->weight_block;
  lc_conv_shape sh;
  lc_status s = lc_conv_create(op->ctx, &d, out);
  lc_free(w);
  if (!s) s = lc_conv_prepare(*out, M, 1, 1, &sh);
  if (s) return lcop_fail(n, s, "%s", lc_last_error());
  return LC_OK;
}

/* Gemm / MatMul as a 1x1 conv when B is a constant matrix (and C, if any, a constant). */
static lc_status make_fc(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                         const lc_exec_ctx *x, unsigned cm, int gemm) {
  int64_t M, N, K;
  float alpha = 1.0f, beta = 1.0f;
  const lc_tensor *C = gemm && lcop_has(in, n_in, 2) ? in[2] : NULL;
  if (gemm) {
    lc_status s = lcop_gemm_dims(n, in, &M, &N, &K);
    if (s) return s;
    alpha = lc_attr_float(n, "alpha", 1.0f), beta = lc_attr_float(n, "beta", 1.0f);
  } else {
    size_t rows;
    K = in[1]->dims[0], N = in[1]->dims[1];
    lcop_dims_prod(in[0]->dims, 0, in[0]->ndim - 1, &rows);
    M = (int64_t)rows;
  }
  if (M <= 0 || N <= 0 || K <= 0) return LC_ERR_UNSUPPORTED;
  float *bias = NULL, *resv = NULL;
  int64_t cm_ = 1, cn = 1;
  if (C && beta != 0.0f) {
    cm_ = C->ndim == 2 ? C->dims[0] : 1, cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
    const float *c = C->data;
    size_t nr = (size_t)(cm_ == 1 ? N : M * N);
    float *v = lc_malloc(nr * sizeof(float));
    if (!v) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < nr; i++) {
      int64_t r = (int64_t)i / N, j = (int64_t)i % N;
      v[i] = beta * c[(cm_ == 1 ? 0 : r) * cn + (cn == 1 ? 0 : j)];
    }
    if (cm_ == 1) bias = v;
    else resv = v;
  }
  lc_status s = fc_conv(op, n, in[1]->data, M, K, N, gemm && lc_attr_int(n, "transB", 0), alpha, bias, x, &op->convs[0]);
  cl_mem rm = resv && !s ? clop_upload(op, resv, (size_t)(M * N) * sizeof(float)) : NULL;
  lc_free(bias);
  lc_free(resv);
  if (s) return s;
  op->packed |= C ? 6u : 2u;
  op->route = "fc";
  conv_launch(op, op->convs[0], -1, rm);
  return clop_status(op);
}

/* Any other product: one work item per output element. */
static lc_status make_naive(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                            const lc_tensor *out, unsigned cm, int gemm) {
  int64_t g[29] = {0};
  float alpha = 1.0f, beta = 0.0f;
  const lc_tensor *C = NULL;
  if (gemm) {
    int64_t M, N, K;
    lc_status s = lcop_gemm_dims(n, in, &M, &N, &K);
    if (s) return s;
    int ta = (int)lc_attr_int(n, "transA", 0), tb = (int)lc_attr_int(n, "transB", 0);
    g[0] = M, g[1] = N, g[2] = K, g[3] = 0;
    g[22] = ta ? 1 : K, g[23] = ta ? M : 1, g[24] = tb ? 1 : N, g[25] = tb ? K : 1;
    alpha = lc_attr_float(n, "alpha", 1.0f), beta = lc_attr_float(n, "beta", 1.0f);
    if (lcop_has(in, n_in, 2) && beta != 0.0f) {
      C = in[2];
      int64_t cm_ = C->ndim == 2 ? C->dims[0] : 1, cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
      g[26] = 1, g[27] = cm_ == 1 ? 0 : cn, g[28] = cn == 1 ? 0 : 1;
    }
  } else {
    mm_shape p;
    int nd;
    int64_t dims[LC_MAX_DIMS + 2];
    lc_status s = lcop_mm_shape(n, in[0], in[1], &p, &nd, dims);
    if (s) return s;
    if (p.nb > 6) return lcop_fail(n, LC_ERR_UNSUPPORTED, "more than 6 batch dims");
    g[0] = p.M, g[1] = p.N, g[2] = p.K, g[3] = p.nb;
    for (int d = 0; d < p.nb; d++) g[4 + d] = p.bd[d], g[10 + d] = p.sa[d], g[16 + d] = p.sb[d];
    g[22] = p.K, g[23] = 1, g[24] = p.N, g[25] = 1;
  }
  int64_t cnt = clop_numel(out);
  if (cnt < 0 || clop_numel(in[0]) < 0 || clop_numel(in[1]) < 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "matmul";
  cl_mem gm = clop_ints(op, g, 29);
  cl_mem mem[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++)
    if ((i < 2 || C) && (cm >> i & 1u)) mem[i] = clop_upload(op, in[i]->data, in[i]->nbytes), op->packed |= 1u << i;
  if (!cnt) return clop_status(op);
  clop_launch *l = clop_kernel(op, "ops_mm", "matmul_naive", (size_t)cnt, 64);
  for (int i = 0; i < 3; i++) {
    if (mem[i]) clop_mem(op, l, mem[i]);
    else if (i < 2 || C) clop_in(op, l, i);
    else clop_mem(op, l, gm); /* no C: never read */
  }
  clop_args(op, l, "OMNFF", 0, gm, (int64_t)cnt, (double)alpha, (double)beta);
  return clop_status(op);
}

/* The same weights and geometry make_conv and make_fc give lc_conv_create, where they are fp32
 * constants the conv reads in place (fc_conv transposes B unless transB, scales it unless alpha 1). */
int lc_clop_stage(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_exec_ctx *x,
                  unsigned cm, int tag, size_t limit) {
  if (x->weight_format != LC_WEIGHTS_F32 || n_in < 2 || !in[1] || !in[1]->data || in[1]->quant ||
      in[1]->dtype != LC_DT_FLOAT || !(cm & 2u) || (cm & 1u))
    return 0;
  if (!strcmp(n->op_type, "Conv")) {
    conv_geom g;
    if (lc_attr_int(n, "_se", 0)) return 0;
    if (lcop_conv_geometry(n, in, 0, &g) || g.group <= 0 || g.M % g.group || g.C % g.group) {
      lc_clear_error(); /* its create says why */
      return 0;
    }
    return lc_cl_stage_add(ctx, in[1]->data, (size_t)g.group, (size_t)(g.M / g.group), (size_t)(g.C / g.group),
                           (size_t)(g.KH * g.KW), tag, limit);
  }
  if (strcmp(n->op_type, "Gemm") || in[1]->ndim != 2 || lc_attr_int(n, "transA", 0) || !lc_attr_int(n, "transB", 0) ||
      lc_attr_float(n, "alpha", 1.0f) != 1.0f || (lcop_has(in, n_in, 2) && !(cm & 4u)) || in[1]->dims[0] <= 0 ||
      in[1]->dims[1] <= 0)
    return 0;
  return lc_cl_stage_add(ctx, in[1]->data, 1, (size_t)in[1]->dims[0], (size_t)in[1]->dims[1], 1, tag, limit);
}

lc_status clop_make_mm(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                       int n_out, const lc_exec_ctx *x, unsigned cm) {
  const char *t = n->op_type;
  if (!strcmp(t, "Conv")) return make_conv(op, n, in, n_in, out, x, cm);
  if (!strcmp(t, "ConvTranspose")) return make_convt(op, n, in, n_in, out, cm);
  int gemm = !strcmp(t, "Gemm");
  if (!gemm && strcmp(t, "MatMul")) return LC_ERR_UNSUPPORTED;
  int fc = (cm & 2u) && !(cm & 1u) && in[1]->ndim == 2;
  if (gemm) fc = fc && !lc_attr_int(n, "transA", 0) && (!lcop_has(in, n_in, 2) || (cm & 4u));
  else fc = fc && in[0]->ndim >= 1;
  if (fc) {
    lc_status s = make_fc(op, n, in, n_in, out, x, cm, gemm);
    if (s != LC_ERR_UNSUPPORTED) return s;
  }
  return make_naive(op, n, in, n_in, out, cm, gemm);
}
