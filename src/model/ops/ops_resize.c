/* Resize (nearest / linear over the last two axes) and Pad (constant / reflect / edge / wrap).
 * Both run from per-axis source-index tables (Resize's made once at init, Pad's per call). */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/checked.h"

/* ---------------------------------------------------------------- Resize */

static int pick(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

lc_status lcop_resize_plan(const lc_node *n, const lc_tensor *const *in, int n_in, resize_plan *p) {
  const lc_tensor *x = in[0];
  int r = x->ndim;
  p->r = r;
  static const char *const modes[] = {"nearest", "linear"};
  static const char *const cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                    "asymmetric", "tf_half_pixel_for_nn"};
  static const char *const nns[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const char *mode = lc_attr_string(n, "mode", "nearest");
  const char *ct = lc_attr_string(n, "coordinate_transformation_mode", n_in == 2 ? "asymmetric" : "half_pixel");
  const char *nn = lc_attr_string(n, "nearest_mode", "round_prefer_floor");
  int m = pick(mode, modes, 2), c = pick(ct, cts, 6), k = pick(nn, nns, 4);
  if (m < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "mode '%s' (nearest and linear only)", mode);
  if (c < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s'", ct);
  if (k < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "nearest_mode '%s'", nn);
  if (lc_attr_int(n, "antialias", 0)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "antialias=1");
  p->linear = m, p->ct = (ct_mode)c, p->nn = (nn_mode)k;
  /* axes (opset 18) say which dims the scales / sizes cover. */
  const int64_t *axv;
  size_t na = lc_attr_ints(n, "axes", &axv);
  int axes[LC_MAX_DIMS];
  if (na > (size_t)r) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many axes");
  for (size_t i = 0; i < na; i++) {
    lc_status s = lcop_axis(n, axv[i], r, &axes[i]);
    if (s) return s;
  }
  if (!na)
    for (int i = 0; i < r; i++) axes[na++] = i;
  for (int i = 0; i < r; i++) p->out[i] = x->dims[i], p->scale[i] = 1.0;
  const lc_tensor *sc = n_in == 2 ? in[1] : (n_in > 2 ? in[2] : NULL), *sz = n_in > 3 ? in[3] : NULL;
  size_t cnt;
  if (sc && (lcop_numel(sc, &cnt) || cnt == 0)) sc = NULL; /* empty = not given */
  if (sz && (lcop_numel(sz, &cnt) || cnt == 0)) sz = NULL;
  if (!!sc == !!sz) return lcop_fail(n, LC_ERR_INVALID_ARG, "exactly one of scales and sizes must be given");
  if (sc) {
    if (sc->dtype != LC_DT_FLOAT || !sc->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "scales must be a float constant");
    if (cnt != na) return lcop_fail(n, LC_ERR_INVALID_ARG, "scales has %zu values for %zu axes", cnt, na);
    for (size_t i = 0; i < na; i++) {
      double s = ((const float *)sc->data)[i];
      if (!(s > 0.0) || s > 1e6) return lcop_fail(n, LC_ERR_INVALID_ARG, "scale %g", s);
      p->scale[axes[i]] = s;
      p->out[axes[i]] = (int64_t)floor((double)x->dims[axes[i]] * s);
    }
  } else {
    int64_t v[LC_MAX_DIMS];
    lc_status s = lcop_read_ints(n, sz, "sizes", v, LC_MAX_DIMS, &cnt);
    if (s) return s;
    if (cnt != na) return lcop_fail(n, LC_ERR_INVALID_ARG, "sizes has %zu values for %zu axes", cnt, na);
    const char *pol = lc_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    int keep = strcmp(pol, "not_larger") == 0 ? 1 : strcmp(pol, "not_smaller") == 0 ? 2 : 0;
    if (!keep && strcmp(pol, "stretch") != 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s'", pol);
    double common = keep == 1 ? INFINITY : 0.0;
    for (size_t i = 0; i < na; i++) {
      if (v[i] < 0 || v[i] > (INT64_C(1) << 40)) return lcop_fail(n, LC_ERR_INVALID_ARG, "size %lld", (long long)v[i]);
      if (x->dims[axes[i]] == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "cannot resize an empty axis");
      double s1 = (double)v[i] / (double)x->dims[axes[i]];
      common = keep == 1 ? fmin(common, s1) : fmax(common, s1);
      p->out[axes[i]] = v[i];
      p->scale[axes[i]] = s1;
    }
    if (keep)
      for (size_t i = 0; i < na; i++) {
        p->scale[axes[i]] = common;
        p->out[axes[i]] = (int64_t)floor((double)x->dims[axes[i]] * common + 0.5);
      }
  }
  for (int i = 0; i + 2 < r; i++)
    if (p->out[i] != x->dims[i]) return lcop_fail(n, LC_ERR_UNSUPPORTED, "only the last two axes may be resized");
  for (int i = 0; i < r; i++)
    if (p->out[i] > 0 && x->dims[i] == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "cannot resize an empty axis");
  return LC_OK;
}

static lc_status resize_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 4, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (s) return s;
  if (in[0]->ndim < 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "input must have rank >= 1");
  resize_plan p;
  if ((s = lcop_resize_plan(n, in, n_in, &p))) return s;
  return lcop_set_out(n, out, LC_DT_FLOAT, p.r, p.out);
}

/* Source coordinate of output position xo. As in the ONNX reference, the resized length is the
 * real-valued lin * scale (not the rounded output size), which matters for non-integral scales. */
static double src_coord(ct_mode ct, double xo, double scale, int64_t lin, int64_t lout) {
  double lres = (double)lin * scale;
  switch (ct) {
  case CT_HALF_PIXEL: return (xo + 0.5) / scale - 0.5;
  case CT_HALF_PIXEL_SYM: {
    double adj = (double)lout / lres, center = (double)lin / 2.0;
    return center * (1.0 - adj) + (xo + 0.5) / scale - 0.5;
  }
  case CT_PYTORCH_HALF_PIXEL: return lres > 1.0 ? (xo + 0.5) / scale - 0.5 : 0.0;
  case CT_ALIGN_CORNERS: return lres == 1.0 ? 0.0 : xo * (double)(lin - 1) / (lres - 1.0);
  case CT_ASYMMETRIC: return xo / scale;
  case CT_TF_HALF_PIXEL_NN: return (xo + 0.5) / scale;
  }
  return 0.0;
}

/* Per output position: source index i0 (and i1, weight w of i1 for linear). */
void lcop_resize_axis(const resize_plan *p, int64_t lin, int64_t lout, double scale, int64_t *i0, int64_t *i1,
                       float *w) {
  /* An axis not resized is left as it is (onnxruntime and the ONNX reference skip it), which only
   * tf_half_pixel_for_nn's half-pixel shift would otherwise change. */
  int same = scale == 1.0 && lin == lout;
  for (int64_t o = 0; o < lout; o++) {
    if (same) {
      i0[o] = i1[o] = o, w[o] = 0.0f;
      continue;
    }
    double x = src_coord(p->ct, (double)o, scale, lin, lout);
    if (!p->linear) {
      double f = floor(x), fr = x - f, v;
      switch (p->nn) {
      case NN_ROUND_PREFER_FLOOR: v = fr <= 0.5 ? f : f + 1.0; break;
      case NN_ROUND_PREFER_CEIL: v = fr < 0.5 ? f : f + 1.0; break;
      case NN_FLOOR: v = f; break;
      default: v = ceil(x); break;
      }
      v = v < 0.0 ? 0.0 : v > (double)(lin - 1) ? (double)(lin - 1) : v;
      i0[o] = i1[o] = (int64_t)v;
      w[o] = 0.0f;
    } else {
      x = x < 0.0 ? 0.0 : x > (double)(lin - 1) ? (double)(lin - 1) : x;
      int64_t a = (int64_t)x;
      i0[o] = a;
      i1[o] = a + 1 < lin ? a + 1 : a;
      w[o] = (float)(x - (double)a);
    }
  }
}

/* Everything a Resize run needs besides the data, for one input shape: made once by init (the
 * plan's attribute and string lookups, a double division per output coordinate) and per call only
 * for a shape init did not see. */
typedef struct rs_state {
  resize_plan p;
  int ndim;
  int64_t dims[LC_MAX_DIMS];
  int64_t H, W, OH, OW;
  int64_t kw; /* nearest with w0[ow] = ow / kw (OW = kw W), else 0 */
  size_t planes;
  int64_t *h0, *h1, *w0, *w1;
  float *hw, *ww;
} rs_state;

/* k if t[o] = o / k for every o < lout = k lin, else 0. With an integer factor k this holds for
 * asymmetric + floor, the half_pixel family with either round mode (o / k is off by at most
 * (k - 1) / 2k), tf_half_pixel_for_nn + floor, and a few more for k <= 2; the table, not the
 * mode, decides, so the fast path reads what the general one would. */
static int64_t int_factor(const int64_t *t, int64_t lin, int64_t lout) {
  if (lin <= 0 || lout % lin) return 0;
  int64_t k = lout / lin;
  for (int64_t o = 0; o < lout; o++)
    if (t[o] != o / k) return 0;
  return k;
}

static lc_status rs_make(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, rs_state **out) {
  rs_state st = {0};
  lc_status s = lcop_resize_plan(n, in, n_in, &st.p);
  if (s) return s;
  int r = st.p.r;
  st.ndim = r;
  memcpy(st.dims, in[0]->dims, (size_t)r * sizeof(int64_t));
  st.H = r >= 2 ? in[0]->dims[r - 2] : 1, st.W = in[0]->dims[r - 1];
  st.OH = r >= 2 ? st.p.out[r - 2] : 1, st.OW = st.p.out[r - 1];
  size_t nt = 0, bytes = 0;
  if (lcop_dims_prod(in[0]->dims, 0, r >= 2 ? r - 2 : 0, &st.planes) || !lc_add_sz((size_t)st.OH, (size_t)st.OW, &nt) ||
      !lc_mul_sz(nt, 2 * sizeof(int64_t) + sizeof(float), &bytes) || !lc_add_sz(bytes, sizeof st, &bytes))
    return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  if (lcop_budget(x) && bytes > lcop_budget(x)) return lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of tables", bytes);
  rs_state *q = lc_malloc(bytes);
  if (!q) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  *q = st;
  q->h0 = (int64_t *)(q + 1), q->h1 = q->h0 + st.OH, q->w0 = q->h1 + st.OH, q->w1 = q->w0 + st.OW;
  q->hw = (float *)(q->w1 + st.OW), q->ww = q->hw + st.OH;
  lcop_resize_axis(&q->p, st.H, st.OH, r >= 2 ? st.p.scale[r - 2] : 1.0, q->h0, q->h1, q->hw);
  lcop_resize_axis(&q->p, st.W, st.OW, st.p.scale[r - 1], q->w0, q->w1, q->ww);
  q->kw = q->p.linear ? 0 : int_factor(q->w0, st.W, st.OW);
  *out = q;
  return LC_OK;
}

typedef struct rs_job {
  const rs_state *s;
  const float *X;
  float *Y;
  float *rows; /* linear: two rows of OW per thread */
  const lc_vmath_kernels *vm;
} rs_job;

/* Input row ih interpolated along W into t. */
static void rs_hrow(const rs_state *s, const float *X, int64_t ih, float *t) {
  const float *r = X + ih * s->W;
  for (int64_t ow = 0; ow < s->OW; ow++) t[ow] = r[s->w0[ow]] + (r[s->w1[ow]] - r[s->w0[ow]]) * s->ww[ow];
}

/* One plane. Nearest output rows that read the same input row as the row before are copies;
 * linear ones blend two W-interpolated input rows, each made once while consecutive rows share it. */
static void rs_task(void *arg, size_t pl, int thread) {
  const rs_job *j = arg;
  const rs_state *s = j->s;
  const float *X = j->X + pl * (size_t)(s->H * s->W);
  float *Y = j->Y + pl * (size_t)(s->OH * s->OW);
  int64_t OW = s->OW;
  float *buf[2] = {NULL, NULL};
  int64_t tag[2] = {-1, -1};
  if (s->p.linear) buf[0] = j->rows + (size_t)thread * 2 * (size_t)OW, buf[1] = buf[0] + OW;
  for (int64_t oh = 0; oh < s->OH; oh++) {
    float *y = Y + oh * OW;
    if (!s->p.linear) {
      const float *r0 = X + s->h0[oh] * s->W;
      if (oh > 0 && s->h0[oh] == s->h0[oh - 1]) memcpy(y, y - OW, (size_t)OW * sizeof(float));
      else if (s->kw) j->vm->repeat_row(y, r0, (size_t)s->W, (size_t)s->kw);
      else
        for (int64_t ow = 0; ow < OW; ow++) y[ow] = r0[s->w0[ow]];
      continue;
    }
    int64_t a = s->h0[oh], b = s->h1[oh];
    int ia = tag[0] == a ? 0 : tag[1] == a ? 1 : -1;
    if (ia < 0) { /* keep the buffer that holds b */
      ia = tag[0] == b;
      rs_hrow(s, X, a, buf[ia]);
      tag[ia] = a;
    }
    int ib = tag[ia] == b ? ia : tag[1 - ia] == b ? 1 - ia : -1;
    if (ib < 0) {
      ib = 1 - ia;
      rs_hrow(s, X, b, buf[ib]);
      tag[ib] = b;
    }
    const float *t = buf[ia], *u = buf[ib];
    float w = s->hw[oh];
    for (int64_t ow = 0; ow < OW; ow++) y[ow] = t[ow] + (u[ow] - t[ow]) * w;
  }
}

static lc_status resize_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                             lc_exec_ctx *x, void **state) {
  (void)out, (void)n_out;
  return rs_make(n, in, n_in, x, (rs_state **)state);
}

static void resize_fini(void *state) { lc_free(state); }

static lc_status resize_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *xc) {
  (void)n_out;
  if (out->nbytes == 0) return LC_OK;
  rs_state *s = st, *own = NULL;
  if (!s || s->ndim != in[0]->ndim || memcmp(s->dims, in[0]->dims, (size_t)s->ndim * sizeof(int64_t))) {
    lc_status e = rs_make(n, in, n_in, xc, &own);
    if (e) return e;
    s = own;
  }
  int nt = lcop_threads(xc);
  size_t nr = 0;
  if (s->p.linear && (!lc_mul_sz((size_t)nt * 2, (size_t)s->OW, &nr) || nr > SIZE_MAX / sizeof(float))) {
    lc_free(own);
    return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  }
  float *rows = NULL;
  lc_status e = lcop_budget(xc) && nr * sizeof(float) > lcop_budget(xc)
                    ? lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of scratch", nr * sizeof(float))
                    : LC_OK;
  if (!e && nr && !(rows = lc_malloc(nr * sizeof(float)))) e = lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  if (!e) {
    rs_job j = {s, in[0]->data, out->data, rows, lcop_vm(xc)};
    if (s->planes * (size_t)(s->OH * s->OW) < 65536 || nt < 2) {
      for (size_t pl = 0; pl < s->planes; pl++) rs_task(&j, pl, 0);
    } else {
      lcop_parallel(xc, s->planes, rs_task, &j);
    }
  }
  lc_free(rows);
  lc_free(own);
  return e;
}

/* ---------------------------------------------------------------- Upsample (opset 7-9) */

/* Upsample is Resize with asymmetric coordinates and floor rounding; scales come from the
 * attribute (opset 7) or input 1 (opset 9). *as is the Resize node to plan with. */
static lc_status upsample_as(const lc_node *n, const lc_tensor *const *in, int n_in, lc_node *as, lc_attr *attrs,
                             lc_tensor *sc, const lc_tensor **rin) {
  const char *mode = lc_attr_string(n, "mode", "nearest");
  int lin = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
  if (!lin && strcmp(mode, "nearest")) return lcop_fail(n, LC_ERR_UNSUPPORTED, "mode '%s'", mode);
  *as = *n;
  attrs[0] = (lc_attr){.name = "mode", .type = LC_ATTR_STRING, .s = lin ? "linear" : "nearest"};
  attrs[1] = (lc_attr){.name = "coordinate_transformation_mode", .type = LC_ATTR_STRING, .s = "asymmetric"};
  attrs[2] = (lc_attr){.name = "nearest_mode", .type = LC_ATTR_STRING, .s = "floor"};
  as->attrs = attrs, as->n_attrs = 3;
  rin[0] = in[0];
  if (lcop_has(in, n_in, 1)) {
    rin[1] = in[1];
    return LC_OK;
  }
  const lc_attr *a = lc_node_attr(n, "scales");
  if (!a || a->type != LC_ATTR_FLOATS) return lcop_fail(n, LC_ERR_INVALID_ARG, "scales are missing");
  memset(sc, 0, sizeof *sc);
  sc->dtype = LC_DT_FLOAT, sc->ndim = 1, sc->dims[0] = (int64_t)a->n, sc->data = (void *)a->floats;
  sc->nbytes = a->n * sizeof(float);
  rin[1] = sc;
  return LC_OK;
}

static lc_status upsample_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  lc_node as;
  lc_attr attrs[3];
  lc_tensor sc;
  const lc_tensor *rin[2];
  if (!s) s = upsample_as(n, in, n_in, &as, attrs, &sc, rin);
  return s ? s : resize_infer(&as, rin, 2, out, n_out);
}

static lc_status upsample_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                               int n_out, lc_exec_ctx *x, void **state) {
  lc_node as;
  lc_attr attrs[3];
  lc_tensor sc;
  const lc_tensor *rin[2];
  lc_status s = upsample_as(n, in, n_in, &as, attrs, &sc, rin);
  return s ? s : resize_init(&as, rin, 2, out, n_out, x, state);
}

static lc_status upsample_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                              int n_out, lc_exec_ctx *x) {
  lc_node as;
  lc_attr attrs[3];
  lc_tensor sc;
  const lc_tensor *rin[2];
  lc_status s = upsample_as(n, in, n_in, &as, attrs, &sc, rin);
  return s ? s : resize_run(&as, st, rin, 2, out, n_out, x);
}

/* ---------------------------------------------------------------- Pad */

lc_status lcop_pad_plan(const lc_node *n, const lc_tensor *const *in, int n_in, int64_t *pb, int64_t *pe,
                          pad_mode *mode) {
  int r = in[0]->ndim;
  int64_t v[2 * LC_MAX_DIMS];
  size_t nv;
  lc_status s;
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
  const char *ms = lc_attr_string(n, "mode", "constant");
  int m = pick(ms, modes, 4);
  if (m < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "mode '%s'", ms);
  *mode = (pad_mode)m;
  if (lcop_has(in, n_in, 1)) {
    if ((s = lcop_read_ints(n, in[1], "pads", v, 2 * LC_MAX_DIMS, &nv))) return s;
  } else {
    const int64_t *a;
    nv = lc_attr_ints(n, "pads", &a);
    if (nv > 2 * LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many pads");
    if (nv) memcpy(v, a, nv * sizeof(int64_t));
  }
  int64_t axv[LC_MAX_DIMS];
  size_t na = 0;
  if (lcop_has(in, n_in, 3) && (s = lcop_read_ints(n, in[3], "axes", axv, LC_MAX_DIMS, &na))) return s;
  if (!na)
    for (int i = 0; i < r; i++) axv[na++] = i;
  if (nv != 2 * na) return lcop_fail(n, LC_ERR_INVALID_ARG, "pads has %zu values for %zu axes", nv, na);
  for (int i = 0; i < r; i++) pb[i] = pe[i] = 0;
  for (size_t i = 0; i < na; i++) {
    int a;
    if ((s = lcop_axis(n, axv[i], r, &a))) return s;
    int64_t b = v[i], e = v[i + na], d = in[0]->dims[a];
    if (b > (INT64_C(1) << 40) || e > (INT64_C(1) << 40) || b < -d || e < -d || d + b + e < 0)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "bad pads on axis %d", a);
    if (d == 0 && (b > 0 || e > 0) && m != PAD_CONSTANT)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "cannot %s-pad an empty axis", ms);
    pb[a] = b, pe[a] = e;
  }
  return LC_OK;
}

static lc_status pad_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 4, n_out, 1, 1);
  if (s) return s;
  if (!in[0] || lc_dtype_size(in[0]->dtype) == 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "bad data dtype");
  int64_t pb[LC_MAX_DIMS], pe[LC_MAX_DIMS], dims[LC_MAX_DIMS];
  pad_mode m;
  if ((s = lcop_pad_plan(n, in, n_in, pb, pe, &m))) return s;
  if (lcop_has(in, n_in, 2) && in[2]->dtype != in[0]->dtype)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "constant_value dtype differs from data");
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = in[0]->dims[i] + pb[i] + pe[i];
  return lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, dims);
}

static int64_t pad_src(pad_mode m, int64_t i, int64_t d) {
  if (i >= 0 && i < d) return i;
  switch (m) {
  case PAD_CONSTANT: return -1;
  case PAD_EDGE: return i < 0 ? 0 : d - 1;
  case PAD_WRAP: return ((i % d) + d) % d;
  case PAD_REFLECT: {
    if (d == 1) return 0;
    int64_t per = 2 * (d - 1);
    i = ((i % per) + per) % per;
    return i < d ? i : per - i;
  }
  }
  return -1;
}

static lc_status pad_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                         int n_out, lc_exec_ctx *x) {
  int64_t pb[LC_MAX_DIMS], pe[LC_MAX_DIMS];
  pad_mode m;
  lc_status s = lcop_pad_plan(n, in, n_in, pb, pe, &m);
  if (s) return s;
  if (out->nbytes == 0) return LC_OK;
  int r = out->ndim;
  size_t es = lc_dtype_size(out->dtype), total_map = 0;
  char cval[16] = {0};
  if (lcop_has(in, n_in, 2) && in[2]->data) memcpy(cval, in[2]->data, es);
  else if (out->dtype == LC_DT_FLOAT) {
    float f = lc_attr_float(n, "value", 0.0f);
    memcpy(cval, &f, sizeof f);
  }
  if (r == 0) {
    memcpy(out->data, in[0]->data, es);
    return LC_OK;
  }
  for (int i = 0; i < r; i++) total_map += (size_t)out->dims[i];
  int64_t *map = lc_malloc(total_map * sizeof(int64_t)), *mp[LC_MAX_DIMS], ist[LC_MAX_DIMS];
  if (!map) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; i--) ist[i] = acc, acc *= in[0]->dims[i];
  size_t off = 0;
  for (int i = 0; i < r; i++) {
    mp[i] = map + off;
    for (int64_t o = 0; o < out->dims[i]; o++) mp[i][o] = pad_src(m, o - pb[i], in[0]->dims[i]);
    off += (size_t)out->dims[i];
  }
  int64_t len = out->dims[r - 1], rows = 1, idx[LC_MAX_DIMS] = {0};
  for (int i = 0; i < r - 1; i++) rows *= out->dims[i];
  /* Columns [jlo, jhi) copy straight from the source row. */
  int64_t jlo = pb[r - 1] > 0 ? pb[r - 1] : 0, jhi = len - (pe[r - 1] > 0 ? pe[r - 1] : 0);
  if (jhi < jlo) jhi = jlo;
  const char *src = in[0]->data;
  char *o = out->data;
  for (int64_t row = 0; row < rows; row++, o += len * (int64_t)es) {
    int64_t so = 0;
    int outside = 0;
    for (int d = 0; d < r - 1; d++) {
      int64_t k = mp[d][idx[d]];
      if (k < 0) outside = 1;
      else so += k * ist[d];
    }
    if (outside) {
      for (int64_t j = 0; j < len; j++) memcpy(o + j * (int64_t)es, cval, es);
    } else {
      const char *sr = src + so * (int64_t)es;
      for (int64_t j = 0; j < jlo; j++) {
        int64_t k = mp[r - 1][j];
        memcpy(o + j * (int64_t)es, k < 0 ? cval : sr + k * (int64_t)es, es);
      }
      if (jhi > jlo) memcpy(o + jlo * (int64_t)es, sr + mp[r - 1][jlo] * (int64_t)es, (size_t)(jhi - jlo) * es);
      for (int64_t j = jhi; j < len; j++) {
        int64_t k = mp[r - 1][j];
        memcpy(o + j * (int64_t)es, k < 0 ? cval : sr + k * (int64_t)es, es);
      }
    }
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
  lc_free(map);
  return LC_OK;
}

const lc_op_impl lcop_resize_ops[] = {
    {"Resize", resize_infer, resize_init, resize_fini, resize_run, 0, NULL},
    {"Upsample", upsample_infer, upsample_init, resize_fini, upsample_run, 0, NULL},
    {"Pad", pad_infer, NULL, NULL, pad_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
