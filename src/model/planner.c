/* Memory planner: every activation gets an offset in one arena, chosen by liveness. Buffers are
 * placed largest first at the lowest offset that does not overlap a buffer live at the same
 * time (greedy by size, as in TFLite's arena planner); an elementwise op whose input dies at it
 * writes in place. Also probes conv routes for the plan report and the shared scratch size. */
#include "model/graph.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

#define ARENA_ALIGN 64

void lc_plan_count_uses(lc_model *m) {
  for (int i = 0; i < m->n_values; i++) {
    m->values[i].n_uses = 0;
    m->values[i].consumer = -1;
  }
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++) {
      if (g->in[k] < 0) continue;
      lc_value *v = &m->values[g->in[k]];
      if (v->consumer != p) v->n_uses++; /* Add(x, x) is one consumer */
      v->consumer = p;
    }
  }
}

static int is_activation(const lc_value *v) { return !v->is_const && (v->is_input || v->producer >= 0); }

static int root_of(const lc_model *m, int v) {
  while (m->values[v].alias >= 0) v = m->values[v].alias;
  return v;
}

typedef struct span {
  int v;
  size_t size;
} span;

static int by_size_desc(const void *a, const void *b) {
  const span *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return x->v - y->v;
}

static int by_offset(const void *a, const void *b) {
  const lc_value *const *x = a, *const *y = b;
  return (*x)->offset < (*y)->offset ? -1 : (*x)->offset > (*y)->offset;
}

lc_status lc_plan_memory(lc_model *m) {
  int n = m->n_nodes;
  for (int i = 0; i < m->n_values; i++) {
    lc_value *v = &m->values[i];
    v->alias = -1;
    v->first = v->is_input ? -1 : v->producer;
    v->last = v->is_output ? n : v->first;
  }
  for (int p = 0; p < n; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] >= 0 && m->values[g->in[k]].last < p) m->values[g->in[k]].last = p;
  }
  /* In place: output 0 takes input 0's buffer when that input dies here. Graph inputs are
   * never overwritten, so a model can be run again on the same input. */
  m->st.inplace = 0;
  for (int p = 0; p < n; p++) {
    lc_gnode *g = &m->nodes[p];
    g->inplace = 0;
    if (g->dead || !g->op || !g->op->inplace_ok || g->n.n_inputs < 1 || g->n.n_outputs < 1 || g->in[0] < 0 ||
        g->out[0] < 0)
      continue;
    int a = g->in[0], r = root_of(m, a), o = g->out[0];
    const lc_value *av = &m->values[a];
    if (!is_activation(av) || m->values[r].is_input || m->values[r].last != p ||
        av->t.nbytes != m->values[o].t.nbytes)
      continue;
    int dup = 0; /* x read twice by this node must stay intact */
    for (int k = 1; k < g->n.n_inputs; k++) dup |= g->in[k] >= 0 && root_of(m, g->in[k]) == r;
    if (dup) continue;
    m->values[o].alias = r;
    if (m->values[o].last > m->values[r].last) m->values[r].last = m->values[o].last;
    g->inplace = 1;
    m->st.inplace++;
  }
  int nb = 0;
  span *sp = lc_calloc((size_t)m->n_values + 1, sizeof(span));
  const lc_value **placed = lc_calloc((size_t)m->n_values + 1, sizeof(*placed));
  if (!sp || !placed) {
    lc_free(sp);
    lc_free(placed);
    return lc_error(LC_ERR_NO_MEMORY, "planner: out of memory");
  }
  for (int i = 0; i < m->n_values; i++) {
    const lc_value *v = &m->values[i];
    if (!is_activation(v) || v->alias >= 0 || (!v->is_input && m->nodes[v->producer].dead)) continue;
    sp[nb].v = i;
    sp[nb++].size = lc_round_up(v->t.nbytes ? v->t.nbytes : 1, ARENA_ALIGN);
  }
  qsort(sp, (size_t)nb, sizeof(span), by_size_desc);
  size_t total = 0;
  lc_status s = LC_OK;
  for (int b = 0; b < nb; b++) {
    lc_value *v = &m->values[sp[b].v];
    int np = 0;
    for (int j = 0; j < b; j++) {
      const lc_value *u = &m->values[sp[j].v];
      if (u->first <= v->last && v->first <= u->last) placed[np++] = u;
    }
    qsort(placed, (size_t)np, sizeof(*placed), by_offset);
    size_t off = 0;
    for (int j = 0; j < np; j++) {
      size_t usz = lc_round_up(placed[j]->t.nbytes ? placed[j]->t.nbytes : 1, ARENA_ALIGN), end;
      if (placed[j]->offset >= off + sp[b].size) break; /* fits in the gap before it */
      if (lc_add_sz(placed[j]->offset, usz, &end) && end > off) off = end;
    }
    size_t end;
    if (!lc_add_sz(off, sp[b].size, &end)) {
      s = lc_error(LC_ERR_OVERFLOW, "planner: activation arena size overflows");
      break;
    }
    v->offset = off;
    if (end > total) total = end;
  }
  lc_free(sp);
  lc_free(placed);
  if (s) return s;
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].alias >= 0) m->values[i].offset = m->values[root_of(m, i)].offset;
  m->st.peak_activation_bytes = total;
  if (m->opt.max_activation_bytes && total > m->opt.max_activation_bytes)
    return lc_error(LC_ERR_BUDGET, "planner: activations need %zu bytes, over the limit of %zu", total,
                    m->opt.max_activation_bytes);
  /* weight bytes: constants that planned nodes read, each once */
  m->st.weight_bytes = 0;
  m->st.nodes_planned = 0;
  for (int i = 0; i < m->n_values; i++) m->values[i].first = m->values[i].is_const ? 0 : m->values[i].first;
  for (int p = 0; p < n; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    m->st.nodes_planned++;
    for (int k = 0; k < g->n.n_inputs; k++) {
      lc_value *v = g->in[k] >= 0 ? &m->values[g->in[k]] : NULL;
      if (v && v->is_const && v->first == 0) {
        v->first = 1; /* counted */
        m->st.weight_bytes += v->t.nbytes;
      }
    }
  }
  return LC_OK;
}

/* ------------------------------------------------------------------ conv probe */

static void conv_desc_from_node(const lc_gnode *g, const lc_tensor *w, lc_conv_desc *d) {
  const int64_t *v;
  lc_conv_desc_init(d);
  d->out_channels = w->dims[0];
  d->groups = lc_attr_int(&g->n, "group", 1);
  d->in_channels = w->dims[1] * d->groups;
  d->kernel_h = w->dims[2];
  d->kernel_w = w->dims[3];
  if (lc_attr_ints(&g->n, "strides", &v) == 2) d->stride_h = v[0], d->stride_w = v[1];
  if (lc_attr_ints(&g->n, "dilations", &v) == 2) d->dilation_h = v[0], d->dilation_w = v[1];
  if (lc_attr_ints(&g->n, "pads", &v) == 4) d->pad_top = v[0], d->pad_left = v[1], d->pad_bottom = v[2], d->pad_right = v[3];
  const char *ap = lc_attr_string(&g->n, "auto_pad", "NOTSET");
  d->auto_pad = !strcmp(ap, "VALID") ? LC_PAD_VALID : !strcmp(ap, "SAME_UPPER") ? LC_PAD_SAME_UPPER
                : !strcmp(ap, "SAME_LOWER") ? LC_PAD_SAME_LOWER : LC_PAD_NOTSET;
  d->weights = w->data;
}

/* Creates each 2-D conv once to learn its route, workspace and packed size; the largest
 * workspace sizes the scratch buffer every op shares. Failures leave the route unknown. */
void lc_plan_probe_convs(lc_model *m) {
  m->st.packed_weight_bytes = 0;
  m->st.scratch_bytes = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead || strcmp(g->n.op_type, "Conv") || g->n.n_inputs < 2 || g->in[0] < 0 || g->in[1] < 0) continue;
    const lc_tensor *x = &m->values[g->in[0]].t, *w = &m->values[g->in[1]].t;
    if (x->ndim != 4 || w->ndim != 4 || !m->values[g->in[1]].is_const || w->dtype != LC_DT_FLOAT) continue;
    lc_conv_desc d;
    conv_desc_from_node(g, w, &d);
    d.weight_format = (lc_weight_format)m->opt.weight_format;
    d.block_size = m->opt.weight_block;
    lc_conv *c = NULL;
    lc_conv_shape sh;
    if (lc_conv_create(m->ctx, &d, &c) == LC_OK && lc_conv_prepare(c, x->dims[0], x->dims[2], x->dims[3], &sh) == LC_OK) {
      g->route = lc_route_name(sh.route);
      g->ws = sh.workspace_bytes;
      m->st.packed_weight_bytes += lc_conv_weight_bytes(c);
      if (sh.workspace_bytes > m->st.scratch_bytes) m->st.scratch_bytes = sh.workspace_bytes;
    }
    lc_conv_destroy(c);
  }
}
