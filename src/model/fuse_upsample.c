/* Device fusions of nearest integer upsampling (for a plan on a device, after lc_fuse): a Resize
 * whose only reader can read its input through the upsampling instead costs no kernel and no
 * full-size tensor. Feature-pyramid necks (DBNet's, PP-OCR det) add a 2x nearest upsampling of
 * the coarser level to a 1x1 conv's output (fused as the conv's residual):
 *   _res_up (INT f) on a Conv with _residual: the residual input is the Resize's input, read by
 *     the conv's epilogue at (y / f, x / f) (kernels/common.cl lc_store); the CPU conv op
 *     upsamples it itself should the node fall back.
 * Only Resizes whose index tables are exactly o / f on both spatial axes (the table, not the
 * mode names, decides: ops_resize.c's rules, e.g. asymmetric + floor, half_pixel + either round
 * mode) are fused, so the result is bit for bit the unfused one. */
#include <stdio.h>
#include <string.h>

#include "model/graph.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/error.h"

/* f >= 2 when node q is a live Resize that upsamples a 4-D float tensor by the integer f on H
 * and W by nearest copies (index o / f), batch and channels unchanged; else 0. */
static int64_t nearest_factor(lc_model *m, int q) {
  const lc_gnode *z = &m->nodes[q];
  if (z->dead || strcmp(z->n.op_type, "Resize") || z->n.n_outputs != 1 || z->out[0] < 0 || z->n.n_inputs < 2 ||
      z->n.n_inputs > 4 || z->in[0] < 0)
    return 0;
  const lc_tensor *in[4] = {NULL, NULL, NULL, NULL};
  for (int k = 0; k < z->n.n_inputs; k++) {
    if (z->in[k] < 0) continue;
    if (k > 0 && !m->values[z->in[k]].is_const) return 0; /* scales / sizes computed at run time */
    in[k] = &m->values[z->in[k]].t;
  }
  const lc_tensor *x = in[0], *y = &m->values[z->out[0]].t;
  if (x->dtype != LC_DT_FLOAT || x->ndim != 4 || y->ndim != 4) return 0;
  resize_plan p;
  if (lcop_resize_plan(&z->n, in, z->n.n_inputs, &p) || p.linear || p.r != 4) return 0;
  int64_t H = x->dims[2], W = x->dims[3], OH = p.out[2], OW = p.out[3];
  if (H < 1 || W < 1 || OH % H || OH / H < 2 || OH / H > 64 || OW != OH / H * W || p.out[0] != x->dims[0] ||
      p.out[1] != x->dims[1] || memcmp(p.out, y->dims, 4 * sizeof(int64_t)))
    return 0;
  int64_t f = OH / H, *t = lc_malloc((size_t)(OH + OW) * 2 * sizeof(int64_t));
  float *w = lc_malloc((size_t)(OH + OW) * sizeof(float));
  int ok = t && w;
  if (ok) {
    lcop_resize_axis(&p, H, OH, p.scale[2], t, t + OH, w);
    lcop_resize_axis(&p, W, OW, p.scale[3], t + 2 * OH, t + 2 * OH + OW, w + OH);
    for (int64_t o = 0; ok && o < OH; o++) ok = t[o] == o / f;
    for (int64_t o = 0; ok && o < OW; o++) ok = t[2 * OH + o] == o / f;
  }
  lc_free(t), lc_free(w);
  return ok ? f : 0;
}

static void tag(lc_gnode *g, const char *what) {
  size_t l = strlen(g->fused);
  snprintf(g->fused + l, sizeof g->fused - l, "%s%s", l ? "+" : "", what);
}

/* The Resize that writes value r, gone: its only reader now reads its input. */
static void drop_resize(lc_model *m, int r) {
  m->nodes[m->values[r].producer].dead = 1;
  m->values[r].n_uses = 0, m->values[r].producer = -1;
}

/* Conv p with a fused residual that a nearest Resize by f writes for it alone. */
static lc_status fuse_res_up(lc_model *m, int p) {
  lc_gnode *g = &m->nodes[p];
  if (!lc_attr_int(&g->n, "_residual", 0) || lc_node_attr(&g->n, "_res_up") || g->n.n_inputs != 4 || g->in[3] < 0 ||
      g->n.n_outputs != 1 || g->out[0] < 0 || m->values[g->out[0]].t.ndim != 4)
    return LC_OK;
  int r = g->in[3], q = m->values[r].producer;
  if (q < 0 || lc_fold_sole_consumer(m, r) != p || m->values[r].is_output) return LC_OK;
  for (int k = 0; k < 3; k++)
    if (g->in[k] == r) return LC_OK; /* read twice */
  int64_t f = nearest_factor(m, q);
  if (!f) return LC_OK;
  int x = m->nodes[q].in[0];
  lc_status s = lc_fold_add_attr(m, g, "_res_up", LC_ATTR_INT, f, 0);
  if (!s) s = lc_fold_set_input(m, &m->nodes[p], 3, x);
  if (s) return s;
  char t[16];
  snprintf(t, sizeof t, "up%lld", (long long)f);
  tag(&m->nodes[p], t);
  drop_resize(m, r);
  return LC_OK;
}

lc_status lc_fuse_upsample(lc_model *m) {
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    lc_status s = !m->nodes[p].dead && !strcmp(m->nodes[p].n.op_type, "Conv") ? fuse_res_up(m, p) : LC_OK;
    if (s) return s;
  }
  lc_plan_count_uses(m);
  return LC_OK;
}
