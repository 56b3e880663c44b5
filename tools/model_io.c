/* Model plumbing of the model commands: shapes, .npy inputs, output files (model_cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/npy.h"
#include "model/ops.h"
#include "model/q4plan.h"
#include "model_cli.h"
#include "util/alloc.h"

int model_fail(const char *cmd, const char *what, lc_status s) {
  const char *msg = lc_last_error();
  fprintf(stderr, "lowconv %s: %s: %s\n", cmd, what, msg && msg[0] ? msg : lc_status_name(s));
  return 1;
}

static int input_index(const lc_model *m, const char *name) {
  for (int i = 0; i < lc_model_n_inputs(m); i++)
    if (!strcmp(lc_model_input(m, i)->name, name)) return i;
  return -1;
}

static int no_input(const char *cmd, const lc_model *m, const char *opt, const char *arg, const char *name) {
  char list[512] = "";
  for (int i = 0; i < lc_model_n_inputs(m); i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s'%s'", i ? ", " : "", lc_model_input(m, i)->name);
  }
  return opts_usage(cmd, "%s '%s': no input named '%s' (inputs: %s)", opt, arg, name, list);
}

/* Splits NAME=VALUE at the first '=' (last: the value has none, the name may); 0 or 2. */
static int split_arg(const char *cmd, const char *opt, const char *want, const char *arg, int last, char *name,
                     size_t len, const char **val) {
  const char *eq = last ? strrchr(arg, '=') : strchr(arg, '=');
  if (!eq || eq == arg || (size_t)(eq - arg) >= len || !eq[1])
    return opts_usage(cmd, "%s wants %s, got '%s'", opt, want, arg);
  memcpy(name, arg, (size_t)(eq - arg));
  name[eq - arg] = 0;
  *val = eq + 1;
  return 0;
}

static int parse_dims(const char *p, int64_t *dims, int *nd) {
  *nd = 0;
  while (*p) {
    char *e;
    long long v = strtoll(p, &e, 10);
    if (e == p || v <= 0 || *nd == LC_MAX_DIMS || (*e && *e != 'x' && *e != ',') || ((*e == 'x' || *e == ',') && !e[1]))
      return -1;
    dims[(*nd)++] = v;
    p = *e ? e + 1 : e;
  }
  return *nd ? 0 : -1;
}

static int has_symbolic(const lc_tensor *t) {
  for (int d = 1; d < t->ndim; d++)
    if (t->dims[d] < 0) return 1;
  return 0;
}

int model_open(const char *cmd, const margs *a, lc_model **m, minputs *in, int *symbolic) {
  memset(in, 0, sizeof *in);
  *symbolic = 0;
  lc_status s;
  if (a->weights == LC_WEIGHTS_Q4 && a->q4_policy == MARGS_Q4_PLAN) {
    lc_q4plan p;
    if ((s = lc_q4plan_load(a->model, a->block, m, &p))) return model_fail(cmd, a->model, s);
    fprintf(stderr, "lowconv %s: q4 plan: %s%s\n", cmd,
            p.used ? (p.from_cache ? "from the cache (nothing measured): " : "made now: ") : "", p.summary);
  } else if ((s = lc_model_load(a->model, m))) {
    return model_fail(cmd, a->model, s);
  }
  int shaped[OPT_LIST_MAX * 2] = {0}, n_in = lc_model_n_inputs(*m);
  if (n_in > OPT_LIST_MAX * 2) n_in = OPT_LIST_MAX * 2;
  for (int k = 0; k < a->shape.n; k++) {
    char name[256];
    const char *val = NULL;
    int64_t dims[LC_MAX_DIMS];
    int nd, r = split_arg(cmd, "--shape", "NAME=DxDx.. (e.g. x=1x3x640x640)", a->shape.v[k], 1, name, sizeof name,
                               &val);
    if (r) return r;
    if (parse_dims(val, dims, &nd))
      return opts_usage(cmd, "--shape '%s': bad dims '%s' (positive integers joined by x, e.g. 1x3x640x640)",
                        a->shape.v[k], val);
    int i = input_index(*m, name);
    if (i < 0) return no_input(cmd, *m, "--shape", a->shape.v[k], name);
    if ((s = lc_model_set_input_shape(*m, name, nd, dims))) {
      fprintf(stderr, "lowconv %s: --shape '%s': %s\n", cmd, a->shape.v[k], lc_last_error());
      return 2;
    }
    if (i < n_in) shaped[i] = 1;
  }
  for (int k = 0; k < a->input.n; k++) {
    char name[256];
    const char *file = NULL;
    int r = split_arg(cmd, "--input", "NAME=FILE.npy", a->input.v[k], 0, name, sizeof name, &file);
    if (r) return r;
    int i = input_index(*m, name);
    if (i < 0) return no_input(cmd, *m, "--input", a->input.v[k], name);
    for (int j = 0; j < in->n; j++)
      if (in->index[j] == i) return opts_usage(cmd, "--input: '%s' given twice", name);
    lc_tensor *t = &in->t[in->n];
    memset(t, 0, sizeof *t);
    if ((s = lc_npy_read(file, t))) return model_fail(cmd, file, s);
    t->name = lc_model_input(*m, i)->name;
    in->index[in->n++] = i;
    /* the file's shape fixes the input's, unless --shape did */
    if (i < n_in && !shaped[i] && (s = lc_model_set_input_shape(*m, name, t->ndim, t->dims))) {
      fprintf(stderr, "lowconv %s: --input %s: %s\n", cmd, a->input.v[k], lc_last_error());
      return 1;
    }
  }
  for (int i = 0; i < lc_model_n_inputs(*m); i++) *symbolic += has_symbolic(lc_model_input(*m, i));
  return 0;
}

int model_plan(const char *cmd, const margs *a, lc_model *m) {
  lc_model_options o;
  lc_model_options_init(&o);
  o.threads = a->threads;
  o.weight_format = a->weights;
  /* a calibrated or quantized file: its codes as they are, its f32 layers f32 */
  if (a->weights == LC_WEIGHTS_Q4 && a->q4_policy == MARGS_Q4_PLAN && lc_model_is_quantized(m))
    o.weight_format = LC_WEIGHTS_F32;
  o.weight_block = a->block;
  o.q4_policy = a->q4_policy == MARGS_Q4_ALL ? LC_Q4_ALL : LC_Q4_MIXED;
  o.no_fusion = a->no_fusion;
  o.layout = a->layout;
  o.workspace_budget = a->budget;
  o.max_memory_bytes = a->max_memory;
  o.device = a->device && strcmp(a->device, "cpu") ? a->device : NULL;
  o.device_tune = a->tune;
  o.device_profile = !strcmp(cmd, "bench") && a->per_layer; /* layer times from profiling events */
  o.device_no_io = !strcmp(cmd, "bench") && a->no_io;
  lc_status s = lc_model_plan(m, &o);
  return s ? model_fail(cmd, a->model, s) : 0;
}

int model_bind(const char *cmd, lc_model *m, const minputs *in, int require) {
  lc_status s;
  for (int k = 0; k < in->n; k++)
    if ((s = lc_model_set_input(m, in->t[k].name, &in->t[k]))) return model_fail(cmd, "--input", s);
  for (int i = 0; i < lc_model_n_inputs(m); i++) {
    int given = 0;
    for (int k = 0; k < in->n; k++) given |= in->index[k] == i;
    if (given) continue;
    const lc_tensor *t = lc_model_input(m, i);
    if (require) return opts_usage(cmd, "input '%s' not given (--input %s=FILE.npy)", t->name, t->name);
    lc_tensor f = *t;
    f.data = lc_malloc(t->nbytes ? t->nbytes : 1);
    if (!f.data) return model_fail(cmd, "input", LC_ERR_NO_MEMORY);
    for (size_t k = 0; k < t->nbytes / 4; k++) {
      if (t->dtype == LC_DT_FLOAT) ((float *)f.data)[k] = (float)((k * 7919u) % 255u) / 255.0f - 0.5f;
      else ((int32_t *)f.data)[k] = 0;
    }
    s = lc_model_set_input(m, t->name, &f);
    lc_free(f.data);
    if (s) return model_fail(cmd, "input", s);
  }
  return 0;
}

void minputs_free(minputs *in) {
  for (int k = 0; k < in->n; k++) lc_free(in->t[k].data);
  in->n = 0;
}

static void output_path(const lc_tensor *t, const char *dir, char *path, size_t len, int tmp) {
  char safe[256];
  size_t k = 0;
  for (const char *p = t->name; *p && k + 1 < sizeof safe; p++) {
    int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
             *p == '_' || (*p == '.' && k > 0);
    safe[k++] = ok ? *p : '_';
  }
  safe[k] = 0;
  if (tmp) snprintf(path, len, "%s/.%s.npy.%ld.tmp", dir, k ? safe : "output", (long)getpid());
  else snprintf(path, len, "%s/%s.npy", dir, k ? safe : "output");
}

int model_write_outputs(const char *cmd, const lc_model *m, const char *dir, int print) {
  int n = lc_model_n_outputs(m), r = 0, written = 0, renamed = 0;
  char path[4200], tmp[4200];
  for (; written < n && !r; written++) {
    output_path(lc_model_output(m, written), dir, tmp, sizeof tmp, 1);
    lc_status s = lc_npy_write(tmp, lc_model_output(m, written));
    if (s) r = model_fail(cmd, tmp, s);
  }
  for (; !r && renamed < written; renamed++) {
    output_path(lc_model_output(m, renamed), dir, tmp, sizeof tmp, 1);
    output_path(lc_model_output(m, renamed), dir, path, sizeof path, 0);
    if (rename(tmp, path)) {
      fprintf(stderr, "lowconv %s: cannot rename %s to %s: %s\n", cmd, tmp, path, strerror(errno));
      r = 1;
      break;
    }
  }
  for (int i = 0; i < written; i++) { /* on a failure: neither temporaries nor some outputs only */
    const lc_tensor *t = lc_model_output(m, i);
    output_path(t, dir, tmp, sizeof tmp, 1);
    output_path(t, dir, path, sizeof path, 0);
    if (r) remove(i < renamed ? path : tmp);
    else if (print) printf("%s -> %s\n", t->name, path);
  }
  return r;
}

void model_dims_text(const lc_model *m, int input, const lc_tensor *t, char *buf, size_t len) {
  buf[0] = 0;
  if (!t->ndim) snprintf(buf, len, "scalar");
  for (int d = 0; d < t->ndim; d++) {
    size_t l = strlen(buf);
    const char *sym = input >= 0 ? lc_model_input_dim_name(m, input, d) : NULL;
    if (t->dims[d] >= 0) snprintf(buf + l, len - l, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
    else snprintf(buf + l, len - l, "%s%s", d ? "x" : "", sym ? sym : "?");
  }
}
