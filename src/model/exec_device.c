/* The model runner on a device, through the backend interface (backend/backend.h) only:
 * activations in a device arena (the liveness planner's offsets, aligned to the device's
 * sub-buffer alignment, as sub-buffers; split into several buffers when it exceeds the device's
 * largest allocation), every node's device op enqueued back to back with no host
 * synchronisation, the inputs uploaded once and the outputs downloaded once. A node without a
 * device op runs on the CPU between an explicit download of its inputs and upload of its
 * outputs, and is reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "backend/backend.h"
#include "model/graph.h"
#include "model/slots.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/timer.h"

typedef struct lc_model_dev {
  lc_context *ctx;
  const lc_backend_ops *be;
  lc_buffer *chunk;       /* the activations' buffers, each shared by values whose lifetimes do not meet */
  int n_chunks;
  int *slot;              /* per placed value: its buffer in chunk */
  const lc_buffer **vref; /* per value: the buffer it lives in (aliases: the root's), NULL if none */
  lc_backend_op **ops;    /* per node; NULL: the node runs on the CPU */
  char (*what)[96];       /* per node: the kernel, or why it runs on the CPU */
  lc_backend_span *span;  /* per node: profiling marks of the last run */
  double *ms;             /* per node: device ms of the last run */
  const lc_buffer **io;   /* a node's input then output buffers, for one enqueue */
  int maxio, n_values, n_nodes; /* as when bound */
  int fallbacks, kernels;
  size_t weight_bytes, activation_bytes;
  double compile_ms0, tune_ms, last_run_ms, t_collect;
  double t_plan, t_said;  /* plan start, last progress line */
  double enq_ms, wait_ms; /* host time enqueueing, and waiting for the device, over n_runs */
  int n_runs;
  int inited;
  int opened;             /* the context's open was waited for and succeeded */
  void **pin_ptr, **pin_handle; /* pinned host memory of inputs / outputs (host_alloc) */
  int n_pins;
  size_t pin_bytes; /* their bytes */
} lc_model_dev;

static int host_qfc(const lc_model *m, const lc_gnode *g);
static unsigned const_mask(const lc_model *m, const lc_gnode *g);

/* The device's context: created on a thread of its own (async) while the host folds, fuses and
 * packs weights (lc_dev_open_wait joins it), or here and now. */
lc_status lc_dev_open_start(lc_model *m, int async) {
  if (!m->opt.device || !strcmp(m->opt.device, "cpu")) return LC_OK;
  lc_context_params cp;
  lc_context_params_init(&cp);
  lc_status s = lc_device_parse(m->opt.device, &cp);
  if (s || cp.backend == LC_BACKEND_CPU) return s;
  cp.threads = m->opt.threads;
  if (m->opt.device_tune >= 0) cp.tune = (lc_tune_level)m->opt.device_tune;
  lc_model_dev *d = lc_calloc(1, sizeof *d);
  if (!d) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  if ((s = async ? lc_context_create_async(&cp, &d->ctx) : lc_context_create(&cp, &d->ctx))) {
    lc_free(d);
    return s;
  }
  m->dev = d;
  m->dev_free = lc_dev_free;
  d->be = lc_context_backend_ops(d->ctx);
  return LC_OK;
}

lc_status lc_dev_open_wait(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d || d->opened) return LC_OK;
  lc_status s = lc_context_wait(d->ctx);
  if (s) { /* as a synchronous open that failed: no device plan left */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", lc_last_error());
    lc_dev_free(m);
    return lc_error(s, "%s", msg);
  }
  d->opened = 1;
  if (!d->be->op_create || !d->be->limits)
    return lc_error(LC_ERR_UNSUPPORTED, "model: device '%s' (%s backend) cannot run models", m->opt.device, d->be->name);
  d->compile_ms0 = d->be->compile_ms(d->ctx);
  lc_backend_limits lim;
  if ((s = d->be->limits(d->ctx, &lim))) return s;
  m->arena_align = lim.base_align; /* sub-buffer origins must be aligned to it */
  return LC_OK;
}

lc_status lc_dev_open(lc_model *m) {
  lc_status s = lc_dev_open_start(m, 0);
  return s ? s : lc_dev_open_wait(m);
}

int lc_dev_opening(const lc_model *m) { return m->dev && !m->dev->opened; }

/* While the device opens: every node's op notes the weights its init will pack, and they are
 * packed on a few threads (lc_backend_ops.stage_*), so that init only copies them up. A node with
 * inputs not yet folded is left to its init. Returns the nodes noted. Only with
 * LOWCONV_CL_STAGE=1: on the H100's host the copy after the open cost what the packing did (both
 * stream the weights through host memory once more, stop 29 in docs/benchmarks.md), and freeing
 * the images added to it. */
int lc_dev_stage(lc_model *m, size_t limit) {
  lc_model_dev *d = m->dev;
  const char *on = getenv("LOWCONV_CL_STAGE");
  if (!d || d->opened || !d->be->stage_node || !d->be->stage_run || !on || strcmp(on, "1")) return 0;
  int noted = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    int ok = !g->dead && g->n.n_inputs <= 32 && !host_qfc(m, g);
    for (int k = 0; ok && k < g->n.n_inputs; k++)
      if (g->in[k] >= 0 && m->values[g->in[k]].lazy_src >= 0) ok = 0;
    if (!ok) continue;
    lc_graph_ensure_inputs(m, g);
    lc_graph_io(m, g, m->io_in, m->io_out);
    noted += d->be->stage_node(d->ctx, &g->n, m->io_in, g->n.n_inputs, &m->x, const_mask(m, g), p, limit);
  }
  if (noted && d->be->stage_run(d->ctx)) { /* only speed is lost: each init packs its own */
    lc_clear_error();
    noted = 0;
  }
  return noted;
}

static int root_of(const lc_model *m, int v) {
  while (m->values[v].alias >= 0) v = m->values[v].alias;
  return v;
}

/* Values with memory of their own in the arena (not constants, aliases or empty ones). */
static int placed(const lc_model *m, int i) {
  const lc_value *v = &m->values[i];
  int live = v->is_input || (v->producer >= 0 && !m->nodes[v->producer].dead);
  return !v->is_const && live && v->alias < 0 && v->t.nbytes;
}

static lc_status new_buffer(lc_model_dev *d, lc_buffer *t, size_t bytes) {
  t->ctx = d->ctx, t->bytes = bytes;
  lc_status s = d->be->buffer_alloc(t);
  if (s) t->data = NULL;
  return s;
}

/* The activations' buffers: values whose lifetimes do not meet share one (model/slots.c), and
 * every value is a whole buffer, never a view at an offset: NVIDIA's driver spends 70-80 us per
 * launch whose arguments are sub-buffers overlapping other sub-buffers of their parent, 5 us
 * otherwise (bench/gpu/enqueue_probe.c, H200), and a liveness-packed arena is exactly that.
 * No buffer exceeds the device's largest allocation. */
static lc_status lay_out(lc_model *m, const int *ids, int n, const lc_backend_limits *lim) {
  lc_model_dev *d = m->dev;
  lc_slot_item *it = lc_malloc(((size_t)n + 1) * sizeof *it);
  int *slot = lc_malloc(((size_t)n + 1) * sizeof *slot);
  size_t *bytes = lc_malloc(((size_t)n + 1) * sizeof *bytes), total = 0;
  d->chunk = lc_calloc((size_t)n + 1, sizeof *d->chunk);
  lc_status s = it && slot && bytes && d->chunk ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  int big = -1; /* the largest activation, named when it does not fit one buffer */
  for (int j = 0; j < n && !s; j++) {
    const lc_value *v = &m->values[ids[j]];
    if (big < 0 || v->t.nbytes > m->values[ids[big]].t.nbytes) big = j;
    it[j] = (lc_slot_item){v->t.nbytes, v->first, v->last};
  }
  if (!s && big >= 0 && m->values[ids[big]].t.nbytes > lim->max_alloc)
    s = lc_error(LC_ERR_NO_MEMORY, "model: activation '%s' needs %zu bytes, more than the device's largest buffer "
                 "(%zu bytes)", m->values[ids[big]].t.name, m->values[ids[big]].t.nbytes, lim->max_alloc);
  int ns = 0;
  const char *dump = getenv("LOWCONV_SLOTS_DUMP"); /* the lifetimes, for planner experiments */
  for (int j = 0; dump && !s && j < n; j++) fprintf(stderr, "slot-item %zu %d %d\n", it[j].bytes, it[j].first, it[j].last);
  if (!s) s = lc_assign_slots(it, n, slot, bytes, &ns, &total);
  if (!s && total > lim->global_mem) /* before anything is allocated or run */
    s = lc_error(LC_ERR_NO_MEMORY, "model: activations need %zu bytes of device memory, %s has %zu", total,
                 d->be->device_name(d->ctx), lim->global_mem);
  for (int j = 0; j < n && !s; j++) d->slot[ids[j]] = slot[j];
  for (int b = 0; b < ns && !s; b++) {
    if ((s = new_buffer(d, &d->chunk[b], bytes[b]))) break;
    d->n_chunks++;
    d->activation_bytes += bytes[b];
  }
  lc_free(it), lc_free(slot), lc_free(bytes);
  return s;
}

lc_status lc_dev_bind(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d) return LC_OK;
  d->n_values = m->n_values, d->n_nodes = m->n_nodes; /* final now: folding and fusion are done */
  d->t_plan = d->t_said = lc_now_ms();
  d->slot = lc_calloc((size_t)m->n_values + 1, sizeof *d->slot);
  d->vref = lc_calloc((size_t)m->n_values + 1, sizeof *d->vref);
  d->ops = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->ops);
  d->what = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->what);
  d->span = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->span);
  d->ms = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->ms);
  int *ids = lc_calloc((size_t)m->n_values + 1, sizeof *ids);
  lc_status s = LC_OK;
  if (!d->slot || !d->vref || !d->ops || !d->what || !d->span || !d->ms || !ids)
    s = lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  lc_backend_limits lim = {0};
  if (!s) s = d->be->limits(d->ctx, &lim);
  int n = 0;
  for (int i = 0; !s && i < m->n_values; i++)
    if (placed(m, i)) ids[n++] = i;
  if (!s) s = lay_out(m, ids, n, &lim);
  lc_free(ids);
  if (s) return s;
  for (int i = 0; i < m->n_values; i++) {
    int r = root_of(m, i);
    if (placed(m, r) && m->values[i].t.nbytes) d->vref[i] = &d->chunk[d->slot[r]];
  }
  for (int p = 0; p < m->n_nodes; p++) {
    int k = m->nodes[p].n.n_inputs + m->nodes[p].n.n_outputs;
    if (k > d->maxio) d->maxio = k;
  }
  d->io = lc_calloc((size_t)d->maxio + 1, sizeof *d->io);
  return d->io ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
}

/* Weights kept quantized from the file: the device's fc kernels take fp32 B, so the CPU runs it. */
static int host_qfc(const lc_model *m, const lc_gnode *g) {
  return strcmp(g->n.op_type, "Conv") && g->n.n_inputs > 1 && g->in[1] >= 0 && m->values[g->in[1]].t.quant;
}

static unsigned const_mask(const lc_model *m, const lc_gnode *g) {
  unsigned cm = 0;
  for (int k = 0; k < g->n.n_inputs && k < 32; k++)
    if (g->in[k] >= 0 && m->values[g->in[k]].is_const) cm |= 1u << k;
  return cm;
}

/* Every device op created once in the backend's collect mode (it lists the programs of its
 * kernels and of the candidates its tuning will time, touches no weights) and freed; then all
 * those programs build on worker threads in the background, in the order the ops are initialized,
 * while the ops' init runs and waits only for the programs it uses (IResNet-34: 12 programs in 5
 * batches before, each waited for whole). Runs when the weights were folded early (exec.c); a
 * node that fails here is left to its init, which says why. */
int lc_dev_collect_begin(lc_model *m) {
  lc_model_dev *d = m->dev;
  const char *off = getenv("LOWCONV_CL_COLLECT"); /* 0: each conv builds its own (A/B) */
  if (!d || !d->be->collect_begin || !d->be->collect_end || (off && !strcmp(off, "0"))) return 0;
  d->t_collect = lc_now_ms();
  d->be->collect_begin(d->ctx);
  return 1;
}

void lc_dev_collect_node(lc_model *m, lc_gnode *g, int tag) {
  lc_model_dev *d = m->dev;
  if (d->be->collect_node) d->be->collect_node(d->ctx, tag);
  int ready = !g->dead && g->n.n_inputs <= 32 && !host_qfc(m, g);
  for (int k = 0; ready && k < g->n.n_inputs; k++)
    if (g->in[k] >= 0 && m->values[g->in[k]].lazy_src >= 0) ready = 0;
  if (!ready) return;
  lc_graph_ensure_inputs(m, g);
  int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
  lc_backend_op *op = NULL;
  if (!d->be->op_create(d->ctx, &g->n, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x, const_mask(m, g), &op))
    d->be->op_free(op);
}

int lc_dev_node_ready(lc_model *m, int tag) {
  lc_model_dev *d = m->dev;
  return !d || !d->be->node_ready || d->be->node_ready(d->ctx, tag);
}

int lc_dev_build_wait(lc_model *m) {
  lc_model_dev *d = m->dev;
  return d && d->be->node_ready && d->be->node_ready(d->ctx, -1);
}

lc_status lc_dev_collect_end(lc_model *m) {
  lc_model_dev *d = m->dev;
  lc_status s = d->be->collect_end(d->ctx);
  if (getenv("LOWCONV_CL_TIMING"))
    fprintf(stderr, "lowconv: collect pass %.1f ms (programs building in the background)\n", lc_now_ms() - d->t_collect);
  return s;
}

lc_status lc_dev_collect_join(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (d && d->be->stage_drop) d->be->stage_drop(d->ctx, -1); /* weights packed early that no op took */
  return d && d->be->collect_join ? d->be->collect_join(d->ctx) : LC_OK;
}

static lc_status init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed);

/* A node's weights packed early and not taken by its op go at once: an entry outliving its
 * source array could match other weights later allocated at the same address. */
lc_status lc_dev_init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed) {
  lc_status s = init_node(m, g, done, packed);
  if (m->dev->be->stage_drop) m->dev->be->stage_drop(m->dev->ctx, (int)(g - m->nodes));
  return s;
}

static lc_status init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed) {
  lc_model_dev *d = m->dev;
  int p = (int)(g - m->nodes);
  *done = 0, *packed = 0;
  int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
  unsigned cm = const_mask(m, g);
  lc_backend_op *op = NULL;
  int qfc = host_qfc(m, g);
  lc_status s = g->n.n_inputs > 32 ? LC_ERR_UNSUPPORTED
                : qfc ? lc_error(LC_ERR_UNSUPPORTED, "quantized weights from the file")
                      : d->be->op_create(d->ctx, &g->n, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x, cm, &op);
  if (s == LC_ERR_UNSUPPORTED) { /* no device version: the CPU runs it */
    snprintf(d->what[p], sizeof d->what[p], "cpu: %s", lc_last_error());
    g->route = d->what[p];
    d->fallbacks++;
    return LC_OK;
  }
  if (s) return s;
  lc_backend_op_info info;
  d->be->op_describe(op, &info);
  d->ops[p] = op;
  snprintf(d->what[p], sizeof d->what[p], "%s", info.kernel[0] ? info.kernel : info.route);
  g->route = d->what[p];
  d->weight_bytes += info.device_bytes;
  d->kernels += info.launches + (!strcmp(info.route, "view") && !g->inplace);
  m->st.packed_weight_bytes += info.device_bytes;
  d->tune_ms += info.tune_ms;
  d->inited++;
  double t = lc_now_ms();
  if (t - d->t_plan > 1000 && t - d->t_said > 1000) { /* tuning on a cold cache can take a while */
    int live = 0;
    for (int q = 0; q < m->n_nodes; q++) live += !m->nodes[q].dead;
    fprintf(stderr, "lowconv: planning on %s: %d of %d nodes, %.1f s (tuning %.1f s, compiling %.1f s)\n",
            d->be->device_name(d->ctx), d->inited, live, (t - d->t_plan) * 1e-3, d->tune_ms * 1e-3,
            (d->be->compile_ms(d->ctx) - d->compile_ms0) * 1e-3);
    d->t_said = t;
  }
  *packed = info.packed_inputs;
  *done = 1;
  return LC_OK;
}

/* Blocking copy of value id between the host arena and its device buffer. */
static lc_status xfer(lc_model *m, int id, int to_device) {
  lc_model_dev *d = m->dev;
  const lc_value *v = &m->values[id];
  lc_buffer *b = (lc_buffer *)d->vref[id];
  if (v->is_const || !b) return LC_OK;
  return to_device ? d->be->upload(b, 0, v->t.data, v->t.nbytes) : d->be->download(b, 0, v->t.data, v->t.nbytes);
}

static lc_status run_on_host(lc_model *m, lc_gnode *g) {
  lc_status s = m->dev->be->sync(m->dev->ctx); /* the inputs' producers must be done */
  double t0 = lc_now_ms();
  for (int k = 0; k < g->n.n_inputs && !s; k++)
    if (g->in[k] >= 0) s = xfer(m, g->in[k], 0);
  int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
  if (!s) s = g->op->run(&g->n, g->state, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x);
  for (int k = 0; k < g->n.n_outputs && !s; k++)
    if (g->out[k] >= 0) s = xfer(m, g->out[k], 1);
  g->ms = lc_now_ms() - t0;
  return s;
}

#define DEFAULT_FLUSH_US 0.0

lc_status lc_dev_run(lc_model *m) {
  lc_model_dev *d = m->dev;
  const lc_backend_ops *be = d->be;
  lc_status s = LC_OK;
  double t0 = lc_now_ms();
  long n0 = be->launches ? be->launches(d->ctx) : 0;
  const int io = !m->opt.device_no_io || d->n_runs == 0;
  for (int i = 0; io && i < m->n_inputs && !s; i++) {
    const lc_value *v = &m->values[m->inputs[i]];
    lc_buffer *b = (lc_buffer *)d->vref[m->inputs[i]];
    if (b && (s = be->upload_async(b, 0, v->t.data, v->t.nbytes)))
      s = lc_error(s, "model: uploading input '%s': %s", v->t.name, lc_last_error());
  }
  int prof = m->opt.device_profile, queued = 0;
  const char *fe = getenv("LOWCONV_CL_FLUSH"), *fu = getenv("LOWCONV_CL_FLUSH_US");
  int flush_every = fe && *fe ? atoi(fe) : 0;
  double flush_us = fu && *fu ? atof(fu) : DEFAULT_FLUSH_US, pend_us = 0;
  for (int p = 0; p < m->n_nodes && !s; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    if (!d->ops[p]) {
      s = run_on_host(m, g);
      continue;
    }
    const lc_buffer **in = d->io, **out = d->io + g->n.n_inputs;
    for (int k = 0; k < g->n.n_inputs; k++) in[k] = g->in[k] >= 0 ? d->vref[g->in[k]] : NULL;
    for (int k = 0; k < g->n.n_outputs; k++) out[k] = g->out[k] >= 0 ? d->vref[g->out[k]] : NULL;
    s = be->op_enqueue(d->ops[p], in, out, prof ? &d->span[p] : NULL);
    /* Flushes: NVIDIA's driver holds queued kernels back until it has a batch, so a net of large
     * kernels left the GPU idle while the host enqueued; a clFlush costs ~20 us of host time there
     * (PP-OCR rec: 1.24-1.42 ms without, 1.60-1.62 ms flushing every 8 ops). So: flush once the
     * work queued since the last flush is estimated (flops at 10 TFLOP/s, output bytes at 1 TB/s)
     * to take LOWCONV_CL_FLUSH_US; LOWCONV_CL_FLUSH=N: after the first op and every Nth instead. */
    if (flush_us > 0)
      pend_us += (double)g->flops / 1e7 +
                 (double)(g->n.n_outputs > 0 && g->out[0] >= 0 ? m->values[g->out[0]].t.nbytes : 0) / 1e6;
    if (!s && be->flush && (flush_every ? ++queued == 1 || queued % flush_every == 0 : flush_us > 0 && pend_us >= flush_us)) {
      s = be->flush(d->ctx);
      pend_us = 0;
    }
  }
  for (int i = 0; io && i < m->n_outputs && !s; i++) {
    const lc_value *v = &m->values[m->outputs[i]];
    const lc_buffer *b = v->is_const ? NULL : d->vref[m->outputs[i]];
    if (b && (s = be->download_async(b, 0, v->t.data, v->t.nbytes)))
      s = lc_error(s, "model: downloading output '%s': %s", v->t.name, lc_last_error());
  }
  double t1 = lc_now_ms();
  lc_status f = be->sync(d->ctx); /* also when something failed: nothing may still read the host arena */
  if (!s) s = f;
  d->enq_ms += t1 - t0, d->wait_ms += lc_now_ms() - t1, d->n_runs++;
  if (!s && be->launches && !prof) d->kernels = (int)(be->launches(d->ctx) - n0); /* split-K, Winograd: several */
  lc_status t = be->span_ms(d->ctx, d->span, m->n_nodes, d->ms, &d->last_run_ms); /* releases them */
  if (!s) s = t;
  for (int p = 0; !s && prof && p < m->n_nodes; p++)
    if (d->ops[p]) m->nodes[p].ms = d->ms[p];
  return s;
}

/* 1 if value j's alias chain passes through i (j != i). */
static int aliases_through(const lc_model *m, int j, int i) {
  for (int v = m->values[j].alias; v >= 0; v = m->values[v].alias)
    if (v == i) return 1;
  return 0;
}

/* Value i can live in pinned host memory: a model input or output that nothing aliases, whose
 * alias family (its root and every view of it) only device ops read or write: a CPU op may assume
 * the arena's layout. An output that is a view (Sigmoid in place on od96's last conv) qualifies
 * too: on the device its host memory is only the download's target. NVIDIA copies pageable memory
 * through its own staging: od96's 1.6 MB output down 233-256 us against 37 us pinned (H100). */
static int pinnable(const lc_model *m, int i) {
  const lc_model_dev *d = m->dev;
  const lc_value *v = &m->values[i];
  /* no vref: nothing is copied for it (a view of a constant) */
  if (v->is_const || v->t.nbytes < ((size_t)64 << 10) || !v->t.data || !d->vref[i]) return 0;
  int r = root_of(m, i);
  for (int j = 0; j < m->n_values; j++)
    if (j != i && aliases_through(m, j, i)) return 0;
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead || d->ops[p]) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] >= 0 && root_of(m, g->in[k]) == r) return 0;
    for (int k = 0; k < g->n.n_outputs; k++)
      if (g->out[k] >= 0 && root_of(m, g->out[k]) == r) return 0;
  }
  return 1;
}

lc_status lc_dev_pin_io(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d || !d->be->host_alloc || !d->ops) return LC_OK;
  int n = m->n_inputs + m->n_outputs;
  d->pin_ptr = lc_calloc((size_t)n + 1, sizeof *d->pin_ptr);
  d->pin_handle = lc_calloc((size_t)n + 1, sizeof *d->pin_handle);
  if (!d->pin_ptr || !d->pin_handle) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int k = 0; k < n; k++) {
    int id = k < m->n_inputs ? m->inputs[k] : m->outputs[k - m->n_inputs], dup = 0;
    for (int j = 0; j < k; j++) dup |= (j < m->n_inputs ? m->inputs[j] : m->outputs[j - m->n_inputs]) == id;
    if (dup || !pinnable(m, id)) continue;
    lc_value *v = &m->values[id];
    /* Ordinary memory works too: a device without (enough) pinned memory only copies slower. */
    if (d->be->host_alloc(d->ctx, v->t.nbytes, &d->pin_ptr[d->n_pins], &d->pin_handle[d->n_pins])) return LC_OK;
    v->t.data = d->pin_ptr[d->n_pins++];
    d->pin_bytes += v->t.nbytes;
  }
  return LC_OK;
}

void lc_dev_free(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d) return;
  if (d->opened && d->be->sync) d->be->sync(d->ctx); /* nothing in flight may still use what is released below */
  if (d->n_runs && getenv("LOWCONV_CL_TIMING")) /* host-bound or device-bound */
    fprintf(stderr, "lowconv: device runs: %d, host enqueue %.3f ms and wait %.3f ms per run (%d kernels)\n", d->n_runs,
            d->enq_ms / d->n_runs, d->wait_ms / d->n_runs, d->kernels);
  if (d->span) d->be->span_ms(d->ctx, d->span, d->n_nodes, NULL, NULL);
  for (int p = 0; d->ops && p < d->n_nodes; p++)
    if (d->ops[p]) d->be->op_free(d->ops[p]);
  for (int c = d->n_chunks - 1; c >= 0; c--)
    if (d->chunk[c].data) d->be->buffer_free(&d->chunk[c]);
  for (int k = 0; k < d->n_pins; k++) d->be->host_free(d->ctx, d->pin_ptr[k], d->pin_handle[k]);
  lc_free(d->pin_ptr), lc_free(d->pin_handle);
  lc_free(d->chunk), lc_free(d->slot), lc_free(d->vref), lc_free(d->ops), lc_free(d->what), lc_free(d->span);
  lc_free(d->ms), lc_free(d->io);
  lc_context_destroy(d->ctx);
  lc_free(d);
  m->dev = NULL;
}

void lc_model_get_device_stats(const lc_model *m, lc_model_device_stats *s) {
  memset(s, 0, sizeof *s);
  const lc_model_dev *d = m->dev;
  if (!d || !d->be->op_create) return;
  s->device = d->be->device_name(d->ctx);
  s->fallbacks = d->fallbacks, s->kernels = d->kernels;
  s->weight_bytes = d->weight_bytes, s->activation_bytes = d->activation_bytes;
  s->arena_buffers = d->n_chunks;
  s->pinned_bytes = d->pin_bytes;
  s->compile_ms = d->be->compile_ms(d->ctx) - d->compile_ms0;
  s->tune_ms = d->tune_ms;
  s->last_run_ms = d->last_run_ms;
}

lc_status lc_model_device_launch_us(lc_model *m, double *us) {
  *us = 0;
  if (!m || !m->dev || !m->dev->be->launch_us) return lc_error(LC_ERR_STATE, "model: not planned on a device");
  return m->dev->be->launch_us(m->dev->ctx, us);
}

int lc_model_layer_on_host(const lc_model *m, int i) {
  if (!m->dev || !m->dev->ops) return 0;
  for (int p = 0; p < m->n_nodes; p++) {
    if (m->nodes[p].dead || i-- > 0) continue;
    return m->dev->ops[p] == NULL;
  }
  return 0;
}
