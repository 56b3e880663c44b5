/* Channel layout of a CPU plan: which fp32 convs run NHWC (channels contiguous per pixel) and
 * which activations are stored that way. The graph's tensors keep their NCHW dims; a conv node
 * gets private attributes saying in which layout the library runs it (_nhwc) and in which its
 * input, residual and output lie (_in_nhwc, _res_nhwc, _out_nhwc); ops_conv.c converts where they
 * differ. Only convs read or write NHWC tensors: any other reader or a graph output sees NCHW.
 *
 * Why: on the Xeon model 167 (docs/benchmarks.md, stop 39) NHWC ran Winograd 3x3 layers at
 * 7-56 px in 0.76-0.91x their NCHW time and 1x1 stride-1 layers in 0.86-0.97x, while the NCHW
 * routes stay ahead on the 3-channel stem (taprows' stem: 4x), depthwise 5x5 (1.9-2.5x), 1x1
 * stride 2 (1.1-1.6x) and, with q8/q4 weights, everything (i8gemm is NCHW only). So per group of
 * convs that feed each other, NHWC is taken when the estimated gain beats the conversions. With
 * --tune the ratios are this machine's, measured per conv shape and cached (tuned_ratio). */
#include <string.h>

#include "conv/autotune.h"
#include "model/graph.h"
#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/error.h"

/* Estimated NHWC / NCHW time of conv g; 0: it stays NCHW whatever its neighbours do. */
static double nhwc_ratio(const lc_model *m, const lc_gnode *g) {
  const lc_node *n = &g->n;
  if (strcmp(n->op_type, "Conv") || g->dead || n->n_inputs < 2 || n->n_outputs < 1 || g->in[0] < 0 || g->in[1] < 0 ||
      g->out[0] < 0)
    return 0;
  const lc_value *x = &m->values[g->in[0]], *w = &m->values[g->in[1]], *y = &m->values[g->out[0]];
  if (x->t.dtype != LC_DT_FLOAT || y->t.dtype != LC_DT_FLOAT || x->t.ndim != 4 || y->t.ndim != 4 || w->t.ndim != 4 ||
      !w->is_const || w->t.quant)
    return 0;
  /* epilogues ops_conv.c runs itself over NCHW (or the device's fusions) */
  if (lcop_conv_has_se(n) || lcop_conv_res_up(n) != 1 || lc_node_attr(n, "_chan_mul") || lc_node_attr(n, "_hsig"))
    return 0;
  if (m->opt.weight_format != LC_WEIGHTS_F32) return 0;
  int64_t C = x->t.dims[1], M = y->t.dims[1], group = lc_attr_int(n, "group", 1);
  int64_t KH = w->t.dims[2], KW = w->t.dims[3], P = y->t.dims[2] * y->t.dims[3];
  int64_t s = 1;
  const int64_t *sv = NULL;
  size_t ns = lc_attr_ints(n, "strides", &sv);
  for (size_t i = 0; i < ns; i++) s = sv[i] > s ? sv[i] : s;
  /* the stem route's NHWC rows transpose its output in L1 (3->64 at 112 px 0.58 against 0.35 ms);
   * converting its NCHW output costs more (0.9 ms) */
  if (C <= 4) return group == 1 && C * KH * KW <= 160 && s <= 4 ? 1.6 : 0;
  if (group > 1) return group == C && group == M && KH == 3 && KW == 3 && s == 1 ? 1.05 : 0;
  if (KH == 1 && KW == 1) return s == 1 ? 0.92 : 1.3;
  if (s > 1) return 1.08;
  if (P <= 96 * 96) return 0.82;
  return C >= 128 ? 0.88 : 1.02;
}

/* With a CPU tuner on the context (--tune), conv g's ratio as measured on this machine (each
 * layout on its own tuned plan, cached by shape: conv/tune_layout.c) replaces the rule's; 0 stays 0. */
static double tuned_ratio(const lc_model *m, const lc_gnode *g, double rule) {
  if (!rule || !m->ctx) return rule;
  const lc_tensor *in[2] = {&m->values[g->in[0]].t, &m->values[g->in[1]].t};
  conv_geom cg;
  if (lcop_conv_geometry(&g->n, in, 0, &cg) || cg.sp != 2) {
    lc_clear_error();
    return rule;
  }
  lc_conv_desc d;
  lcop_conv_desc_geom(&cg, &d);
  double q;
  return lc_cpu_tune_layout(m->ctx, &d, cg.N, cg.H, cg.W, &q) != LC_TSRC_HEURISTIC ? q : rule;
}

/* Union-find over node positions. */
static int root(int *up, int a) {
  while (up[a] != a) a = up[a] = up[up[a]];
  return a;
}

/* Input k of g is its data (0) or its fused residual (the last): the inputs a conv reads as
 * activations in its own layout. */
static int act_input(const lc_gnode *g, int k) {
  return k == 0 || (lcop_conv_has_residual(&g->n) && k == g->n.n_inputs - 1 && k >= 2);
}

/* Every reader of value v is a conv running NHWC (nhwc[p]) that reads it as an activation input,
 * and v is no graph output: 1. */
static int read_nhwc(const lc_model *m, const char *nhwc, int v) {
  if (m->values[v].is_output) return 0;
  int any = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++) {
      if (g->in[k] != v) continue;
      if (!nhwc[p] || !act_input(g, k)) return 0;
      any = 1;
    }
  }
  return any;
}

/* A conv whose output ops_conv.c may convert: no epilogue of its own over NCHW after the library. */
static int converts_out(const lc_model *m, const lc_gnode *g) {
  const lc_node *n = &g->n;
  return !g->dead && !strcmp(n->op_type, "Conv") && n->n_outputs >= 1 && g->out[0] >= 0 &&
         m->values[g->out[0]].t.dtype == LC_DT_FLOAT && m->values[g->out[0]].t.ndim == 4 && !lcop_conv_has_se(n) &&
         lcop_conv_res_up(n) == 1 && !lc_node_attr(n, "_chan_mul") && !lc_node_attr(n, "_hsig");
}

/* Conv p writes its output NHWC: all readers run NHWC (an NCHW conv converts its own output). */
static int writes_nhwc(const lc_model *m, const char *nhwc, int p) {
  return converts_out(m, &m->nodes[p]) && read_nhwc(m, nhwc, m->nodes[p].out[0]);
}

#define CONV_COST(bytes) ((double)(bytes) * 2.0 / 8.0) /* ns: read and written at ~8 bytes per ns */

lc_status lc_plan_layout(lc_model *m) {
  if (m->opt.layout == LC_LAYOUT_NCHW || m->n_nodes < 1) return LC_OK;
  int n = m->n_nodes;
  int *up = lc_calloc((size_t)n, sizeof(int));
  double *ratio = lc_calloc((size_t)n, sizeof(double)), *gain = lc_calloc((size_t)n, sizeof(double));
  char *nhwc = lc_calloc((size_t)n, 1), *wout = lc_calloc((size_t)n, 1);
  if (!up || !ratio || !gain || !nhwc || !wout) {
    lc_free(up), lc_free(ratio), lc_free(gain), lc_free(nhwc), lc_free(wout);
    return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  }
  for (int p = 0; p < n; p++) {
    up[p] = p;
    ratio[p] = nhwc_ratio(m, &m->nodes[p]);
    if (m->opt.layout == LC_LAYOUT_NHWC && ratio[p]) ratio[p] = 0.5; /* forced: every conv that can */
    else ratio[p] = tuned_ratio(m, &m->nodes[p], ratio[p]);
    nhwc[p] = ratio[p] != 0; /* for the gain below: as if every candidate ran NHWC */
  }
  /* groups: convs joined by a value one writes and the other reads as an activation */
  for (int p = 0; p < n; p++) {
    const lc_gnode *g = &m->nodes[p];
    for (int k = 0; ratio[p] && k < g->n.n_inputs; k++) {
      int v = g->in[k], q = v >= 0 && act_input(g, k) ? m->values[v].producer : -1;
      if (q >= 0 && ratio[q]) up[root(up, p)] = root(up, q);
    }
  }
  /* A group's gain in ns: its convs' time * (1 - ratio), time ~ flops at ~100 GFLOP/s, less a
   * conversion per tensor crossing its border (CONV_COST), counted as if all of it ran NHWC. */
  for (int p = 0; p < n; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (!ratio[p]) continue;
    const lc_tensor *y = &m->values[g->out[0]].t, *w = &m->values[g->in[1]].t;
    double fl = 2.0 * (double)y->dims[0] * (double)y->dims[1] * (double)y->dims[2] * (double)y->dims[3] *
                (double)w->dims[1] * (double)w->dims[2] * (double)w->dims[3];
    int r = root(up, p);
    gain[r] += fl * 0.01 * (1.0 - ratio[p]);
    for (int k = 0; k < g->n.n_inputs; k++) {
      int v = g->in[k], q = v >= 0 && act_input(g, k) ? m->values[v].producer : -2;
      if (q == -2) continue;
      if (q < 0 || !ratio[q]) gain[r] -= CONV_COST(m->values[v].t.nbytes);
    }
    if (!read_nhwc(m, nhwc, g->out[0])) gain[r] -= CONV_COST(y->nbytes);
  }
  for (int p = 0; p < n; p++) nhwc[p] = ratio[p] && (gain[root(up, p)] > 0 || m->opt.layout == LC_LAYOUT_NHWC);
  for (int p = 0; p < n; p++) wout[p] = (char)writes_nhwc(m, nhwc, p);
  lc_status s = LC_OK;
  for (int p = 0; p < n && !s; p++) {
    lc_gnode *g = &m->nodes[p];
    if (nhwc[p]) {
      int v0 = g->in[0], r = lcop_conv_has_residual(&g->n) && g->n.n_inputs >= 3 ? g->in[g->n.n_inputs - 1] : -1;
      int q0 = m->values[v0].producer, qr = r >= 0 ? m->values[r].producer : -1;
      s = lc_fold_add_attr(m, g, "_nhwc", LC_ATTR_INT, 1, 0.0f);
      if (!s && q0 >= 0 && wout[q0]) s = lc_fold_add_attr(m, g, "_in_nhwc", LC_ATTR_INT, 1, 0.0f);
      if (!s && qr >= 0 && wout[qr]) s = lc_fold_add_attr(m, g, "_res_nhwc", LC_ATTR_INT, 1, 0.0f);
    }
    if (!s && wout[p]) s = lc_fold_add_attr(m, g, "_out_nhwc", LC_ATTR_INT, 1, 0.0f);
  }
  lc_free(up), lc_free(ratio), lc_free(gain), lc_free(nhwc), lc_free(wout);
  return s;
}
