/* Device operators of the model runner: the launch list every op is made of, its enqueue, and
 * the dispatch to the op families (cl_ops_ew.c, cl_ops_data.c, cl_ops_reduce.c, cl_ops_mm.c). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops_int.h"
#include "conv/conv.h"
#include "util/alloc.h"
#include "util/error.h"

lc_status clop_status(const lc_clop *op) { return op->failed ? (lc_status)op->failed : LC_OK; }

lc_status clop_fail(lc_clop *op, const lc_node *n, lc_status s, const char *why) {
  if (!op->failed) op->failed = (int)s;
  return n ? lcop_fail(n, s, "%s", why) : lc_error(s, "%s", why);
}

static void fail_keep(lc_clop *op, lc_status s) {
  if (!op->failed) op->failed = (int)s;
}

int64_t clop_numel(const lc_tensor *t) {
  size_t n;
  if (lc_tensor_numel(t, &n) || n > INT_MAX) return -1;
  return (int64_t)n;
}

const char *clop_esuffix(size_t es) { return es == 1 ? "u8" : es == 4 ? "u32" : es == 8 ? "u64" : NULL; }

static int grow(void **p, int *cap, int need, size_t es) {
  if (need <= *cap) return 1;
  int nc = *cap ? *cap * 2 : 4;
  while (nc < need) nc *= 2;
  void *q = lc_malloc((size_t)nc * es);
  if (!q) return 0;
  if (*cap) memcpy(q, *p, (size_t)*cap * es);
  lc_free(*p);
  *p = q, *cap = nc;
  return 1;
}

static clop_launch *add_launch(lc_clop *op, clop_kind kind) {
  if (op->failed) return NULL;
  if (!grow((void **)&op->l, &op->capl, op->nl + 1, sizeof *op->l)) {
    fail_keep(op, lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory"));
    return NULL;
  }
  clop_launch *l = &op->l[op->nl++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  l->res = -1;
  return l;
}

clop_launch *clop_kernel(lc_clop *op, const char *prog, const char *name, size_t n, size_t lws) {
  return clop_kernel_opt(op, prog, "", name, n, lws);
}

clop_launch *clop_kernel_opt(lc_clop *op, const char *prog, const char *options, const char *name, size_t n,
                             size_t lws) {
  clop_launch *l = add_launch(op, CLOP_KERNEL);
  if (!l) return NULL;
  /* One program per kernel, as the convs build theirs: a network needing one elementwise kernel
   * compiles that one, not the file (ops_ew whole: 0.62 s of IResNet-34's cold start on the H200). */
  lc_status s = lc_cl_kernel_of(op->rt, prog, options, name, name, &l->k);
  if (s) {
    fail_keep(op, s);
    op->nl--;
    return NULL;
  }
  l->name = name;
  l->gws = n;
  l->lws = lws <= op->rt->info.max_wg ? lws : 0;
  return l;
}

clop_launch *clop_copy(lc_clop *op, int in, int out, size_t bytes) {
  clop_launch *l = add_launch(op, CLOP_COPY);
  if (l) l->in = in, l->out = out, l->bytes = bytes;
  return l;
}

static clop_arg *next_arg(lc_clop *op, clop_launch *l) {
  if (!l) return NULL;
  if (l->nargs >= CLOP_MAX_ARGS) {
    fail_keep(op, lc_error(LC_ERR_INTERNAL, "opencl ops: too many kernel arguments"));
    return NULL;
  }
  return &l->a[l->nargs++];
}

void clop_in(lc_clop *op, clop_launch *l, int slot) {
  clop_arg *a = next_arg(op, l);
  if (a) a->kind = CLOP_A_IN, a->slot = slot, a->size = sizeof(cl_mem);
}
void clop_out(lc_clop *op, clop_launch *l, int slot) {
  clop_arg *a = next_arg(op, l);
  if (a) a->kind = CLOP_A_OUT, a->slot = slot, a->size = sizeof(cl_mem);
}
void clop_mem(lc_clop *op, clop_launch *l, cl_mem m) {
  clop_arg *a = next_arg(op, l);
  if (a) a->kind = CLOP_A_MEM, a->mem = m, a->size = sizeof(cl_mem);
}
static void put_val(lc_clop *op, clop_launch *l, const void *v, size_t n) {
  clop_arg *a = next_arg(op, l);
  if (a) a->kind = CLOP_A_VAL, a->size = n, memcpy(a->val, v, n);
}
static void clop_int(lc_clop *op, clop_launch *l, int64_t v) {
  if (v < INT_MIN || v > INT_MAX) fail_keep(op, lc_error(LC_ERR_UNSUPPORTED, "opencl ops: %lld does not fit an int", (long long)v));
  cl_int i = (cl_int)v;
  put_val(op, l, &i, sizeof i);
}
static void clop_float(lc_clop *op, clop_launch *l, float v) { put_val(op, l, &v, sizeof v); }
static void clop_ulong(lc_clop *op, clop_launch *l, uint64_t v) {
  cl_ulong u = v;
  put_val(op, l, &u, sizeof u);
}

void clop_args(lc_clop *op, clop_launch *l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  for (const char *f = fmt; *f; f++) switch (*f) {
    case 'I': clop_in(op, l, va_arg(ap, int)); break;
    case 'O': clop_out(op, l, va_arg(ap, int)); break;
    case 'M': clop_mem(op, l, va_arg(ap, cl_mem)); break;
    case 'N': clop_int(op, l, va_arg(ap, int64_t)); break;
    case 'F': clop_float(op, l, (float)va_arg(ap, double)); break;
    default: clop_ulong(op, l, va_arg(ap, uint64_t)); break;
    }
  va_end(ap);
}

cl_mem clop_upload(lc_clop *op, const void *data, size_t bytes) {
  if (op->failed) return NULL;
  if (!grow((void **)&op->owned, &op->capowned, op->nowned + 1, sizeof *op->owned)) {
    fail_keep(op, lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory"));
    return NULL;
  }
  cl_mem m;
  lc_status s = lc_cl_buffer(op->rt, bytes, bytes ? data : NULL, &m);
  if (s) {
    fail_keep(op, s);
    return NULL;
  }
  op->owned[op->nowned++] = m;
  op->device_bytes += bytes;
  return m;
}

cl_mem clop_ints(lc_clop *op, const int64_t *v, int n) {
  cl_int t[64] = {0}, *p = n <= 64 ? t : lc_malloc((size_t)n * sizeof(cl_int));
  if (!p) {
    fail_keep(op, lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory"));
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    if (v[i] < INT_MIN || v[i] > INT_MAX) fail_keep(op, lc_error(LC_ERR_UNSUPPORTED, "opencl ops: index %lld too large", (long long)v[i]));
    p[i] = (cl_int)v[i];
  }
  cl_mem m = clop_upload(op, p, (size_t)(n > 0 ? n : 1) * sizeof(cl_int));
  if (p != t) lc_free(p);
  return m;
}

lc_status clop_affine(lc_clop *op, int out_slot, int64_t n, float a, float b) {
  clop_launch *l = clop_kernel(op, "ops_ew", "ew_unary", (size_t)n, 64);
  clop_args(op, l, "OONNFF", out_slot, out_slot, (int64_t)n, (int64_t)13, (double)a, (double)b);
  return clop_status(op);
}

/* ------------------------------------------------------------------ create / run */

/* Ops with a device version (some forms of them may still be refused with a reason). */
static const char *const device_ops[] = {
    "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip", "Sqrt", "Reciprocal", "Erf", "Exp",
    "Neg", "Abs", "BatchNormalization", "Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast",
    "Add", "Sub", "Mul", "Div", "PRelu", "Pow", "Concat", "Split", "Slice", "Transpose", "Expand", "Pad", "Gather",
    "Resize", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax",
    "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd", "Softmax", "LogSoftmax",
    "LayerNormalization", "Floor", "Ceil", "Round", "Min", "Max", "Sum", "Mean", "DepthToSpace",
    "SpaceToDepth", "Tile", "Upsample", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
    "Not", "Where", "InstanceNormalization", "GroupNormalization", "ArgMax", "ArgMin",
    "Conv", "ConvTranspose", "Gemm", "MatMul", "UpConcat", NULL};

static int has_device_op(const char *t) {
  for (const char *const *p = device_ops; *p; p++)
    if (!strcmp(*p, t)) return 1;
  return 0;
}

lc_status lc_clop_create(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in,
                         const lc_tensor *out, int n_out, const lc_exec_ctx *x, unsigned cm, lc_clop **res) {
  *res = NULL;
  if (!ctx || ctx->be != &lc_backend_opencl) /* ctx->be, not lc_context_backend: no use circle with api/ */
    return lc_error(LC_ERR_INVALID_ARG, "opencl ops: not an OpenCL context");
  if (!has_device_op(n->op_type)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device kernel for %s", n->op_type);
  lc_clop *op = lc_calloc(1, sizeof *op);
  if (!op) return lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory");
  op->ctx = ctx;
  op->rt = ((lc_cl_ctx *)ctx->dev)->rt;
  op->n_in = n_in, op->n_out = n_out;
  lc_status s = clop_make_ew(op, n, in, n_in, out, n_out, cm);
  if (s == LC_ERR_UNSUPPORTED && !op->nl) s = clop_make_data(op, n, in, n_in, out, n_out, cm);
  if (s == LC_ERR_UNSUPPORTED && !op->nl) s = clop_make_reduce(op, n, in, n_in, out, n_out, cm);
  if (s == LC_ERR_UNSUPPORTED && !op->nl) s = clop_make_mm(op, n, in, n_in, out, n_out, x, cm);
  if (!s) s = clop_status(op);
  if (s) {
    lc_clop_free(op);
    return s;
  }
  *res = op;
  return LC_OK;
}

void lc_clop_free(lc_clop *op) {
  if (!op) return;
  for (int i = 0; i < op->nowned; i++) lc_cl_release_mem(op->rt, &op->owned[i]);
  for (int i = 0; i < 2; i++) lc_conv_destroy(op->convs[i]);
  lc_free(op->owned);
  lc_free(op->l);
  lc_free(op);
}

int lc_clop_n_inputs(const lc_clop *op) { return op->n_in; }
int lc_clop_n_outputs(const lc_clop *op) { return op->n_out; }

void lc_clop_describe(const lc_clop *op, lc_clop_info *info) {
  memset(info, 0, sizeof *info);
  info->route = op->route ? op->route : "";
  info->device_bytes = op->device_bytes;
  info->packed_inputs = op->packed;
  for (int i = 0; i < op->nl; i++) {
    const clop_launch *l = &op->l[i];
    info->launches += l->kind != CLOP_COPY;
    if (l->kind == CLOP_CONV) {
      lc_conv_device_info di;
      if (!lc_conv_device_info_get(l->conv, &di)) {
        snprintf(info->kernel, sizeof info->kernel, "%s", di.kernel);
        info->tune_ms += di.tune_ms;
      }
      info->device_bytes += l->conv->weight_bytes;
    } else if (!info->kernel[0] && l->name) {
      snprintf(info->kernel, sizeof info->kernel, "%s", l->name);
    }
  }
  for (int c = 0; c < 2; c++) { /* a conv that no launch runs (an SE gate's: its weights feed se_scale) */
    int launched = 0;
    for (int i = 0; i < op->nl && op->convs[c]; i++)
      launched |= op->l[i].kind == CLOP_CONV && op->l[i].conv == op->convs[c];
    lc_conv_device_info di;
    if (!op->convs[c] || launched) continue;
    if (!lc_conv_device_info_get(op->convs[c], &di)) info->tune_ms += di.tune_ms;
    info->device_bytes += op->convs[c]->weight_bytes;
  }
}

/* *ev: the launch's last event; *ev0: its first when it is several kernels (a conv's split-K or
 * Winograd stages), else NULL: the profile spans them all. */
static lc_status enqueue_one(lc_clop *op, clop_launch *l, const cl_mem *in, const cl_mem *out, cl_event *ev,
                             cl_event *ev0) {
  lc_cl_rt *rt = op->rt;
  lc_status s = LC_OK;
  if (ev) *ev = NULL;
  if (ev0) *ev0 = NULL;
  if (l->kind == CLOP_COPY) {
    if ((in[l->in] == out[l->out] && l->src_off == l->dst_off) || !l->bytes) return LC_OK;
    cl_int e = rt->cl->EnqueueCopyBuffer(rt->queue, in[l->in], out[l->out], l->src_off, l->dst_off, l->bytes, 0, NULL,
                                         ev);
    if (e && ev) *ev = NULL;
    return e ? lc_cl_fail(rt, e, "copying %zu bytes", l->bytes) : LC_OK;
  }
  if (l->kind == CLOP_CONV) {
    lc_cl_conv *cc = l->conv->dev;
    cl_mem r = l->res >= 0 ? in[l->res] : l->res_mem;
    cc->a.has_res = r != NULL;
    cl_event e0 = NULL, e1 = NULL;
    s = lc_cl_families[cc->cand.family]->enqueue(cc, &cc->cand, in[l->in], out[l->out], r, ev ? &e0 : NULL,
                                                 ev ? &e1 : NULL);
    if (ev && !s) {
      *ev = e1;
      if (e0 != e1 && ev0) *ev0 = e0, e0 = NULL;
    } else if (e1) {
      rt->cl->ReleaseEvent(e1); /* e0 == e1 holds two references */
    }
    if (e0) rt->cl->ReleaseEvent(e0);
    return s;
  }
  size_t sz[CLOP_MAX_ARGS];
  const void *v[CLOP_MAX_ARGS];
  for (int i = 0; i < l->nargs; i++) {
    const clop_arg *a = &l->a[i];
    sz[i] = a->size;
    v[i] = a->kind == CLOP_A_IN ? (const void *)&in[a->slot] : a->kind == CLOP_A_OUT ? (const void *)&out[a->slot]
           : a->kind == CLOP_A_MEM ? (const void *)&a->mem : (const void *)a->val;
  }
  s = lc_cl_set_args(rt, l->k, l->name, l->nargs, sz, v);
  size_t lws = l->lws;
  if (!s) s = lc_cl_enqueue(rt, l->k, l->name, 1, &l->gws, lws ? &lws : NULL, ev);
  return s;
}

lc_status lc_clop_enqueue(lc_clop *op, const cl_mem *in, const cl_mem *out, cl_event *first, cl_event *last) {
  lc_cl_rt *rt = op->rt;
  if (first) *first = NULL;
  if (last) *last = NULL;
  lc_status s = LC_OK;
  pthread_mutex_lock(&rt->lock);
  for (int i = 0; i < op->nl && !s; i++) {
    cl_event ev = NULL, ev0 = NULL;
    s = enqueue_one(op, &op->l[i], in, out, first || last ? &ev : NULL, first || last ? &ev0 : NULL);
    if (!ev) continue;
    if (first && !*first) {
      *first = ev0 ? ev0 : ev;
      if (!ev0) rt->cl->RetainEvent(ev);
    } else if (ev0) {
      rt->cl->ReleaseEvent(ev0);
    }
    if (last) {
      if (*last) rt->cl->ReleaseEvent(*last);
      *last = ev;
    } else {
      rt->cl->ReleaseEvent(ev);
    }
  }
  pthread_mutex_unlock(&rt->lock);
  if (s) {
    if (first && *first) rt->cl->ReleaseEvent(*first), *first = NULL;
    if (last && *last) rt->cl->ReleaseEvent(*last), *last = NULL;
  }
  return s;
}
