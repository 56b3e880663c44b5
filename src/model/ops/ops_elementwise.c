/* Unary activations and math (Sqrt, Reciprocal, Erf, Exp, Neg, Abs), Clip, BatchNormalization
 * (inference), Identity, Dropout (inference). Large tensors are split over the context's threads. */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"

typedef enum un_kind {
  UN_RELU, UN_LEAKY, UN_SIGMOID, UN_HSIGMOID, UN_HSWISH, UN_TANH, UN_CLIP,
  UN_SQRT, UN_RECIP, UN_ERF, UN_EXP, UN_NEG, UN_ABS,
  /* a chain's steps with a scalar c = a (EwChain): x + c, x * c, x - c, c - x, x / c, c / x */
  UN_ADDC, UN_MULC, UN_SUBC, UN_RSUBC, UN_DIVC, UN_RDIVC,
  UN_SILU, /* x * Sigmoid(x), the two nodes exporters write for SiLU / Swish */
  UN_COUNT
} un_kind;

/* Below this many elements one thread is faster than waking the pool (an elementwise pass over
 * 64K floats takes ~10-20 us on Zen 4). */
#define PAR_MIN 65536
#define PAR_CHUNK 16384

static int un_kind_of(const char *op, un_kind *k) {
  static const struct { const char *name; un_kind k; } T[] = {
      {"Relu", UN_RELU},       {"LeakyRelu", UN_LEAKY}, {"Sigmoid", UN_SIGMOID}, {"HardSigmoid", UN_HSIGMOID},
      {"HardSwish", UN_HSWISH}, {"Tanh", UN_TANH},      {"Clip", UN_CLIP},       {"Sqrt", UN_SQRT},
      {"Reciprocal", UN_RECIP}, {"Erf", UN_ERF},        {"Exp", UN_EXP},         {"Neg", UN_NEG},
      {"Abs", UN_ABS}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcmp(T[i].name, op) == 0) return *k = T[i].k, 1;
  return 0;
}

static lc_status unary_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  int max_in = strcmp(n->op_type, "Clip") == 0 ? 3 : 1;
  lc_status s = lcop_check_io(n, n_in, 1, max_in, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (s) return s;
  for (int i = 1; i < n_in; i++) {
    size_t c;
    if (in[i] && (in[i]->dtype != LC_DT_FLOAT || lcop_numel(in[i], &c) || c != 1))
      return lcop_fail(n, LC_ERR_UNSUPPORTED, "min/max must be float scalars");
  }
  return lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

/* Applies y = f(x) over n floats; y may equal x. Split per kind so each loop vectorizes. */
static void unary_apply(const lc_vmath_kernels *vm, un_kind k, float a, float b, float *y, const float *x, size_t n) {
  if (!n) return; /* a zero-element tensor may have no buffer: no arithmetic on NULL */
  switch (k) {
  case UN_RELU:
    for (size_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    break;
  case UN_LEAKY:
    for (size_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? a * x[i] : x[i];
    break;
  case UN_SIGMOID:
    vm->sigmoid(y, x, n);
    break;
  case UN_HSIGMOID:
    vm->hard_sigmoid(y, x, n, a, b, 0);
    break;
  case UN_HSWISH:
    vm->hard_sigmoid(y, x, n, 1.0f / 6.0f, 0.5f, 1);
    break;
  case UN_TANH:
    vm->tanh(y, x, n);
    break;
  case UN_CLIP:
    for (size_t i = 0; i < n; i++) {
      float v = x[i] < a ? a : x[i];
      y[i] = v > b ? b : v;
    }
    break;
  case UN_SQRT:
    for (size_t i = 0; i < n; i++) y[i] = sqrtf(x[i]);
    break;
  case UN_RECIP:
    for (size_t i = 0; i < n; i++) y[i] = 1.0f / x[i];
    break;
  case UN_ERF:
    for (size_t i = 0; i < n; i++) y[i] = erff(x[i]);
    break;
  case UN_EXP:
    vm->exp(y, x, n);
    break;
  case UN_NEG:
    for (size_t i = 0; i < n; i++) y[i] = -x[i];
    break;
  case UN_ABS:
    for (size_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
    break;
  case UN_ADDC:
    for (size_t i = 0; i < n; i++) y[i] = x[i] + a;
    break;
  case UN_MULC:
    for (size_t i = 0; i < n; i++) y[i] = x[i] * a;
    break;
  case UN_SUBC:
    for (size_t i = 0; i < n; i++) y[i] = x[i] - a;
    break;
  case UN_RSUBC:
    for (size_t i = 0; i < n; i++) y[i] = a - x[i];
    break;
  case UN_DIVC:
    for (size_t i = 0; i < n; i++) y[i] = x[i] / a;
    break;
  case UN_RDIVC:
    for (size_t i = 0; i < n; i++) y[i] = a / x[i];
    break;
  case UN_SILU: /* y may be x: the sigmoid goes to a small buffer first */
    for (size_t i0 = 0; i0 < n; i0 += 1024) {
      float t[1024];
      size_t m = n - i0 < 1024 ? n - i0 : 1024;
      vm->sigmoid(t, x + i0, m);
      for (size_t i = 0; i < m; i++) y[i0 + i] = x[i0 + i] * t[i];
    }
    break;
  case UN_COUNT:
    break;
  }
}

lc_status lcop_unary_params(const lc_node *n, const lc_tensor *const *in, int n_in, int *kind, float *pa, float *pb) {
  un_kind k;
  if (!un_kind_of(n->op_type, &k)) return lcop_fail(n, LC_ERR_INTERNAL, "no kernel");
  float a = 0.0f, b = 0.0f;
  if (k == UN_LEAKY) a = lc_attr_float(n, "alpha", 0.01f);
  if (k == UN_HSIGMOID) {
    a = lc_attr_float(n, "alpha", 0.2f);
    b = lc_attr_float(n, "beta", 0.5f);
  }
  if (k == UN_CLIP) { /* opset >= 11: inputs; older: attributes */
    a = lc_attr_float(n, "min", -INFINITY);
    b = lc_attr_float(n, "max", INFINITY);
    if (lcop_has(in, n_in, 1)) a = *(const float *)in[1]->data;
    if (lcop_has(in, n_in, 2)) b = *(const float *)in[2]->data;
  }
  *kind = (int)k, *pa = a, *pb = b;
  return LC_OK;
}

/* ---------------------------------------------------------------- EwChain */

/* A chain of single-consumer elementwise nodes fused by the planner (model/fuse_chain.c): one
 * pass over memory, each PAR_CHUNK block put through every step while it is in cache. Steps are
 * attributes _n (count) and _k<i>, _a<i>, _b<i>; every step rounds as its node did. */
#define CHAIN_MAX LCOP_CHAIN_MAX

const char *const lcop_chain_attr[3][LCOP_CHAIN_MAX] = {
    {"_k0", "_k1", "_k2", "_k3", "_k4", "_k5", "_k6", "_k7"},
    {"_a0", "_a1", "_a2", "_a3", "_a4", "_a5", "_a6", "_a7"},
    {"_b0", "_b1", "_b2", "_b3", "_b4", "_b5", "_b6", "_b7"}};

int lcop_chain_silu(void) { return (int)UN_SILU; }

int lcop_chain_kind(const char *op, int scalar_first) {
  static const char *const bin[] = {"Add", "Mul", "Sub", "Div"};
  static const un_kind fwd[] = {UN_ADDC, UN_MULC, UN_SUBC, UN_DIVC}, rev[] = {UN_ADDC, UN_MULC, UN_RSUBC, UN_RDIVC};
  for (int i = 0; i < 4; i++)
    if (!strcmp(op, bin[i])) return (int)(scalar_first ? rev[i] : fwd[i]);
  return -1;
}

typedef struct chain_steps {
  int n;
  un_kind k[CHAIN_MAX];
  float a[CHAIN_MAX], b[CHAIN_MAX];
} chain_steps;

static lc_status chain_read(const lc_node *n, chain_steps *c) {
  int64_t cnt = lc_attr_int(n, "_n", 0);
  if (cnt < 1 || cnt > CHAIN_MAX) return lcop_fail(n, LC_ERR_INVALID_ARG, "an EwChain of %lld steps", (long long)cnt);
  c->n = (int)cnt;
  for (int i = 0; i < c->n; i++) {
    int64_t k = lc_attr_int(n, lcop_chain_attr[0][i], -1);
    if (k < 0 || k >= UN_COUNT)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "EwChain step %d of kind %lld", i, (long long)k);
    c->k[i] = (un_kind)k, c->a[i] = lc_attr_float(n, lcop_chain_attr[1][i], 0.0f), c->b[i] = lc_attr_float(n, lcop_chain_attr[2][i], 0.0f);
  }
  return LC_OK;
}

static lc_status chain_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  chain_steps c;
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (!s) s = chain_read(n, &c);
  return s ? s : lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

typedef struct chain_job {
  const lc_vmath_kernels *vm;
  const chain_steps *c;
  float *y;
  const float *x;
  size_t n;
} chain_job;

static void chain_task(void *arg, size_t task, int thread) {
  const chain_job *j = arg;
  size_t i0 = task * PAR_CHUNK, m = j->n - i0 < PAR_CHUNK ? j->n - i0 : PAR_CHUNK;
  (void)thread;
  for (int s = 0; s < j->c->n; s++)
    unary_apply(j->vm, j->c->k[s], j->c->a[s], j->c->b[s], j->y + i0, s ? j->y + i0 : j->x + i0, m);
}

/* The steps over in[0] into out, in PAR_CHUNK blocks, on the context's threads when large. */
static lc_status run_steps(const lc_node *n, const chain_steps *c, const lc_tensor *in, lc_tensor *out,
                           lc_exec_ctx *x) {
  size_t cnt;
  if (lcop_numel(in, &cnt)) return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  chain_job j = {lcop_vm(x), c, out->data, in->data, cnt};
  size_t tasks = (cnt + PAR_CHUNK - 1) / PAR_CHUNK;
  if (cnt < PAR_MIN || lcop_threads(x) < 2)
    for (size_t t = 0; t < tasks; t++) chain_task(&j, t, 0);
  else
    lcop_parallel(x, tasks, chain_task, &j);
  return LC_OK;
}

static lc_status chain_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  chain_steps c;
  (void)st, (void)n_in, (void)n_out;
  lc_status s = chain_read(n, &c);
  return s ? s : run_steps(n, &c, in[0], out, x);
}

/* A unary node: a chain of one step. */
static lc_status unary_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  int ki;
  chain_steps c = {1, {UN_RELU}, {0.0f}, {0.0f}};
  (void)st, (void)n_out;
  lc_status s = lcop_unary_params(n, in, n_in, &ki, &c.a[0], &c.b[0]);
  if (s) return s;
  c.k[0] = (un_kind)ki;
  return run_steps(n, &c, in[0], out, x);
}

/* ---------------------------------------------------------------- BatchNormalization */

static lc_status bn_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 5, 5, n_out, 1, 3);
  for (int i = 0; !s && i < 5; i++) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  if (s) return s;
  if (n_out > 1 || lc_attr_int(n, "training_mode", 0) != 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "training mode (extra outputs) is not supported");
  if (in[0]->ndim < 2) return lcop_fail(n, LC_ERR_INVALID_ARG, "X must have rank >= 2");
  for (int i = 1; i < 5; i++)
    if (in[i]->ndim != 1 || in[i]->dims[0] != in[0]->dims[1])
      return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d must be [C] with C=%lld", i, (long long)in[0]->dims[1]);
  return lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

typedef struct bn_job {
  const float *X, *scale, *bias, *mean, *var;
  float *Y;
  float eps;
  size_t C, inner;
} bn_job;

static void bn_task(void *arg, size_t p, int thread) { /* one (image, channel) plane */
  const bn_job *j = arg;
  size_t c = p % j->C;
  (void)thread;
  float k = j->scale[c] / sqrtf(j->var[c] + j->eps), off = j->bias[c] - j->mean[c] * k;
  const float *xs = j->X + p * j->inner;
  float *ys = j->Y + p * j->inner;
  for (size_t i = 0; i < j->inner; i++) ys[i] = xs[i] * k + off;
}

static lc_status bn_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                        lc_exec_ctx *x) {
  const float *X = in[0]->data, *scale = in[1]->data, *bias = in[2]->data, *mean = in[3]->data, *var = in[4]->data;
  float *Y = out->data;
  float eps = lc_attr_float(n, "epsilon", 1e-5f);
  size_t N = (size_t)in[0]->dims[0], C = (size_t)in[0]->dims[1], inner;
  if (lcop_dims_prod(in[0]->dims, 2, in[0]->ndim, &inner)) return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  bn_job j = {X, scale, bias, mean, var, Y, eps, C, inner};
  if (N * C * inner < PAR_MIN || lcop_threads(x) < 2) {
    for (size_t p = 0; p < N * C; p++) bn_task(&j, p, 0);
  } else {
    lcop_parallel(x, N * C, bn_task, &j);
  }
  return LC_OK;
}

/* ---------------------------------------------------------------- Identity, Dropout */

static lc_status identity_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out,
                                int n_out) {
  int dropout = strcmp(n->op_type, "Dropout") == 0;
  lc_status s = lcop_check_io(n, n_in, 1, dropout ? 3 : 1, n_out, 1, dropout ? 2 : 1);
  if (s) return s;
  if (!in[0] || lc_dtype_size(in[0]->dtype) == 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "bad input dtype");
  if (dropout && lcop_has(in, n_in, 2) && in[2]->data && *(const uint8_t *)in[2]->data)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "training_mode=true is not supported (inference only)");
  if (dropout && !lcop_has(in, n_in, 2) && lc_attr_int(n, "is_test", 1) == 0 && lcop_opset(n) > 0 &&
      lcop_opset(n) < 7)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "is_test=0 is not supported");
  s = lcop_set_out(n, &out[0], in[0]->dtype, in[0]->ndim, in[0]->dims);
  if (!s && n_out > 1) s = lcop_set_out(n, &out[1], LC_DT_BOOL, in[0]->ndim, in[0]->dims);
  return s;
}

static lc_status identity_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                              int n_out, lc_exec_ctx *x) {
  if (n_in > 2 && in[2] && in[2]->data && *(const uint8_t *)in[2]->data)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "training_mode=true is not supported (inference only)");
  lcop_copy(out[0].data, in[0]->data, out[0].nbytes);
  if (n_out > 1 && out[1].nbytes) memset(out[1].data, 1, out[1].nbytes); /* mask: all kept */
  return LC_OK;
}

const lc_op_impl lcop_elementwise_ops[] = {
    {"Relu", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"LeakyRelu", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Sigmoid", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"HardSigmoid", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"HardSwish", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Tanh", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Clip", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Sqrt", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Reciprocal", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Erf", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Exp", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Neg", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"Abs", unary_infer, NULL, NULL, unary_run, 1, NULL},
    {"BatchNormalization", bn_infer, NULL, NULL, bn_run, 1, NULL},
    {"EwChain", chain_infer, NULL, NULL, chain_run, 1, NULL},
    {"Identity", identity_infer, NULL, NULL, identity_run, 1, NULL},
    {"Dropout", identity_infer, NULL, NULL, identity_run, 1, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
