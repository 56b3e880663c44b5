/* The folding passes' helpers (new constants and inputs, absorbing a consumer, reading a
 * constant), and BatchNormalization folded into a ConvTranspose (fold.c folds it into a Conv). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/graph.h"
#include "util/alloc.h"
#include "util/error.h"

/* Sets a conv input slot (growing the arrays to k+1 slots). */
lc_status lc_fold_set_input(lc_model *m, lc_gnode *g, int k, int v) {
  if (k >= g->n.n_inputs) {
    const char **nm = lc_arena_alloc(m->arena, (size_t)(k + 1) * sizeof(char *));
    int *id = lc_arena_alloc(m->arena, (size_t)(k + 1) * sizeof(int));
    if (!nm || !id) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    for (int i = 0; i <= k; i++) {
      nm[i] = i < g->n.n_inputs ? g->n.inputs[i] : "";
      id[i] = i < g->n.n_inputs ? g->in[i] : -1;
    }
    g->n.inputs = nm;
    g->in = id;
    g->n.n_inputs = k + 1;
  }
  g->n.inputs[k] = v >= 0 ? m->values[v].t.name : "";
  g->in[k] = v;
  return LC_OK;
}

/* A new constant like `like`; data allocated unless lazy. */
lc_status lc_fold_new_const(lc_model *m, const char *base, const char *suffix, const lc_tensor *like, int lazy,
                            int *id) {
  char name[256];
  snprintf(name, sizeof name, "%.200s%s", base, suffix);
  for (int i = 1; lc_graph_find(m, name) >= 0; i++) snprintf(name, sizeof name, "%.200s%s%d", base, suffix, i);
  if ((*id = lc_graph_add_value(m, name)) < 0) return LC_ERR_NO_MEMORY;
  lc_value *v = &m->values[*id];
  const char *nm = v->t.name;
  v->t = *like;
  v->t.name = nm;
  v->t.data = NULL;
  v->is_const = v->shaped = 1;
  if (lazy) return LC_OK;
  v->t.data = lc_malloc(like->nbytes ? like->nbytes : 1);
  if (!v->t.data) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  v->owned = 1;
  return LC_OK;
}

/* Moves conv node at p into the slot of consumer c (which it replaces), taking c's output. */
int lc_fold_absorb(lc_model *m, int p, int c, const char *tag) {
  lc_gnode *k = &m->nodes[p], *d = &m->nodes[c];
  int out = d->out[0];
  m->values[k->out[0]].n_uses = 0;
  lc_gnode moved = *k;
  moved.out[0] = out;
  moved.n.outputs[0] = d->n.outputs[0];
  size_t l = strlen(moved.fused);
  snprintf(moved.fused + l, sizeof moved.fused - l, "%s%s", l ? "+" : "", tag);
  *d = moved;
  m->values[out].producer = c;
  memset(k, 0, sizeof(*k));
  k->dead = 1;
  k->n = moved.n; /* keep names for messages; the node is dead */
  return c;
}

const float *lc_fold_const_f32(lc_model *m, const lc_gnode *g, int k, size_t n) {
  if (k >= g->n.n_inputs || g->in[k] < 0) return NULL;
  lc_graph_ensure(m, g->in[k]);
  const lc_value *v = &m->values[g->in[k]];
  size_t e;
  if (!v->is_const || v->t.dtype != LC_DT_FLOAT || lc_tensor_numel(&v->t, &e) || e != n) return NULL;
  return v->t.data;
}

/* BatchNormalization b after conv node k with M output channels: f[o] = scale / sqrt(var + eps)
 * (in double: var + eps close to 0 must not lose the scale's precision) and a new bias constant
 * *bid = (k's bias - mean) * f + beta, named after base. *f stays NULL (LC_OK) when b is in training
 * mode or its parameters or k's bias are not constants of M floats. */
lc_status lc_fold_bn_factors(lc_model *m, const lc_gnode *k, const lc_gnode *b, int64_t M, const char *base,
                             double **f, int *bid) {
  *f = NULL;
  for (int i = 1; i < b->n.n_outputs; i++)
    if (b->out[i] >= 0) return LC_OK; /* training-mode outputs */
  const float *sc = lc_fold_const_f32(m, b, 1, (size_t)M), *bb = lc_fold_const_f32(m, b, 2, (size_t)M),
              *mean = lc_fold_const_f32(m, b, 3, (size_t)M), *var = lc_fold_const_f32(m, b, 4, (size_t)M);
  const float *bias = k->n.n_inputs > 2 && k->in[2] >= 0 ? lc_fold_const_f32(m, k, 2, (size_t)M) : NULL;
  if (!sc || !bb || !mean || !var || (k->n.n_inputs > 2 && k->in[2] >= 0 && !bias)) return LC_OK;
  float eps = lc_attr_float(&b->n, "epsilon", 1e-5f);
  lc_tensor bt = {.dtype = LC_DT_FLOAT, .ndim = 1, .dims = {M}, .nbytes = (size_t)M * 4};
  double *fs = lc_malloc((size_t)(M ? M : 1) * sizeof(double));
  if (!fs) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  lc_status s = lc_fold_new_const(m, base, "_bn_bias", &bt, 0, bid);
  if (s) {
    lc_free(fs);
    return s;
  }
  float *nb = m->values[*bid].t.data;
  for (int64_t o = 0; o < M; o++) {
    fs[o] = (double)sc[o] / sqrt((double)var[o] + (double)eps);
    nb[o] = (float)(((bias ? bias[o] : 0.0) - mean[o]) * fs[o] + bb[o]);
  }
  *f = fs;
  return LC_OK;
}

/* ConvTranspose weights are [C][M/group][kh][kw]: output channel m = group * M/group + j scales
 * W[group's channels][j]. They are small next to a conv's (PP-OCR det: 24x24x2x2), so the folded
 * copy is made now rather than lazily at packing. */
lc_status lc_fold_bn_convt(lc_model *m, int *pp, int c) {
  lc_gnode *k = &m->nodes[*pp], *b = &m->nodes[c];
  if (k->n.n_inputs < 2 || k->in[1] < 0 || b->n.n_inputs < 5 || b->n.n_outputs < 1) return LC_OK;
  int src = k->in[1];
  lc_graph_ensure(m, src);
  lc_tensor wt = m->values[src].t;
  if (!m->values[src].is_const || !wt.data || wt.dtype != LC_DT_FLOAT || wt.quant || wt.ndim < 3) return LC_OK;
  int64_t G = lc_attr_int(&k->n, "group", 1), C = wt.dims[0], Mg = wt.dims[1], per = 1;
  for (int d = 2; d < wt.ndim; d++) per *= wt.dims[d];
  if (G < 1 || C % G || Mg < 1) return LC_OK;
  int64_t M = Mg * G, Cg = C / G;
  double *f;
  int wid, bid;
  lc_status s = lc_fold_bn_factors(m, k, b, M, wt.name, &f, &bid);
  if (s || !f) return s;
  if ((s = lc_fold_new_const(m, wt.name, "_bn", &wt, 0, &wid))) {
    lc_free(f);
    return s;
  }
  float *nw = m->values[wid].t.data;
  const float *ow = wt.data;
  for (int64_t ci = 0; ci < C; ci++)
    for (int64_t j = 0; j < Mg; j++) {
      double fo = f[ci / Cg * Mg + j];
      for (int64_t t = 0; t < per; t++) nw[(ci * Mg + j) * per + t] = (float)(ow[(ci * Mg + j) * per + t] * fo);
    }
  lc_free(f);
  k = &m->nodes[*pp];
  if ((s = lc_fold_set_input(m, k, 1, wid)) || (s = lc_fold_set_input(m, k, 2, bid))) return s;
  *pp = lc_fold_absorb(m, *pp, c, "bn");
  m->st.fused_bn++;
  return LC_OK;
}
