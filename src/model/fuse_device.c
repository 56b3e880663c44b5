/* Fusions for a plan on a device, after lc_fuse: what a device conv's epilogue runs but the CPU
 * conv library does not (the CPU conv op still runs them, as a pass after the conv, should a
 * node fall back). ArcFace-style nets put PRelu after a conv and BatchNormalization after the
 * residual add; each was a kernel of its own, reading and writing the whole tensor again.
 *   _prelu (FLOATS, one slope per output channel): y = y < 0 ? y * slope[o] : y
 *   _chan_mul, _chan_add (FLOATS per channel): y = y * mul[o] + add[o], after the residual add
 *   _in_mul, _in_add (FLOATS per input channel): a BatchNormalization before the conv, read
 *     into the conv's input loads (padding stays 0); pre-activation residual blocks read the
 *     BN's input elsewhere too, so the BN cannot fold into the previous node
 *   _hsig (FLOATS alpha, beta): a HardSigmoid after a conv with no other epilogue (the gates
 *     of squeeze-and-excitation blocks), as the device kernels' activation
 *   _se (INT 1): a squeeze-and-excitation gate conv (1x1, output [1, M, 1, 1]) and the Mul that
 *     scales x [1, M, H, W] by it, as one node: x is input 3, the output x's shape (LOWCONV_SE_FUSE=0
 *     leaves the Mul)
 * Epilogue order: bias, residual, per-channel affine, activation, PRelu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "util/alloc.h"
#include "util/error.h"

static int has(const lc_gnode *k, const char *a) { return lc_node_attr(&k->n, a) != NULL; }

/* Adds FLOATS attribute name with v[M] (copied into the model's arena). */
static lc_status add_floats(lc_model *m, lc_gnode *k, const char *name, const double *v, int64_t M) {
  float *f = lc_arena_alloc(m->arena, (size_t)(M ? M : 1) * sizeof(float));
  if (!f) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int64_t o = 0; o < M; o++) f[o] = (float)v[o];
  lc_status s = lc_fold_add_attr(m, k, name, LC_ATTR_FLOATS, 0, 0);
  if (s) return s;
  lc_attr *a = &k->n.attrs[k->n.n_attrs - 1];
  a->floats = f, a->n = (size_t)M;
  return LC_OK;
}

lc_status lc_fold_prelu(lc_model *m, int *pp, int c, double *f) {
  lc_gnode *k = &m->nodes[*pp], *a = &m->nodes[c];
  int y = k->out[0];
  if (a->n.n_inputs != 2 || a->in[0] != y || a->n.n_outputs != 1 || a->out[0] < 0 ||
      !lc_fold_channel_const(m, a, 1, y, f))
    return LC_OK;
  lc_status s = add_floats(m, k, "_prelu", f, m->values[y].t.dims[1]);
  if (s) return s;
  *pp = lc_fold_absorb(m, *pp, c, "prelu");
  m->st.fused_act++;
  return LC_OK;
}

/* HardSigmoid(y) = clamp(alpha * y + beta, 0, 1). */
static lc_status fuse_hsig(lc_model *m, int *pp, int c, double *f) {
  lc_gnode *a = &m->nodes[c];
  if (a->n.n_inputs != 1 || a->in[0] != m->nodes[*pp].out[0] || a->n.n_outputs != 1 || a->out[0] < 0) return LC_OK;
  f[0] = lc_attr_float(&a->n, "alpha", 0.2f), f[1] = lc_attr_float(&a->n, "beta", 0.5f);
  lc_status s = add_floats(m, &m->nodes[*pp], "_hsig", f, 2);
  if (s) return s;
  *pp = lc_fold_absorb(m, *pp, c, "hsig");
  m->st.fused_act++;
  return LC_OK;
}

/* BatchNormalization(y) in inference form as y * mul + add per channel. */
static lc_status fuse_bn_after(lc_model *m, int *pp, int c, double *f) {
  lc_gnode *k = &m->nodes[*pp], *b = &m->nodes[c];
  int y = k->out[0];
  if (b->n.n_inputs < 5 || b->in[0] != y || b->n.n_outputs < 1 || b->out[0] < 0 || m->values[y].t.ndim < 3) return LC_OK;
  for (int i = 1; i < b->n.n_outputs; i++)
    if (b->out[i] >= 0) return LC_OK; /* training-mode outputs */
  int64_t M = m->values[y].t.dims[1];
  const float *sc = lc_fold_const_f32(m, b, 1, (size_t)M), *bb = lc_fold_const_f32(m, b, 2, (size_t)M),
              *mean = lc_fold_const_f32(m, b, 3, (size_t)M), *var = lc_fold_const_f32(m, b, 4, (size_t)M);
  if (!sc || !bb || !mean || !var) return LC_OK;
  double eps = lc_attr_float(&b->n, "epsilon", 1e-5f);
  for (int64_t o = 0; o < M; o++) {
    f[o] = (double)sc[o] / sqrt((double)var[o] + eps);
    f[M + o] = bb[o] - mean[o] * f[o];
  }
  lc_status s;
  if ((s = add_floats(m, k, "_chan_mul", f, M)) || (s = add_floats(m, &m->nodes[*pp], "_chan_add", f + M, M))) return s;
  *pp = lc_fold_absorb(m, *pp, c, "bn");
  m->st.fused_bn++;
  return LC_OK;
}

/* BatchNormalization -> Conv (its data input, the BN's only reader) as the conv's input affine. */
lc_status lc_fold_bn_before(lc_model *m, int p) {
  lc_gnode *g = &m->nodes[p];
  int y = g->in[0];
  if (y < 0 || m->values[y].producer < 0 || m->values[y].is_output || lc_node_attr(&g->n, "_in_mul")) return LC_OK;
  int q = m->values[y].producer;
  lc_gnode *b = &m->nodes[q];
  if (b->dead || strcmp(b->n.op_type, "BatchNormalization") || b->n.n_inputs < 5 || b->out[0] != y ||
      lc_fold_sole_consumer(m, y) != p || b->in[0] < 0 || m->values[y].t.ndim != 4)
    return LC_OK;
  for (int i = 1; i < b->n.n_outputs; i++)
    if (b->out[i] >= 0) return LC_OK;
  for (int k = 1; k < g->n.n_inputs; k++)
    if (g->in[k] == y) return LC_OK; /* read twice */
  int64_t C = m->values[y].t.dims[1];
  const float *sc = lc_fold_const_f32(m, b, 1, (size_t)C), *bb = lc_fold_const_f32(m, b, 2, (size_t)C),
              *mean = lc_fold_const_f32(m, b, 3, (size_t)C), *var = lc_fold_const_f32(m, b, 4, (size_t)C);
  if (C <= 0 || !sc || !bb || !mean || !var) return LC_OK;
  double *f = lc_malloc((size_t)C * 2 * sizeof(double)), eps = lc_attr_float(&b->n, "epsilon", 1e-5f);
  if (!f) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int64_t c = 0; c < C; c++) {
    f[c] = (double)sc[c] / sqrt((double)var[c] + eps);
    f[C + c] = bb[c] - mean[c] * f[c];
  }
  lc_status s = add_floats(m, g, "_in_mul", f, C);
  if (!s) s = add_floats(m, &m->nodes[p], "_in_add", f + C, C);
  lc_free(f);
  if (s) return s;
  g = &m->nodes[p];
  g->in[0] = b->in[0], g->n.inputs[0] = b->n.inputs[0];
  size_t l = strlen(g->fused);
  snprintf(g->fused + l, sizeof g->fused - l, "%sbn_in", l ? "+" : "");
  m->values[y].n_uses = 0, m->values[y].producer = -1;
  b->dead = 1;
  m->st.fused_bn++;
  return LC_OK;
}

/* Mul(x, gate) or Mul(gate, x) at node c, the gate the [1, M, 1, 1] output of a 1x1 conv read by
 * nothing else: the conv moves into the Mul (the device recomputes the gate per work-group of a
 * channel and scales x in the same kernel; an SE block's FC2 and Mul were two launches). */
static lc_status fuse_se(lc_model *m, int c) {
  lc_gnode *a = &m->nodes[c];
  if (a->n.n_inputs != 2 || a->n.n_outputs != 1 || a->out[0] < 0 || a->in[0] < 0 || a->in[1] < 0 ||
      a->in[0] == a->in[1])
    return LC_OK;
  for (int side = 0; side < 2; side++) {
    int gv = a->in[side], x = a->in[1 - side], p = m->values[gv].producer;
    if (p < 0 || m->nodes[p].dead || strcmp(m->nodes[p].n.op_type, "Conv") || lc_fold_sole_consumer(m, gv) != c)
      continue;
    lc_gnode *k = &m->nodes[p];
    if (k->n.n_outputs != 1 || k->out[0] != gv || k->n.n_inputs < 2 || k->n.n_inputs > 3 || k->in[0] < 0 ||
        lc_attr_int(&k->n, "group", 1) != 1 || has(k, "_residual") || has(k, "_prelu") || has(k, "_chan_mul") ||
        has(k, "_in_mul") || has(k, "_res_up") || has(k, "_post_mul") || has(k, "_se"))
      continue;
    const lc_value *wv = k->in[1] >= 0 ? &m->values[k->in[1]] : NULL;
    const lc_tensor *gt = &m->values[gv].t, *xt = &m->values[x].t, *ot = &m->values[a->out[0]].t;
    if (!wv || wv->t.ndim != 4 || wv->t.dims[2] != 1 || wv->t.dims[3] != 1) continue;
    int64_t M = gt->ndim == 4 ? gt->dims[1] : 0;
    if (gt->ndim != 4 || gt->dims[0] != 1 || M < 1 || gt->dims[2] != 1 || gt->dims[3] != 1 || gt->dtype != LC_DT_FLOAT)
      continue;
    if (m->values[x].is_const || xt->dtype != LC_DT_FLOAT || xt->ndim != 4 || xt->dims[0] != 1 || xt->dims[1] != M ||
        ot->ndim != 4 || memcmp(ot->dims, xt->dims, 4 * sizeof(int64_t)))
      continue;
    lc_status s;
    if ((s = lc_fold_set_input(m, k, 3, x)) || (s = lc_fold_add_attr(m, k, "_se", LC_ATTR_INT, 1, 0))) return s;
    lc_fold_absorb(m, p, c, "se");
    m->st.fused_act++;
    return LC_OK;
  }
  return LC_OK;
}

lc_status lc_fuse_device(lc_model *m) {
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_status s = !m->nodes[p].dead && !strcmp(m->nodes[p].n.op_type, "Conv") && m->nodes[p].n.n_inputs >= 2
                      ? lc_fold_bn_before(m, p) : LC_OK;
    if (s) return s;
  }
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead || strcmp(g->n.op_type, "Conv") || g->n.n_outputs != 1 || g->out[0] < 0) continue;
    int64_t M = m->values[g->out[0]].t.ndim >= 3 ? m->values[g->out[0]].t.dims[1] : 0;
    if (M <= 0) continue;
    double *f = lc_malloc((size_t)M * 2 * sizeof(double));
    if (!f) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    lc_status s = LC_OK;
    for (int q = p, c, before = -1; !s && q != before; ) { /* along the chain while something fuses */
      if ((c = lc_fold_sole_consumer(m, m->nodes[q].out[0])) < 0 || m->nodes[c].dead) break;
      const lc_gnode *k = &m->nodes[q];
      const char *op = m->nodes[c].n.op_type;
      int act = has(k, "_act") || has(k, "_prelu") || has(k, "_post_mul") || has(k, "_hsig");
      before = q;
      if (!strcmp(op, "PRelu") && !act) s = lc_fold_prelu(m, &q, c, f);
      else if (!strcmp(op, "HardSigmoid") && !act && !has(k, "_chan_mul") && !has(k, "_residual"))
        s = fuse_hsig(m, &q, c, f);
      else if (!strcmp(op, "BatchNormalization") && !act && !has(k, "_chan_mul")) s = fuse_bn_after(m, &q, c, f);
    }
    lc_free(f);
    if (s) return s;
  }
  const char *se = getenv("LOWCONV_SE_FUSE"); /* "0": A/B runs without the SE fusion */
  if (!se || strcmp(se, "0")) {
    lc_plan_count_uses(m);
    for (int c = 0; c < m->n_nodes; c++) {
      lc_status s = !m->nodes[c].dead && !strcmp(m->nodes[c].n.op_type, "Mul") ? fuse_se(m, c) : LC_OK;
      if (s) return s;
    }
  }
  return lc_fuse_upsample(m); /* counts the uses again */
}
