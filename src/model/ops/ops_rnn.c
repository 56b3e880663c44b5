/* LSTM, GRU and RNN (ONNX gate orders iofc / zrh), forward, reverse and bidirectional, both layouts
 * (0: X [seq, batch, in]; 1: batch first), sequence_lens, initial states, LSTM peepholes and
 * input_forget, clip, linear_before_reset, and the activations of the spec with their alpha / beta.
 * Each step is a dot product per gate row (W and R rows are contiguous), kept in 8 partial sums so
 * the loop vectorizes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model/ops/ops_internal.h"
#include "util/alloc.h"
#include "util/checked.h"

typedef enum act_kind { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKY, A_THRELU, A_STANH, A_HSIG, A_ELU,
                        A_SOFTSIGN, A_SOFTPLUS } act_kind;

typedef struct act_fn {
  act_kind k;
  float a, b;
} act_fn;

static float act(const act_fn *f, float x) {
  switch (f->k) {
  case A_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case A_TANH: return tanhf(x);
  case A_RELU: return x > 0 ? x : 0;
  case A_AFFINE: return f->a * x + f->b;
  case A_LEAKY: return x < 0 ? f->a * x : x;
  case A_THRELU: return x > f->a ? x : 0;
  case A_STANH: return f->a * tanhf(f->b * x);
  case A_HSIG: {
    float v = f->a * x + f->b;
    return v < 0 ? 0 : v > 1 ? 1 : v;
  }
  case A_ELU: return x < 0 ? f->a * (expf(x) - 1.0f) : x;
  case A_SOFTSIGN: return x / (1.0f + fabsf(x));
  default: return x > 20.0f ? x : log1pf(expf(x));
  }
}

typedef struct rnn_geom {
  int kind;                 /* 0 LSTM, 1 GRU, 2 RNN */
  int G, dirs, layout, lbr, input_forget;
  int64_t seq, batch, I, H;
  float clip;               /* <= 0: none */
  act_fn f[6];              /* per direction: kind's count (LSTM f g h, GRU f g, RNN f) */
  int nact;
} rnn_geom;

/* Activation names as the spec spells them (matched case-insensitively, as onnxruntime does),
 * with their default alpha / beta and whether they take them. */
static const struct { const char *name; act_kind k; float a, b; int na; } ACTS[] = {
    {"Sigmoid", A_SIGMOID, 0, 0, 0},   {"Tanh", A_TANH, 0, 0, 0},          {"Relu", A_RELU, 0, 0, 0},
    {"Affine", A_AFFINE, 1, 0, 2},     {"LeakyRelu", A_LEAKY, 0.01f, 0, 1}, {"ThresholdedRelu", A_THRELU, 1, 0, 1},
    {"ScaledTanh", A_STANH, 1, 1, 2}, {"HardSigmoid", A_HSIG, 0.2f, 0.5f, 2}, {"Elu", A_ELU, 1, 0, 1},
    {"Softsign", A_SOFTSIGN, 0, 0, 0}, {"Softplus", A_SOFTPLUS, 0, 0, 0}};

static lc_status read_acts(const lc_node *n, rnn_geom *g) {
  static const act_kind dflt[3][3] = {{A_SIGMOID, A_TANH, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}, {A_TANH, A_TANH, A_TANH}};
  int per = g->kind == 0 ? 3 : g->kind == 1 ? 2 : 1;
  const lc_attr *names = lc_node_attr(n, "activations"), *al = lc_node_attr(n, "activation_alpha"),
                *be = lc_node_attr(n, "activation_beta");
  size_t nn = names && names->type == LC_ATTR_STRINGS ? names->n : 0, ia = 0, ib = 0;
  if (nn && nn != (size_t)per && nn != (size_t)(per * g->dirs))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "%zu activations, expected %d per direction", nn, per);
  g->nact = per;
  for (int d = 0; d < g->dirs; d++)
    for (int i = 0; i < per; i++) {
      act_fn *f = &g->f[d * per + i];
      if (!nn) {
        f->k = dflt[g->kind][i], f->a = f->b = 0;
        continue;
      }
      const char *s = names->strings[(size_t)(d * per + i) % nn];
      size_t k = 0;
      for (; k < sizeof ACTS / sizeof ACTS[0]; k++)
        if (s && !strcasecmp(s, ACTS[k].name)) break;
      if (k == sizeof ACTS / sizeof ACTS[0]) return lcop_fail(n, LC_ERR_INVALID_ARG, "unknown activation '%s'", s ? s : "");
      f->k = ACTS[k].k, f->a = ACTS[k].a, f->b = ACTS[k].b;
      if (ACTS[k].na >= 1 && al && al->type == LC_ATTR_FLOATS && ia < al->n) f->a = al->floats[ia++];
      if (ACTS[k].na >= 2 && be && be->type == LC_ATTR_FLOATS && ib < be->n) f->b = be->floats[ib++];
    }
  return LC_OK;
}

static lc_status need_shape(const lc_node *n, const lc_tensor *t, const char *what, int nd, const int64_t *dims) {
  int ok = t->ndim == nd && t->dtype == LC_DT_FLOAT;
  for (int i = 0; ok && i < nd; i++) ok = t->dims[i] == dims[i];
  if (ok) return LC_OK;
  char want[96] = "";
  for (int i = 0; i < nd; i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? ", " : "", (long long)dims[i]);
  return lcop_fail(n, LC_ERR_INVALID_ARG, "%s must be float32 [%s]", what, want);
}

static lc_status rnn_geometry(const lc_node *n, const lc_tensor *const *in, int n_in, rnn_geom *g) {
  memset(g, 0, sizeof *g);
  g->kind = n->op_type[0] == 'L' ? 0 : n->op_type[0] == 'G' ? 1 : 2;
  g->G = g->kind == 0 ? 4 : g->kind == 1 ? 3 : 1;
  const char *dir = lc_attr_string(n, "direction", "forward");
  if (!strcmp(dir, "bidirectional")) g->dirs = 2;
  else if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) g->dirs = 1;
  else return lcop_fail(n, LC_ERR_INVALID_ARG, "direction '%s'", dir);
  g->layout = (int)lc_attr_int(n, "layout", 0);
  if (g->layout != 0 && g->layout != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "layout %d", g->layout);
  g->lbr = (int)lc_attr_int(n, "linear_before_reset", 0);
  g->input_forget = (int)lc_attr_int(n, "input_forget", 0);
  g->clip = lc_attr_float(n, "clip", 0.0f);
  const lc_tensor *X = in[0], *W = in[1], *R = in[2];
  if (X->ndim != 3 || X->dtype != LC_DT_FLOAT) return lcop_fail(n, LC_ERR_INVALID_ARG, "X must be float32 of rank 3");
  g->seq = X->dims[g->layout ? 1 : 0], g->batch = X->dims[g->layout ? 0 : 1], g->I = X->dims[2];
  if (R->ndim != 3) return lcop_fail(n, LC_ERR_INVALID_ARG, "R must have rank 3");
  g->H = lc_attr_int(n, "hidden_size", R->dims[2]);
  if (g->H <= 0 || g->H > (INT64_C(1) << 24)) return lcop_fail(n, LC_ERR_INVALID_ARG, "hidden_size %lld", (long long)g->H);
  int64_t GH, dir_seq_dims[3];
  if (!lc_mul_i64(g->G, g->H, &GH)) return lcop_fail(n, LC_ERR_OVERFLOW, "hidden_size overflows");
  lc_status s;
  int64_t wd[3] = {g->dirs, GH, g->I}, rd[3] = {g->dirs, GH, g->H}, bd[2] = {g->dirs, 2 * GH},
          pd[2] = {g->dirs, 3 * g->H};
  if ((s = need_shape(n, W, "W", 3, wd)) || (s = need_shape(n, R, "R", 3, rd))) return s;
  if (lcop_has(in, n_in, 3) && (s = need_shape(n, in[3], "B", 2, bd))) return s;
  if (lcop_has(in, n_in, 4) && (in[4]->dtype != LC_DT_INT32 || in[4]->ndim != 1 || in[4]->dims[0] != g->batch))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "sequence_lens must be int32 [%lld]", (long long)g->batch);
  dir_seq_dims[0] = g->layout ? g->batch : g->dirs;
  dir_seq_dims[1] = g->layout ? g->dirs : g->batch;
  dir_seq_dims[2] = g->H;
  if (lcop_has(in, n_in, 5) && (s = need_shape(n, in[5], "initial_h", 3, dir_seq_dims))) return s;
  if (g->kind == 0 && lcop_has(in, n_in, 6) && (s = need_shape(n, in[6], "initial_c", 3, dir_seq_dims))) return s;
  if (g->kind == 0 && lcop_has(in, n_in, 7) && (s = need_shape(n, in[7], "P", 2, pd))) return s;
  return read_acts(n, g);
}

static lc_status rnn_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  int lstm = n->op_type[0] == 'L';
  lc_status s = lcop_check_io(n, n_in, 3, lstm ? 8 : 6, n_out, 0, lstm ? 3 : 2);
  for (int i = 0; !s && i < 3; i++) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  rnn_geom g;
  if (!s) s = rnn_geometry(n, in, n_in, &g);
  if (s) return s;
  int64_t y[4] = {g.seq, g.dirs, g.batch, g.H}, yb[4] = {g.batch, g.seq, g.dirs, g.H};
  int64_t h[3] = {g.dirs, g.batch, g.H}, hb[3] = {g.batch, g.dirs, g.H};
  if (n_out > 0) s = lcop_set_out(n, &out[0], LC_DT_FLOAT, 4, g.layout ? yb : y);
  for (int k = 1; !s && k < n_out; k++) s = lcop_set_out(n, &out[k], LC_DT_FLOAT, 3, g.layout ? hb : h);
  return s;
}

static float dot8(const float *a, const float *b, int64_t n) {
  float acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) acc[k] += a[i + k] * b[i + k];
  for (; i < n; i++) acc[0] += a[i] * b[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

static inline float clipv(float v, float c) { return c > 0 ? (v < -c ? -c : v > c ? c : v) : v; }

/* One step of one batch row: h (and c) updated in place from gates' input part xw (X*W^T + Wb). */
static void rnn_step(const rnn_geom *g, const act_fn *f, const float *R, const float *Rb, const float *P,
                     const float *xw, float *h, float *c, float *gate, float *tmp) {
  int64_t H = g->H;
  if (g->kind == 0) { /* LSTM: gates i o f c */
    for (int64_t r = 0; r < 4 * H; r++) gate[r] = xw[r] + (Rb ? Rb[r] : 0) + dot8(R + r * H, h, H);
    for (int64_t k = 0; k < H; k++) {
      float gi = gate[k] + (P ? P[k] * c[k] : 0), gf = gate[2 * H + k] + (P ? P[2 * H + k] * c[k] : 0);
      float i = act(&f[0], clipv(gi, g->clip)), ft = g->input_forget ? 1.0f - i : act(&f[0], clipv(gf, g->clip));
      float ct = act(&f[1], clipv(gate[3 * H + k], g->clip));
      c[k] = ft * c[k] + i * ct;
      float o = act(&f[0], clipv(gate[H + k] + (P ? P[H + k] * c[k] : 0), g->clip));
      tmp[k] = o * act(&f[2], c[k]);
    }
    memcpy(h, tmp, (size_t)H * sizeof(float));
  } else if (g->kind == 1) { /* GRU: gates z r h */
    for (int64_t r = 0; r < 2 * H; r++) gate[r] = act(&f[0], clipv(xw[r] + (Rb ? Rb[r] : 0) + dot8(R + r * H, h, H), g->clip));
    const float *Rh = R + 2 * H * H, *Rbh = Rb ? Rb + 2 * H : NULL;
    if (!g->lbr)
      for (int64_t k = 0; k < H; k++) tmp[k] = gate[H + k] * h[k];
    for (int64_t k = 0; k < H; k++) {
      float v = g->lbr ? gate[H + k] * (dot8(Rh + k * H, h, H) + (Rbh ? Rbh[k] : 0))
                       : dot8(Rh + k * H, tmp, H) + (Rbh ? Rbh[k] : 0);
      gate[2 * H + k] = act(&f[1], clipv(xw[2 * H + k] + v, g->clip));
    }
    for (int64_t k = 0; k < H; k++) h[k] = (1.0f - gate[k]) * gate[2 * H + k] + gate[k] * h[k];
  } else {
    for (int64_t r = 0; r < H; r++) tmp[r] = act(&f[0], clipv(xw[r] + (Rb ? Rb[r] : 0) + dot8(R + r * H, h, H), g->clip));
    memcpy(h, tmp, (size_t)H * sizeof(float));
  }
}

static lc_status rnn_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                         lc_exec_ctx *x) {
  rnn_geom g;
  lc_status s = rnn_geometry(n, in, n_in, &g);
  if (s) return s;
  int64_t H = g.H, GH = g.G * H, B = g.batch, T = g.seq, D = g.dirs;
  const int32_t *lens = lcop_has(in, n_in, 4) ? in[4]->data : NULL;
  for (int64_t b = 0; lens && b < B; b++)
    if (lens[b] < 0 || lens[b] > T) return lcop_fail(n, LC_ERR_INVALID_ARG, "sequence_lens[%lld] = %d, not in [0, %lld]", (long long)b, lens[b], (long long)T);
  size_t nxw, nst, bytes;
  if (!lc_mul_n(&nxw, 3, (int64_t[]){T, B, GH}) || !lc_mul_n(&nst, 2, (int64_t[]){B, H}) ||
      !lc_mul_sz(nxw + 2 * nst + (size_t)(GH + H), sizeof(float), &bytes))
    return lcop_fail(n, LC_ERR_OVERFLOW, "sizes overflow");
  if (lcop_budget(x) && bytes > lcop_budget(x)) return lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of scratch", bytes);
  float *buf = lc_malloc(bytes ? bytes : 1);
  if (!buf) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for %zu bytes", bytes);
  float *xw = buf, *hs = xw + nxw, *cs = hs + nst, *gate = cs + nst, *tmp = gate + GH;
  const float *X = in[0]->data;
  float *Y = n_out > 0 ? out[0].data : NULL, *Yh = n_out > 1 ? out[1].data : NULL, *Yc = n_out > 2 ? out[2].data : NULL;
  if (Y && out[0].nbytes) memset(Y, 0, out[0].nbytes); /* steps past a row's length stay 0 */
  int rev_all = !strcmp(lc_attr_string(n, "direction", "forward"), "reverse");
  for (int64_t d = 0; d < D; d++) {
    const float *W = (const float *)in[1]->data + d * GH * g.I, *R = (const float *)in[2]->data + d * GH * H;
    const float *Wb = lcop_has(in, n_in, 3) ? (const float *)in[3]->data + d * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
    const float *P = g.kind == 0 && lcop_has(in, n_in, 7) ? (const float *)in[7]->data + d * 3 * H : NULL;
    const act_fn *f = &g.f[d * g.nact];
    int rev = rev_all || d == 1;
    for (int64_t t = 0; t < T; t++) /* the input part of every gate, for all steps at once */
      for (int64_t b = 0; b < B; b++) {
        const float *xt = X + (g.layout ? b * T + t : t * B + b) * g.I;
        float *o = xw + (t * B + b) * GH;
        for (int64_t r = 0; r < GH; r++) o[r] = dot8(W + r * g.I, xt, g.I) + (Wb ? Wb[r] : 0);
      }
    for (int64_t b = 0; b < B; b++) {
      size_t hoff = (size_t)((g.layout ? b * D + d : d * B + b) * H);
      float *h = hs + b * H, *c = cs + b * H;
      if (lcop_has(in, n_in, 5)) memcpy(h, (const float *)in[5]->data + hoff, (size_t)H * sizeof(float));
      else memset(h, 0, (size_t)H * sizeof(float));
      if (g.kind == 0 && lcop_has(in, n_in, 6)) memcpy(c, (const float *)in[6]->data + hoff, (size_t)H * sizeof(float));
      else memset(c, 0, (size_t)H * sizeof(float));
      int64_t L = lens ? lens[b] : T;
      for (int64_t s2 = 0; s2 < L; s2++) {
        int64_t t = rev ? L - 1 - s2 : s2;
        rnn_step(&g, f, R, Rb, P, xw + (t * B + b) * GH, h, c, gate, tmp);
        if (Y) memcpy(Y + (g.layout ? (b * T + t) * D + d : (t * D + d) * B + b) * H, h, (size_t)H * sizeof(float));
      }
      if (Yh) memcpy(Yh + hoff, h, (size_t)H * sizeof(float));
      if (Yc) memcpy(Yc + hoff, c, (size_t)H * sizeof(float));
    }
  }
  lc_free(buf);
  return LC_OK;
}

const lc_op_impl lcop_rnn_ops[] = {
    {"LSTM", rnn_infer, NULL, NULL, rnn_run, 0, NULL},
    {"GRU", rnn_infer, NULL, NULL, rnn_run, 0, NULL},
    {"RNN", rnn_infer, NULL, NULL, rnn_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
