/* The model runner on an OpenCL device: activations in one device arena (the liveness planner's
 * offsets, aligned to the device's base-address alignment, as sub-buffers), every node's device
 * op (backend/opencl/cl_ops.h) enqueued back to back with no host synchronisation, the inputs
 * uploaded once and the outputs downloaded once. A node without a device op runs on the CPU
 * between an explicit download of its inputs and upload of its outputs, and is reported. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

#if LC_HAVE_OPENCL
#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops.h"

typedef struct lc_model_dev {
  lc_context *ctx;
  lc_cl_rt *rt;
  cl_mem arena;
  cl_mem *vmem;           /* per value: its sub-buffer (aliases share the root's), NULL if none */
  unsigned char *vown;    /* per value: vmem is this value's own sub-buffer */
  lc_clop **ops;          /* per node; NULL: the node runs on the CPU */
  char (*what)[96];       /* per node: the kernel, or why it runs on the CPU */
  cl_event *ev;           /* per node: first and last event of the last run */
  cl_mem *io;             /* a node's input then output buffers, for one enqueue */
  int maxio, n_values, n_nodes; /* as when bound */
  int fallbacks, kernels;
  size_t weight_bytes, activation_bytes;
  double compile_ms0, tune_ms, last_run_ms;
  double t_plan, t_said;  /* plan start, last progress line */
  int inited;
} lc_model_dev;

lc_status lc_dev_open(lc_model *m) {
  if (!m->opt.device || !strcmp(m->opt.device, "cpu")) return LC_OK;
  lc_context_params cp;
  lc_context_params_init(&cp);
  lc_status s = lc_device_parse(m->opt.device, &cp);
  if (s || cp.backend == LC_BACKEND_CPU) return s;
  cp.threads = m->opt.threads;
  if (m->opt.device_tune >= 0) cp.tune = (lc_tune_level)m->opt.device_tune;
  lc_model_dev *d = lc_calloc(1, sizeof *d);
  if (!d) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  if ((s = lc_context_create(&cp, &d->ctx))) {
    lc_free(d);
    return s;
  }
  m->dev = d;
  m->dev_free = lc_dev_free;
  d->rt = ((lc_cl_ctx *)d->ctx->dev)->rt;
  d->compile_ms0 = d->rt->compile_ms;
  cl_uint bits = 0;
  if (d->rt->cl->GetDeviceInfo(d->rt->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL)) bits = 0;
  m->arena_align = bits / 8 > 64 ? bits / 8 : 64; /* sub-buffer origins must be aligned to it */
  return LC_OK;
}

static int root_of(const lc_model *m, int v) {
  while (m->values[v].alias >= 0) v = m->values[v].alias;
  return v;
}

lc_status lc_dev_bind(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d) return LC_OK;
  d->n_values = m->n_values, d->n_nodes = m->n_nodes; /* final now: folding and fusion are done */
  d->t_plan = d->t_said = lc_now_ms();
  d->vmem = lc_calloc((size_t)m->n_values + 1, sizeof *d->vmem);
  d->vown = lc_calloc((size_t)m->n_values + 1, 1);
  d->ops = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->ops);
  d->what = lc_calloc((size_t)m->n_nodes + 1, sizeof *d->what);
  d->ev = lc_calloc(2 * (size_t)m->n_nodes + 2, sizeof *d->ev);
  if (!d->vmem || !d->vown || !d->ops || !d->what || !d->ev) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  lc_cl_rt *rt = d->rt;
  size_t total = m->st.peak_activation_bytes;
  d->activation_bytes = total;
  if (total > rt->info.global_mem)
    return lc_error(LC_ERR_NO_MEMORY, "model: activations need %zu bytes of device memory, %s has %llu", total,
                    rt->info.device, (unsigned long long)rt->info.global_mem);
  lc_status s;
  if (total && (s = lc_cl_buffer(rt, total, NULL, &d->arena))) return s;
  for (int i = 0; i < m->n_values; i++) {
    lc_value *v = &m->values[i];
    int live = v->is_input || (v->producer >= 0 && !m->nodes[v->producer].dead);
    if (v->is_const || !live || v->alias >= 0 || !v->t.nbytes) continue;
    cl_buffer_region r = {v->offset, v->t.nbytes};
    cl_int e;
    d->vmem[i] = rt->cl->CreateSubBuffer(d->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    if (!d->vmem[i]) return lc_cl_fail(rt, e, "a sub-buffer of %zu bytes at %zu of the activation arena", r.size, r.origin);
    d->vown[i] = 1;
  }
  for (int i = 0; i < m->n_values; i++)
    if (m->values[i].alias >= 0) d->vmem[i] = d->vmem[root_of(m, i)];
  for (int p = 0; p < m->n_nodes; p++) {
    int k = m->nodes[p].n.n_inputs + m->nodes[p].n.n_outputs;
    if (k > d->maxio) d->maxio = k;
  }
  d->io = lc_calloc((size_t)d->maxio + 1, sizeof *d->io);
  return d->io ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
}

lc_status lc_dev_init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed) {
  lc_model_dev *d = m->dev;
  int p = (int)(g - m->nodes);
  *done = 0, *packed = 0;
  int n_out = lc_graph_io(m, g, m->io_in, m->io_out);
  unsigned cm = 0;
  for (int k = 0; k < g->n.n_inputs && k < 32; k++)
    if (g->in[k] >= 0 && m->values[g->in[k]].is_const) cm |= 1u << k;
  lc_clop *op = NULL;
  lc_status s = g->n.n_inputs > 32 ? LC_ERR_UNSUPPORTED
                                   : lc_clop_create(d->ctx, &g->n, m->io_in, g->n.n_inputs, m->io_out, n_out, &m->x, cm, &op);
  if (s == LC_ERR_UNSUPPORTED) { /* no device version: the CPU runs it */
    snprintf(d->what[p], sizeof d->what[p], "cpu: %s", lc_last_error());
    g->route = d->what[p];
    d->fallbacks++;
    return LC_OK;
  }
  if (s) return s;
  lc_clop_info info;
  lc_clop_describe(op, &info);
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
            d->rt->info.device, d->inited, live, (t - d->t_plan) * 1e-3, d->tune_ms * 1e-3,
            (d->rt->compile_ms - d->compile_ms0) * 1e-3);
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
  if (v->is_const || !d->vmem[id] || !v->t.nbytes) return LC_OK;
  return to_device ? lc_cl_write(d->rt, d->vmem[id], 0, v->t.nbytes, v->t.data)
                   : lc_cl_read(d->rt, d->vmem[id], 0, v->t.nbytes, v->t.data);
}

static lc_status run_on_host(lc_model *m, lc_gnode *g) {
  lc_status s = LC_OK;
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

static void release_events(lc_model_dev *d, int n) {
  for (int i = 0; i < 2 * n; i++)
    if (d->ev[i]) d->rt->cl->ReleaseEvent(d->ev[i]), d->ev[i] = NULL;
}

/* Per-node device times from the events, and the run's span. */
static lc_status read_times(lc_model *m) {
  lc_model_dev *d = m->dev;
  cl_ulong lo = 0, hi = 0;
  for (int p = 0; p < m->n_nodes; p++) {
    if (!d->ev[2 * p]) continue;
    cl_ulong t0 = 0, t1 = 0;
    cl_int e = d->rt->cl->GetEventProfilingInfo(d->ev[2 * p], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    if (!e) e = d->rt->cl->GetEventProfilingInfo(d->ev[2 * p + 1], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    if (e) return lc_cl_fail(d->rt, e, "reading the profiling times of node %d", p);
    m->nodes[p].ms = t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
    if (!lo || t0 < lo) lo = t0;
    if (t1 > hi) hi = t1;
  }
  d->last_run_ms = hi > lo ? (double)(hi - lo) * 1e-6 : 0.0;
  return LC_OK;
}

lc_status lc_dev_run(lc_model *m) {
  lc_model_dev *d = m->dev;
  lc_cl_rt *rt = d->rt;
  lc_status s = LC_OK;
  for (int i = 0; i < m->n_inputs && !s; i++) {
    const lc_value *v = &m->values[m->inputs[i]];
    if (!d->vmem[m->inputs[i]] || !v->t.nbytes) continue;
    cl_int e = rt->cl->EnqueueWriteBuffer(rt->queue, d->vmem[m->inputs[i]], CL_FALSE, 0, v->t.nbytes, v->t.data, 0,
                                          NULL, NULL);
    if (e) s = lc_cl_fail(rt, e, "uploading input '%s' (%zu bytes)", v->t.name, v->t.nbytes);
  }
  for (int p = 0; p < m->n_nodes && !s; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    if (!d->ops[p]) {
      s = run_on_host(m, g);
      continue;
    }
    cl_mem *in = d->io, *out = d->io + g->n.n_inputs;
    for (int k = 0; k < g->n.n_inputs; k++) in[k] = g->in[k] >= 0 ? d->vmem[g->in[k]] : NULL;
    for (int k = 0; k < g->n.n_outputs; k++) out[k] = g->out[k] >= 0 ? d->vmem[g->out[k]] : NULL;
    int prof = m->opt.device_profile;
    s = lc_clop_enqueue(d->ops[p], in, out, prof ? &d->ev[2 * p] : NULL, prof ? &d->ev[2 * p + 1] : NULL);
  }
  for (int i = 0; i < m->n_outputs && !s; i++) {
    const lc_value *v = &m->values[m->outputs[i]];
    if (v->is_const || !d->vmem[m->outputs[i]] || !v->t.nbytes) continue;
    cl_int e = rt->cl->EnqueueReadBuffer(rt->queue, d->vmem[m->outputs[i]], CL_FALSE, 0, v->t.nbytes, v->t.data, 0,
                                         NULL, NULL);
    if (e) s = lc_cl_fail(rt, e, "downloading output '%s' (%zu bytes)", v->t.name, v->t.nbytes);
  }
  lc_status f = lc_cl_finish(rt); /* also when something failed: nothing may still read the host arena */
  if (!s) s = f;
  if (!s) s = read_times(m);
  release_events(d, m->n_nodes);
  return s;
}

void lc_dev_free(lc_model *m) {
  lc_model_dev *d = m->dev;
  if (!d) return;
  lc_cl_finish(d->rt); /* nothing in flight may still use what is released below */
  if (d->ev) release_events(d, d->n_nodes);
  for (int p = 0; d->ops && p < d->n_nodes; p++) lc_clop_free(d->ops[p]);
  for (int i = d->vmem ? d->n_values - 1 : -1; i >= 0; i--) /* sub-buffers before their arena, newest first */
    if (d->vown[i]) lc_cl_release_mem(d->rt, &d->vmem[i]);
  if (d->arena) lc_cl_release_mem(d->rt, &d->arena);
  lc_free(d->vmem), lc_free(d->vown), lc_free(d->ops), lc_free(d->what), lc_free(d->ev), lc_free(d->io);
  lc_context_destroy(d->ctx);
  lc_free(d);
  m->dev = NULL;
}

void lc_model_get_device_stats(const lc_model *m, lc_model_device_stats *s) {
  memset(s, 0, sizeof *s);
  const lc_model_dev *d = m->dev;
  if (!d) return;
  s->device = d->rt->info.device;
  s->fallbacks = d->fallbacks, s->kernels = d->kernels;
  s->weight_bytes = d->weight_bytes, s->activation_bytes = d->activation_bytes;
  s->compile_ms = d->rt->compile_ms - d->compile_ms0;
  s->tune_ms = d->tune_ms;
  s->last_run_ms = d->last_run_ms;
}

lc_status lc_model_device_launch_us(lc_model *m, double *us) {
  *us = 0;
  if (!m || !m->dev) return lc_error(LC_ERR_STATE, "model: not planned on a device");
  lc_cl_limits lim;
  lc_status s = lc_cl_limits_get(m->dev->ctx, &lim);
  if (!s) *us = lim.launch_us;
  return s;
}

#else /* no OpenCL backend in this build */

typedef struct lc_model_dev lc_model_dev;

lc_status lc_dev_open(lc_model *m) {
  if (!m->opt.device || !strcmp(m->opt.device, "cpu")) return LC_OK;
  return lc_error(LC_ERR_UNSUPPORTED, "model: device '%s': this build has no OpenCL backend (no CL/cl.h at build time)",
                  m->opt.device);
}
lc_status lc_dev_bind(lc_model *m) { return LC_OK; }
lc_status lc_dev_init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed) {
  *done = 0, *packed = 0;
  return LC_OK;
}
lc_status lc_dev_run(lc_model *m) { return lc_error(LC_ERR_STATE, "model: no device"); }
void lc_dev_free(lc_model *m) {}
void lc_model_get_device_stats(const lc_model *m, lc_model_device_stats *s) { memset(s, 0, sizeof *s); }
lc_status lc_model_device_launch_us(lc_model *m, double *us) {
  *us = 0;
  return lc_error(LC_ERR_STATE, "model: not planned on a device");
}

#endif

int lc_model_layer_on_host(const lc_model *m, int i) {
#if LC_HAVE_OPENCL
  if (!m->dev || !m->dev->ops) return 0;
  for (int p = 0; p < m->n_nodes; p++) {
    if (m->nodes[p].dead || i-- > 0) continue;
    return m->dev->ops[p] == NULL;
  }
#endif
  (void)m, (void)i;
  return 0;
}
