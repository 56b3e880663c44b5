/* UpConcat, made by src/model/fuse_upsample.c for a plan on a device: Concat along the channels of
 * 4-D float NCHW inputs, each a plain tensor of the output's H x W or the input of a Resize that
 * the fusion removed, read through that Resize's index tables (lcop_resize_axis's, as the Resize
 * itself and the device's resize2d read them, so the values are the Resize's). Runs here when
 * the device hands the node back. Attributes:
 *   _up_hw INTS {OH, OW}; _up_mode INTS, per input: 0 plain, 1 nearest, 2 linear;
 *   _up_tab INTS, per resized input in order: h0, h1 (OH each), w0, w1 (OW each);
 *   _up_wt FLOATS, per resized input: the weights of h1 (OH), then of w1 (OW). */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "util/checked.h"

typedef struct upc {
  const lc_attr *hw, *mode, *tab, *wt;
  int64_t OH, OW;
} upc;

/* The attributes, checked against the inputs (every table index inside its input); *C: channels. */
static lc_status upc_read(const lc_node *n, const lc_tensor *const *in, int n_in, upc *u, int64_t *C) {
  u->hw = lc_node_attr(n, "_up_hw"), u->mode = lc_node_attr(n, "_up_mode");
  u->tab = lc_node_attr(n, "_up_tab"), u->wt = lc_node_attr(n, "_up_wt");
  if (!u->hw || u->hw->type != LC_ATTR_INTS || u->hw->n != 2 || !u->mode || u->mode->type != LC_ATTR_INTS ||
      u->mode->n != (size_t)n_in || !u->tab || u->tab->type != LC_ATTR_INTS || !u->wt || u->wt->type != LC_ATTR_FLOATS)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "UpConcat needs _up_hw, _up_mode (one per input), _up_tab and _up_wt");
  u->OH = u->hw->ints[0], u->OW = u->hw->ints[1];
  if (u->OH < 1 || u->OW < 1 || u->OH > (INT64_C(1) << 31) || u->OW > (INT64_C(1) << 31))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "output size %lldx%lld", (long long)u->OH, (long long)u->OW);
  size_t nr = 0, L = (size_t)(u->OH + u->OW);
  *C = 0;
  for (int k = 0; k < n_in; k++) {
    const lc_tensor *x = in[k];
    int64_t md = u->mode->ints[k];
    if (!x || x->dtype != LC_DT_FLOAT || x->ndim != 4 || x->dims[0] != in[0]->dims[0] || md < 0 || md > 2)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: not a 4-D float tensor of the batch, or mode %lld", k, (long long)md);
    if (!md && (x->dims[2] != u->OH || x->dims[3] != u->OW))
      return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d is not %lldx%lld", k, (long long)u->OH, (long long)u->OW);
    if (md) {
      if ((nr + 1) * 2 * L > u->tab->n || (nr + 1) * L > u->wt->n)
        return lcop_fail(n, LC_ERR_INVALID_ARG, "index tables too short for input %d", k);
      const int64_t *t = u->tab->ints + nr * 2 * L;
      for (size_t i = 0; i < 2 * L; i++)
        if (t[i] < 0 || t[i] >= x->dims[i < 2 * (size_t)u->OH ? 2 : 3])
          return lcop_fail(n, LC_ERR_INVALID_ARG, "index table of input %d out of range", k);
      nr++;
    }
    if (!lc_add_i64(*C, x->dims[1], C)) return lcop_fail(n, LC_ERR_OVERFLOW, "channel count overflows");
  }
  if (nr * 2 * L != u->tab->n || nr * L != u->wt->n)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "index tables of %zu resized inputs do not match", nr);
  return LC_OK;
}

static lc_status upc_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 64, n_out, 1, 1);
  upc u;
  int64_t C;
  if (!s) s = upc_read(n, in, n_in, &u, &C);
  if (s) return s;
  int64_t d[4] = {in[0]->dims[0], C, u.OH, u.OW};
  return lcop_set_out(n, out, LC_DT_FLOAT, 4, d);
}

static lc_status upc_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                         lc_exec_ctx *x) {
  (void)st, (void)n_out, (void)x;
  upc u;
  int64_t C;
  lc_status s = upc_read(n, in, n_in, &u, &C);
  if (s) return s;
  size_t OH = (size_t)u.OH, OW = (size_t)u.OW, L = OH + OW, N = (size_t)in[0]->dims[0], at = 0, nr = 0;
  float *y = out->data;
  for (int k = 0; k < n_in; k++) {
    const float *src = in[k]->data;
    size_t Ck = (size_t)in[k]->dims[1], H = (size_t)in[k]->dims[2], W = (size_t)in[k]->dims[3];
    int64_t md = u.mode->ints[k];
    const int64_t *h0 = md ? u.tab->ints + nr * 2 * L : NULL, *h1 = h0 + OH, *w0 = h1 + OH, *w1 = w0 + OW;
    const float *hw = md ? u.wt->floats + nr * L : NULL, *ww = hw + OH;
    nr += md != 0;
    for (size_t b = 0; b < N; b++)
      for (size_t c = 0; c < Ck; c++) {
        const float *X = src + (b * Ck + c) * H * W;
        float *Y = y + ((b * (size_t)C + at + c) * OH) * OW;
        if (!md) {
          memcpy(Y, X, OH * OW * sizeof(float));
          continue;
        }
        for (size_t oh = 0; oh < OH; oh++) {
          const float *r0 = X + (size_t)h0[oh] * W, *r1 = X + (size_t)h1[oh] * W;
          for (size_t ow = 0; ow < OW; ow++) {
            size_t a0 = (size_t)w0[ow], a1 = (size_t)w1[ow];
            if (md == 1) {
              Y[oh * OW + ow] = r0[a0];
              continue;
            }
            float top = r0[a0] + (r0[a1] - r0[a0]) * ww[ow]; /* the CPU Resize's order of operations */
            float bot = r1[a0] + (r1[a1] - r1[a0]) * ww[ow];
            Y[oh * OW + ow] = top + (bot - top) * hw[oh];
          }
        }
      }
    at += Ck;
  }
  return LC_OK;
}

const lc_op_impl lcop_upconcat_ops[] = {{"UpConcat", upc_infer, NULL, NULL, upc_run, 0, NULL},
                                        {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
