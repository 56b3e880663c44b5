/* Data-moving device ops, any dtype (moved as 1-, 4- or 8-byte elements): Concat, Split, Slice,
 * Transpose, Expand, DepthToSpace, SpaceToDepth, Tile (all strided copies), Pad, Gather with
 * constant indices, and Resize / Upsample (float, every mode the CPU has, from the CPU's own
 * per-axis tables). kernels/ops_data.cl. */
#include <string.h>

#include "backend/opencl/cl_ops_int.h"
#include "util/alloc.h"

#define DATA_LWS 64

static void contiguous(const int64_t *dims, int nd, int64_t *st) {
  int64_t acc = 1;
  for (int i = nd - 1; i >= 0; i--) st[i] = acc, acc *= dims[i];
}

/* One strided copy launch from input slot in_slot (or the constant mem when set) to output
 * slot out_slot: element (i_0..i_nd) goes from soff + sum i*sst to doff + sum i*dst. */
static void strided(lc_clop *op, const lc_node *n, int in_slot, cl_mem src_mem, int out_slot, size_t es, int nd,
                    const int64_t *dims, const int64_t *sst, const int64_t *dst, int64_t soff, int64_t doff) {
  int64_t g[27] = {0}, cnt = 1;
  int k = 0;
  for (int i = 0; i < nd; i++) {
    if (dims[i] == 1) continue; /* size-1 dims move nothing */
    if (k == 8) {
      clop_fail(op, n, LC_ERR_UNSUPPORTED, "a strided copy of more than 8 dims");
      return;
    }
    g[1 + k] = dims[i], g[9 + k] = sst[i], g[17 + k] = dst[i];
    cnt *= dims[i];
    k++;
  }
  if (!cnt) return;
  /* Both sides one contiguous run (Concat or Split on the outermost moving axis, a batch-1
   * channel Concat): a buffer copy, at the copy engine's rate rather than an index kernel's. */
  int flat = !src_mem;
  for (int j = k - 1, e = 1; j >= 0 && flat; e *= (int)g[1 + j], j--) flat = g[9 + j] == e && g[17 + j] == e;
  if (flat) {
    clop_launch *l = clop_copy(op, in_slot, out_slot, (size_t)cnt * es);
    if (l) l->src_off = (size_t)soff * es, l->dst_off = (size_t)doff * es;
    return;
  }
  g[0] = k, g[25] = soff, g[26] = doff;
  const char *sfx = clop_esuffix(es);
  if (!sfx) {
    clop_fail(op, n, LC_ERR_UNSUPPORTED, "no device copy for this element size");
    return;
  }
  static const char *const names[] = {"copy_u8", "copy_u32", "copy_u64"};
  cl_mem geo = clop_ints(op, g, 27);
  clop_launch *l = clop_kernel(op, "ops_data", names[es == 1 ? 0 : es == 4 ? 1 : 2], (size_t)cnt, DATA_LWS);
  if (src_mem) clop_mem(op, l, src_mem);
  else clop_in(op, l, in_slot);
  clop_args(op, l, "OMN", out_slot, geo, (int64_t)cnt);
}

/* The constant copy of input i when it is one, else NULL (bound by slot). */
static cl_mem const_input(lc_clop *op, const lc_tensor *t, int i, unsigned cm) {
  if (!(cm >> i & 1u)) return NULL;
  op->packed |= 1u << i;
  return clop_upload(op, t->data, t->nbytes);
}

static lc_status make_concat(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                             const lc_tensor *out, unsigned cm) {
  int r = out->ndim, axis;
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis);
  if (s) return s;
  int64_t ost[LC_MAX_DIMS], ist[LC_MAX_DIMS], at = 0;
  contiguous(out->dims, r, ost);
  for (int i = 0; i < n_in; i++) {
    contiguous(in[i]->dims, r, ist);
    strided(op, n, i, const_input(op, in[i], i, cm), 0, lc_dtype_size(out->dtype), r, in[i]->dims, ist, ost, 0,
            at * ost[axis]);
    at += in[i]->dims[axis];
  }
  return clop_status(op);
}

static lc_status make_split(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                            const lc_tensor *out, int n_out, unsigned cm) {
  int axis;
  int64_t sz[256], ist[LC_MAX_DIMS], ost[LC_MAX_DIMS], at = 0;
  if (n_out > 256) return lcop_fail(n, LC_ERR_UNSUPPORTED, "too many outputs");
  lc_status s = lcop_split_sizes(n, in, n_in, n_out, &axis, sz);
  if (s) return s;
  op->packed |= cm & 2u;
  contiguous(in[0]->dims, in[0]->ndim, ist);
  for (int i = 0; i < n_out; i++) {
    contiguous(out[i].dims, out[i].ndim, ost);
    strided(op, n, 0, NULL, i, lc_dtype_size(out[i].dtype), out[i].ndim, out[i].dims, ist, ost, at * ist[axis], 0);
    at += sz[i];
  }
  return clop_status(op);
}

static lc_status make_pad(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                          const lc_tensor *out, unsigned cm) {
  int64_t pb[LC_MAX_DIMS], pe[LC_MAX_DIMS], ist[LC_MAX_DIMS], g[34] = {0};
  pad_mode m;
  lc_status s = lcop_pad_plan(n, in, n_in, pb, pe, &m);
  if (s) return s;
  size_t es = lc_dtype_size(out->dtype);
  uint64_t cv = 0;
  if (lcop_has(in, n_in, 2) && in[2]->data) memcpy(&cv, in[2]->data, es);
  else if (out->dtype == LC_DT_FLOAT) {
    float f = lc_attr_float(n, "value", 0.0f);
    memcpy(&cv, &f, sizeof f);
  }
  op->packed |= cm & 0xeu;
  int64_t cnt = clop_numel(out);
  if (!cnt) return LC_OK;
  int r = out->ndim;
  contiguous(in[0]->dims, r, ist);
  g[0] = r, g[1] = m;
  for (int i = 0; i < r; i++) g[2 + i] = out->dims[i], g[10 + i] = in[0]->dims[i], g[18 + i] = pb[i], g[26 + i] = ist[i];
  static const char *const names[] = {"pad_u8", "pad_u32", "pad_u64"};
  if (!clop_esuffix(es)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "element size");
  cl_mem geo = clop_ints(op, g, 34), src = const_input(op, in[0], 0, cm);
  clop_launch *l = clop_kernel(op, "ops_data", names[es == 1 ? 0 : es == 4 ? 1 : 2], (size_t)(r ? cnt : 1), DATA_LWS);
  if (src) clop_mem(op, l, src);
  else clop_in(op, l, 0);
  clop_args(op, l, "OMNU", 0, geo, (int64_t)cnt, (uint64_t)cv);
  return clop_status(op);
}

static lc_status make_gather(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                             unsigned cm) {
  if (!(cm & 2u) || (cm & 1u)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "device Gather needs constant indices");
  int r = in[0]->ndim, axis;
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis);
  if (s) return s;
  size_t outer, inner;
  lcop_dims_prod(in[0]->dims, 0, axis, &outer);
  lcop_dims_prod(in[0]->dims, axis + 1, r, &inner);
  int64_t ni = clop_numel(in[1]), d = in[0]->dims[axis], cnt = clop_numel(out);
  if (ni < 0 || cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  int64_t *idx = lc_malloc((size_t)(ni ? ni : 1) * sizeof(int64_t));
  if (!idx) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  for (int64_t j = 0; j < ni && !s; j++) {
    int64_t k = in[1]->dtype == LC_DT_INT64 ? ((const int64_t *)in[1]->data)[j] : ((const int32_t *)in[1]->data)[j];
    if (k < -d || k >= d) s = lcop_fail(n, LC_ERR_INVALID_ARG, "index %lld out of range", (long long)k);
    idx[j] = k < 0 ? k + d : k;
  }
  cl_mem im = s ? NULL : clop_ints(op, idx, (int)ni);
  lc_free(idx);
  if (s) return s;
  op->packed |= 2u;
  static const char *const names[] = {"gather_u8", "gather_u32", "gather_u64"};
  size_t es = lc_dtype_size(out->dtype);
  if (!clop_esuffix(es)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "element size");
  if (!cnt) return clop_status(op);
  clop_launch *l = clop_kernel(op, "ops_data", names[es == 1 ? 0 : es == 4 ? 1 : 2], (size_t)cnt, DATA_LWS);
  clop_args(op, l, "IOMNNNN", 0, 0, im, (int64_t)cnt, (int64_t)ni, (int64_t)inner, (int64_t)d);
  (void)outer;
  return clop_status(op);
}

static lc_status make_resize(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                             const lc_tensor *out, unsigned cm) {
  resize_plan p;
  lc_status s = lcop_resize_plan(n, in, n_in, &p);
  if (s) return s;
  if (cm & 1u) return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input (folded on the host)");
  op->packed |= cm & 0xeu;
  int r = p.r;
  int64_t H = r >= 2 ? in[0]->dims[r - 2] : 1, W = in[0]->dims[r - 1];
  int64_t OH = r >= 2 ? p.out[r - 2] : 1, OW = p.out[r - 1], cnt = clop_numel(out);
  double sh = r >= 2 ? p.scale[r - 2] : 1.0, sw = p.scale[r - 1];
  if (cnt < 0 || clop_numel(in[0]) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  if (!cnt) return LC_OK;
  size_t tn = (size_t)(OH + OW);
  int64_t *ix = lc_malloc(tn * 2 * sizeof(int64_t));
  float *wt = lc_malloc(tn * sizeof(float));
  if (!ix || !wt) {
    lc_free(ix), lc_free(wt);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  }
  int64_t *h0 = ix, *h1 = h0 + OH, *w0 = h1 + OH, *w1 = w0 + OW;
  lcop_resize_axis(&p, H, OH, sh, h0, h1, wt);
  lcop_resize_axis(&p, W, OW, sw, w0, w1, wt + OH);
  cl_mem th0 = clop_ints(op, h0, (int)OH), th1 = clop_ints(op, h1, (int)OH);
  cl_mem tw0 = clop_ints(op, w0, (int)OW), tw1 = clop_ints(op, w1, (int)OW);
  cl_mem thw = clop_upload(op, wt, (size_t)OH * sizeof(float)), tww = clop_upload(op, wt + OH, (size_t)OW * sizeof(float));
  lc_free(ix);
  lc_free(wt);
  clop_launch *l = clop_kernel(op, "ops_data", "resize2d", (size_t)cnt, DATA_LWS);
  clop_args(op, l, "IOMMMMMMNNNNNN", 0, 0, th0, th1, thw, tw0, tw1, tww, (int64_t)cnt, (int64_t)H, (int64_t)W,
            (int64_t)OH, (int64_t)OW, (int64_t)(p.linear));
  return clop_status(op);
}

/* UpConcat (fuse_upsample.c; attributes in model/ops/ops_upconcat.c): the output written once,
 * each input read plain or through its Resize's tables, up to 4 inputs per launch (concat_up4). */
static lc_status make_upconcat(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                               const lc_tensor *out, unsigned cm) {
  const lc_attr *md = lc_node_attr(n, "_up_mode"), *tb = lc_node_attr(n, "_up_tab"), *wt = lc_node_attr(n, "_up_wt");
  if (cm || !md || !tb || !wt || md->n != (size_t)n_in || out->ndim != 4 || clop_numel(out) < 0 || !tb->n)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "UpConcat of constants or without its tables");
  for (int k = 0; k < n_in; k++)
    if (clop_numel(in[k]) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  if (tb->n > (size_t)INT32_MAX) return lcop_fail(n, LC_ERR_UNSUPPORTED, "index tables too large");
  int64_t N = out->dims[0], CT = out->dims[1], OH = out->dims[2], OW = out->dims[3], L = OH + OW, meta[28];
  cl_mem tab = clop_ints(op, tb->ints, (int)tb->n), w = clop_upload(op, wt->floats, wt->n * sizeof(float));
  for (int k0 = 0, r = 0, c0 = 0; k0 < n_in; k0 += 4) {
    int k = n_in - k0 < 4 ? n_in - k0 : 4, slot[4];
    int64_t C = 0;
    for (int j = 0; j < k; j++) {
      const lc_tensor *x = in[k0 + j];
      int64_t mj = md->ints[k0 + j], e[7] = {C, x->dims[1], x->dims[2], x->dims[3], mj, 2 * L * r, L * r};
      memcpy(meta + 7 * j, e, sizeof e);
      r += mj != 0, C += x->dims[1], slot[j] = k0 + j;
    }
    for (int j = k; j < 4; j++) slot[j] = k0; /* not read */
    cl_mem mm = clop_ints(op, meta, 7 * k);
    if (N * C * OH * OW > 0) {
      clop_launch *l = clop_kernel(op, "ops_data", "concat_up4", (size_t)(N * C * OH * OW), DATA_LWS);
      clop_args(op, l, "IIIIOMMMNNNNNNN", slot[0], slot[1], slot[2], slot[3], 0, tab, w, mm, N * C * OH * OW,
                (int64_t)k, C, (int64_t)c0, CT, OH, OW);
    }
    c0 += (int)C;
  }
  return clop_status(op);
}

/* DepthToSpace / SpaceToDepth (DCR and CRD) as one 6-D strided copy: the output's dims od,
 * read at input element strides os (ONNX's reshape, transpose, reshape). */
static lc_status make_d2s(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out) {
  const lc_tensor *t = in[0];
  int64_t b = lc_attr_int(n, "blocksize", 0);
  int crd = !strcmp(lc_attr_string(n, "mode", "DCR"), "CRD");
  if (t->ndim != 4 || b < 1 || b > 4096 || clop_numel(t) < 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device version of this form");
  int64_t N = t->dims[0], C = t->dims[1], H = t->dims[2], W = t->dims[3], od[6], os[6], ost[6];
  if (n->op_type[0] == 'D') {
    if (C % (b * b)) return lcop_fail(n, LC_ERR_INVALID_ARG, "channels not divisible by blocksize^2");
    int64_t c = C / (b * b), plane = H * W;
    /* output (n, c, h, i, w, j) <- input channel (i * b + j) * c + c' (DCR) or c' * b * b + i * b + j (CRD) */
    int64_t d[6] = {N, c, H, b, W, b};
    int64_t st[6] = {C * plane, (crd ? b * b : 1) * plane, W, (crd ? b : b * c) * plane, 1, (crd ? 1 : c) * plane};
    memcpy(od, d, sizeof d), memcpy(os, st, sizeof st);
  } else {
    if (H % b || W % b) return lcop_fail(n, LC_ERR_INVALID_ARG, "H and W not divisible by blocksize");
    /* output channel (i * b + j) * C + c (DCR) or c * b * b + i * b + j (CRD), at (h, w): input (c, h * b + i, w * b + j) */
    int64_t dd[6] = {N, b, b, C, H / b, W / b}, sd[6] = {C * H * W, W, 1, H * W, b * W, b};
    int64_t dc[6] = {N, C, b, b, H / b, W / b}, sc[6] = {C * H * W, H * W, W, 1, b * W, b};
    memcpy(od, crd ? dc : dd, sizeof dd), memcpy(os, crd ? sc : sd, sizeof sd);
  }
  contiguous(od, 6, ost);
  strided(op, n, 0, NULL, 0, lc_dtype_size(out->dtype), 6, od, os, ost, 0, 0);
  return clop_status(op);
}

/* Tile as one strided copy: the output seen as [rep_0, d_0, rep_1, d_1, ...] (row-major, so
 * exactly Tile's layout), read at stride 0 along the repeats. */
static lc_status make_tile(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                           unsigned cm) {
  const lc_tensor *t = in[0];
  int r = t->ndim;
  int64_t d[2 * LC_MAX_DIMS], ss[2 * LC_MAX_DIMS], ds[2 * LC_MAX_DIMS], ist[LC_MAX_DIMS], ost[LC_MAX_DIMS];
  if (clop_numel(t) < 0 || out->ndim != r) return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device version of this form");
  op->packed |= cm & 2u; /* the repeats: out's shape says them */
  if (!clop_numel(out)) return clop_status(op);
  contiguous(t->dims, r, ist);
  contiguous(out->dims, r, ost);
  for (int i = 0; i < r; i++) {
    d[2 * i] = out->dims[i] / t->dims[i], d[2 * i + 1] = t->dims[i];
    ss[2 * i] = 0, ss[2 * i + 1] = ist[i];
    ds[2 * i] = t->dims[i] * ost[i], ds[2 * i + 1] = ost[i];
  }
  strided(op, n, 0, NULL, 0, lc_dtype_size(out->dtype), 2 * r, d, ss, ds, 0, 0);
  return clop_status(op);
}

/* Upsample (opset 7-9) is Resize with asymmetric coordinates and floor rounding, as the CPU
 * runs it; the scales from the attribute (opset 7) or input 1. */
static lc_status make_upsample(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                               const lc_tensor *out, unsigned cm) {
  const char *mode = lc_attr_string(n, "mode", "nearest");
  int lin = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
  if (!lin && strcmp(mode, "nearest")) return lcop_fail(n, LC_ERR_UNSUPPORTED, "mode '%s'", mode);
  lc_attr at[3] = {{.name = "mode", .type = LC_ATTR_STRING, .s = lin ? "linear" : "nearest"},
                   {.name = "coordinate_transformation_mode", .type = LC_ATTR_STRING, .s = "asymmetric"},
                   {.name = "nearest_mode", .type = LC_ATTR_STRING, .s = "floor"}};
  lc_node as = *n;
  as.attrs = at, as.n_attrs = 3;
  lc_tensor sc = {0};
  const lc_tensor *rin[2] = {in[0], lcop_has(in, n_in, 1) ? in[1] : &sc};
  if (!lcop_has(in, n_in, 1)) {
    const lc_attr *a = lc_node_attr(n, "scales");
    if (!a || a->type != LC_ATTR_FLOATS) return lcop_fail(n, LC_ERR_INVALID_ARG, "scales are missing");
    sc.dtype = LC_DT_FLOAT, sc.ndim = 1, sc.dims[0] = (int64_t)a->n, sc.data = (void *)a->floats;
    sc.nbytes = a->n * sizeof(float);
  }
  return make_resize(op, &as, rin, 2, out, cm);
}

lc_status clop_make_data(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                         int n_out, unsigned cm) {
  const char *t = n->op_type;
  int64_t ist[LC_MAX_DIMS], st[LC_MAX_DIMS], ost[LC_MAX_DIMS];
  for (int i = 0; i < n_out; i++)
    if (clop_numel(&out[i]) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "copy";
  if (!strcmp(t, "Concat")) return make_concat(op, n, in, n_in, out, cm);
  if (!strcmp(t, "UpConcat")) return make_upconcat(op, n, in, n_in, out, cm);
  if (!strcmp(t, "Split")) return make_split(op, n, in, n_in, out, n_out, cm);
  if (!strcmp(t, "Pad")) return make_pad(op, n, in, n_in, out, cm);
  if (!strcmp(t, "Gather")) return make_gather(op, n, in, out, cm);
  if (!strcmp(t, "Resize") || !strcmp(t, "Upsample")) {
    op->route = "resize";
    return t[0] == 'R' ? make_resize(op, n, in, n_in, out, cm) : make_upsample(op, n, in, n_in, out, cm);
  }
  if (!strcmp(t, "DepthToSpace") || !strcmp(t, "SpaceToDepth") || !strcmp(t, "Tile")) {
    if (cm & 1u) return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input (folded on the host)");
    return t[0] == 'T' ? make_tile(op, n, in, out, cm) : make_d2s(op, n, in, out);
  }
  if (strcmp(t, "Slice") && strcmp(t, "Transpose") && strcmp(t, "Expand")) return LC_ERR_UNSUPPORTED;
  if (cm & 1u) return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input (folded on the host)");
  op->packed |= cm & ~1u;
  lc_status s;
  size_t es = lc_dtype_size(out->dtype);
  contiguous(in[0]->dims, in[0]->ndim, ist);
  contiguous(out->dims, out->ndim, ost);
  if (!strcmp(t, "Slice")) {
    slice_plan p;
    if ((s = lcop_slice_plan(n, in, n_in, &p))) return s;
    strided(op, n, 0, NULL, 0, es, out->ndim, p.dims, p.st, ost, p.off, 0);
  } else if (!strcmp(t, "Transpose")) {
    int perm[LC_MAX_DIMS];
    if ((s = lcop_transpose_perm(n, in[0], perm))) return s;
    for (int i = 0; i < out->ndim; i++) st[i] = ist[perm[i]];
    strided(op, n, 0, NULL, 0, es, out->ndim, out->dims, st, ost, 0, 0);
  } else {
    int r = out->ndim, off = r - in[0]->ndim;
    for (int i = 0; i < r; i++) st[i] = i < off || in[0]->dims[i - off] == 1 ? 0 : ist[i - off];
    strided(op, n, 0, NULL, 0, es, r, out->dims, st, ost, 0, 0);
  }
  return clop_status(op);
}
