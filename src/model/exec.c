/* Planning driver and executor: runs the passes in order, binds activations into the arena,
 * initializes each operator once, then runs nodes in order with per-node timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/timer.h"

static lc_status node_error(lc_status s, const lc_gnode *g, const char *what) {
  if (strstr(lc_last_error(), g->n.name) && g->n.name[0]) return s;
  char msg[400];
  snprintf(msg, sizeof msg, "%s", lc_last_error());
  return lc_error(s, "model: %s node '%s' (%s): %s", what, g->n.name, g->n.op_type, msg);
}

static double numel_d(const lc_tensor *t) {
  double n = 1;
  for (int i = 0; i < t->ndim; i++) n *= (double)t->dims[i];
  return n;
}

static double node_flops(const lc_model *m, const lc_gnode *g) {
  if (g->n.n_outputs < 1 || g->out[0] < 0) return 0;
  const lc_tensor *o = &m->values[g->out[0]].t;
  double out = numel_d(o);
  const lc_tensor *w = g->n.n_inputs > 1 && g->in[1] >= 0 ? &m->values[g->in[1]].t : NULL;
  if (!strcmp(g->n.op_type, "Conv") && w && w->ndim >= 3) {
    double k = 1;
    for (int i = 1; i < w->ndim; i++) k *= (double)w->dims[i];
    /* fuse_device.c's SE form: the conv makes N * M gates, then one multiply per output */
    if (lc_attr_int(&g->n, "_se", 0) && o->ndim == 4) return 2 * (double)o->dims[0] * (double)o->dims[1] * k + out;
    return 2 * out * k;
  }
  if (!strcmp(g->n.op_type, "ConvTranspose") && w && w->ndim >= 3 && g->in[0] >= 0) {
    /* every input pixel scatters into [M/group, KH, KW] outputs: W is [C, M/group, KH, KW] */
    double k = 1;
    for (int i = 1; i < w->ndim; i++) k *= (double)w->dims[i];
    return 2 * numel_d(&m->values[g->in[0]].t) * k;
  }
  if ((!strcmp(g->n.op_type, "Gemm") || !strcmp(g->n.op_type, "MatMul")) && g->in[0] >= 0) {
    const lc_tensor *a = &m->values[g->in[0]].t;
    if (a->ndim < 1) return out;
    int64_t k = lc_attr_int(&g->n, "transA", 0) && a->ndim == 2 ? a->dims[0] : a->dims[a->ndim - 1];
    return 2 * out * (double)k;
  }
  return out;
}

lc_status lc_model_plan(lc_model *m, const lc_model_options *o) {
  if (!m) return lc_error(LC_ERR_INVALID_ARG, "model: null model");
  if (m->planned) return lc_error(LC_ERR_STATE, "model: already planned");
  m->planned = 1; /* a failed plan leaves the graph half rewritten: no second try */
  if (o) m->opt = *o;
  else lc_model_options_init(&m->opt);
  m->st.memory_cap = m->opt.max_memory_bytes ? m->opt.max_memory_bytes : lc_model_default_memory_cap();
  lc_context_params cp;
  lc_context_params_init(&cp);
  cp.threads = m->opt.threads;
  cp.workspace_budget = m->opt.workspace_budget;
  if (m->opt.device_tune > 0) cp.cpu_tune = (lc_tune_level)m->opt.device_tune; /* conv routes timed, cached */
  lc_status s = LC_OK;
  double t[8] = {lc_now_ms()};
  if (m->opt.context) m->ctx = m->opt.context; /* the caller's: lc_model_free leaves it */
  else if ((s = lc_context_create(&cp, &m->ctx))) return s;
  m->x.lc = m->ctx;
  m->x.weight_format = m->opt.weight_format;
  m->x.weight_block = m->opt.weight_block;
  m->x.q4_policy = m->opt.q4_policy;
  t[1] = lc_now_ms();
  /* The device's context opens on a thread of its own from here (NVIDIA's driver: ~0.2 s) while
   * this one infers shapes, fuses, folds BN into the weights and reads their pages (and packs them
   * for the device with LOWCONV_CL_STAGE=1); the memory plan waits for it. LOWCONV_DEVICE_OPEN=serial
   * opens it first (measuring); so does a dry run. */
  const char *so = getenv("LOWCONV_DEVICE_OPEN");
  int on_device = m->opt.device && strcmp(m->opt.device, "cpu") != 0;
  int overlap = on_device && !m->opt.dry_run && !(so && !strcmp(so, "serial"));
  if ((s = overlap ? lc_dev_open_start(m, 1) : lc_dev_open(m))) return s;
  t[2] = lc_now_ms();
  int maxio = 1;
  for (int p = 0; p < m->n_nodes; p++) {
    if (m->nodes[p].n.n_inputs + 1 > maxio) maxio = m->nodes[p].n.n_inputs + 1; /* +1: fusion may add one */
    if (m->nodes[p].n.n_outputs > maxio) maxio = m->nodes[p].n.n_outputs;
  }
  m->io_in = lc_arena_alloc(m->arena, (size_t)(maxio + 4) * sizeof(*m->io_in));
  m->io_out = lc_arena_alloc(m->arena, (size_t)(maxio + 4) * sizeof(*m->io_out));
  if (!m->io_in || !m->io_out) s = lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  if (m->st.memory_cap != SIZE_MAX) m->x.scratch_limit = m->st.memory_cap; /* ops run while folding */
  if (!s) s = lc_fold_and_infer(m);
  t[3] = lc_now_ms();
  if (s) {
  } else if (m->opt.no_fusion) {
    lc_plan_count_uses(m);
  } else if (!(s = lc_fuse_layernorm(m)) && !(s = lc_fuse(m)) && !on_device) {
    s = lc_fuse_chains(m); /* CPU plans: the device has no EwChain kernel */
    if (!s) s = lc_plan_layout(m);
  }
  double tw = lc_now_ms(), th = tw, wait_ms = 0.0;
  int staged = 0;
  if (overlap && lc_dev_opening(m)) {
    /* the errors as before: the model's own first, then the device's, then the early folding's */
    lc_status sp = s ? LC_OK : lc_plan_prefold(m);
    char msg[512] = "";
    if (sp) snprintf(msg, sizeof msg, "%s", lc_last_error());
    if (!s && !sp && !m->opt.no_fusion) sp = lc_fuse_device(m), snprintf(msg, sizeof msg, "%s", sp ? lc_last_error() : "");
    /* packed copies of every conv's weights next to the folded ones: at most a quarter of the cap */
    if (!s && !sp) staged = lc_dev_stage(m, m->st.memory_cap == SIZE_MAX ? SIZE_MAX : m->st.memory_cap / 4);
    th = lc_now_ms();
    if (s) {
      lc_dev_free(m); /* waits for the open: the driver's calls cannot be cut short */
      return s;
    }
    s = lc_dev_open_wait(m);
    wait_ms = lc_now_ms() - th;
    if (!s && sp) s = lc_error(sp, "%s", msg);
    if (s) return s;
  } else if (!s && !m->opt.no_fusion && m->dev) {
    s = lc_fuse_device(m);
  }
  if (s) return s;
  if ((s = lc_plan_memory(m))) return s;
  t[4] = lc_now_ms();
  m->layers = lc_arena_alloc(m->arena, ((size_t)m->n_nodes + 1) * sizeof(int));
  if (!m->layers) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int p = 0; p < m->n_nodes; p++)
    if (!m->nodes[p].dead) {
      m->nodes[p].flops = node_flops(m, &m->nodes[p]);
      m->layers[m->n_layers++] = p;
    }
  if (m->opt.dry_run) return LC_OK;
  if ((s = lc_dev_bind(m))) return s; /* device memory first: a device too small fails before any host allocation */
  t[5] = lc_now_ms();
  if (m->st.peak_activation_bytes) {
    m->arena_buf = lc_malloc(m->st.peak_activation_bytes);
    if (!m->arena_buf)
      return lc_error(LC_ERR_NO_MEMORY, "model: out of memory for a %zu-byte activation arena",
                      m->st.peak_activation_bytes);
  }
  for (int i = 0; i < m->n_values; i++) {
    lc_value *v = &m->values[i];
    int live = v->is_input || (v->producer >= 0 && !m->nodes[v->producer].dead);
    if (!v->is_const && live && m->arena_buf) v->t.data = (char *)m->arena_buf + v->offset;
  }
  s = lc_plan_init_ops(m, overlap);
  lc_status sj = lc_dev_collect_join(m); /* before any report of compile time, also on failure */
  if (s || (s = sj) || (s = lc_dev_pin_io(m))) return s;
  if (getenv("LOWCONV_CL_TIMING")) /* where a start goes: the device context, host folding, op creation */
    fprintf(stderr, "lowconv: plan: cpu context %.1f ms, device context %.1f ms%s, folding %.1f ms, fusion + memory "
            "plan %.1f ms, device arena %.1f ms, ops %.1f ms\n", t[1] - t[0], overlap ? th - t[1] + wait_ms : t[2] - t[1],
            overlap ? " (opened beside the host's work)" : "", t[3] - t[2], t[4] - t[3] - (th - tw) - wait_ms,
            t[5] - t[4], lc_now_ms() - t[5]);
  if (overlap && getenv("LOWCONV_CL_TIMING"))
    fprintf(stderr, "lowconv: plan: while the device opened: folding + fusion %.1f ms, weights folded early, device "
            "fusion and %d nodes' weights packed %.1f ms; then waited for the device %.1f ms\n", tw - t[2], staged,
            th - tw, wait_ms);
  if (m->st.scratch_bytes) { /* sized by the ops' workspace, known once they are initialized */
    m->x.scratch = lc_malloc(m->st.scratch_bytes);
    if (!m->x.scratch) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory for %zu bytes of scratch", m->st.scratch_bytes);
    m->x.scratch_bytes = m->st.scratch_bytes;
  }
  if (m->st.memory_cap != SIZE_MAX) m->x.scratch_limit = m->st.memory_cap - lc_model_memory_used(m);
  return LC_OK;
}

static int planned_for_run(const lc_model *m) { return m && m->planned && m->ctx && !m->opt.dry_run; }

lc_status lc_model_set_input(lc_model *m, const char *name, const lc_tensor *src) {
  if (!planned_for_run(m) || !src) return lc_error(LC_ERR_STATE, "model: plan the model before setting inputs");
  int id = lc_graph_find(m, name);
  if (id < 0 || !m->values[id].is_input) return lc_graph_no_input(m, name);
  lc_value *v = &m->values[id];
  int same = src->dtype == v->t.dtype && src->ndim == v->t.ndim && src->nbytes == v->t.nbytes;
  for (int d = 0; same && d < v->t.ndim; d++) same = src->dims[d] == v->t.dims[d];
  if (!same) {
    char want[160] = "", got[160] = "";
    for (int d = 0; d < v->t.ndim; d++)
      snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "x" : "", (long long)v->t.dims[d]);
    for (int d = 0; d < src->ndim && d < LC_MAX_DIMS; d++)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "x" : "", (long long)src->dims[d]);
    return lc_error(LC_ERR_INVALID_ARG, "model: input '%s' expects %s [%s], got %s [%s]", name,
                    lc_dtype_name(v->t.dtype), want, lc_dtype_name(src->dtype), got);
  }
  if (v->t.nbytes) memcpy(v->t.data, src->data, v->t.nbytes);
  return LC_OK;
}

lc_status lc_model_run(lc_model *m) {
  if (!planned_for_run(m)) return lc_error(LC_ERR_STATE, "model: run before a successful plan");
  if (m->dev) return lc_dev_run(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
    double t0 = lc_now_ms();
    lc_status s = g->op->run(&g->n, g->state, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x);
    g->ms = lc_now_ms() - t0;
    if (s) return node_error(s, g, "running");
  }
  return LC_OK;
}

int lc_model_n_layers(const lc_model *m) {
  if (m->layers) return m->n_layers;
  int n = 0;
  for (int p = 0; p < m->n_nodes; p++) n += !m->nodes[p].dead;
  return n;
}

void lc_model_layer(const lc_model *m, int i, lc_layer_info *info) {
  memset(info, 0, sizeof(*info));
  if (i < 0 || i >= lc_model_n_layers(m)) return;
  int from = m->layers ? m->layers[i] : 0;
  for (int p = from; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead || (!m->layers && i-- > 0)) continue;
    info->name = g->n.name;
    info->op_type = g->n.op_type;
    if (g->n.n_outputs > 0 && g->out[0] >= 0) {
      const lc_tensor *t = &m->values[g->out[0]].t;
      info->ndim = t->ndim;
      memcpy(info->dims, t->dims, sizeof(t->dims));
    }
    info->route = g->route ? g->route : "";
    snprintf(info->fused, sizeof info->fused, "%s", g->fused);
    info->ms = g->ms;
    info->flops = g->flops;
    info->workspace_bytes = g->ws;
    info->inplace = g->inplace;
    return;
  }
}

void lc_model_get_stats(const lc_model *m, lc_model_stats *s) { *s = m->st; }
