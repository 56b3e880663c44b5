/* Device fusions of nearest integer upsampling (for a plan on a device, after lc_fuse): a Resize
 * whose only reader can read its input through the upsampling instead costs no kernel and no
 * full-size tensor. Feature-pyramid necks (DBNet's, PP-OCR det) add a 2x nearest upsampling of
 * the coarser level to a 1x1 conv's output (fused as the conv's residual):
 *   _res_up (INT f) on a Conv with _residual: the residual input is the Resize's input, read by
 *     the conv's epilogue at (y / f, x / f) (kernels/common.cl lc_store); the CPU conv op
 *     upsamples it itself should the node fall back.
 *   UpConcat: a Concat along the channels of 4-D tensors, some of them Resizes (any mode) that
 *     only it reads, reads each Resize's input through the Resize's index tables and writes its
 *     output once (the neck's 4 levels upsampled to the finest: 3 Resizes and 4 copies before);
 *     attributes in model/ops/ops_upconcat.c, which also runs it on the CPU.
 * For _res_up only Resizes whose index tables are exactly o / f on both spatial axes (the table,
 * not the mode names, decides: ops_resize.c's rules, e.g. asymmetric + floor, half_pixel + either
 * round mode) are fused; both forms read what the Resize would have written, bit for bit. */
#include <stdio.h>
#include <string.h>

#include "model/graph.h"
#include "model/ops.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/error.h"

/* Node q is a live Resize of a 4-D float tensor (batch and channels kept, scales or sizes
 * constant) whose output is [.., OH, OW]: its plan and index tables t = h0, h1 (OH), w0, w1 (OW)
 * and weights w of h1 (OH), w1 (OW), in buffers of 2 (OH + OW) and OH + OW; 0 if it is not. */
static int resize_tables(lc_model *m, int q, resize_plan *p, int64_t *t, float *w) {
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
  if (x->dtype != LC_DT_FLOAT || x->ndim != 4 || y->ndim != 4 || m->values[z->in[0]].is_const) return 0;
  if (lcop_resize_plan(&z->n, in, z->n.n_inputs, p) || p->r != 4 || memcmp(p->out, y->dims, 4 * sizeof(int64_t)) ||
      p->out[0] != x->dims[0] || p->out[1] != x->dims[1] || x->dims[2] < 1 || x->dims[3] < 1)
    return 0;
  int64_t OH = p->out[2], OW = p->out[3];
  lcop_resize_axis(p, x->dims[2], OH, p->scale[2], t, t + OH, w);
  lcop_resize_axis(p, x->dims[3], OW, p->scale[3], t + 2 * OH, t + 2 * OH + OW, w + OH);
  return 1;
}

/* Tables of Resize q in buffers of its output's size (lc_free *t, *w); 0: not one, or no memory. */
static int resize_tables_new(lc_model *m, int q, resize_plan *p, int64_t **t, float **w) {
  const lc_gnode *z = &m->nodes[q];
  *t = NULL, *w = NULL;
  if (z->n.n_outputs != 1 || z->out[0] < 0 || m->values[z->out[0]].t.ndim != 4) return 0;
  const int64_t *d = m->values[z->out[0]].t.dims;
  if (d[2] < 1 || d[3] < 1 || d[2] > (INT64_C(1) << 30) || d[3] > (INT64_C(1) << 30)) return 0;
  size_t L = (size_t)(d[2] + d[3]);
  *t = lc_malloc(L * 2 * sizeof(int64_t)), *w = lc_malloc(L * sizeof(float));
  if (*t && *w && resize_tables(m, q, p, *t, *w)) return 1;
  lc_free(*t), lc_free(*w);
  *t = NULL, *w = NULL;
  return 0;
}

/* f >= 2 when node q is a Resize (resize_tables) that upsamples by the integer f on H and W by
 * nearest copies (index o / f); else 0. */
static int64_t nearest_factor(lc_model *m, int q) {
  resize_plan p;
  int64_t *t;
  float *w;
  if (!resize_tables_new(m, q, &p, &t, &w)) return 0;
  const int64_t *xd = m->values[m->nodes[q].in[0]].t.dims, OH = p.out[2], OW = p.out[3], f = OH / xd[2];
  int ok = !p.linear && OH % xd[2] == 0 && f >= 2 && f <= 64 && OW == f * xd[3];
  for (int64_t o = 0; ok && o < OH; o++) ok = t[o] == o / f;
  for (int64_t o = 0; ok && o < OW; o++) ok = t[2 * OH + o] == o / f;
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

/* Attribute name of node g: INTS v[n] or FLOATS f[n], copied into the model's arena. */
static lc_status add_array(lc_model *m, int p, const char *name, const int64_t *v, const float *f, size_t n) {
  size_t es = v ? sizeof(int64_t) : sizeof(float);
  void *a = lc_arena_alloc(m->arena, (n ? n : 1) * es);
  if (!a) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  memcpy(a, v ? (const void *)v : (const void *)f, n * es);
  lc_status s = lc_fold_add_attr(m, &m->nodes[p], name, v ? LC_ATTR_INTS : LC_ATTR_FLOATS, 0, 0);
  if (s) return s;
  lc_attr *at = &m->nodes[p].n.attrs[m->nodes[p].n.n_attrs - 1];
  if (v) at->ints = a;
  else at->floats = a;
  at->n = n;
  return LC_OK;
}

#define UPC_MAX 64

/* Concat p along the channels of 4-D tensors, some of them Resizes that only it reads: becomes
 * UpConcat (ops_upconcat.c), which reads each Resize's input through the Resize's tables. */
static lc_status fuse_concat(lc_model *m, int p) {
  lc_gnode *g = &m->nodes[p];
  int nin = g->n.n_inputs, nr = 0, src[UPC_MAX];
  if (g->n.n_outputs != 1 || g->out[0] < 0 || nin < 1 || nin > UPC_MAX) return LC_OK;
  const lc_tensor *y = &m->values[g->out[0]].t;
  int64_t axis = lc_attr_int(&g->n, "axis", 0), mode[UPC_MAX], hw[2] = {y->dims[2], y->dims[3]};
  if (y->ndim != 4 || y->dtype != LC_DT_FLOAT || (axis != 1 && axis != -3) || hw[0] < 1 || hw[1] < 1) return LC_OK;
  size_t L = (size_t)(hw[0] + hw[1]);
  for (int k = 0; k < nin; k++) {
    int v = g->in[k], q = v >= 0 ? m->values[v].producer : -1;
    if (v < 0 || m->values[v].t.ndim != 4 || m->values[v].t.dtype != LC_DT_FLOAT) return LC_OK;
    mode[k] = 0, src[k] = v;
    if (q < 0 || m->nodes[q].dead || strcmp(m->nodes[q].n.op_type, "Resize") || lc_fold_sole_consumer(m, v) != p)
      continue;
    resize_plan rp;
    int64_t *t;
    float *w;
    if (!resize_tables_new(m, q, &rp, &t, &w)) continue;
    lc_free(t), lc_free(w);
    mode[k] = rp.linear ? 2 : 1, src[k] = m->nodes[q].in[0];
    nr++;
  }
  if (!nr) return LC_OK;
  int64_t *tab = lc_malloc((size_t)nr * 2 * L * sizeof(int64_t));
  float *wt = lc_malloc((size_t)nr * L * sizeof(float));
  lc_status s = tab && wt ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  for (int k = 0, r = 0; !s && k < nin; k++) {
    resize_plan rp;
    if (mode[k] && !resize_tables(m, m->values[g->in[k]].producer, &rp, tab + (size_t)r * 2 * L, wt + (size_t)r * L))
      s = lc_error(LC_ERR_INTERNAL, "model: Resize tables changed");
    r += mode[k] != 0;
  }
  if (!s) s = add_array(m, p, "_up_hw", hw, NULL, 2);
  if (!s) s = add_array(m, p, "_up_mode", mode, NULL, (size_t)nin);
  if (!s) s = add_array(m, p, "_up_tab", tab, NULL, (size_t)nr * 2 * L);
  if (!s) s = add_array(m, p, "_up_wt", NULL, wt, (size_t)nr * L);
  lc_free(tab), lc_free(wt);
  for (int k = 0; !s && k < nin; k++) {
    if (!mode[k]) continue;
    int r = m->nodes[p].in[k];
    if ((s = lc_fold_set_input(m, &m->nodes[p], k, src[k]))) break;
    if (m->values[r].producer >= 0) drop_resize(m, r); /* Concat(r, r): once */
  }
  if (s) return s;
  g = &m->nodes[p];
  g->n.op_type = "UpConcat";
  if (!(g->op = lc_op_find("UpConcat"))) return lc_error(LC_ERR_INTERNAL, "model: no UpConcat op");
  char t[24];
  snprintf(t, sizeof t, "resized%d", nr);
  tag(g, t);
  return LC_OK;
}

lc_status lc_fuse_upsample(lc_model *m) {
  lc_plan_count_uses(m);
  for (int p = 0; p < m->n_nodes; p++) {
    const char *op = m->nodes[p].n.op_type;
    lc_status s = m->nodes[p].dead ? LC_OK : !strcmp(op, "Conv") ? fuse_res_up(m, p)
                  : !strcmp(op, "Concat") ? fuse_concat(m, p) : LC_OK;
    if (s) return s;
  }
  lc_plan_count_uses(m);
  return LC_OK;
}
