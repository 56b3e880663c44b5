/* Shape inference with constant folding, then fusion of BatchNormalization, a residual Add and an
 * activation into the Conv before them. The attributes fusion adds are the contract with the
 * Conv operator (docs/onnx.md, "Fusion attributes"). */
#include "model/graph.h"
#include "model/ops/ops_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/qweight.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* Shape(x) for a statically shaped x, with opset-15 start/end. */
static lc_status fold_shape(lc_model *m, lc_gnode *g) {
  const lc_value *x = &m->values[g->in[0]];
  int64_t r = x->t.ndim, st = lc_attr_int(&g->n, "start", 0), en = lc_attr_int(&g->n, "end", r);
  if (st < 0) st += r;
  if (en < 0) en += r;
  st = st < 0 ? 0 : st > r ? r : st;
  en = en < 0 ? 0 : en > r ? r : en;
  if (en < st) en = st;
  lc_value *o = &m->values[g->out[0]];
  o->t.dtype = LC_DT_INT64;
  o->t.ndim = 1;
  o->t.dims[0] = en - st;
  o->t.nbytes = (size_t)(en - st) * 8;
  o->t.data = lc_malloc(o->t.nbytes ? o->t.nbytes : 8);
  if (!o->t.data) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int64_t i = st; i < en; i++) ((int64_t *)o->t.data)[i - st] = x->t.dims[i];
  o->owned = o->is_const = o->shaped = 1;
  return LC_OK;
}

static lc_status resolve_inputs(lc_model *m) {
  for (int i = 0; i < m->n_inputs; i++) {
    lc_value *v = &m->values[m->inputs[i]];
    if (!lc_dtype_size(v->t.dtype))
      return lc_error(LC_ERR_UNSUPPORTED, "model: input '%s' has unsupported element type %s", v->t.name,
                      lc_dtype_name(v->t.dtype));
    if (!v->shaped) {
      if (!v->has_decl)
        return lc_error(LC_ERR_INVALID_ARG, "model: input '%s' has no declared shape; give one with --shape %s=DIMS",
                        v->t.name, v->t.name);
      for (int d = 0; d < v->t.ndim; d++) {
        if (v->t.dims[d] >= 0) continue;
        if (d == 0) {
          v->t.dims[0] = 1; /* symbolic batch defaults to 1 */
          continue;
        }
        return lc_error(LC_ERR_INVALID_ARG, "model: input '%s' dim %d is symbolic ('%s'); set the input's shape (CLI: --shape %s=DIMS "
                        "or --input %s=FILE.npy)",
                        v->t.name, d, v->dim_param[d] ? v->dim_param[d] : "?", v->t.name, v->t.name);
      }
      v->shaped = 1;
    }
    if (lc_graph_nbytes(&v->t)) return lc_error(LC_ERR_OVERFLOW, "model: input '%s' is too large", v->t.name);
  }
  return LC_OK;
}

static lc_status run_now(lc_model *m, lc_gnode *g, const lc_tensor **in, lc_tensor *out) {
  lc_graph_ensure_inputs(m, g);
  /* Constant's value: large misaligned tensors are copied on demand, attributes included. */
  for (int i = 0; i < g->n.n_attrs; i++)
    if (g->n.attrs[i].type == LC_ATTR_TENSOR && g->n.attrs[i].t) lc_onnx_ensure(m->onnx, g->n.attrs[i].t->data);
  for (int k = 0; k < g->n.n_outputs; k++) {
    if (g->out[k] < 0) continue;
    lc_value *v = &m->values[g->out[k]];
    v->t.data = lc_malloc(v->t.nbytes ? v->t.nbytes : 8);
    if (!v->t.data) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory folding node '%s'", g->n.name);
    v->owned = v->is_const = 1;
  }
  int n_out = lc_graph_io(m, g, in, out);
  void *state = NULL;
  lc_status s = LC_OK;
  if (g->op->init) s = g->op->init(&g->n, in, g->n.n_inputs, out, n_out, &m->x, &state);
  if (!s) s = g->op->run(&g->n, state, in, g->n.n_inputs, out, n_out, &m->x);
  if (state && g->op->fini) g->op->fini(state);
  if (s && !strstr(lc_last_error(), g->n.name)) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s", lc_last_error());
    s = lc_error(s, "model: folding node '%s' (%s): %s", g->n.name, g->n.op_type, msg);
  }
  return s;
}

lc_status lc_fold_and_infer(lc_model *m) {
  lc_status s = resolve_inputs(m);
  if (!s) s = lc_qweight_map(m);
  if (!s) s = lc_graph_check_ops(m);
  if (s) return s;
  int maxio = 1;
  for (int p = 0; p < m->n_nodes; p++) {
    if (m->nodes[p].n.n_inputs > maxio) maxio = m->nodes[p].n.n_inputs;
    if (m->nodes[p].n.n_outputs > maxio) maxio = m->nodes[p].n.n_outputs;
  }
  const lc_tensor **in = lc_calloc((size_t)maxio, sizeof(*in));
  lc_tensor *out = lc_calloc((size_t)maxio, sizeof(*out));
  lc_tensor *tmp = lc_calloc((size_t)maxio, sizeof(*tmp));
  if (!in || !out || !tmp) {
    s = lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    goto done;
  }
  for (int p = 0; p < m->n_nodes && !s; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue; /* e.g. DequantizeLinear of weights kept quantized */
    if ((s = lc_graph_prelu_slope(m, g)) || (m->st.opset > 0 && m->st.opset < 7 && (s = lc_graph_opset6(m, g)))) break;
    int all_const = 1, any_out = 0;
    for (int k = 0; k < g->n.n_outputs; k++) any_out |= g->out[k] >= 0;
    if (!any_out) { /* nothing reads what it would compute */
      g->dead = 1;
      continue;
    }
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] >= 0 && !m->values[g->in[k]].is_const) all_const = 0;
    /* Weight-bearing ops' infer reads only dims: their big weights stay uncopied until packing. */
    if (strcmp(g->n.op_type, "Conv") && strcmp(g->n.op_type, "ConvTranspose") && strcmp(g->n.op_type, "Gemm") &&
        strcmp(g->n.op_type, "MatMul"))
      lc_graph_ensure_inputs(m, g);
    lc_graph_io(m, g, in, out);
    /* Shapes go to scratch copies so a failing infer leaves the values untouched. */
    for (int k = 0; k < g->n.n_outputs; k++) {
      memset(&tmp[k], 0, sizeof(tmp[k]));
      tmp[k].name = out[k].name;
    }
    if (!strcmp(g->n.op_type, "Shape") && g->n.n_inputs == 1 && g->n.n_outputs == 1 && g->in[0] >= 0 &&
        g->out[0] >= 0 && m->values[g->in[0]].shaped) {
      if ((s = fold_shape(m, g))) break;
      g->dead = 1;
      m->st.folded++;
      continue;
    }
    s = g->op->infer(&g->n, in, g->n.n_inputs, tmp, g->n.n_outputs);
    if (s) {
      if (!strstr(lc_last_error(), g->n.name)) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", lc_last_error());
        s = lc_error(s, "model: node '%s' (%s): %s", g->n.name, g->n.op_type, msg);
      }
      break;
    }
    for (int k = 0; k < g->n.n_outputs; k++) {
      if (g->out[k] < 0) continue;
      lc_tensor *ot = &m->values[g->out[k]].t;
      if (tmp[k].ndim < 0 || tmp[k].ndim > LC_MAX_DIMS || lc_graph_nbytes(&tmp[k])) {
        s = lc_error(LC_ERR_OVERFLOW, "model: node '%s' (%s): output %d has an invalid or too large shape", g->n.name,
                     g->n.op_type, k);
        break;
      }
      /* before anything is allocated for it: folded now, or a buffer of the arena later */
      if ((s = lc_model_charge(m, g, all_const ? "folded output" : "output", tmp[k].nbytes,
                               all_const ? &m->st.folded_bytes : NULL)))
        break;
      size_t cnt;
      if (lc_tensor_numel(&tmp[k], &cnt) || cnt > LCOP_GEN_MAX) {
        s = lc_error(LC_ERR_BUDGET, "model: node '%s' (%s): output %d would have %zu elements (more than 2^31)",
                     g->n.name, g->n.op_type, k, cnt);
        break;
      }
      ot->dtype = tmp[k].dtype;
      ot->ndim = tmp[k].ndim;
      memcpy(ot->dims, tmp[k].dims, sizeof(tmp[k].dims));
      ot->nbytes = tmp[k].nbytes;
      ot->data = NULL;
      m->values[g->out[k]].shaped = 1;
    }
    if (s) break;
    if (all_const) {
      if ((s = run_now(m, g, in, out))) break;
      g->dead = 1;
      m->st.folded++;
    }
  }
done:
  lc_free(in);
  lc_free(out);
  lc_free(tmp);
  return s;
}

/* ------------------------------------------------------------------ fusion */

/* The single live consumer of value v at a later position, or -1. */
int lc_fold_sole_consumer(const lc_model *m, int v) {
  const lc_value *x = &m->values[v];
  return !x->is_output && x->n_uses == 1 ? x->consumer : -1;
}

lc_status lc_fold_add_attr(lc_model *m, lc_gnode *g, const char *name, lc_attr_type type, int64_t i, float f) {
  lc_attr *a = lc_arena_alloc(m->arena, ((size_t)g->n.n_attrs + 1) * sizeof(lc_attr));
  if (!a) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  if (g->n.n_attrs) memcpy(a, g->n.attrs, (size_t)g->n.n_attrs * sizeof(lc_attr));
  a[g->n.n_attrs].name = name;
  a[g->n.n_attrs].type = type;
  a[g->n.n_attrs].i = i;
  a[g->n.n_attrs].f = f;
  g->n.attrs = a;
  g->n.n_attrs++;
  return LC_OK;
}



/* BatchNormalization after a Conv with constant weights: scale W and B per output channel. The
 * scaled weights are only described here (lazy_src, lazy_scale) and computed by the init loop
 * right before the conv packs them, so at most one folded copy exists at a time. */
static lc_status fuse_bn(lc_model *m, int *pp, int c) {
  lc_gnode *k = &m->nodes[*pp], *b = &m->nodes[c];
  if (k->n.n_inputs < 2 || k->in[1] < 0 || b->n.n_inputs < 5 || b->n.n_outputs < 1) return LC_OK;
  int src = k->in[1];
  const lc_value *w = &m->values[src];
  if (!w->is_const || !w->t.data || (w->t.dtype != LC_DT_FLOAT && !w->t.quant) || w->t.ndim < 3) return LC_OK;
  int64_t oc = w->t.dims[0];
  lc_tensor wt = w->t;
  double *f;
  int wid, bid;
  lc_status s = lc_fold_bn_factors(m, k, b, oc, wt.name, &f, &bid);
  if (s || !f) return s;
  if ((s = lc_fold_new_const(m, wt.name, "_bn", &wt, 1, &wid))) {
    lc_free(f);
    return s;
  }
  if (wt.quant) { /* quantized weights: the scales take the factor, the codes stay as mapped */
    s = lc_qweight_scaled(m, wt.quant, f, &m->values[wid].t.quant);
    m->values[wid].t.data = wt.data;
    lc_free(f);
    if (s) return s;
  } else {
    m->values[wid].lazy_src = src;
    m->values[wid].lazy_scale = f;
  }
  if ((s = lc_fold_set_input(m, k, 1, wid)) || (s = lc_fold_set_input(m, k, 2, bid))) return s;
  *pp = lc_fold_absorb(m, *pp, c, "bn");
  m->st.fused_bn++;
  return LC_OK;
}

/* Bytes of the activation inputs of node q that no other node reads at position `from` or later:
 * what fusing an Add at a later position into q keeps alive past `from`. */
static size_t held_inputs(const lc_model *m, int q, int from) {
  const lc_gnode *k = &m->nodes[q];
  size_t b = 0;
  for (int i = 0; i < k->n.n_inputs; i++) {
    int v = k->in[i], seen = 0;
    for (int j = 0; j < i; j++) seen |= k->in[j] == v;
    if (v < 0 || seen || m->values[v].is_const || m->values[v].is_output) continue;
    for (int p = from; p < m->n_nodes && !seen; p++)
      for (int j = 0; p != q && !m->nodes[p].dead && j < m->nodes[p].n.n_inputs; j++) seen |= m->nodes[p].in[j] == v;
    if (!seen) b += m->values[v].t.nbytes;
  }
  return b;
}

/* The chain ending at node q (a Conv or ConvTranspose without an epilogue yet, its output read by
 * Add c only) could take c. */
static int can_take_add(const lc_model *m, int q, int c) {
  if (q < 0) return 0;
  const lc_gnode *k = &m->nodes[q];
  return !k->dead && (!strcmp(k->n.op_type, "Conv") || !strcmp(k->n.op_type, "ConvTranspose")) &&
         k->n.n_outputs == 1 && k->out[0] >= 0 && lc_fold_sole_consumer(m, k->out[0]) == c &&
         !lc_node_attr(&k->n, "_act") && !lc_node_attr(&k->n, "_residual") && !lc_node_attr(&k->n, "_post_mul");
}

/* Add(conv, r) into the conv at *pp: the conv moves to the Add's slot, so its inputs live until
 * then, and r is read there. When r is another conv chain's output, either chain could take the
 * Add; between the two chains' ends the earlier one keeps alive its inputs (if it takes the Add)
 * or its output (if it leaves the Add to the later one). It takes the Add when those of its
 * activation inputs that nothing at or after the later chain's end reads are smaller than its
 * output: an expanding shortcut (ResNet-50's first bottleneck) does, a downsample shortcut that
 * reads the block's input (IResNet's) leaves it to the main path, and the input dies at the
 * shortcut instead of after the whole main path. pass 0 fuses no Add of two activations (so
 * every chain reaches its Add first), pass 1 fuses into the chosen chain, pass 2 whatever is
 * left (the chosen chain could not take it after all). */
static lc_status fuse_add(lc_model *m, int *pp, int c, int pass, int *deferred) {
  lc_gnode *k = &m->nodes[*pp], *a = &m->nodes[c];
  if (a->n.n_inputs != 2 || a->n.n_outputs != 1 || a->in[0] < 0 || a->in[1] < 0 || a->in[0] == a->in[1]) return LC_OK;
  int r = a->in[0] == k->out[0] ? a->in[1] : a->in[0];
  const lc_value *rv = &m->values[r], *cv = &m->values[k->out[0]];
  if (rv->t.dtype != LC_DT_FLOAT || rv->t.ndim != cv->t.ndim ||
      memcmp(rv->t.dims, cv->t.dims, sizeof(int64_t) * (size_t)cv->t.ndim))
    return LC_OK; /* broadcasting adds stay separate */
  int pr = rv->producer, e = pr < *pp ? pr : *pp, l = pr < *pp ? *pp : pr;
  if (pass == 0 && !rv->is_const) {
    (*deferred)++;
    return LC_OK;
  }
  if (pass == 1 && can_take_add(m, pr, c) &&
      (e == *pp) != (held_inputs(m, e, l) < m->values[m->nodes[e].out[0]].t.nbytes)) {
    (*deferred)++;
    return LC_OK;
  }
  lc_status s;
  if ((s = lc_fold_set_input(m, k, 3, r)) || (s = lc_fold_add_attr(m, k, "_residual", LC_ATTR_INT, 1, 0))) return s;
  *pp = lc_fold_absorb(m, *pp, c, "add");
  m->st.fused_add++;
  return LC_OK;
}

static lc_status fuse_act(lc_model *m, int *pp, int c) {
  lc_gnode *k = &m->nodes[*pp], *a = &m->nodes[c];
  const char *op = a->n.op_type;
  if (a->n.n_outputs != 1 || a->out[0] < 0) return LC_OK;
  int act;
  float lo = -INFINITY, hi = INFINITY, alpha = 0;
  if (!strcmp(op, "Relu")) {
    act = LC_ACT_RELU;
  } else if (!strcmp(op, "LeakyRelu")) {
    act = LC_ACT_LEAKY_RELU;
    alpha = lc_attr_float(&a->n, "alpha", 0.01f);
  } else if (!strcmp(op, "HardSwish")) {
    act = LC_ACT_HARD_SWISH;
  } else if (!strcmp(op, "Clip")) {
    act = LC_ACT_CLIP;
    lo = lc_attr_float(&a->n, "min", lo);
    hi = lc_attr_float(&a->n, "max", hi);
    for (int i = 1; i < a->n.n_inputs && i < 3; i++) {
      if (a->in[i] < 0) continue;
      const float *v = lc_fold_const_f32(m, a, i, 1);
      if (!v) return LC_OK; /* bounds computed at run time */
      if (i == 1) lo = *v;
      else hi = *v;
    }
  } else {
    return LC_OK;
  }
  lc_status s;
  if ((s = lc_fold_add_attr(m, k, "_act", LC_ATTR_INT, act, 0))) return s;
  if (act == LC_ACT_CLIP && ((s = lc_fold_add_attr(m, k, "_act_min", LC_ATTR_FLOAT, 0, lo)) ||
                             (s = lc_fold_add_attr(m, k, "_act_max", LC_ATTR_FLOAT, 0, hi))))
    return s;
  if (act == LC_ACT_LEAKY_RELU && (s = lc_fold_add_attr(m, k, "_act_alpha", LC_ATTR_FLOAT, 0, alpha))) return s;
  char tag[16];
  snprintf(tag, sizeof tag, "%s", op);
  for (char *t = tag; *t; t++) *t = (char)(*t >= 'A' && *t <= 'Z' ? *t + 32 : *t);
  *pp = lc_fold_absorb(m, *pp, c, tag);
  m->st.fused_act++;
  return LC_OK;
}

/* ------------------------------------------------- decomposed HardSwish (Paddle exports) */

/* Value of a constant float scalar input (any rank, one element) in *v; 0 if not one. */
static int const_scalar(lc_model *m, const lc_gnode *g, int k, float *v) {
  const float *p = lc_fold_const_f32(m, g, k, 1);
  if (p) *v = *p;
  return p != NULL;
}

/* The input of binary node g that is not value v, or -1 (also when both are v). */
static int other_input(const lc_gnode *g, int v) {
  if (g->n.n_inputs != 2 || g->n.n_outputs != 1 || g->out[0] < 0 || g->in[0] == g->in[1]) return -1;
  return g->in[0] == v ? g->in[1] : g->in[1] == v ? g->in[0] : -1;
}

static int near(float a, float b) { return fabsf(a - b) <= 1e-6f * fabsf(b); }

/* g scales value v by 1/6 (Div by 6 or Mul by 1/6): 1 if so. */
static int is_sixth(lc_model *m, const lc_gnode *g, int v) {
  float c;
  if (g->dead || other_input(g, v) < 0) return 0;
  if (!strcmp(g->n.op_type, "Div")) return g->in[0] == v && const_scalar(m, g, 1, &c) && c == 6.0f;
  return !strcmp(g->n.op_type, "Mul") && const_scalar(m, g, g->in[0] == v ? 1 : 0, &c) && near(c, 1.0f / 6.0f);
}

/* g multiplies value v by value x: 1 if so. */
static int is_mul_by(const lc_gnode *g, int v, int x) {
  return !g->dead && !strcmp(g->n.op_type, "Mul") && other_input(g, v) == x;
}

int lc_fold_same_shape(const lc_model *m, int a, int b) {
  const lc_tensor *x = &m->values[a].t, *y = &m->values[b].t;
  return x->dtype == LC_DT_FLOAT && y->dtype == x->dtype && x->ndim == y->ndim &&
         !memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->ndim);
}

lc_status lc_fold_become_unary(lc_model *m, int last, const char *op, int x, const int *dead, int nd) {
  lc_gnode *g = &m->nodes[last];
  const char **nm = lc_arena_alloc(m->arena, sizeof(char *));
  int *id = lc_arena_alloc(m->arena, sizeof(int));
  if (!nm || !id) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  nm[0] = m->values[x].t.name;
  id[0] = x;
  g->n.op_type = op;
  g->n.inputs = nm;
  g->in = id;
  g->n.n_inputs = 1;
  g->n.n_attrs = 0;
  if (!(g->op = lc_op_find(op))) return lc_error(LC_ERR_INTERNAL, "model: no %s op", op);
  for (int i = 0; i < nd; i++) {
    m->values[m->nodes[dead[i]].out[0]].n_uses = 0;
    m->nodes[dead[i]].dead = 1;
  }
  return LC_OK;
}

/* Turns node `last` into HardSwish(x) and kills the nodes it replaces (dead[] of count nd). */
static lc_status make_hswish(lc_model *m, int last, int x, const int *dead, int nd) {
  if (!lc_fold_same_shape(m, x, m->nodes[last].out[0])) return LC_OK;
  lc_status s = lc_fold_become_unary(m, last, "HardSwish", x, dead, nd);
  if (!s) m->st.fused_act++;
  return s;
}

/* x * Clip(x + 3, 0, 6) / 6 (the 1/6 as Div or Mul, before or after the product) and
 * x * HardSigmoid(x) with alpha 1/6, beta 0.5 become one HardSwish node. */
static lc_status fuse_hswish_at(lc_model *m, int p) {
  lc_gnode *a = &m->nodes[p];
  int c1, c2, c3;
  float v, lo = -INFINITY, hi = INFINITY;
  if (!strcmp(a->n.op_type, "HardSigmoid")) {
    int x = a->n.n_inputs == 1 ? a->in[0] : -1;
    if (x < 0 || a->out[0] < 0 || !near(lc_attr_float(&a->n, "alpha", 0.2f), 1.0f / 6.0f) ||
        lc_attr_float(&a->n, "beta", 0.5f) != 0.5f || (c1 = lc_fold_sole_consumer(m, a->out[0])) < 0 ||
        !is_mul_by(&m->nodes[c1], a->out[0], x))
      return LC_OK;
    return make_hswish(m, c1, x, (int[]){p}, 1);
  }
  if (strcmp(a->n.op_type, "Add")) return LC_OK;
  int x = a->n.n_inputs == 2 ? a->in[0] : -1, k = 1;
  if (x >= 0 && m->values[x].is_const) x = a->in[1], k = 0;
  if (x < 0 || m->values[x].is_const || other_input(a, x) < 0 || !const_scalar(m, a, k, &v) || v != 3.0f) return LC_OK;
  if ((c1 = lc_fold_sole_consumer(m, a->out[0])) < 0) return LC_OK;
  lc_gnode *cl = &m->nodes[c1];
  if (cl->dead || strcmp(cl->n.op_type, "Clip") || cl->n.n_outputs != 1 || cl->out[0] < 0 || cl->in[0] != a->out[0])
    return LC_OK;
  lo = lc_attr_float(&cl->n, "min", lo);
  hi = lc_attr_float(&cl->n, "max", hi);
  if ((cl->n.n_inputs > 1 && cl->in[1] >= 0 && !const_scalar(m, cl, 1, &lo)) ||
      (cl->n.n_inputs > 2 && cl->in[2] >= 0 && !const_scalar(m, cl, 2, &hi)) || lo != 0.0f || hi != 6.0f)
    return LC_OK;
  if ((c2 = lc_fold_sole_consumer(m, cl->out[0])) < 0) return LC_OK;
  const lc_gnode *g2 = &m->nodes[c2];
  int mul_first = is_mul_by(g2, cl->out[0], x);
  if (!mul_first && !is_sixth(m, g2, cl->out[0])) return LC_OK;
  if ((c3 = lc_fold_sole_consumer(m, g2->out[0])) < 0) return LC_OK;
  const lc_gnode *g3 = &m->nodes[c3];
  if (mul_first ? !is_sixth(m, g3, g2->out[0]) : !is_mul_by(g3, g2->out[0], x)) return LC_OK;
  return make_hswish(m, c3, x, (int[]){p, c1, c2}, 3);
}

/* ------------------------------------------------- per-channel affine into the conv */

/* Per-output-channel values of a constant c broadcast against conv output y ([N, M, ...]):
 * c must be one element or vary only along dim 1. Fills f[M] (as double); 0 if not such. */
int lc_fold_channel_const(lc_model *m, const lc_gnode *g, int k, int y, double *f) {
  if (k >= g->n.n_inputs || g->in[k] < 0) return 0;
  const lc_value *cv = &m->values[g->in[k]];
  const lc_tensor *yt = &m->values[y].t;
  size_t e;
  if (!cv->is_const || cv->t.dtype != LC_DT_FLOAT || cv->t.ndim > yt->ndim || yt->ndim < 3 ||
      lc_tensor_numel(&cv->t, &e))
    return 0;
  int64_t M = yt->dims[1];
  for (int d = 0; d < cv->t.ndim; d++) {
    int od = d + yt->ndim - cv->t.ndim;
    if (cv->t.dims[d] != 1 && (od != 1 || cv->t.dims[d] != M)) return 0;
  }
  if (e != 1 && e != (size_t)M) return 0;
  lc_graph_ensure(m, g->in[k]);
  const float *p = cv->t.data;
  if (!p) return 0;
  for (int64_t o = 0; o < M; o++) f[o] = p[e == 1 ? 0 : o];
  return 1;
}

/* Mul or Add of a per-channel constant after a conv without activation: folded into the
 * weights (lazily, as BN is) and a new bias. */
static lc_status fuse_affine(lc_model *m, int *pp, int c, int is_mul) {
  lc_gnode *k = &m->nodes[*pp], *a = &m->nodes[c];
  int y = k->out[0], r = other_input(a, y);
  if (r < 0 || !lc_fold_same_shape(m, y, a->out[0]) || k->n.n_inputs < 2 || k->in[1] < 0) return LC_OK;
  int wv = k->in[1];
  const lc_value *w = &m->values[wv];
  if (!w->is_const || w->t.dtype != LC_DT_FLOAT || w->t.ndim < 3 || (!w->t.data && w->lazy_src < 0)) return LC_OK;
  int ct = !strcmp(k->n.op_type, "ConvTranspose"); /* weights [C][M/group]..: only a bias Add */
  if (ct && is_mul) return LC_OK;
  int64_t M = ct ? w->t.dims[1] * lc_attr_int(&k->n, "group", 1) : w->t.dims[0];
  if (M != m->values[y].t.dims[1]) return LC_OK;
  int has_b = k->n.n_inputs > 2 && k->in[2] >= 0;
  const float *bias = has_b ? lc_fold_const_f32(m, k, 2, (size_t)M) : NULL;
  if (has_b && !bias) return LC_OK;
  double *f = lc_malloc((size_t)(M ? M : 1) * sizeof(double) * 2);
  if (!f) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  if (!lc_fold_channel_const(m, a, a->in[0] == r ? 0 : 1, y, f)) {
    lc_free(f);
    return LC_OK;
  }
  lc_tensor bt = {.dtype = LC_DT_FLOAT, .ndim = 1, .dims = {M}, .nbytes = (size_t)M * 4};
  int bid, wid = wv;
  lc_status s = lc_fold_new_const(m, m->values[wv].t.name, "_ab", &bt, 0, &bid);
  if (!s) {
    float *nb = m->values[bid].t.data;
    for (int64_t o = 0; o < M; o++) nb[o] = (float)(is_mul ? (bias ? bias[o] : 0.0) * f[o] : (bias ? bias[o] : 0.0) + f[o]);
  }
  if (!s && is_mul) {
    lc_value *wl = &m->values[wv]; /* re-read: new_const may move the values */
    if (wl->lazy_src >= 0) { /* lazy values come from fusion: this conv's own, rescale it */
      for (int64_t o = 0; o < M; o++) wl->lazy_scale[o] *= f[o];
    } else {
      lc_tensor wt = wl->t;
      int src = wl->lazy_src >= 0 ? wl->lazy_src : wv;
      double *sc = lc_malloc((size_t)(M ? M : 1) * sizeof(double));
      if (!sc) s = lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
      for (int64_t o = 0; !s && o < M; o++) sc[o] = f[o] * (wl->lazy_src >= 0 ? wl->lazy_scale[o] : 1.0);
      if (!s && (s = lc_fold_new_const(m, wt.name, "_aw", &wt, 1, &wid))) lc_free(sc);
      if (!s) {
        m->values[wid].lazy_src = src;
        m->values[wid].lazy_scale = sc;
      }
    }
  }
  lc_free(f);
  if (s || (s = lc_fold_set_input(m, k, 1, wid)) || (s = lc_fold_set_input(m, k, 2, bid))) return s;
  *pp = lc_fold_absorb(m, *pp, c, is_mul ? "mul" : "add");
  m->st.fused_bn++;
  return LC_OK;
}

/* Mul / Add of a constant scalar after the activation (Paddle's learnable affine after
 * HardSwish): kept as y = y * _post_mul + _post_add, one pass in the conv's epilogue. */
static lc_status fuse_post(lc_model *m, int *pp, int c, int is_mul) {
  lc_gnode *k = &m->nodes[*pp], *a = &m->nodes[c];
  int y = k->out[0], r = other_input(a, y);
  float v;
  if (r < 0 || !lc_fold_same_shape(m, y, a->out[0]) || !const_scalar(m, a, a->in[0] == r ? 0 : 1, &v)) return LC_OK;
  lc_attr *pm = (lc_attr *)lc_node_attr(&k->n, "_post_mul"), *pa = (lc_attr *)lc_node_attr(&k->n, "_post_add");
  lc_status s;
  if (!pm && (s = lc_fold_add_attr(m, k, "_post_mul", LC_ATTR_FLOAT, 0, 1.0f))) return s;
  if (!pa && (s = lc_fold_add_attr(m, k, "_post_add", LC_ATTR_FLOAT, 0, 0.0f))) return s;
  pm = (lc_attr *)lc_node_attr(&k->n, "_post_mul"); /* add_attr moves the array */
  pa = (lc_attr *)lc_node_attr(&k->n, "_post_add");
  if (is_mul) pm->f *= v, pa->f *= v;
  else pa->f += v;
  *pp = lc_fold_absorb(m, *pp, c, is_mul ? "mul" : "add");
  m->st.fused_act++;
  return LC_OK;
}

/* One pass over the convs, each absorbing what follows it while it can. */
static lc_status fuse_conv_chains(lc_model *m, int pass, int *deferred) {
  for (int p = 0; p < m->n_nodes; p++) {
    int ct = !strcmp(m->nodes[p].n.op_type, "ConvTranspose"); /* BN, residual, activation only */
    if (m->nodes[p].dead || (strcmp(m->nodes[p].n.op_type, "Conv") && !ct) || m->nodes[p].n.n_outputs != 1 ||
        m->nodes[p].out[0] < 0)
      continue;
    int q = p;
    for (;;) {
      lc_gnode *k = &m->nodes[q];
      int c = lc_fold_sole_consumer(m, k->out[0]);
      if (c < 0 || m->nodes[c].dead) break;
      const char *op = m->nodes[c].n.op_type;
      int has_act = lc_node_attr(&k->n, "_act") != NULL, has_res = lc_node_attr(&k->n, "_residual") != NULL;
      int before = q;
      lc_status s = LC_OK;
      int has_post = lc_node_attr(&k->n, "_post_mul") != NULL, plain = !has_act && !has_res && !has_post;
      int is_mul = !strcmp(op, "Mul"), is_add = !strcmp(op, "Add");
      if (!strcmp(op, "BatchNormalization") && plain && ct) s = lc_fold_bn_convt(m, &q, c); /* eager: composes */
      else if (!strcmp(op, "BatchNormalization") && plain && !k->fused[0]) s = fuse_bn(m, &q, c);
      else if ((is_add || (is_mul && !ct)) && plain) s = fuse_affine(m, &q, c, is_mul);
      if (!s && q == before && is_add && plain) s = fuse_add(m, &q, c, pass, deferred);
      else if (!s && q == before && (is_mul || is_add) && !plain && !ct) s = fuse_post(m, &q, c, is_mul);
      else if (!s && q == before && !has_act && !has_post) s = fuse_act(m, &q, c);
      if (s) return s;
      if (q == before) break;
    }
  }
  return LC_OK;
}

lc_status lc_fuse(lc_model *m) {
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_status s;
    if (!m->nodes[p].dead && (s = fuse_hswish_at(m, p))) return s;
  }
  lc_plan_count_uses(m);
  /* A residual Add waits until both chains that could take it reach it (fuse_add). */
  int deferred = 0;
  lc_status s = LC_OK;
  for (int pass = 0; pass < 3 && !s && (pass == 0 || deferred); pass++) {
    deferred = 0;
    s = fuse_conv_chains(m, pass, &deferred);
  }
  if (s) return s;
  lc_plan_count_uses(m);
  return LC_OK;
}
