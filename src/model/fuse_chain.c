/* Chains of elementwise nodes - unary activations and math, and Add / Mul / Sub / Div with a
 * constant scalar - where every intermediate has one reader and is no graph output become one
 * EwChain node (ops_elementwise.c): one pass over memory instead of one per node. Run after the
 * conv fusions (a Conv's own epilogue takes its activation first), on CPU plans only: the device
 * runs each node's float4 kernel. A PRelu after a conv joins the conv instead (fuse_prelu). */
#include <string.h>

#include "model/graph.h"
#include "util/alloc.h"
#include "model/ops/ops_plan.h"
#include "util/error.h"

#define CHAIN_MAX LCOP_CHAIN_MAX

/* Node g as a chain step applied to value x: its kind and parameters; 0 if it is not one. */
static int step_of(lc_model *m, const lc_gnode *g, int x, int *k, float *a, float *b) {
  static const char *const unary[] = {"Relu", "LeakyRelu", "Sigmoid",    "HardSigmoid", "HardSwish", "Tanh", "Clip",
                                      "Sqrt", "Reciprocal", "Erf", "Exp", "Neg",         "Abs"};
  if (g->dead || g->n.n_outputs != 1 || g->out[0] < 0 || g->n.n_inputs < 1 || !lc_fold_same_shape(m, x, g->out[0]))
    return 0;
  const char *op = g->n.op_type;
  int is_un = 0;
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) is_un |= !strcmp(op, unary[i]);
  if (is_un) {
    if (g->in[0] != x || g->n.n_inputs > 3) return 0;
    const lc_tensor *in[3] = {&m->values[x].t, NULL, NULL};
    for (int i = 1; i < g->n.n_inputs; i++) {
      if (g->in[i] < 0) continue;
      if (!lc_fold_const_f32(m, g, i, 1)) return 0; /* Clip bounds computed at run time */
      in[i] = &m->values[g->in[i]].t;
    }
    return lcop_unary_params(&g->n, in, g->n.n_inputs, k, a, b) == LC_OK;
  }
  if (g->n.n_inputs != 2 || (g->in[0] == x) == (g->in[1] == x)) return 0;
  int c = g->in[0] == x ? 1 : 0;
  const float *v = lc_fold_const_f32(m, g, c, 1);
  if (!v || (*k = lcop_chain_kind(op, c == 0)) < 0) return 0;
  *a = *v, *b = 0.0f;
  return 1;
}

/* Sigmoid node p on x whose one reader is Mul(x, p's output): that Mul, else -1 (SiLU / Swish). */
static int silu_mul(const lc_model *m, int p, int x) {
  const lc_gnode *g = &m->nodes[p];
  if (g->dead || strcmp(g->n.op_type, "Sigmoid") || g->n.n_inputs != 1 || g->in[0] != x || g->out[0] < 0 ||
      !lc_fold_same_shape(m, x, g->out[0]))
    return -1;
  int c = lc_fold_sole_consumer(m, g->out[0]);
  if (c < 0) return -1;
  const lc_gnode *u = &m->nodes[c];
  if (u->dead || strcmp(u->n.op_type, "Mul") || u->n.n_inputs != 2 || u->n.n_outputs != 1 || u->out[0] < 0 ||
      !lc_fold_same_shape(m, x, u->out[0]) ||
      !((u->in[0] == x && u->in[1] == g->out[0]) || (u->in[1] == x && u->in[0] == g->out[0])))
    return -1;
  return c;
}

/* Node `last` becomes EwChain(x) of the n steps; the nodes before it in the chain die. */
static lc_status make_chain(lc_model *m, int x, const int *nodes, int nn, const int *k, const float *a, const float *b,
                            int n) {
  lc_attr *at = lc_arena_alloc(m->arena, (size_t)(1 + 3 * n) * sizeof(lc_attr));
  if (!at) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  memset(at, 0, (size_t)(1 + 3 * n) * sizeof(lc_attr));
  at[0] = (lc_attr){.name = "_n", .type = LC_ATTR_INT, .i = n};
  for (int i = 0; i < n; i++) {
    at[1 + 3 * i] = (lc_attr){.name = lcop_chain_attr[0][i], .type = LC_ATTR_INT, .i = k[i]};
    at[2 + 3 * i] = (lc_attr){.name = lcop_chain_attr[1][i], .type = LC_ATTR_FLOAT, .f = a[i]};
    at[3 + 3 * i] = (lc_attr){.name = lcop_chain_attr[2][i], .type = LC_ATTR_FLOAT, .f = b[i]};
  }
  lc_status s = lc_fold_become_unary(m, nodes[nn - 1], "EwChain", x, nodes, nn - 1);
  if (s) return s;
  m->nodes[nodes[nn - 1]].n.attrs = at;
  m->nodes[nodes[nn - 1]].n.n_attrs = 1 + 3 * n;
  m->st.fused_act += nn - 1;
  return LC_OK;
}

/* A PRelu with a constant per-channel slope after a Conv with no activation fused (a residual Add
 * may be) becomes the conv's _prelu (the CPU library's LC_ACT_PRELU, ops_conv.c): ArcFace-style
 * nets put one after the first conv of every block. Device plans fuse it in fuse_device.c, in
 * their own epilogue order. */
static lc_status fuse_prelu(lc_model *m) {
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *k = &m->nodes[p];
    if (k->dead || strcmp(k->n.op_type, "Conv") || k->n.n_outputs != 1 || k->out[0] < 0 || lc_node_attr(&k->n, "_act") ||
        lc_node_attr(&k->n, "_res_up") || lc_node_attr(&k->n, "_post_mul") || lc_node_attr(&k->n, "_prelu") ||
        lc_node_attr(&k->n, "_chan_mul"))
      continue;
    int c = lc_fold_sole_consumer(m, k->out[0]);
    const lc_tensor *yt = &m->values[k->out[0]].t;
    if (c < 0 || m->nodes[c].dead || strcmp(m->nodes[c].n.op_type, "PRelu") || yt->ndim != 4 || yt->dims[1] < 1)
      continue;
    double *f = lc_malloc((size_t)yt->dims[1] * sizeof(double));
    if (!f) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    int q = p;
    lc_status s = lc_fold_prelu(m, &q, c, f);
    lc_free(f);
    if (s) return s;
  }
  return LC_OK;
}

/* A BatchNormalization before a conv (pre-activation residual blocks: IResNet-34 has 16, each a
 * pass of its own, 1.4 % of a run at 1 thread) joins the conv as _in_mul / _in_add: the conv op
 * folds it into fp32 weights and pads with -add / mul (lc_conv_desc.pad_values). Only where AUTO
 * then takes a route that pads so (Winograd: 3x3 stride 1 from 16 channels) or there is no
 * padding; elsewhere a pass before the conv would cost what the BN did. fp32 weights only. */
static int bn_before_pays(const lc_model *m, const lc_gnode *k) {
  if (k->n.n_inputs < 2 || k->in[1] < 0) return 0;
  const lc_value *w = &m->values[k->in[1]];
  if (!w->is_const || w->t.quant || w->t.dtype != LC_DT_FLOAT || w->t.ndim != 4) return 0;
  const lc_attr *st = lc_node_attr(&k->n, "strides"), *di = lc_node_attr(&k->n, "dilations");
  const lc_attr *pa = lc_node_attr(&k->n, "pads"), *ap = lc_node_attr(&k->n, "auto_pad");
  int unit = 1, nopad = !ap || !ap->s || !strcmp(ap->s, "NOTSET") || !strcmp(ap->s, "VALID");
  for (size_t i = 0; st && i < st->n; i++) unit &= st->ints[i] == 1;
  for (size_t i = 0; di && i < di->n; i++) unit &= di->ints[i] == 1;
  for (size_t i = 0; pa && i < pa->n; i++) nopad &= pa->ints[i] == 0;
  int64_t G = lc_attr_int(&k->n, "group", 1);
  int wino = unit && w->t.dims[2] == 3 && w->t.dims[3] == 3 && G == 1 && w->t.dims[1] >= 16;
  return wino || nopad;
}

static lc_status fuse_bn_before(lc_model *m) {
  /* Q8/Q4 quantize the model's weights as they are, not ones scaled per input channel */
  if (m->opt.weight_format != LC_WEIGHTS_F32) return LC_OK;
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *k = &m->nodes[p];
    if (k->dead || strcmp(k->n.op_type, "Conv") || !bn_before_pays(m, k)) continue;
    lc_status s = lc_fold_bn_before(m, p);
    if (s) return s;
  }
  return LC_OK;
}

lc_status lc_fuse_chains(lc_model *m) {
  lc_status s0 = fuse_bn_before(m);
  if (!s0) s0 = fuse_prelu(m);
  if (s0) return s0;
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) { /* in graph order, so p is a chain's first node */
    const lc_gnode *g = &m->nodes[p];
    if (g->dead || g->n.n_inputs < 1) continue;
    int nodes[2 * CHAIN_MAX], k[CHAIN_MAX], n = 0, nn = 0, x = -1, q = p, c;
    float a[CHAIN_MAX], b[CHAIN_MAX];
    for (int i = 0; i < g->n.n_inputs && x < 0; i++) /* the data input: the non-constant one */
      if (g->in[i] >= 0 && !m->values[g->in[i]].is_const) x = g->in[i];
    if (x < 0) continue;
    if ((c = silu_mul(m, p, x)) >= 0) { /* only first: x has two readers */
      k[n] = lcop_chain_silu(), a[n] = b[n] = 0.0f, n++;
      nodes[nn++] = p, nodes[nn++] = q = c;
    } else if (step_of(m, g, x, &k[0], &a[0], &b[0])) {
      n = 1, nodes[nn++] = p;
    } else {
      continue;
    }
    for (; n < CHAIN_MAX && (c = lc_fold_sole_consumer(m, m->nodes[q].out[0])) >= 0; q = c, n++) {
      if (!step_of(m, &m->nodes[c], m->nodes[q].out[0], &k[n], &a[n], &b[n])) break;
      nodes[nn++] = c;
    }
    lc_status s;
    if (nn >= 2 && (s = make_chain(m, x, nodes, nn, k, a, b, n))) return s;
  }
  lc_plan_count_uses(m);
  return LC_OK;
}
