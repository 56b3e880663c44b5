/* Einsum over float32, 1 to 3 operands: explicit ("bchw,bkc->bkhw") and implicit outputs, "...",
 * repeated letters in one operand (diagonals) and letters summed away. Every output element is one
 * sum over the letters that do not appear in the output, accumulated in double, walking each
 * operand by per-letter strides (a letter repeated in an operand adds its strides). */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "util/checked.h"

#define EI_MAX_OPS 3
#define EI_LETTERS 52

typedef struct ein_plan {
  int nop, nout, nsum;
  int out[LC_MAX_DIMS], sum[EI_LETTERS]; /* letter ids */
  int64_t size[EI_LETTERS];
  int64_t st[EI_MAX_OPS][EI_LETTERS];    /* element stride of each letter in each operand */
} ein_plan;

static int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -1;
}

/* Reads one operand's (or the output's) subscripts into ids; "..." becomes ell_n letters taken
 * from the ids not used by any named letter (ell[]). Returns the count or -1. */
static int parse_term(const char *s, const char *e, const int *ell, int ell_n, int *ids, int max, int *saw_ell) {
  int k = 0;
  for (const char *p = s; p < e; p++) {
    if (*p == ' ') continue;
    if (*p == '.') {
      if (e - p < 3 || p[1] != '.' || p[2] != '.' || *saw_ell) return -1;
      *saw_ell = 1;
      for (int i = 0; i < ell_n; i++) {
        if (k >= max) return -1;
        ids[k++] = ell[i];
      }
      p += 2;
      continue;
    }
    int id = letter_id(*p);
    if (id < 0 || k >= max) return -1;
    ids[k++] = id;
  }
  return k;
}

static lc_status ein_build(const lc_node *n, const lc_tensor *const *in, int n_in, ein_plan *p) {
  const char *eq = lc_attr_string(n, "equation", NULL);
  if (!eq) return lcop_fail(n, LC_ERR_INVALID_ARG, "equation is missing");
  if (n_in < 1 || n_in > EI_MAX_OPS) return lcop_fail(n, LC_ERR_UNSUPPORTED, "%d operands (1 to 3)", n_in);
  memset(p, 0, sizeof *p);
  p->nop = n_in;
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
  int used[EI_LETTERS] = {0}, ell[LC_MAX_DIMS], ell_n = 0, count[EI_LETTERS] = {0};
  for (const char *c = eq; *c; c++)
    if (letter_id(*c) >= 0) used[letter_id(*c)] = 1;
  const char *term = eq, *ts[EI_MAX_OPS], *tend[EI_MAX_OPS];
  int ids[EI_MAX_OPS][LC_MAX_DIMS], nid[EI_MAX_OPS], want[EI_MAX_OPS];
  for (int i = 0; i < n_in; i++) { /* the terms, and how many dims each one's "..." stands for */
    const char *te = i + 1 < n_in ? strchr(term, ',') : end;
    if (!te || te > end) return lcop_fail(n, LC_ERR_INVALID_ARG, "equation '%s' has fewer terms than inputs", eq);
    int named = 0, has_ell = 0;
    for (const char *c = term; c < te; c++) named += letter_id(*c) >= 0, has_ell |= *c == '.';
    want[i] = has_ell ? in[i]->ndim - named : 0;
    if (want[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "term %d has more letters than input %d has dims", i, i);
    if (want[i] > ell_n) ell_n = want[i];
    ts[i] = term, tend[i] = te;
    term = te + 1;
  }
  for (int id = EI_LETTERS - 1, k = 0; id >= 0 && k < ell_n; id--) /* broadcast dims: right-aligned letters */
    if (!used[id]) used[id] = 2, ell[k++] = id;
  for (int i = 0; i < n_in; i++) {
    int saw = 0;
    nid[i] = parse_term(ts[i], tend[i], ell + (ell_n - want[i]), want[i], ids[i], LC_MAX_DIMS, &saw);
    if (nid[i] != in[i]->ndim) return lcop_fail(n, LC_ERR_INVALID_ARG, "term %d does not match input %d's rank %d", i, i, in[i]->ndim);
  }
  for (int i = 0; i < EI_LETTERS; i++) p->size[i] = -1;
  for (int i = 0; i < n_in; i++) {
    int64_t st[LC_MAX_DIMS];
    lcop_contiguous_strides(in[i], st);
    for (int d = 0; d < nid[i]; d++) {
      int id = ids[i][d];
      int64_t sz = in[i]->dims[d];
      if (p->size[id] >= 0 && p->size[id] != sz && sz != 1 && p->size[id] != 1)
        return lcop_fail(n, LC_ERR_INVALID_ARG, "letter sizes differ (%lld, %lld)", (long long)p->size[id], (long long)sz);
      if (sz != 1 || p->size[id] < 0) p->size[id] = sz;
      if (sz != 1) p->st[i][id] += st[d];
      count[id]++;
    }
  }
  if (arrow) {
    int saw = 0;
    p->nout = parse_term(arrow + 2, arrow + strlen(arrow), ell, ell_n, p->out, LC_MAX_DIMS, &saw);
    if (p->nout < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "bad output term in '%s'", eq);
  } else { /* implicit: the ellipsis dims, then letters seen once, in alphabetical order */
    for (int i = 0; i < ell_n; i++) p->out[p->nout++] = ell[i];
    for (int id = 0; id < EI_LETTERS; id++)
      if (count[id] == 1 && used[id] == 1) {
        if (p->nout >= LC_MAX_DIMS) return lcop_fail(n, LC_ERR_UNSUPPORTED, "output rank too large");
        p->out[p->nout++] = id;
      }
  }
  int in_out[EI_LETTERS] = {0};
  for (int i = 0; i < p->nout; i++) {
    if (p->size[p->out[i]] < 0 || in_out[p->out[i]]) return lcop_fail(n, LC_ERR_INVALID_ARG, "bad output letter in '%s'", eq);
    in_out[p->out[i]] = 1;
  }
  for (int id = 0; id < EI_LETTERS; id++)
    if (p->size[id] >= 0 && !in_out[id]) p->sum[p->nsum++] = id;
  return LC_OK;
}

static lc_status ein_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, EI_MAX_OPS, n_out, 1, 1);
  for (int i = 0; !s && i < n_in; i++) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  ein_plan p;
  if (!s) s = ein_build(n, in, n_in, &p);
  if (s) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < p.nout; i++) dims[i] = p.size[p.out[i]];
  return lcop_set_out(n, out, LC_DT_FLOAT, p.nout, dims);
}

static lc_status ein_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                         lc_exec_ctx *x) {
  ein_plan p;
  lc_status s = ein_build(n, in, n_in, &p);
  if (s || !out->nbytes) return s;
  size_t total, inner = 1, work;
  lcop_numel(out, &total);
  for (int i = 0; i < p.nsum; i++)
    if (!lc_mul_sz(inner, (size_t)p.size[p.sum[i]], &inner)) inner = SIZE_MAX;
  if (!lc_mul_sz(total, inner, &work) || work > ((size_t)1 << 40)) /* hours of work: refused */
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "%zu output elements x %zu terms each is too much work", total, inner);
  int64_t oi[LC_MAX_DIMS] = {0}, si[EI_LETTERS];
  float *Y = out->data;
  for (size_t o = 0; o < total; o++) {
    int64_t base[EI_MAX_OPS] = {0};
    for (int k = 0; k < p.nop; k++)
      for (int d = 0; d < p.nout; d++) base[k] += oi[d] * p.st[k][p.out[d]];
    double acc = 0;
    memset(si, 0, sizeof si);
    int64_t off[EI_MAX_OPS];
    memcpy(off, base, sizeof off);
    for (size_t r = 0; r < inner; r++) {
      double v = 1;
      for (int k = 0; k < p.nop; k++) v *= ((const float *)in[k]->data)[off[k]];
      acc += v;
      for (int d = p.nsum - 1; d >= 0; d--) { /* odometer over the summed letters */
        int id = p.sum[d];
        for (int k = 0; k < p.nop; k++) off[k] += p.st[k][id];
        if (++si[d] < p.size[id]) break;
        for (int k = 0; k < p.nop; k++) off[k] -= p.st[k][id] * p.size[id];
        si[d] = 0;
      }
    }
    Y[o] = (float)acc;
    for (int d = p.nout - 1; d >= 0; d--) {
      if (++oi[d] < p.size[p.out[d]]) break;
      oi[d] = 0;
    }
  }
  return LC_OK;
}

const lc_op_impl lcop_einsum_ops[] = {{"Einsum", ein_infer, NULL, NULL, ein_run, 0, NULL},
                                      {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
