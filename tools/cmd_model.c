/* `lowconv info | run | bench MODEL.onnx`: ONNX models end to end (docs/onnx.md). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "lowconv.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/npy.h"
#include "util/alloc.h"

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#define MAX_ARGS 64

typedef struct margs {
  const char *model, *out_dir, *device;
  const char *shape[MAX_ARGS], *input[MAX_ARGS];
  int n_shape, n_input;
  int json, per_layer, repeat, threads, weights, block, no_fusion, q4_policy, tune;
} margs;

static int usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lowconv %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: lowconv %s MODEL.onnx [--shape NAME=DxDx..]... [--threads T] [--device cpu|opencl[:P[:D]] [--tune 0-3]] [--json]%s\n", cmd,
          !strcmp(cmd, "run") ? " --input NAME=FILE.npy... --output-dir DIR [--weights f32|q8|q4 --block N --q4-policy all|mixed]"
          : !strcmp(cmd, "bench") ? " [--per-layer] [--repeat N] [--input NAME=FILE.npy]... [--weights f32|q8|q4]"
                                  : "");
  return 2;
}

static int fail(const char *what) {
  fprintf(stderr, "lowconv: %s: %s\n", what, lc_last_error());
  return 1;
}

static int parse_int(const char *s, int lo, int hi, int *v) {
  char *e;
  long x = strtol(s, &e, 10);
  if (!*s || *e || x < lo || x > hi) return 0;
  *v = (int)x;
  return 1;
}

static int parse_args(const char *cmd, int argc, char **argv, margs *a) {
  memset(a, 0, sizeof(*a));
  a->repeat = 10, a->threads = 1, a->tune = -1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (strncmp(s, "--", 2)) {
      if (a->model) return usage(cmd, "more than one model ('%s')", s);
      a->model = s;
      continue;
    }
    if (!strcmp(s, "--json")) { a->json = 1; continue; }
    if (!strcmp(s, "--per-layer")) { a->per_layer = 1; continue; }
    if (!strcmp(s, "--no-fusion")) { a->no_fusion = 1; continue; }
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(cmd, "help");
    const char *eq = strchr(s, '='), *val;
    char key[32];
    size_t kl = eq ? (size_t)(eq - s) : strlen(s);
    if (kl >= sizeof key) return usage(cmd, "unknown option '%s'", s);
    memcpy(key, s, kl);
    key[kl] = 0;
    if (eq) val = eq + 1;
    else if (i + 1 < argc) val = argv[++i];
    else return usage(cmd, "option %s needs a value", key);
    if (!strcmp(key, "--shape") && a->n_shape < MAX_ARGS) a->shape[a->n_shape++] = val;
    else if (!strcmp(key, "--input") && a->n_input < MAX_ARGS) a->input[a->n_input++] = val;
    else if (!strcmp(key, "--output-dir")) a->out_dir = val;
    else if (!strcmp(key, "--device")) a->device = val;
    else if (!strcmp(key, "--tune")) { if (!parse_int(val, 0, 3, &a->tune)) return usage(cmd, "bad --tune '%s' (0 none .. 3 heavy)", val); }
    else if (!strcmp(key, "--repeat")) { if (!parse_int(val, 1, 100000, &a->repeat)) return usage(cmd, "bad --repeat '%s'", val); }
    else if (!strcmp(key, "--threads")) { if (!parse_int(val, 1, 1024, &a->threads)) return usage(cmd, "bad --threads '%s'", val); }
    else if (!strcmp(key, "--block")) { if (!parse_int(val, 0, 4096, &a->block)) return usage(cmd, "bad --block '%s'", val); }
    else if (!strcmp(key, "--q4-policy")) {
      if (!strcmp(val, "all")) a->q4_policy = LC_Q4_ALL;
      else if (!strcmp(val, "mixed")) a->q4_policy = LC_Q4_MIXED;
      else return usage(cmd, "unknown --q4-policy '%s' (all|mixed)", val);
    } else if (!strcmp(key, "--weights")) {
      if (!strcmp(val, "f32")) a->weights = LC_WEIGHTS_F32;
      else if (!strcmp(val, "q8")) a->weights = LC_WEIGHTS_Q8;
      else if (!strcmp(val, "q4")) a->weights = LC_WEIGHTS_Q4;
      else return usage(cmd, "unknown --weights '%s' (f32|q8|q4)", val);
    } else return usage(cmd, "unknown option '%s'", s);
  }
  if (!a->model) return usage(cmd, "no model given");
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Device plans: where the nodes run, device memory, start and launch costs (median_ms < 0: info). */
static void print_device(lc_model *m, const double *start_ms, double median_ms) {
  lc_model_device_stats d;
  lc_model_get_device_stats(m, &d);
  if (!d.device) return;
  printf("device %s: %d kernels per run, %d nodes on the CPU; device weights %.3f MB, activations %.3f MB; "
         "compile %.0f ms, tune %.0f ms\n", d.device, d.kernels, d.fallbacks, d.weight_bytes / 1e6,
         d.activation_bytes / 1e6, d.compile_ms, d.tune_ms);
  for (int i = 0, n = lc_model_n_layers(m); i < n; i++) {
    lc_layer_info li;
    lc_model_layer(m, i, &li);
    if (lc_model_layer_on_host(m, i)) printf("  on the CPU: %s (%s): %s\n", li.name, li.op_type, li.route);
  }
  double us = 0;
  if (start_ms && !lc_model_device_launch_us(m, &us))
    printf("start (load to first result) %.1f ms; device time %.3f ms per run; launch floor %d x %.2f us = %.3f ms "
           "(median wall %.3f ms)\n", *start_ms, d.last_run_ms, d.kernels, us, d.kernels * us * 1e-3, median_ms);
}

static void json_device(lc_model *m, double start_ms, double median_ms) {
  lc_model_device_stats d;
  lc_model_get_device_stats(m, &d);
  if (!d.device) return;
  double us = 0;
  if (start_ms >= 0 && lc_model_device_launch_us(m, &us)) us = 0;
  printf(", \"device\": ");
  json_string(stdout, d.device);
  printf(", \"fallbacks\": %d, \"kernels\": %d, \"device_weight_bytes\": %zu, \"device_activation_bytes\": %zu, "
         "\"compile_ms\": %.3f, \"tune_ms\": %.3f", d.fallbacks, d.kernels, d.weight_bytes, d.activation_bytes,
         d.compile_ms, d.tune_ms);
  if (start_ms >= 0)
    printf(", \"start_ms\": %.3f, \"device_ms\": %.4f, \"launch_us\": %.3f, \"launch_floor_ms\": %.4f", start_ms,
           d.last_run_ms, us, d.kernels * us * 1e-3);
  (void)median_ms;
}

/* NAME=1x3x224x224 */
static int apply_shapes(lc_model *m, const margs *a) {
  for (int i = 0; i < a->n_shape; i++) {
    char name[256];
    const char *eq = strrchr(a->shape[i], '=');
    if (!eq || (size_t)(eq - a->shape[i]) >= sizeof name) return usage("info", "--shape wants NAME=DIMS, got '%s'", a->shape[i]);
    memcpy(name, a->shape[i], (size_t)(eq - a->shape[i]));
    name[eq - a->shape[i]] = 0;
    int64_t dims[LC_MAX_DIMS];
    int nd = 0;
    const char *p = eq + 1;
    while (*p) {
      char *e;
      long long v = strtoll(p, &e, 10);
      if (e == p || v <= 0 || nd == LC_MAX_DIMS || (*e && *e != 'x' && *e != ','))
        return usage("info", "bad dims in --shape '%s'", a->shape[i]);
      dims[nd++] = v;
      p = *e ? e + 1 : e;
    }
    if (lc_model_set_input_shape(m, name, nd, dims)) return fail("--shape");
  }
  return 0;
}

static int open_model(const margs *a, int dry, lc_model **m) { /* dry 2: plan and profile (bench) */
  if (lc_model_load(a->model, m)) return fail(a->model);
  int r = apply_shapes(*m, a);
  if (r) return r;
  lc_model_options o;
  lc_model_options_init(&o);
  o.threads = a->threads;
  o.weight_format = a->weights;
  o.weight_block = a->block;
  o.q4_policy = a->q4_policy;
  o.no_fusion = a->no_fusion;
  o.dry_run = dry == 1;
  o.device_profile = dry == 2;
  o.device = a->device;
  o.device_tune = a->tune;
  if (lc_model_plan(*m, &o)) return fail(a->model);
  return 0;
}

static void print_dims(FILE *f, const lc_tensor *t) {
  for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
  if (!t->ndim) fprintf(f, "scalar");
}

static void json_dims(FILE *f, int nd, const int64_t *dims) {
  fputc('[', f);
  for (int d = 0; d < nd; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)dims[d]);
  fputc(']', f);
}

static const char *dtype_name(lc_dtype t) {
  switch (t) {
    case LC_DT_FLOAT: return "float32";
    case LC_DT_INT64: return "int64";
    case LC_DT_INT32: return "int32";
    case LC_DT_UINT8: return "uint8";
    case LC_DT_INT8: return "int8";
    default: return "other";
  }
}

static void json_io(FILE *f, const char *key, lc_model *m, int outputs) {
  int n = outputs ? lc_model_n_outputs(m) : lc_model_n_inputs(m);
  fprintf(f, "\"%s\": [", key);
  for (int i = 0; i < n; i++) {
    const lc_tensor *t = outputs ? lc_model_output(m, i) : lc_model_input(m, i);
    fprintf(f, "%s{\"name\": ", i ? ", " : "");
    json_string(f, t->name);
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": ", dtype_name(t->dtype));
    json_dims(f, t->ndim, t->dims);
    fputc('}', f);
  }
  fputc(']', f);
}

static void json_layers(FILE *f, lc_model *m, int timed) {
  int n = lc_model_n_layers(m);
  fprintf(f, "\"layers\": [");
  for (int i = 0; i < n; i++) {
    lc_layer_info li;
    lc_model_layer(m, i, &li);
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_string(f, li.name);
    fprintf(f, ", \"op\": ");
    json_string(f, li.op_type);
    fprintf(f, ", \"shape\": ");
    json_dims(f, li.ndim, li.dims);
    fprintf(f, ", \"route\": ");
    json_string(f, li.route);
    fprintf(f, ", \"fused\": ");
    json_string(f, li.fused);
    fprintf(f, ", \"flops\": ");
    json_number(f, li.flops);
    fprintf(f, ", \"workspace_bytes\": %zu, \"inplace\": %s", li.workspace_bytes, li.inplace ? "true" : "false");
    if (timed) {
      fprintf(f, ", \"ms\": ");
      json_number(f, li.ms);
    }
    fputc('}', f);
  }
  fprintf(f, "]");
}

static void json_stats(FILE *f, const lc_model_stats *s) {
  fprintf(f, "\"weight_bytes\": %zu, \"packed_weight_bytes\": %zu, \"peak_activation_bytes\": %zu, "
             "\"scratch_bytes\": %zu, \"nodes_loaded\": %d, \"nodes_planned\": %d, \"folded\": %d, "
             "\"fused_bn\": %d, \"fused_add\": %d, \"fused_act\": %d, \"inplace\": %d",
          s->weight_bytes, s->packed_weight_bytes, s->peak_activation_bytes, s->scratch_bytes, s->nodes_loaded,
          s->nodes_planned, s->folded, s->fused_bn, s->fused_add, s->fused_act, s->inplace);
}

int cmd_info(int argc, char **argv) {
  margs a;
  int r = parse_args("info", argc, argv, &a);
  if (r) return r;
  lc_model *m = NULL;
  if ((r = open_model(&a, 0, &m))) {
    lc_model_free(m);
    return r;
  }
  lc_model_stats st;
  lc_model_get_stats(m, &st);
  int n = lc_model_n_layers(m);
  if (a.json) {
    printf("{\"model\": ");
    json_string(stdout, a.model);
    printf(", \"ir_version\": %lld, \"opset\": %lld, ", (long long)st.ir_version, (long long)st.opset);
    json_io(stdout, "inputs", m, 0);
    printf(", ");
    json_io(stdout, "outputs", m, 1);
    printf(", ");
    json_stats(stdout, &st);
    printf(", ");
    json_layers(stdout, m, 0);
    json_device(m, -1, -1);
    printf("}\n");
  } else {
    printf("model %s (IR %lld, opset %lld)\n", a.model, (long long)st.ir_version, (long long)st.opset);
    for (int i = 0; i < lc_model_n_inputs(m); i++) {
      printf("  input  %-20s %-8s ", lc_model_input(m, i)->name, dtype_name(lc_model_input(m, i)->dtype));
      print_dims(stdout, lc_model_input(m, i));
      printf("\n");
    }
    for (int i = 0; i < lc_model_n_outputs(m); i++) {
      printf("  output %-20s %-8s ", lc_model_output(m, i)->name, dtype_name(lc_model_output(m, i)->dtype));
      print_dims(stdout, lc_model_output(m, i));
      printf("\n");
    }
    printf("nodes: %d loaded, %d planned (%d folded; fused: %d bn, %d add, %d act; %d in place)\n", st.nodes_loaded,
           st.nodes_planned, st.folded, st.fused_bn, st.fused_add, st.fused_act, st.inplace);
    /* op counts */
    const char *ops[256];
    int cnt[256], nops = 0;
    for (int i = 0; i < n; i++) {
      lc_layer_info li;
      lc_model_layer(m, i, &li);
      int k = 0;
      while (k < nops && strcmp(ops[k], li.op_type)) k++;
      if (k == nops && nops < 256) ops[nops] = li.op_type, cnt[nops++] = 0;
      if (k < nops) cnt[k]++;
    }
    printf("ops:");
    for (int k = 0; k < nops; k++) printf(" %s x%d", ops[k], cnt[k]);
    printf("\nweights %.3f MB (packed convs %.3f MB), peak activations %.3f MB, conv scratch %.3f MB\n",
           st.weight_bytes / 1e6, st.packed_weight_bytes / 1e6, st.peak_activation_bytes / 1e6, st.scratch_bytes / 1e6);
    print_device(m, NULL, -1);
    printf("conv routes:\n");
    for (int i = 0; i < n; i++) {
      lc_layer_info li;
      lc_model_layer(m, i, &li);
      if (strcmp(li.op_type, "Conv")) continue;
      printf("  %-28s %-10s %-14s ws %zu\n", li.name, li.route[0] ? li.route : "?", li.fused, li.workspace_bytes);
    }
  }
  lc_model_free(m);
  return 0;
}

/* Binds --input files; inputs not given are filled with a fixed pattern (bench) or refused (run). */
static int bind_inputs(lc_model *m, const margs *a, int require) {
  for (int i = 0; i < a->n_input; i++) {
    char name[256];
    const char *eq = strchr(a->input[i], '=');
    if (!eq || (size_t)(eq - a->input[i]) >= sizeof name) {
      fprintf(stderr, "lowconv: --input wants NAME=FILE.npy, got '%s'\n", a->input[i]);
      return 2;
    }
    memcpy(name, a->input[i], (size_t)(eq - a->input[i]));
    name[eq - a->input[i]] = 0;
    lc_tensor t = {0};
    if (lc_npy_read(eq + 1, &t)) return fail("--input");
    lc_status s = lc_model_set_input(m, name, &t);
    lc_free(t.data);
    if (s) return fail("--input");
  }
  for (int i = 0; i < lc_model_n_inputs(m); i++) {
    const lc_tensor *t = lc_model_input(m, i);
    int given = 0;
    for (int k = 0; k < a->n_input; k++)
      given |= !strncmp(a->input[k], t->name, strlen(t->name)) && a->input[k][strlen(t->name)] == '=';
    if (given) continue;
    if (require) {
      fprintf(stderr, "lowconv: input '%s' not given (--input %s=FILE.npy)\n", t->name, t->name);
      return 1;
    }
    lc_tensor f = *t;
    f.data = lc_malloc(t->nbytes ? t->nbytes : 1);
    if (!f.data) return fail("input");
    for (size_t k = 0; k < t->nbytes / 4; k++) {
      if (t->dtype == LC_DT_FLOAT) ((float *)f.data)[k] = (float)((k * 7919u) % 255u) / 255.0f - 0.5f;
      else ((int32_t *)f.data)[k] = 0;
    }
    lc_status s = lc_model_set_input(m, t->name, &f);
    lc_free(f.data);
    if (s) return fail("input");
  }
  return 0;
}

int cmd_run(int argc, char **argv) {
  margs a;
  int r = parse_args("run", argc, argv, &a);
  if (r) return r;
  if (!a.out_dir) return usage("run", "--output-dir is required");
  lc_model *m = NULL;
  if (!(r = open_model(&a, 0, &m)) && !(r = bind_inputs(m, &a, 1)) && lc_model_run(m)) r = fail("run");
  for (int i = 0; !r && i < lc_model_n_outputs(m); i++) {
    const lc_tensor *t = lc_model_output(m, i);
    char path[4096], safe[256];
    size_t k = 0;
    for (const char *p = t->name; *p && k + 1 < sizeof safe; p++) {
      int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
               *p == '_' || (*p == '.' && k > 0);
      safe[k++] = ok ? *p : '_';
    }
    safe[k] = 0;
    snprintf(path, sizeof path, "%s/%s.npy", a.out_dir, k ? safe : "output");
    if (lc_npy_write(path, t)) r = fail("output");
    else if (!a.json) printf("%s -> %s\n", t->name, path);
  }
  if (!r && a.json) {
    lc_model_stats st;
    lc_model_get_stats(m, &st);
    printf("{");
    json_io(stdout, "outputs", m, 1);
    printf(", ");
    json_stats(stdout, &st);
    printf("}\n");
  }
  lc_model_free(m);
  return r;
}


static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int cmd_bench(int argc, char **argv) {
  margs a;
  int r = parse_args("bench", argc, argv, &a);
  if (r) return r;
  lc_model *m = NULL;
  double t_start = now_ms(), start_ms = 0;
  if ((r = open_model(&a, 2, &m)) || (r = bind_inputs(m, &a, 0))) {
    lc_model_free(m);
    return r;
  }
  int nl = lc_model_n_layers(m);
  double *tot = calloc((size_t)a.repeat, sizeof(double)), *layer_ms = calloc((size_t)nl + 1, sizeof(double) * (size_t)a.repeat);
  if (!tot || !layer_ms) {
    free(tot);
    free(layer_ms);
    lc_model_free(m);
    fprintf(stderr, "lowconv: out of memory\n");
    return 1;
  }
  if (lc_model_run(m)) r = fail("run"); /* warm-up: first-touch of the arena and packed weights */
  start_ms = now_ms() - t_start;        /* load to first result */
  for (int it = 0; !r && it < a.repeat; it++) {
    double t0 = now_ms();
    lc_status s = lc_model_run(m);
    tot[it] = now_ms() - t0;
    if (s) {
      r = fail("run");
      break;
    }
    for (int i = 0; i < nl; i++) {
      lc_layer_info li;
      lc_model_layer(m, i, &li);
      layer_ms[(size_t)i * (size_t)a.repeat + (size_t)it] = li.ms;
    }
  }
  if (!r) {
    qsort(tot, (size_t)a.repeat, sizeof(double), cmp_d);
    double med = tot[a.repeat / 2], sum_med = 0;
    for (int i = 0; i < nl; i++) {
      qsort(layer_ms + (size_t)i * (size_t)a.repeat, (size_t)a.repeat, sizeof(double), cmp_d);
      sum_med += layer_ms[(size_t)i * (size_t)a.repeat + (size_t)a.repeat / 2];
    }
    lc_model_stats st;
    lc_model_get_stats(m, &st);
    if (a.json) {
      printf("{\"model\": ");
      json_string(stdout, a.model);
      printf(", \"threads\": %d, \"repeat\": %d, \"median_ms\": ", a.threads, a.repeat);
      json_number(stdout, med);
      printf(", \"min_ms\": ");
      json_number(stdout, tot[0]);
      printf(", ");
      json_stats(stdout, &st);
      printf(", \"layers\": [");
      for (int i = 0; i < nl; i++) {
        lc_layer_info li;
        lc_model_layer(m, i, &li);
        double ms = layer_ms[(size_t)i * (size_t)a.repeat + (size_t)a.repeat / 2];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_string(stdout, li.name);
        printf(", \"op\": ");
        json_string(stdout, li.op_type);
        printf(", \"shape\": ");
        json_dims(stdout, li.ndim, li.dims);
        printf(", \"route\": ");
        json_string(stdout, li.route);
        printf(", \"fused\": ");
        json_string(stdout, li.fused);
        printf(", \"ms\": ");
        json_number(stdout, ms);
        printf(", \"gflops\": ");
        json_number(stdout, ms > 0 ? li.flops / ms / 1e6 : 0);
        printf(", \"workspace_bytes\": %zu, \"on_host\": %s}", li.workspace_bytes, lc_model_layer_on_host(m, i) ? "true" : "false");
      }
      printf("]");
      json_device(m, start_ms, med);
      printf("}\n");
    } else {
      if (a.per_layer) {
        printf("%-4s %-28s %-18s %-18s %-16s %9s %6s %8s %10s\n", "#", "node", "op", "output", "route", "ms", "%",
               "GFLOP/s", "workspace");
        for (int i = 0; i < nl; i++) {
          lc_layer_info li;
          lc_model_layer(m, i, &li);
          double ms = layer_ms[(size_t)i * (size_t)a.repeat + (size_t)a.repeat / 2];
          char shape[64] = "", op[96];
          for (int d = 0; d < li.ndim; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "x" : "", (long long)li.dims[d]);
          snprintf(op, sizeof op, "%s%s%s", li.op_type, li.fused[0] ? "+" : "", li.fused);
          printf("%-4d %-28.28s %-18.18s %-18s %-16.16s %9.3f %6.1f %8.2f %10zu\n", i, li.name, op, shape, li.route, ms,
                 sum_med > 0 ? 100 * ms / sum_med : 0, ms > 0 ? li.flops / ms / 1e6 : 0, li.workspace_bytes);
        }
      }
      printf("%s: median %.3f ms, min %.3f ms over %d runs, %d threads; weights %.3f MB, peak activations %.3f MB\n",
             a.model, med, tot[0], a.repeat, a.threads, st.weight_bytes / 1e6, st.peak_activation_bytes / 1e6);
      print_device(m, &start_ms, med);
    }
  }
  free(tot);
  free(layer_ms);
  lc_model_free(m);
  return r;
}
