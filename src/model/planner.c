/* Memory planner: every activation gets an offset in one arena, chosen by liveness. Buffers are
 * placed largest first at the lowest offset that does not overlap a buffer live at the same
 * time (greedy by size, as in TFLite's arena planner); an elementwise op whose input dies at it
 * writes in place. Also probes conv routes for the plan report and the shared scratch size. */
#include "model/graph.h"
#include "model/qweight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/timer.h"

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
    /* bench --no-io runs again on the input left on the device: nothing may take its place */
    v->last = v->is_output || (v->is_input && m->opt.device_no_io) ? n : v->first;
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
  size_t align = m->arena_align > ARENA_ALIGN ? m->arena_align : ARENA_ALIGN;
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
    sp[nb++].size = lc_round_up(v->t.nbytes ? v->t.nbytes : 1, align);
  }
  qsort(sp, (size_t)nb, sizeof(span), by_size_desc);
  size_t total = 0;
  lc_status s = LC_OK;
  m->st.peak_activation_bytes = 0; /* grows with total, charged against the cap */
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
      size_t usz = lc_round_up(placed[j]->t.nbytes ? placed[j]->t.nbytes : 1, align), end;
      if (placed[j]->offset >= off + sp[b].size) break; /* fits in the gap before it */
      if (lc_add_sz(placed[j]->offset, usz, &end) && end > off) off = end;
    }
    size_t end;
    if (!lc_add_sz(off, sp[b].size, &end)) {
      s = lc_error(LC_ERR_OVERFLOW, "planner: activation arena size overflows");
      break;
    }
    v->offset = off;
    if (end > total) {
      const lc_gnode *g = v->producer >= 0 ? &m->nodes[v->producer] : NULL;
      if ((s = lc_model_charge(m, g, g ? "activation arena" : "activation arena (graph input)", end - total,
                               &m->st.peak_activation_bytes)))
        break;
      total = end;
    }
  }
  lc_free(sp);
  lc_free(placed);
  if (s) return s;
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].alias >= 0) m->values[i].offset = m->values[root_of(m, i)].offset;
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

/* ------------------------------------------------------------------ op init */

/* Gives back a constant's memory once nothing reads it (the state that packed it holds a copy). */
static void release_value(lc_model *m, lc_value *v) {
  if (!v->is_const || v->is_output || !v->t.data) return;
  if (v->t.quant && v->t.quant->in_place) return; /* the conv runs from these mapped codes */
  if (v->owned) {
    lc_free(v->t.data);
    v->owned = 0;
  } else {
    lc_onnx_release(m->onnx, v->t.data, v->t.nbytes);
  }
  v->t.data = NULL;
}

static void unref(lc_model *m, int id) {
  lc_value *v = &m->values[id];
  if (v->pending > 0 && --v->pending == 0) release_value(m, v);
}

typedef struct fold_job {
  const float *ow;
  const unsigned char *src; /* the unaligned file bytes when ow's copy is not filled yet */
  float *nw;
  const double *scale;
  size_t per;
} fold_job;

static int fold_rows(void *arg, size_t o0, size_t o1) {
  const fold_job *j = arg;
  for (size_t o = o0; o < o1; o++)
    for (size_t i = o * j->per; i < (o + 1) * j->per; i++) {
      float w;
      if (j->src) memcpy(&w, j->src + i * sizeof w, sizeof w);
      else w = j->ow[i];
      j->nw[i] = (float)(w * j->scale[o]);
    }
  return 0;
}

/* W_bn = W * f[output channel], in float from a double factor (as folding always did). Read from
 * the file's bytes when W is used only here (its aligned copy is never made), on a few threads:
 * IResNet-34's start spent 100 ms here on the H200's host. */
static lc_status materialize(lc_model *m, int id) {
  lc_value *v = &m->values[id];
  const lc_value *w = &m->values[v->lazy_src];
  if (!w->t.data) return lc_error(LC_ERR_STATE, "model: weights '%s' were released before use", w->t.name);
  const void *src = w->is_const && !w->owned && w->pending == 1 ? lc_onnx_source(m->onnx, w->t.data) : NULL;
  if (!src) lc_graph_ensure(m, v->lazy_src);
  float *nw = lc_malloc(v->t.nbytes ? v->t.nbytes : 1);
  if (!nw) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory for %zu bytes of folded weights", v->t.nbytes);
  size_t oc = (size_t)v->t.dims[0], per = oc ? v->t.nbytes / 4 / oc : 0;
  fold_job j = {w->t.data, src, nw, v->lazy_scale, per};
  lc_parallel_ranges(oc, per ? lc_div_up((size_t)1 << 18, per) : oc, 8, fold_rows, &j);
  v->t.data = nw;
  v->owned = 1;
  lc_free(v->lazy_scale);
  v->lazy_scale = NULL;
  unref(m, v->lazy_src);
  v->lazy_src = -1;
  return LC_OK;
}

static lc_status node_fail(lc_status s, const lc_gnode *g) {
  if (g->n.name[0] && strstr(lc_last_error(), g->n.name)) return s;
  char msg[400];
  snprintf(msg, sizeof msg, "%s", lc_last_error());
  return lc_error(s, "model: init of node '%s' (%s): %s", g->n.name, g->n.op_type, msg);
}

/* Where op creation goes (LOWCONV_CL_TIMING): folding weights, reading mapped pages, the ops. */
typedef struct init_times {
  double fold_ms, ensure_ms, ops_ms, slow_ms[3];
  int slow[3];
} init_times;

static void note_slow(init_times *t, int node, double ms) {
  for (int i = 0; i < 3; i++)
    if (ms > t->slow_ms[i]) {
      for (int j = 2; j > i; j--) t->slow_ms[j] = t->slow_ms[j - 1], t->slow[j] = t->slow[j - 1];
      t->slow_ms[i] = ms, t->slow[i] = node;
      return;
    }
}

static lc_status init_node(lc_model *m, lc_gnode *g, init_times *tm) {
  if (g->dead) return LC_OK;
  lc_status s;
  double t0 = lc_now_ms();
  for (int k = 0; k < g->n.n_inputs; k++)
    if (g->in[k] >= 0 && m->values[g->in[k]].lazy_src >= 0 && (s = materialize(m, g->in[k]))) return node_fail(s, g);
  double t1 = lc_now_ms();
  lc_graph_ensure_inputs(m, g);
  double t2 = lc_now_ms();
  tm->fold_ms += t1 - t0, tm->ensure_ms += t2 - t1;
  if (m->dev) { /* a device plan: the device op, unless the node has none */
    int done = 0;
    unsigned packed = 0;
    if ((s = lc_dev_init_node(m, g, &done, &packed))) return node_fail(s, g);
    for (int k = 0; k < g->n.n_inputs && k < 32; k++)
      if (g->in[k] >= 0 && (packed >> k & 1u)) unref(m, g->in[k]);
    if (done) return LC_OK;
  }
  if (!g->op->init) return LC_OK;
  int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
  m->x.const_inputs = 0;
  for (int k = 0; k < g->n.n_inputs && k < 32; k++)
    if (g->in[k] >= 0 && m->values[g->in[k]].is_const) m->x.const_inputs |= 1u << k;
  if ((s = g->op->init(&g->n, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x, &g->state))) return node_fail(s, g);
  if (!g->op->describe || !g->state) return LC_OK;
  lc_op_info info = {0};
  g->op->describe(g->state, &info);
  g->route = info.route;
  g->ws = info.workspace_bytes;
  /* Packed copies are charged once made (an op's init packs at most a few times its weights);
   * the shared scratch before it is allocated, after this loop. */
  if ((s = lc_model_charge(m, g, "packed weights", info.packed_bytes, &m->st.packed_weight_bytes)) ||
      (info.workspace_bytes > m->st.scratch_bytes &&
       (s = lc_model_charge(m, g, "scratch", info.workspace_bytes - m->st.scratch_bytes, &m->st.scratch_bytes))))
    return s;
  for (int k = 0; k < g->n.n_inputs && k < 32; k++) {
    const lc_value *v = g->in[k] >= 0 ? &m->values[g->in[k]] : NULL;
    if (v && v->t.quant && v->t.quant->in_place) m->st.mapped_code_bytes += v->t.nbytes;
    if (v && (info.packed_inputs >> k & 1u)) unref(m, g->in[k]);
  }
  return LC_OK;
}

/* Initializes every live node. A constant is released as soon as the last node reading
 * it has packed it (and no node reads it at run time), so the fp32 weights, their BN-folded
 * copies and the packed weights never all exist at once. Also fills routes, workspace sizes
 * and packed bytes for the plan report, and the size of the shared scratch. */
static void count_pending(lc_model *m) {
  for (int i = 0; i < m->n_values; i++) m->values[i].pending = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] >= 0) m->values[g->in[k]].pending++;
  }
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].lazy_src >= 0 && m->values[i].pending) m->values[m->values[i].lazy_src].pending++;
  for (int i = 0; i < m->n_values; i++)
    if (!m->values[i].pending) release_value(m, &m->values[i]); /* e.g. weights BN folding replaced */
}

/* The host's share of op init done early: BN-folded weights made and the file's pages read for
 * every live node, while the device's context is being created on another thread (exec.c).
 * Skipped when all the folded copies at once would not fit the memory cap. */
lc_status lc_plan_prefold(lc_model *m) {
  size_t total = 0;
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].lazy_src >= 0 && !lc_add_sz(total, m->values[i].t.nbytes, &total)) return LC_OK;
  if (m->st.memory_cap != SIZE_MAX && total > m->st.memory_cap / 2) return LC_OK;
  count_pending(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] >= 0 && m->values[g->in[k]].lazy_src >= 0) {
        lc_status s = materialize(m, g->in[k]);
        if (s) return node_fail(s, g);
      }
    lc_graph_ensure_inputs(m, g);
  }
  return LC_OK;
}

lc_status lc_plan_init_ops(lc_model *m, int dev_collect) {
  m->st.packed_weight_bytes = m->st.mapped_code_bytes = 0;
  m->st.scratch_bytes = 0;
  count_pending(m);
  /* Largest weights first: a node's transient (its fp32 source next to its packed copy) then
   * meets fewer packed weights of the others; the peak of IResNet-34 f32 drops by the FC's 51 MB. */
  span *order = lc_calloc((size_t)m->n_nodes + 1, sizeof(span));
  if (!order) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int p = 0; p < m->n_nodes; p++) {
    order[p].v = p;
    for (int k = 0; !m->nodes[p].dead && k < m->nodes[p].n.n_inputs; k++)
      if (m->nodes[p].in[k] >= 0 && m->values[m->nodes[p].in[k]].is_const) order[p].size += m->values[m->nodes[p].in[k]].t.nbytes;
  }
  qsort(order, (size_t)m->n_nodes, sizeof(span), by_size_desc);
  lc_status s = LC_OK;
  int collected = 0;
  if (dev_collect && m->dev && lc_dev_collect_begin(m)) {
    for (int i = 0; i < m->n_nodes; i++) lc_dev_collect_node(m, &m->nodes[order[i].v], i);
    s = lc_dev_collect_end(m);
    collected = !s;
  }
  /* After a collect pass, the first node (in size order) whose programs are all built goes
   * next, so that tuning runs while the rest compiles instead of queueing behind one node that
   * waits (IResNet-34's FC waited for the last build; the 35 convs' timing came after it). */
  const char *ord = getenv("LOWCONV_INIT_ORDER"); /* "size": size order only (A/B runs) */
  unsigned char *done = collected && !(ord && !strcmp(ord, "size")) ? lc_calloc((size_t)m->n_nodes + 1, 1) : NULL;
  init_times tm = {0};
  const char *tv = getenv("LOWCONV_CL_TIMING");
  int verbose = tv ? atoi(tv) : 0;
  for (int k = 0, lo = 0; k < m->n_nodes && !s; k++) {
    int i = k;
    if (done) {
      while (done[lo]) lo++; /* the first node not yet initialized */
      for (;;) {
        for (i = lo; i < m->n_nodes && (done[i] || !lc_dev_node_ready(m, i)); i++) {
        }
        if (i < m->n_nodes) break;
        if (!lc_dev_build_wait(m)) { /* none ready and nothing building: the largest goes */
          i = lo;
          break;
        }
      }
      done[i] = 1;
    }
    double t0 = lc_now_ms();
    s = init_node(m, &m->nodes[order[i].v], &tm);
    double ms = lc_now_ms() - t0;
    tm.ops_ms += ms;
    note_slow(&tm, order[i].v, ms);
    if (verbose > 2 && !m->nodes[order[i].v].dead) fprintf(stderr, "lowconv: init %d %s %.2f ms\n", k, m->nodes[order[i].v].n.name, ms);
  }
  lc_free(done);
  lc_free(order);
  if (!s && getenv("LOWCONV_CL_TIMING")) {
    fprintf(stderr, "lowconv: op init %.1f ms: folding weights %.1f ms, reading weights %.1f ms; slowest", tm.ops_ms,
            tm.fold_ms, tm.ensure_ms);
    for (int i = 0; i < 3 && tm.slow_ms[i] > 0; i++)
      fprintf(stderr, " %s (%s) %.1f ms", m->nodes[tm.slow[i]].n.name, m->nodes[tm.slow[i]].n.op_type, tm.slow_ms[i]);
    fputc('\n', stderr);
  }
  return s;
}
