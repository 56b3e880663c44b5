/* Public model API (include/lowconv_model.h): a thin layer over the internal runner (model/model.h). */
#include "lowconv_model.h"

#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "model/ops.h"
#include "model/q4plan.h"
#include "util/alloc.h"
#include "util/error.h"

struct lc_net {
  lc_model *m;
  lc_model_options o;
  int prepared, ran;
  char plan[600]; /* lc_net_weights_plan */
};

const char *lc_elem_type_name(int type) { return lc_dtype_name((lc_dtype)type); }

void lc_net_options_init(lc_net_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->threads = 1;
  o->weight_format = LC_WEIGHTS_F32;
  o->q4_policy = LC_Q4_POLICY_PLAN;
  o->device = "cpu";
}

static lc_status check_options(const lc_net_options *o) {
  if (o->threads < 0 || o->threads > 1024)
    return lc_error(LC_ERR_INVALID_ARG, "net: threads = %d (0..1024)", o->threads);
  if ((unsigned)o->weight_format > LC_WEIGHTS_Q4)
    return lc_error(LC_ERR_INVALID_ARG, "net: weight_format = %d (f32, q8 or q4)", (int)o->weight_format);
  if (o->weight_block < 0 || o->weight_block > 4096)
    return lc_error(LC_ERR_INVALID_ARG, "net: weight_block = %d (0..4096)", o->weight_block);
  if ((unsigned)o->q4_policy > LC_Q4_POLICY_PLAN)
    return lc_error(LC_ERR_INVALID_ARG, "net: q4_policy = %d (mixed, all or plan)", (int)o->q4_policy);
  if ((unsigned)o->layout > LC_NET_LAYOUT_NHWC)
    return lc_error(LC_ERR_INVALID_ARG, "net: layout = %d (auto, nchw or nhwc)", (int)o->layout);
  if (o->device && o->device[0] && strcmp(o->device, "cpu"))
    return lc_error(LC_ERR_UNSUPPORTED, "net: device '%s': backend not built/available (devices: cpu)", o->device);
  if (o->n_shapes < 0 || (o->n_shapes && !o->shapes))
    return lc_error(LC_ERR_INVALID_ARG, "net: %d shapes given without an array", o->n_shapes);
  return LC_OK;
}

static lc_status finish(lc_model *m, const lc_net_options *opt, const lc_q4plan *plan, lc_net **out) {
  lc_net_options dflt;
  lc_net_options_init(&dflt);
  const lc_net_options *o = opt ? opt : &dflt;
  lc_status s = LC_OK;
  for (int i = 0; !s && i < o->n_shapes; i++)
    s = lc_model_set_input_shape(m, o->shapes[i].name, o->shapes[i].ndim, o->shapes[i].dims);
  lc_net *n = s ? NULL : lc_calloc(1, sizeof *n);
  if (!s && !n) s = lc_error(LC_ERR_NO_MEMORY, "net: out of memory");
  if (s) {
    lc_model_free(m);
    return s;
  }
  n->m = m;
  lc_model_options_init(&n->o);
  n->o.threads = o->threads ? o->threads : 1;
  n->o.workspace_budget = o->workspace_budget;
  n->o.weight_format = (int)o->weight_format;
  n->o.weight_block = o->weight_block;
  n->o.q4_policy = o->q4_policy == LC_Q4_POLICY_ALL ? LC_Q4_ALL : LC_Q4_MIXED;
  n->o.max_memory_bytes = o->max_memory;
  n->o.no_fusion = o->no_fusion;
  n->o.layout = (int)o->layout; /* lc_net_layout and lc_model_layout share their values */
  if (plan && (plan->used || plan->quantized)) n->o.weight_format = LC_WEIGHTS_F32; /* the file's codes */
  if (plan)
    snprintf(n->plan, sizeof n->plan, "%s%s", plan->used ? (plan->from_cache ? "plan (cached): " : "plan (made now): ") : "",
             plan->summary);
  *out = n;
  return LC_OK;
}

lc_status lc_net_load(const char *path, const lc_net_options *o, lc_net **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "net: out pointer is NULL");
  *out = NULL;
  if (!path) return lc_error(LC_ERR_INVALID_ARG, "net: path is NULL");
  lc_status s = o ? check_options(o) : LC_OK;
  lc_model *m = NULL;
  lc_q4plan plan;
  int use_plan = o && o->weight_format == LC_WEIGHTS_Q4 && o->q4_policy == LC_Q4_POLICY_PLAN;
  if (!s) s = use_plan ? lc_q4plan_load(path, o->weight_block, &m, &plan) : lc_model_load(path, &m);
  return s ? s : finish(m, o, use_plan ? &plan : NULL, out);
}

const char *lc_net_weights_plan(const lc_net *net) { return net ? net->plan : ""; }

lc_status lc_net_load_memory(const void *data, size_t size, const lc_net_options *o, lc_net **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "net: out pointer is NULL");
  *out = NULL;
  if (!data || !size) return lc_error(LC_ERR_INVALID_ARG, "net: empty buffer");
  lc_status s = o ? check_options(o) : LC_OK;
  lc_model *m = NULL;
  if (!s) s = lc_model_load_buffer(data, size, &m);
  /* no file for the quantizer to read: the quick rule (or the buffer's own quantization) */
  lc_q4plan plan = {0};
  int q4 = o && o->weight_format == LC_WEIGHTS_Q4 && o->q4_policy == LC_Q4_POLICY_PLAN;
  if (!s && q4 && (plan.quantized = lc_model_is_quantized(m)))
    snprintf(plan.summary, sizeof plan.summary, "the file's own (quantized already)");
  else if (q4)
    snprintf(plan.summary, sizeof plan.summary, "quick rule (loaded from memory)");
  return s ? s : finish(m, o, q4 ? &plan : NULL, out);
}

void lc_net_free(lc_net *net) {
  if (!net) return;
  lc_model_free(net->m);
  lc_free(net);
}

int lc_net_n_inputs(const lc_net *net) { return net ? lc_model_n_inputs(net->m) : 0; }
int lc_net_n_outputs(const lc_net *net) { return net ? lc_model_n_outputs(net->m) : 0; }

static lc_status io_info(const lc_net *net, int i, int output, lc_net_io *io) {
  if (!net || !io) return lc_error(LC_ERR_INVALID_ARG, "net: null argument");
  int n = output ? lc_model_n_outputs(net->m) : lc_model_n_inputs(net->m);
  if (i < 0 || i >= n)
    return lc_error(LC_ERR_INVALID_ARG, "net: %s %d out of range (%d %ss)", output ? "output" : "input", i, n,
                    output ? "output" : "input");
  const lc_tensor *t = output ? lc_model_output(net->m, i) : lc_model_input(net->m, i);
  memset(io, 0, sizeof *io);
  io->name = t->name;
  io->type = (lc_elem_type)t->dtype;
  io->ndim = output && !net->prepared ? -1 : t->ndim;
  for (int d = 0; d < t->ndim && d < LC_NET_MAX_DIMS; d++) {
    io->dims[d] = t->dims[d];
    if (!output) io->dim_names[d] = lc_model_input_dim_name(net->m, i, d);
  }
  io->bytes = net->prepared ? t->nbytes : 0;
  return LC_OK;
}

lc_status lc_net_input_info(const lc_net *net, int i, lc_net_io *io) { return io_info(net, i, 0, io); }
lc_status lc_net_output_info(const lc_net *net, int i, lc_net_io *io) { return io_info(net, i, 1, io); }

static int find_io(const lc_net *net, const char *name, int output) {
  if (!net || !name) {
    lc_error(LC_ERR_INVALID_ARG, "net: null argument");
    return -1;
  }
  int n = output ? lc_model_n_outputs(net->m) : lc_model_n_inputs(net->m);
  char list[512] = "";
  for (int i = 0; i < n; i++) {
    const char *nm = (output ? lc_model_output(net->m, i) : lc_model_input(net->m, i))->name;
    if (!strcmp(nm, name)) return i;
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s'%s'", i ? ", " : "", nm);
  }
  lc_error(LC_ERR_INVALID_ARG, "net: no %s named '%s' (%ss: %s)", output ? "output" : "input", name,
           output ? "output" : "input", list);
  return -1;
}

int lc_net_input_index(const lc_net *net, const char *name) { return find_io(net, name, 0); }
int lc_net_output_index(const lc_net *net, const char *name) { return find_io(net, name, 1); }

lc_status lc_net_set_input_shape(lc_net *net, const char *name, int ndim, const int64_t *dims) {
  if (!net || !name || (ndim && !dims)) return lc_error(LC_ERR_INVALID_ARG, "net: null argument");
  if (net->prepared) return lc_error(LC_ERR_STATE, "net: input shapes are fixed by lc_net_prepare");
  return lc_model_set_input_shape(net->m, name, ndim, dims);
}

lc_status lc_net_prepare(lc_net *net) {
  if (!net) return lc_error(LC_ERR_INVALID_ARG, "net: null network");
  if (net->prepared) return lc_error(LC_ERR_STATE, "net: already prepared");
  lc_status s = lc_model_plan(net->m, &net->o);
  net->prepared = s ? -1 : 1; /* a failed plan is final (the graph is half rewritten) */
  return s;
}

static int buffer_index(const lc_net *net, const lc_net_buffer *b, int output) {
  if (b->name) return find_io(net, b->name, output);
  int n = output ? lc_model_n_outputs(net->m) : lc_model_n_inputs(net->m);
  if (b->index < 0 || b->index >= n) {
    lc_error(LC_ERR_INVALID_ARG, "net: %s index %d out of range (%d %ss)", output ? "output" : "input", b->index,
             n, output ? "output" : "input");
    return -1;
  }
  return b->index;
}

lc_status lc_net_run(lc_net *net, const lc_net_buffer *inputs, int n_inputs, lc_net_buffer *outputs,
                     int n_outputs) {
  if (!net || n_inputs < 0 || n_outputs < 0 || (n_inputs && !inputs) || (n_outputs && !outputs))
    return lc_error(LC_ERR_INVALID_ARG, "net: null or negative argument");
  if (net->prepared < 0) return lc_error(LC_ERR_STATE, "net: lc_net_prepare failed; load the model again");
  lc_status s = net->prepared ? LC_OK : lc_net_prepare(net);
  if (s) return s;
  int n_in = lc_model_n_inputs(net->m);
  unsigned char seen[256] = {0};
  if (n_in > (int)sizeof seen) return lc_error(LC_ERR_UNSUPPORTED, "net: more than %zu inputs", sizeof seen);
  for (int k = 0; k < n_inputs; k++) {
    int i = buffer_index(net, &inputs[k], 0);
    if (i < 0) return LC_ERR_INVALID_ARG;
    const lc_tensor *t = lc_model_input(net->m, i);
    if (seen[i]) return lc_error(LC_ERR_INVALID_ARG, "net: input '%s' given twice", t->name);
    seen[i] = 1;
    if (inputs[k].bytes != t->nbytes || (t->nbytes && !inputs[k].data))
      return lc_error(LC_ERR_INVALID_ARG, "net: input '%s' needs %zu bytes (%s), buffer has %zu", t->name,
                      t->nbytes, lc_dtype_name(t->dtype), inputs[k].bytes);
    lc_tensor src = *t;
    src.data = inputs[k].data;
    if ((s = lc_model_set_input(net->m, t->name, &src))) return s;
  }
  for (int i = 0; i < n_in; i++)
    if (!seen[i]) return lc_error(LC_ERR_INVALID_ARG, "net: input '%s' not given", lc_model_input(net->m, i)->name);
  if ((s = lc_model_run(net->m))) return s;
  net->ran = 1;
  for (int k = 0; k < n_outputs; k++) {
    int i = buffer_index(net, &outputs[k], 1);
    if (i < 0) return LC_ERR_INVALID_ARG;
    const lc_tensor *t = lc_model_output(net->m, i);
    if (outputs[k].bytes < t->nbytes || (t->nbytes && !outputs[k].data))
      return lc_error(LC_ERR_INVALID_ARG, "net: output '%s' needs %zu bytes, buffer has %zu", t->name, t->nbytes,
                      outputs[k].bytes);
    if (t->nbytes) memcpy(outputs[k].data, t->data, t->nbytes);
  }
  return LC_OK;
}

const void *lc_net_output_data(const lc_net *net, int i) {
  if (!net || !net->ran || i < 0 || i >= lc_model_n_outputs(net->m)) return NULL;
  return lc_model_output(net->m, i)->data;
}

int lc_net_n_layers(const lc_net *net) { return net && net->prepared > 0 ? lc_model_n_layers(net->m) : 0; }

lc_status lc_net_layer(const lc_net *net, int i, lc_net_layer_info *info) {
  if (!net || !info) return lc_error(LC_ERR_INVALID_ARG, "net: null argument");
  int n = lc_net_n_layers(net);
  if (i < 0 || i >= n) return lc_error(LC_ERR_INVALID_ARG, "net: layer %d out of range (%d layers)", i, n);
  lc_layer_info li;
  lc_model_layer(net->m, i, &li);
  memset(info, 0, sizeof *info);
  info->name = li.name;
  info->op_type = li.op_type;
  info->route = li.route;
  snprintf(info->fused, sizeof info->fused, "%s", li.fused);
  info->ndim = li.ndim;
  memcpy(info->dims, li.dims, sizeof info->dims);
  info->ms = li.ms;
  info->flops = li.flops;
  info->workspace_bytes = li.workspace_bytes;
  return LC_OK;
}

lc_status lc_net_memory(const lc_net *net, lc_net_memory_info *info) {
  if (!net || !info) return lc_error(LC_ERR_INVALID_ARG, "net: null argument");
  if (net->prepared <= 0) return lc_error(LC_ERR_STATE, "net: lc_net_prepare first");
  lc_model_stats st;
  lc_model_get_stats(net->m, &st);
  info->weight_bytes = st.weight_bytes;
  info->packed_weight_bytes = st.packed_weight_bytes;
  info->activation_bytes = st.peak_activation_bytes;
  info->scratch_bytes = st.scratch_bytes;
  return LC_OK;
}
