/* Layer normalization written out as nine nodes (exporters without LayerNormalization, e.g.
 * Paddle's: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta) becomes
 * one LayerNormalization node: one pass over the rows instead of nine kernels or loops, and on a
 * device eight launches fewer per norm. Matched only where every intermediate has no other use. */
#include <math.h>
#include <string.h>

#include "model/graph.h"
#include "util/error.h"

static int is(const lc_gnode *g, const char *op) { return !g->dead && !strcmp(g->n.op_type, op); }

static int scalar(lc_model *m, const lc_gnode *g, int k, float *v) {
  const float *p = lc_fold_const_f32(m, g, k, 1);
  if (p) *v = *p;
  return p != NULL;
}

/* Node c reads value v as input k of exactly two inputs; -1 if c is no such node. */
static int binary_with(const lc_model *m, int c, const char *op, int v, int k) {
  if (c < 0) return -1;
  const lc_gnode *g = &m->nodes[c];
  return is(g, op) && g->n.n_inputs == 2 && g->in[k] == v && g->n.n_outputs == 1 && g->out[0] >= 0 ? c : -1;
}

/* A mean over the last axis, keepdims. */
static int last_axis_mean(const lc_model *m, const lc_gnode *g) {
  if (!is(g, "ReduceMean") || g->n.n_inputs != 1 || g->n.n_outputs != 1 || g->out[0] < 0 || g->in[0] < 0 ||
      !lc_attr_int(&g->n, "keepdims", 1))
    return 0;
  const int64_t *ax;
  int rank = m->values[g->in[0]].t.ndim;
  return lc_attr_ints(&g->n, "axes", &ax) == 1 && rank >= 1 && (ax[0] == -1 || ax[0] == rank - 1);
}

/* The consumers of v when it has exactly two: *a, *b. */
static int two_consumers(const lc_model *m, int v, int *a, int *b) {
  if (m->values[v].is_output || m->values[v].n_uses != 2) return 0;
  *a = *b = -1;
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] == v) {
        if (*a < 0) *a = p;
        else if (*b < 0 && p != *a) *b = p;
        break;
      }
  }
  return *a >= 0 && *b >= 0;
}

static lc_status fuse_at(lc_model *m, int p) {
  const lc_gnode *r1 = &m->nodes[p];
  if (!last_axis_mean(m, r1)) return LC_OK;
  int x = r1->in[0], mean = r1->out[0], c[9], a, b;
  float two, eps;
  int64_t C = m->values[x].t.ndim ? m->values[x].t.dims[m->values[x].t.ndim - 1] : 0;
  if (C <= 0 || (c[0] = binary_with(m, lc_fold_sole_consumer(m, mean), "Sub", mean, 1)) < 0 || m->nodes[c[0]].in[0] != x)
    return LC_OK;
  int d = m->nodes[c[0]].out[0];
  if (!two_consumers(m, d, &a, &b)) return LC_OK;
  if (strcmp(m->nodes[a].n.op_type, "Pow")) { int t = a; a = b; b = t; }
  if ((c[1] = binary_with(m, a, "Pow", d, 0)) < 0 || !scalar(m, &m->nodes[a], 1, &two) || two != 2.0f) return LC_OK;
  int c2 = lc_fold_sole_consumer(m, m->nodes[c[1]].out[0]);
  if (c2 < 0 || !last_axis_mean(m, &m->nodes[c2]) || m->nodes[c2].in[0] != m->nodes[c[1]].out[0]) return LC_OK;
  c[2] = c2;
  if ((c[3] = binary_with(m, lc_fold_sole_consumer(m, m->nodes[c2].out[0]), "Add", m->nodes[c2].out[0], 0)) < 0 ||
      !scalar(m, &m->nodes[c[3]], 1, &eps) || !(eps >= 0))
    return LC_OK;
  int c4 = lc_fold_sole_consumer(m, m->nodes[c[3]].out[0]);
  if (c4 < 0 || !is(&m->nodes[c4], "Sqrt") || m->nodes[c4].n.n_outputs != 1 || m->nodes[c4].out[0] < 0) return LC_OK;
  c[4] = c4;
  if ((c[5] = binary_with(m, b, "Div", d, 0)) < 0 || m->nodes[b].in[1] != m->nodes[c4].out[0] ||
      lc_fold_sole_consumer(m, m->nodes[c4].out[0]) != b)
    return LC_OK;
  int y = m->nodes[b].out[0], cm = lc_fold_sole_consumer(m, y);
  if (cm < 0 || !is(&m->nodes[cm], "Mul") || m->nodes[cm].n.n_inputs != 2 || m->nodes[cm].out[0] < 0) return LC_OK;
  int kg = m->nodes[cm].in[0] == y ? 1 : 0;
  if (m->nodes[cm].in[1 - kg] != y || !lc_fold_const_f32(m, &m->nodes[cm], kg, (size_t)C)) return LC_OK;
  int ca = lc_fold_sole_consumer(m, m->nodes[cm].out[0]);
  if (ca < 0 || !is(&m->nodes[ca], "Add") || m->nodes[ca].n.n_inputs != 2 || m->nodes[ca].out[0] < 0) return LC_OK;
  int kb = m->nodes[ca].in[0] == m->nodes[cm].out[0] ? 1 : 0;
  if (m->nodes[ca].in[1 - kb] != m->nodes[cm].out[0] || !lc_fold_const_f32(m, &m->nodes[ca], kb, (size_t)C)) return LC_OK;
  c[6] = cm, c[7] = p;
  lc_gnode *z = &m->nodes[ca];
  const char **nm = lc_arena_alloc(m->arena, 3 * sizeof(char *));
  int *id = lc_arena_alloc(m->arena, 3 * sizeof(int));
  if (!nm || !id) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  int gamma = m->nodes[cm].in[kg], beta = z->in[kb];
  id[0] = x, id[1] = gamma, id[2] = beta;
  for (int i = 0; i < 3; i++) nm[i] = m->values[id[i]].t.name;
  z->n.op_type = "LayerNormalization";
  z->n.inputs = nm, z->in = id, z->n.n_inputs = 3, z->n.n_attrs = 0;
  z->op = lc_op_find("LayerNormalization");
  lc_status s = lc_fold_add_attr(m, z, "axis", LC_ATTR_INT, -1, 0);
  if (!s) s = lc_fold_add_attr(m, z, "epsilon", LC_ATTR_FLOAT, 0, eps);
  if (s) return s;
  for (int i = 0; i < 8; i++) {
    lc_gnode *g = &m->nodes[c[i]];
    m->values[g->out[0]].n_uses = 0;
    g->dead = 1;
  }
  m->st.fused_act++;
  lc_plan_count_uses(m);
  return LC_OK;
}

lc_status lc_fuse_layernorm(lc_model *m) {
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_status s = m->nodes[p].dead ? LC_OK : fuse_at(m, p);
    if (s) return s;
  }
  return LC_OK;
}
