/* Graph construction: values by name, node wiring, topological order, accessors. */
#include "model/graph.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int ht_insert(int *ht, size_t cap, const lc_value *v, int id) {
  size_t i = hash_str(v[id].t.name) & (cap - 1);
  while (ht[i] >= 0) i = (i + 1) & (cap - 1);
  ht[i] = id;
  return 0;
}

int lc_graph_find(const lc_model *m, const char *name) {
  if (!m->ht_cap || !name) return -1;
  size_t i = hash_str(name) & (m->ht_cap - 1);
  while (m->ht[i] >= 0) {
    if (!strcmp(m->values[m->ht[i]].t.name, name)) return m->ht[i];
    i = (i + 1) & (m->ht_cap - 1);
  }
  return -1;
}

int lc_graph_add_value(lc_model *m, const char *name) {
  if (m->n_values == m->cap_values) {
    int cap = m->cap_values ? m->cap_values * 2 : 64;
    size_t bytes;
    if (cap > (1 << 26) || !lc_mul_sz((size_t)cap, sizeof(lc_value), &bytes)) {
      lc_error(LC_ERR_OVERFLOW, "model: too many values");
      return -1;
    }
    lc_value *nv = lc_malloc(bytes);
    if (!nv) {
      lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
      return -1;
    }
    if (m->n_values) memcpy(nv, m->values, (size_t)m->n_values * sizeof(lc_value));
    lc_free(m->values);
    m->values = nv;
    m->cap_values = cap;
  }
  if ((size_t)(m->n_values + 1) * 2 > m->ht_cap) {
    size_t cap = m->ht_cap ? m->ht_cap * 2 : 128;
    int *ht = lc_malloc(cap * sizeof(int));
    if (!ht) {
      lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
      return -1;
    }
    memset(ht, 0xff, cap * sizeof(int));
    for (int i = 0; i < m->n_values; i++) ht_insert(ht, cap, m->values, i);
    lc_free(m->ht);
    m->ht = ht;
    m->ht_cap = cap;
  }
  char *nm = lc_arena_strndup(m->arena, name, strlen(name));
  if (!nm) {
    lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    return -1;
  }
  int id = m->n_values++;
  lc_value *v = &m->values[id];
  memset(v, 0, sizeof(*v));
  v->t.name = nm;
  v->producer = -1;
  v->alias = -1;
  v->consumer = -1;
  v->lazy_src = -1;
  ht_insert(m->ht, m->ht_cap, m->values, id);
  return id;
}

void lc_graph_ensure(lc_model *m, int id) {
  const lc_value *v = id >= 0 ? &m->values[id] : NULL;
  if (v && v->is_const && !v->owned && v->t.data) lc_onnx_ensure(m->onnx, v->t.data);
}

void lc_graph_ensure_inputs(lc_model *m, const lc_gnode *g) {
  for (int k = 0; k < g->n.n_inputs; k++) lc_graph_ensure(m, g->in[k]);
}

int lc_graph_nbytes(lc_tensor *t) {
  size_t n, es = lc_dtype_size(t->dtype);
  if (!es || lc_tensor_numel(t, &n) || !lc_mul_sz(n, es, &t->nbytes)) return -1;
  return 0;
}

int lc_graph_io(lc_model *m, const lc_gnode *g, const lc_tensor **in, lc_tensor *out) {
  int n = 0;
  for (int i = 0; i < g->n.n_inputs; i++) in[i] = g->in[i] >= 0 ? &m->values[g->in[i]].t : NULL;
  for (int i = 0; i < g->n.n_outputs; i++) {
    if (g->out[i] >= 0) {
      out[i] = m->values[g->out[i]].t;
      n = i + 1;
    } else {
      memset(&out[i], 0, sizeof(out[i]));
      out[i].name = "";
    }
  }
  return n;
}

static lc_status oom(void) { return lc_error(LC_ERR_NO_MEMORY, "model: out of memory"); }

/* Kahn's algorithm over node indices, with a consumer list per value (CSR) so it is O(edges).
 * A node left over sits on a cycle. */
static lc_status topo_sort(lc_model *m, lc_gnode *src, int n) {
  size_t nv = (size_t)m->n_values, ne = 0;
  for (int i = 0; i < n; i++) ne += (size_t)src[i].n.n_inputs;
  int *indeg = lc_calloc((size_t)n + 1, sizeof(int)), *queue = lc_calloc((size_t)n + 1, sizeof(int));
  int *start = lc_calloc(nv + 2, sizeof(int)), *cons = lc_calloc(ne + 1, sizeof(int));
  lc_status s = LC_OK;
  if (!indeg || !queue || !start || !cons) {
    s = oom();
    goto done;
  }
  for (int i = 0; i < n; i++)
    for (int k = 0; k < src[i].n.n_inputs; k++)
      if (src[i].in[k] >= 0 && m->values[src[i].in[k]].producer >= 0) {
        indeg[i]++;
        start[src[i].in[k] + 2]++;
      }
  for (size_t v = 2; v < nv + 2; v++) start[v] += start[v - 1];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < src[i].n.n_inputs; k++)
      if (src[i].in[k] >= 0 && m->values[src[i].in[k]].producer >= 0) cons[start[src[i].in[k] + 1]++] = i;
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (!indeg[i]) queue[tail++] = i;
  while (head < tail) {
    int i = queue[head++];
    m->nodes[m->n_nodes++] = src[i];
    for (int o = 0; o < src[i].n.n_outputs; o++) {
      int v = src[i].out[o];
      if (v < 0) continue;
      for (int c = v ? start[v] : 0; c < start[v + 1]; c++)
        if (--indeg[cons[c]] == 0) queue[tail++] = cons[c];
    }
  }
  if (m->n_nodes != n) {
    for (int i = 0; i < n; i++)
      if (indeg[i] > 0) {
        s = lc_error(LC_ERR_INVALID_ARG, "model: the graph has a cycle through node '%s' (%s)", src[i].n.name,
                     src[i].n.op_type);
        break;
      }
    goto done;
  }
  for (int p = 0; p < n; p++)
    for (int o = 0; o < m->nodes[p].n.n_outputs; o++)
      if (m->nodes[p].out[o] >= 0) m->values[m->nodes[p].out[o]].producer = p;
done:
  lc_free(indeg);
  lc_free(queue);
  lc_free(start);
  lc_free(cons);
  return s;
}

static lc_status build(lc_model *m) {
  lc_onnx_model *o = m->onnx;
  m->arena = &o->arena;
  m->st.ir_version = o->ir_version;
  m->st.opset = o->opset;
  m->st.nodes_loaded = o->n_nodes;
  lc_status s = lc_model_check_opsets(o);
  if (s) return s;
  for (int i = 0; i < o->n_inits; i++) {
    if (lc_graph_find(m, o->inits[i].name) >= 0)
      return lc_error(LC_ERR_INVALID_ARG, "model: initializer '%s' appears twice", o->inits[i].name);
    int id = lc_graph_add_value(m, o->inits[i].name);
    if (id < 0) return LC_ERR_NO_MEMORY;
    const char *nm = m->values[id].t.name;
    m->values[id].t = o->inits[i];
    m->values[id].t.name = nm;
    m->values[id].is_const = m->values[id].shaped = 1;
  }
  m->inputs = lc_arena_alloc(m->arena, ((size_t)o->n_inputs + 1) * sizeof(int));
  m->outputs = lc_arena_alloc(m->arena, ((size_t)o->n_outputs + 1) * sizeof(int));
  lc_gnode *src = lc_arena_alloc(m->arena, ((size_t)o->n_nodes + 1) * sizeof(lc_gnode));
  m->nodes = lc_arena_alloc(m->arena, ((size_t)o->n_nodes + 1) * sizeof(lc_gnode));
  if (!m->inputs || !m->outputs || !src || !m->nodes) return oom();
  for (int i = 0; i < o->n_inputs; i++) {
    const lc_onnx_value_info *vi = &o->inputs[i];
    int id = lc_graph_find(m, vi->name);
    if (id >= 0 && m->values[id].is_const) continue; /* old IR: initializer listed as an input */
    if (id >= 0) return lc_error(LC_ERR_INVALID_ARG, "model: graph input '%s' appears twice", vi->name);
    if ((id = lc_graph_add_value(m, vi->name)) < 0) return LC_ERR_NO_MEMORY;
    lc_value *v = &m->values[id];
    v->is_input = 1;
    v->t.dtype = vi->dtype;
    v->has_decl = vi->has_shape;
    v->t.ndim = vi->ndim;
    for (int d = 0; d < vi->ndim; d++) {
      v->t.dims[d] = vi->dims[d];
      v->dim_param[d] = vi->dim_param[d];
    }
    m->inputs[m->n_inputs++] = id;
  }
  for (int i = 0; i < o->n_nodes; i++) {
    lc_gnode *g = &src[i];
    g->n = o->nodes[i];
    if ((!g->n.domain[0] || !strcmp(g->n.domain, "ai.onnx")) && o->opset > 0) {
      /* the opset as a node attribute: ops whose meaning changed between opsets read it */
      lc_attr *a = lc_arena_alloc(m->arena, ((size_t)g->n.n_attrs + 1) * sizeof(lc_attr));
      if (!a) return oom();
      if (g->n.n_attrs) memcpy(a, g->n.attrs, (size_t)g->n.n_attrs * sizeof(lc_attr));
      memset(&a[g->n.n_attrs], 0, sizeof(lc_attr));
      a[g->n.n_attrs].name = "_opset";
      a[g->n.n_attrs].type = LC_ATTR_INT;
      a[g->n.n_attrs].i = o->opset;
      g->n.attrs = a;
      g->n.n_attrs++;
    }
    g->in = lc_arena_alloc(m->arena, ((size_t)g->n.n_inputs + 1) * sizeof(int));
    g->out = lc_arena_alloc(m->arena, ((size_t)g->n.n_outputs + 1) * sizeof(int));
    if (!g->in || !g->out) return oom();
    int last = -1; /* an absent output before a present one gets a hidden value: ops write all n_out */
    for (int k = 0; k < g->n.n_outputs; k++)
      if (g->n.outputs[k][0]) last = k;
    for (int k = 0; k < g->n.n_outputs; k++) {
      const char *nm = g->n.outputs[k];
      char hidden[32];
      g->out[k] = -1;
      if (k < last && !nm[0]) {
        snprintf(hidden, sizeof hidden, "\001absent.%d.%d", i, k);
        nm = hidden;
      }
      if (!nm[0]) continue;
      if (lc_graph_find(m, nm) >= 0)
        return lc_error(LC_ERR_INVALID_ARG, "model: node '%s' (%s) writes '%s', which already has a value",
                        g->n.name, g->n.op_type, nm);
      int id = lc_graph_add_value(m, nm);
      if (id < 0) return LC_ERR_NO_MEMORY;
      m->values[id].producer = i;
      g->out[k] = id;
    }
  }
  for (int i = 0; i < o->n_nodes; i++) {
    lc_gnode *g = &src[i];
    for (int k = 0; k < g->n.n_inputs; k++) {
      const char *nm = g->n.inputs[k];
      g->in[k] = nm[0] ? lc_graph_find(m, nm) : -1;
      if (nm[0] && g->in[k] < 0)
        return lc_error(LC_ERR_INVALID_ARG,
                        "model: node '%s' (%s) reads '%s', which no node, initializer or graph input provides",
                        g->n.name, g->n.op_type, nm);
    }
  }
  for (int i = 0; i < o->n_outputs; i++) {
    int id = lc_graph_find(m, o->outputs[i].name);
    if (id < 0) return lc_error(LC_ERR_INVALID_ARG, "model: graph output '%s' is never produced", o->outputs[i].name);
    m->values[id].is_output = 1;
    m->outputs[m->n_outputs++] = id;
  }
  return topo_sort(m, src, o->n_nodes);
}

/* ---------------------------------------------------------------- checks and rewrites before shapes */

/* Every node whose op has no implementation, in one message (a model is fixed once, not once per
 * missing op): "operator 'LSTM' (node 'lstm_1') ... is not supported", the first few by name. */
lc_status lc_graph_check_ops(lc_model *m) {
  char list[640] = "";
  int bad = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue; /* weights' DequantizeLinear mapped into codes */
    g->op = (!g->n.domain[0] || !strcmp(g->n.domain, "ai.onnx")) ? lc_op_find(g->n.op_type) : NULL;
    if (g->op) continue;
    int seen = 0; /* one entry per op type, with its first node */
    for (int q = 0; q < p && !seen; q++)
      seen = !m->nodes[q].dead && !m->nodes[q].op && !strcmp(m->nodes[q].n.op_type, g->n.op_type) &&
             !strcmp(m->nodes[q].n.domain, g->n.domain);
    if (seen) continue;
    size_t l = strlen(list);
    if (l + 1 < sizeof list)
      snprintf(list + l, sizeof list - l, "%s'%s%s%s' (node '%s')", bad ? ", " : "", g->n.domain,
               g->n.domain[0] ? "." : "", g->n.op_type, g->n.name);
    bad++;
  }
  if (!bad) return LC_OK;
  if (bad == 1) return lc_error(LC_ERR_UNSUPPORTED, "model: operator %s is not supported", list);
  return lc_error(LC_ERR_UNSUPPORTED, "model: %d operators are not supported: %s", bad, list);
}

/* Input k of g (a constant) replaced by a view of the same values with 1s appended up to `rank`
 * dims ("<name><suffix>", made once), so that numpy broadcasting aligns it as an older rule did. */
static lc_status const_view_rank(lc_model *m, lc_gnode *g, int k, int rank, const char *suffix) {
  char name[256];
  snprintf(name, sizeof name, "%.200s%s", m->values[g->in[k]].t.name, suffix);
  int id = lc_graph_find(m, name);
  if (id < 0) {
    if ((id = lc_graph_add_value(m, name)) < 0) return LC_ERR_NO_MEMORY;
    lc_graph_ensure(m, g->in[k]);
    lc_value *v = &m->values[id], *src = &m->values[g->in[k]];
    const char *nm = v->t.name;
    int n0 = src->t.ndim;
    v->t = src->t; /* a copy (its values): the planner releases src once nothing reads it */
    v->t.name = nm;
    v->t.ndim = rank;
    for (int d = n0; d < rank; d++) v->t.dims[d] = 1;
    v->is_const = v->shaped = 1;
    if (!(v->t.data = lc_malloc(src->t.nbytes ? src->t.nbytes : 1))) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
    if (src->t.nbytes) memcpy(v->t.data, src->t.data, src->t.nbytes);
    v->owned = 1;
  }
  g->in[k] = id;
  g->n.inputs[k] = m->values[id].t.name;
  return LC_OK;
}

/* PRelu slope of shape [C] on an [N, C, ...] input (opset 6 / 7 exporters): per channel, as
 * those runtimes read it, when numpy broadcasting would not align it with dim 1. A constant slope
 * gets a [C, 1, ..] view of the same data, so every backend sees a plain broadcast. */
lc_status lc_graph_prelu_slope(lc_model *m, lc_gnode *g) {
  if (strcmp(g->n.op_type, "PRelu") || g->n.n_inputs != 2 || g->in[0] < 0 || g->in[1] < 0) return LC_OK;
  const lc_tensor *x = &m->values[g->in[0]].t, *sl = &m->values[g->in[1]].t;
  if (!m->values[g->in[1]].is_const || sl->ndim != 1 || x->ndim < 3 || sl->dims[0] != x->dims[1] ||
      sl->dims[0] == x->dims[x->ndim - 1] || sl->dims[0] == 1)
    return LC_OK;
  return const_view_rank(m, g, 1, x->ndim - 1, "_per_channel");
}

/* Opset 6's rules where they differ from numpy's (opset 7 on): a binary op with broadcast = 1 and
 * an axis aligns B with A from that axis, which for a constant B is a view with trailing 1s; a
 * computed B would need a reshape node and is refused. BatchNormalization-6 with spatial = 0
 * (statistics per element) is refused; is_test is what inference means anyway. */
lc_status lc_graph_opset6(lc_model *m, lc_gnode *g) {
  static const char *const bin[] = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"};
  const char *op = g->n.op_type;
  if (!strcmp(op, "BatchNormalization") && lc_attr_int(&g->n, "spatial", 1) == 0)
    return lc_error(LC_ERR_UNSUPPORTED, "model: node '%s' (BatchNormalization, opset 6): spatial = 0 (statistics per "
                    "element) is not supported", g->n.name);
  int is_bin = 0;
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) is_bin |= !strcmp(op, bin[i]);
  if (!is_bin || g->n.n_inputs != 2 || g->in[0] < 0 || g->in[1] < 0 || !lc_attr_int(&g->n, "broadcast", 0) ||
      !lc_node_attr(&g->n, "axis"))
    return LC_OK;
  const lc_tensor *a = &m->values[g->in[0]].t, *b = &m->values[g->in[1]].t;
  int64_t axis = lc_attr_int(&g->n, "axis", 0);
  if (axis < 0) axis += a->ndim;
  if (axis < 0 || axis + b->ndim > a->ndim)
    return lc_error(LC_ERR_INVALID_ARG, "model: node '%s' (%s, opset 6): axis %lld does not fit B (rank %d) into A "
                    "(rank %d)", g->n.name, op, (long long)lc_attr_int(&g->n, "axis", 0), b->ndim, a->ndim);
  int rank = (int)(a->ndim - axis);
  if (b->ndim == rank) return LC_OK; /* numpy aligns it the same way */
  if (!m->values[g->in[1]].is_const)
    return lc_error(LC_ERR_UNSUPPORTED, "model: node '%s' (%s, opset 6): broadcasting a computed B from axis %lld is "
                    "not supported (only constants)", g->n.name, op, (long long)axis);
  char suffix[32];
  snprintf(suffix, sizeof suffix, "_rank%d", rank); /* per rank: two nodes may align one B differently */
  return const_view_rank(m, g, 1, rank, suffix);
}

/* Here, not in exec.c: loading sets the defaults, and exec.c already depends on this file. */
void lc_model_options_init(lc_model_options *o) {
  memset(o, 0, sizeof(*o));
  o->threads = 1;
  o->device_tune = -1; /* the context default (fast) */
}

static lc_status finish_load(lc_onnx_model *o, lc_model **out) {
  lc_model *m = lc_calloc(1, sizeof(*m));
  if (!m) {
    lc_onnx_free(o);
    return oom();
  }
  m->onnx = o;
  lc_model_options_init(&m->opt);
  lc_status s = build(m);
  if (s) {
    lc_model_free(m);
    return s;
  }
  *out = m;
  return LC_OK;
}

/* A protobuf starts with a field tag whose low 3 bits are a wire type (0-5) and the model's first
 * bytes hold small varints, so the start of a text file (all printable) is never a model. */
static int looks_like_text(const unsigned char *p, size_t n) {
  if (n > 64) n = 64;
  for (size_t i = 0; i < n; i++)
    if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t') return 0;
  return n > 0;
}

static lc_status not_onnx(lc_status s, const char *what, const unsigned char *head, size_t n) {
  if (s != LC_ERR_IO || !looks_like_text(head, n)) return s;
  char start[17];
  size_t k = 0;
  for (; k < n && k < 16; k++) start[k] = head[k] < 0x20 ? ' ' : (char)head[k];
  start[k] = 0;
  return lc_error(LC_ERR_IO, "%s is not an ONNX file (it starts with text: '%s')", what, start);
}

lc_status lc_model_load(const char *path, lc_model **out) {
  lc_onnx_model *o;
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "model: null argument");
  *out = NULL;
  lc_status s = lc_onnx_load_file(path, &o);
  if (s == LC_ERR_IO) {
    unsigned char head[65] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, 64, f) : 0;
    if (f) fclose(f);
    char what[300];
    snprintf(what, sizeof what, "'%s'", path);
    return not_onnx(s, what, head, n);
  }
  return s ? s : finish_load(o, out);
}

lc_status lc_model_load_buffer(const void *buf, size_t len, lc_model **out) {
  lc_onnx_model *o;
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "model: null argument");
  *out = NULL;
  lc_status s = lc_onnx_load_buffer(buf, len, &o);
  if (s == LC_ERR_IO && buf) {
    unsigned char head[65] = {0};
    memcpy(head, buf, len < 64 ? len : 64);
    return not_onnx(s, "the buffer", head, len < 64 ? len : 64);
  }
  return s ? s : finish_load(o, out);
}

void lc_model_free(lc_model *m) {
  if (!m) return;
  for (int i = 0; i < m->n_nodes; i++)
    if (m->nodes[i].state && m->nodes[i].op && m->nodes[i].op->fini) m->nodes[i].op->fini(m->nodes[i].state);
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].owned) lc_free(m->values[i].t.data);
  for (int i = 0; i < m->n_values; i++) lc_free(m->values[i].lazy_scale);
  if (m->dev_free) m->dev_free(m); /* exec_device.c's, set when it made a device plan */
  lc_free(m->arena_buf);
  lc_free(m->x.scratch);
  if (m->ctx && m->ctx != m->opt.context) lc_context_destroy(m->ctx);
  lc_free(m->values);
  lc_free(m->ht);
  lc_onnx_free(m->onnx);
  lc_free(m);
}

int lc_model_n_inputs(const lc_model *m) { return m->n_inputs; }
const lc_tensor *lc_model_input(const lc_model *m, int i) {
  return i >= 0 && i < m->n_inputs ? &m->values[m->inputs[i]].t : NULL;
}
int lc_model_n_outputs(const lc_model *m) { return m->n_outputs; }
const lc_tensor *lc_model_output(const lc_model *m, int i) {
  return i >= 0 && i < m->n_outputs ? &m->values[m->outputs[i]].t : NULL;
}

lc_status lc_graph_no_input(const lc_model *m, const char *name) {
  char list[512] = "";
  for (int i = 0; i < m->n_inputs; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s'%s'", i ? ", " : "", m->values[m->inputs[i]].t.name);
  }
  return lc_error(LC_ERR_INVALID_ARG, "model: no input named '%s' (inputs: %s)", name ? name : "(null)", list);
}

const char *lc_model_input_dim_name(const lc_model *m, int i, int d) {
  if (i < 0 || i >= m->n_inputs || d < 0 || d >= LC_MAX_DIMS) return NULL;
  return m->values[m->inputs[i]].dim_param[d];
}

lc_status lc_model_set_input_shape(lc_model *m, const char *name, int ndim, const int64_t *dims) {
  int id = lc_graph_find(m, name);
  if (id < 0 || !m->values[id].is_input) return lc_graph_no_input(m, name);
  if (m->planned) return lc_error(LC_ERR_STATE, "model: input shapes are fixed once planned");
  if (ndim < 0 || ndim > LC_MAX_DIMS) return lc_error(LC_ERR_INVALID_ARG, "model: input '%s': %d dims", name, ndim);
  lc_value *v = &m->values[id];
  if (v->has_decl && v->t.ndim != ndim)
    return lc_error(LC_ERR_INVALID_ARG, "model: input '%s' has %d dims, shape given has %d", name, v->t.ndim, ndim);
  for (int d = 0; d < ndim; d++) {
    if (dims[d] <= 0) return lc_error(LC_ERR_INVALID_ARG, "model: input '%s': dim %d must be positive", name, d);
    if (v->has_decl && v->t.dims[d] >= 0 && v->t.dims[d] != dims[d])
      return lc_error(LC_ERR_INVALID_ARG, "model: input '%s' dim %d is fixed to %lld, shape gives %lld", name, d,
                      (long long)v->t.dims[d], (long long)dims[d]);
  }
  v->t.ndim = ndim;
  for (int d = 0; d < ndim; d++) v->t.dims[d] = dims[d];
  v->shaped = 1;
  return LC_OK;
}
