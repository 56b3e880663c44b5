/* Gemm, MatMul (batched, broadcasting). Row-times-matrix loops (axpy over the output
 * row) so the inner loop is contiguous and vectorizes; transposed B is handled as a dot product. */
#include <math.h>
#include <string.h>

#include "api/context.h"
#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "model/qweight.h"
#include "quant/quant.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* C[m x n] (+)= A[m x k] * B, with A row stride lda, column stride ca, and B as k x n (row stride
 * ldb, column stride 1) or transposed (n x k, row stride ldb) when tb. */
static void sgemm_rows(int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda, int64_t ca,
                       const float *B, int64_t ldb, int tb, float *C) {
  for (int64_t i = 0; i < m; i++) {
    float *c = C + i * n;
    const float *a = A + i * lda;
    if (!tb) {
      for (int64_t p = 0; p < k; p++) {
        float av = alpha * a[p * ca];
        const float *b = B + p * ldb;
        for (int64_t j = 0; j < n; j++) c[j] += av * b[j];
      }
    } else {
      for (int64_t j = 0; j < n; j++) {
        const float *b = B + j * ldb;
        float s[8] = {0};
        int64_t p = 0;
        for (; p + 8 <= k; p += 8) /* 8 partial sums so the reduction vectorizes */
          for (int q = 0; q < 8; q++) s[q] += a[(p + q) * ca] * b[p + q];
        float t = 0.0f;
        for (; p < k; p++) t += a[p * ca] * b[p];
        c[j] += alpha * (t + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])));
      }
    }
  }
}

/* ---------------------------------------------------------------- packed weights */

/* A constant B packed at init as an lc_qmatrix with one row per output feature (f32 copy, q8
 * or q4 by the model's weight format; q4's mixed policy keeps these q8). Small M runs lc_qgemv
 * (accurate mode, threads over N); larger M dequantizes panels of rows and takes dot products. */
typedef struct fc_state {
  lc_qmatrix w;      /* N x K */
  float *bias;       /* beta * C when C is a per-column vector and alpha == 1, else NULL */
  lc_conv *conv;     /* f32 with many rows: the product as a 1x1 NHWC conv (the library's GEMM) */
  size_t conv_m;     /* the rows it was prepared for */
} fc_state;

#define FC_GEMV_MAX_M 8 /* lc_qgemv streams W once per call; beyond a few rows panels reuse it */

typedef struct col_src {
  const float *b;
  size_t n; /* B is K x n, row-major */
} col_src;

static void b_column(void *ctx, size_t r, size_t k, float *row) {
  const col_src *c = ctx;
  for (size_t p = 0; p < k; p++) row[p] = c->b[p * c->n + r];
}

static void b_row(void *ctx, size_t r, size_t k, float *row) { memcpy(row, (const float *)ctx + r * k, k * sizeof(float)); }

static void fc_fini(void *state) {
  fc_state *st = state;
  if (!st) return;
  lc_qmatrix_free(&st->w);
  lc_free(st->bias);
  lc_conv_destroy(st->conv);
  lc_free(st);
}

/* Packs B (K x N, or N x K when tb). */
static lc_status fc_pack(const lc_node *n, const lc_tensor *Bt, int64_t K, int64_t N, int tb, const lc_exec_ctx *x,
                         fc_state **out) {
  fc_state *st = lc_calloc(1, sizeof *st);
  if (!st) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  const float *B = Bt->data;
  if (Bt->quant) { /* codes from the file, as they are */
    lc_status s = lc_qweight_qmatrix(Bt->quant, &st->w);
    if (s) {
      lc_free(st);
      return lcop_fail(n, s, "quantized weights: %s", lc_last_error());
    }
    *out = st;
    return LC_OK;
  }
  lc_quant_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.format = (lc_weight_format)x->weight_format;
  if (sp.format == LC_WEIGHTS_Q4 && x->q4_policy == LC_Q4_MIXED) sp.format = LC_WEIGHTS_Q8;
  sp.block = sp.format == LC_WEIGHTS_F32 ? 0 : x->weight_block;
  sp.clip_search = sp.format == LC_WEIGHTS_Q4 && x->q4_policy == LC_Q4_MIXED;
  col_src cs = {B, (size_t)N};
  lc_status s = tb ? lc_quantize_rows((size_t)N, (size_t)K, &sp, b_row, (void *)B, &st->w)
                   : lc_quantize_rows((size_t)N, (size_t)K, &sp, b_column, &cs, &st->w);
  if (s) {
    lc_free(st);
    return lcop_fail(n, s, "packing the weights: %s", lc_last_error());
  }
  *out = st;
  return LC_OK;
}

typedef struct fc_job {
  const lc_qmatrix *w;
  const float *A, *bias;
  float *Y, *panel;
  size_t M, rows; /* rows of W per task */
  float alpha;
} fc_job;

/* One task: dequantize `rows` rows of W into this thread's panel, dot them with every row of A. */
static void fc_panel_task(void *arg, size_t task, int thread) {
  const fc_job *j = arg;
  size_t K = j->w->k, N = j->w->n, r0 = task * j->rows, nr = r0 + j->rows < N ? j->rows : N - r0;
  float *panel = j->panel + (size_t)thread * j->rows * K;
  if (lc_dequant_rows(j->w, r0, nr, 0, K, panel, K)) return; /* geometry checked at init */
  for (size_t i = 0; i < j->M; i++) {
    const float *a = j->A + i * K;
    for (size_t r = 0; r < nr; r++) {
      const float *b = panel + r * K;
      float s8[8] = {0}, t = 0.0f;
      size_t p = 0;
      for (; p + 8 <= K; p += 8)
        for (int q = 0; q < 8; q++) s8[q] += a[p + q] * b[p + q];
      for (; p < K; p++) t += a[p] * b[p];
      t += ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
      j->Y[i * N + r0 + r] = j->alpha * t + (j->bias ? j->bias[r0 + r] : 0.0f);
    }
  }
}

/* Y[M x N] = alpha * A[M x K] * W^T (+ bias): overwrites Y. */
static lc_status fc_run(const lc_node *n, const fc_state *st, const float *A, size_t M, float alpha, float *Y,
                        lc_exec_ctx *x) {
  size_t K = st->w.k, N = st->w.n;
  if (!M || !N) return LC_OK;
  if (M <= FC_GEMV_MAX_M) {
    lc_qgemv_opts o;
    memset(&o, 0, sizeof o);
    o.mode = LC_QGEMV_ACCURATE;
    o.threads = lcop_threads(x);
    o.pool = x && x->lc ? x->lc->pool : NULL;
    lc_status s = lc_qgemv(&st->w, M, A, K, alpha == 1.0f ? st->bias : NULL, Y, N, &o);
    if (s) return lcop_fail(n, s, "gemv: %s", lc_last_error());
    if (alpha != 1.0f)
      for (size_t i = 0; i < M * N; i++) Y[i] *= alpha;
    return LC_OK;
  }
  if (st->conv && M == st->conv_m) { /* bias (when alpha is 1) is the conv's */
    lc_status s = lc_conv_run(st->conv, A, Y, NULL, 0);
    if (s) return lcop_fail(n, s, "GEMM: %s", lc_last_error());
    if (alpha != 1.0f)
      for (size_t i = 0; i < M * N; i++) Y[i] *= alpha;
    return LC_OK;
  }
  int threads = lcop_threads(x);
  fc_job j = {&st->w, A, alpha == 1.0f ? st->bias : NULL, Y, NULL, M, 0, alpha};
  j.rows = K ? (16384 + K - 1) / K : 1; /* a 64 KiB panel stays in L2 while every row of A passes */
  if (j.rows > N) j.rows = N;
  size_t panel;
  if (!lc_mul_sz(j.rows * (size_t)threads, K, &panel) || !lc_mul_sz(panel, sizeof(float), &panel))
    return lcop_fail(n, LC_ERR_OVERFLOW, "panel size overflows");
  j.panel = lc_malloc(panel);
  if (!j.panel) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  lcop_parallel(x, (N + j.rows - 1) / j.rows, fc_panel_task, &j);
  lc_free(j.panel);
  return LC_OK;
}

/* f32 weights and M rows beyond the gemv range: Y[M x N] = A W^T as a 1x1 conv over an NHWC image
 * of 1 x M pixels with K channels, so the conv library's packed GEMM kernels run it (PP-OCR rec's
 * 40x120x6625 classifier: 8.3 ms in fc panels, ~5x less this way, docs/benchmarks.md). */
static lc_status fc_attach_gemm(const lc_node *n, fc_state *st, size_t M, lc_exec_ctx *x) {
  size_t K = st->w.k, N = st->w.n, bytes;
  if (st->w.format != LC_WEIGHTS_F32 || M <= FC_GEMV_MAX_M || !x || !x->lc ||
      lc_context_backend(x->lc) != LC_BACKEND_CPU || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX ||
      !lc_mul_sz(N * K, sizeof(float), &bytes))
    return LC_OK;
  float *w = lc_malloc(bytes ? bytes : 1);
  if (!w) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  lc_status s = lc_dequant_rows(&st->w, 0, N, 0, K, w, K); /* OIHW with 1x1: row o = W^T's row */
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = (int64_t)K, d.out_channels = (int64_t)N, d.groups = 1;
  d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1, d.dilation_h = d.dilation_w = 1;
  d.auto_pad = LC_PAD_NOTSET;
  d.layout = LC_NHWC;
  d.weights = w;
  d.bias = st->bias;
  lc_conv_shape sh;
  if (!s) s = lc_conv_create(x->lc, &d, &st->conv);
  lc_free(w);
  if (!s) s = lc_conv_prepare(st->conv, 1, 1, (int64_t)M, &sh);
  if (s) {
    lc_conv_destroy(st->conv);
    st->conv = NULL;
    return lcop_fail(n, s, "GEMM setup: %s", lc_last_error());
  }
  st->conv_m = M;
  return LC_OK;
}

static void fc_describe(const void *state, lc_op_info *info) {
  const fc_state *st = state;
  static const char *const names[] = {"fc_f32", "fc_q8", "fc_q4"};
  info->route = names[st->w.format <= LC_WEIGHTS_Q4 ? st->w.format : 0];
  info->packed_bytes = lc_qmatrix_bytes(&st->w) + (st->bias ? st->w.n * sizeof(float) : 0) +
                      (st->conv ? lc_conv_weight_bytes(st->conv) : 0);
  if (st->conv) info->route = "fc_gemm";
  info->packed_inputs = 2u | (st->bias ? 4u : 0u);
}

/* ---------------------------------------------------------------- Gemm */

static lc_status gemm_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 3, n_out, 1, 1);
  for (int i = 0; !s && i < n_in; i++)
    if (i < 2 || in[i]) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  int64_t M, N, K;
  if (!s) s = lcop_gemm_dims(n, in, &M, &N, &K);
  if (s) return s;
  if (lcop_has(in, n_in, 2)) { /* C unidirectionally broadcast to [M, N] */
    const lc_tensor *C = in[2];
    if (C->ndim > 2) return lcop_fail(n, LC_ERR_INVALID_ARG, "C must have rank <= 2");
    int64_t cm = C->ndim == 2 ? C->dims[0] : 1, cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N)) return lcop_fail(n, LC_ERR_INVALID_ARG, "C does not broadcast to [M, N]");
  }
  int64_t dims[2] = {M, N};
  return lcop_set_out(n, out, LC_DT_FLOAT, 2, dims);
}

/* Packs a constant B (transA = 0 only). C joins as a bias when it is a constant per-column
 * vector and alpha is 1; otherwise run adds it. */
static lc_status gemm_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                           lc_exec_ctx *x, void **state) {
  int64_t M = 0, N = 0, K = 0;
  lc_status s = lcop_gemm_dims(n, in, &M, &N, &K);
  if (s || !x || !(x->const_inputs & 2u) || lc_attr_int(n, "transA", 0) || !K || !N) return s;
  fc_state *st;
  if ((s = fc_pack(n, in[1], K, N, (int)lc_attr_int(n, "transB", 0), x, &st))) return s;
  float alpha = lc_attr_float(n, "alpha", 1.0f), beta = lc_attr_float(n, "beta", 1.0f);
  const lc_tensor *C = lcop_has(in, n_in, 2) ? in[2] : NULL;
  if (C && (x->const_inputs & 4u) && alpha == 1.0f && (C->ndim < 2 || C->dims[0] == 1)) {
    int64_t cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
    st->bias = lc_malloc((size_t)N * sizeof(float));
    if (!st->bias) {
      fc_fini(st);
      return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
    }
    for (int64_t j = 0; j < N; j++) st->bias[j] = beta * ((const float *)C->data)[cn == 1 ? 0 : j];
  }
  if ((s = fc_attach_gemm(n, st, (size_t)M, x))) {
    fc_fini(st);
    return s;
  }
  *state = st;
  return LC_OK;
}

static lc_status gemm_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  int64_t M, N, K;
  lc_status s = lcop_gemm_dims(n, in, &M, &N, &K);
  if (s) return s;
  int ta = (int)lc_attr_int(n, "transA", 0), tb = (int)lc_attr_int(n, "transB", 0);
  float alpha = lc_attr_float(n, "alpha", 1.0f), beta = lc_attr_float(n, "beta", 1.0f);
  float *Y = out->data;
  const fc_state *st = state;
  if (st) {
    if ((s = fc_run(n, st, in[0]->data, (size_t)M, alpha, Y, x))) return s;
    if (!st->bias && lcop_has(in, n_in, 2) && beta != 0.0f) {
      const lc_tensor *C = in[2];
      const float *c = C->data;
      int64_t cm = C->ndim == 2 ? C->dims[0] : 1, cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) Y[i * N + j] += beta * c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
    }
    return LC_OK;
  }
  if (lcop_has(in, n_in, 2) && beta != 0.0f) {
    const lc_tensor *C = in[2];
    const float *c = C->data;
    int64_t cm = C->ndim == 2 ? C->dims[0] : 1, cn = C->ndim >= 1 ? C->dims[C->ndim - 1] : 1;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) Y[i * N + j] = beta * c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
  } else if (out->nbytes) {
    memset(Y, 0, out->nbytes);
  }
  const float *A = in[0]->data, *B = in[1]->data;
  sgemm_rows(M, N, K, alpha, A, ta ? 1 : K, ta ? M : 1, B, tb ? K : N, tb, Y);
  return LC_OK;
}

/* ---------------------------------------------------------------- MatMul */

static lc_status matmul_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (!s) s = lcop_need(n, in, n_in, 1, LC_DT_FLOAT);
  mm_shape p;
  int nd;
  int64_t dims[LC_MAX_DIMS + 2];
  if (!s) s = lcop_mm_shape(n, in[0], in[1], &p, &nd, dims);
  if (s) return s;
  return lcop_set_out(n, out, LC_DT_FLOAT, nd, dims);
}

/* A constant 2-D B is packed: A's batch dims and rows are all rows of one product. */
static lc_status matmul_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                             lc_exec_ctx *x, void **state) {
  if (!x || !(x->const_inputs & 2u) || in[1]->ndim != 2 || in[0]->ndim < 2 || !in[1]->dims[0] || !in[1]->dims[1])
    return LC_OK;
  fc_state *st;
  lc_status s = fc_pack(n, in[1], in[1]->dims[0], in[1]->dims[1], 0, x, &st);
  size_t rows = 0;
  lcop_dims_prod(in[0]->dims, 0, in[0]->ndim - 1, &rows);
  if (!s && (s = fc_attach_gemm(n, st, rows, x))) fc_fini(st);
  if (!s) *state = st;
  return s;
}

/* MatMul of two computed operands: each batch's C = A B by tiles of the context's GEMM
 * microkernel, which reads A and B where they are (B only the tile's columns): PP-OCR rec's
 * 8 x (40x15 @ 15x40) attention products ran at ~5 GFLOP/s in the SSE row loops. */
#define MM_PAR_MIN 262144 /* multiply-adds: below this one thread beats waking the pool */

typedef struct mm_job {
  const mm_shape *p;
  const lc_kernels *k;
  const float *A, *B;
  float *Y;
} mm_job;

static void mm_task(void *arg, size_t b, int thread) {
  const mm_job *j = arg;
  const mm_shape *p = j->p;
  int64_t oa = 0, ob = 0;
  size_t r = b;
  for (int d = p->nb - 1; d >= 0; d--) { /* batch b's offsets in A and B (broadcast dims have stride 0) */
    int64_t i = (int64_t)(r % (size_t)p->bd[d]);
    r /= (size_t)p->bd[d];
    oa += i * p->sa[d];
    ob += i * p->sb[d];
  }
  const float *A = j->A + oa, *B = j->B + ob;
  float *C = j->Y + (int64_t)b * p->M * p->N;
  lc_gemm_params gp = {0};
  gp.final = 1;
  int64_t mr = (int64_t)j->k->mr, nr = (int64_t)j->k->nr;
  (void)thread;
  for (int64_t i = 0; i < p->M; i += mr)
    for (int64_t c = 0; c < p->N; c += nr)
      j->k->f32_gemm((size_t)(p->M - i < mr ? p->M - i : mr), (size_t)(p->N - c < nr ? p->N - c : nr), (size_t)p->K,
                     A + i * p->K, (size_t)p->K, 1, B + c, (size_t)p->N, C + i * p->N + c, (size_t)p->N, &gp);
}

static lc_status matmul_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *x) {
  mm_shape p;
  int nd;
  int64_t dims[LC_MAX_DIMS + 2];
  lc_status s = lcop_mm_shape(n, in[0], in[1], &p, &nd, dims);
  if (s) return s;
  if (state) {
    size_t rows;
    lcop_dims_prod(in[0]->dims, 0, in[0]->ndim - 1, &rows);
    return fc_run(n, state, in[0]->data, rows, 1.0f, out->data, x);
  }
  size_t batches;
  lcop_dims_prod(p.bd, 0, p.nb, &batches);
  if (!out->nbytes) return LC_OK;
  mm_job j = {&p, x && x->lc ? x->lc->k : lc_kernels_clamp(LC_ISA_AUTO), in[0]->data, in[1]->data, out->data};
  if (batches < 2 || lcop_threads(x) < 2 || (double)batches * (double)p.M * (double)p.N * (double)p.K < MM_PAR_MIN) {
    for (size_t b = 0; b < batches; b++) mm_task(&j, b, 0);
  } else {
    lcop_parallel(x, batches, mm_task, &j);
  }
  return LC_OK;
}

const lc_op_impl lcop_matmul_ops[] = {
    {"Gemm", gemm_infer, gemm_init, fc_fini, gemm_run, 0, fc_describe},
    {"MatMul", matmul_infer, matmul_init, fc_fini, matmul_run, 0, fc_describe},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
