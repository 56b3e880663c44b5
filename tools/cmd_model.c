/* `lowconv info | run | bench MODEL.onnx`: ONNX models end to end (docs/onnx.md). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commands.h"
#include "json.h"
#include "lowconv.h"
#include "model_cli.h"
#include "util/timer.h"

static const char *const q4_policies[] = {"plan", "mixed", "all", NULL}; /* margs.q4_policy */
static const char *const weight_choices[] = {"f32", "q8", "q4", "q4:fast", NULL}; /* q4:fast = q4, mixed */
static const char *const layouts[] = {"auto", "nchw", "nhwc", NULL}; /* lc_model_layout */

#define O(f) offsetof(margs, f)
#define MODEL_OPTS                                                                                                \
  {"--shape", "NAME=DxDx..", OPT_LIST, O(shape), 0, 0, NULL,                                                     \
   "fix an input's shape (its symbolic dims); wins over the shape of\nan --input file"},                         \
      {"--threads", "T", OPT_INT, O(threads), 1, 1024, NULL, "threads"},                                          \
      {"--budget", "B", OPT_BYTES, O(budget), 0, 0, NULL,                                                         \
       "workspace budget of each conv in bytes, suffix K/M/G (default 0 = none)"},                               \
      {"--max-memory", "SIZE", OPT_BYTES, O(max_memory), 0, 0, NULL,                                              \
       "memory cap of the plan (folded constants, activations, scratch), suffix\nK/M/G (default 0 = a quarter of physical memory)"}, \
      {"--weights", "W", OPT_CHOICE, O(weights), 0, 0, weight_choices,                                          \
       "Conv/Gemm/MatMul weight storage; q4 = the --q4-policy (plan), q4:fast =\nq4 with the quick mixed rule"},      \
      {"--block", "N", OPT_INT, O(block), 0, 4096, NULL, "q8/q4 block of input channels, 0 = per output channel"}, \
      {"--q4-policy", "P", OPT_CHOICE, O(q4_policy), 0, 0, q4_policies,                                          \
       "with --weights q4: plan (default) = lowconv quantize's per-layer choice, made\nat the first load (minutes) "   \
       "and cached; mixed = the quick rule (first conv, small-K\nand 1x1 convs, Gemm/MatMul q8); all = every layer q4"}, \
      {"--no-fusion", NULL, OPT_FLAG, O(no_fusion), 0, 0, NULL,                                                   \
       "keep BatchNormalization / activations / Add as separate nodes"},                                          \
      {"--layout", "L", OPT_CHOICE, O(layout), 0, 0, layouts,                                                     \
       "cpu: which fp32 convs run NHWC; auto = groups where it pays for the conversions"},                        \
      {"--device", "NAME", OPT_STRING, O(device), 0, 0, NULL, "cpu (default), opencl, opencl:P or opencl:P:D"},                     \
      {"--json", NULL, OPT_FLAG, O(json), 0, 0, NULL, "machine-readable output"}
#define INPUT_OPT(what)                                                                                           \
  {"--input", "NAME=FILE.npy", OPT_LIST, O(input), 0, 0, NULL, what}
#define TUNE_OPT {"--tune", "LEVEL", OPT_CHOICE, O(tune), 0, 0, opts_tune_levels, "tuning: device kernels (default fast); on the cpu the conv routes (default none)"}

static const opt_def info_opts[] = {MODEL_OPTS, INPUT_OPT("take an input's shape from a .npy file"), TUNE_OPT};
static const opt_def run_opts[] = {
    MODEL_OPTS, INPUT_OPT("an input's value (every input needed); its shape fixes symbolic dims"),
    {"--output-dir", "DIR", OPT_STRING, O(out_dir), 0, 0, NULL,
     "where one NAME.npy per output goes, required; created with its parents"},
    TUNE_OPT};
static const opt_def bench_opts[] = {
    MODEL_OPTS, INPUT_OPT("an input's value (others: a fixed pattern); its shape fixes symbolic dims"),
    {"--per-layer", NULL, OPT_FLAG, O(per_layer), 0, 0, NULL, "a table of every executed node (median ms, %, GFLOP/s)"},
    {"--no-io", NULL, OPT_FLAG, O(no_io), 0, 0, NULL,
     "--device: timed runs leave the input and output on the device (kernels only)"},
    {"--repeat", "N", OPT_INT, O(repeat), 1, 100000, NULL, "timed runs after one warm-up run"},
    TUNE_OPT};
#undef O

#define N_OPTS(t) (int)(sizeof t / sizeof t[0])
static const char shapes_note[] =
    "Symbolic dims (the batch excepted, which defaults to 1) take their size from --shape or from the\n"
    "--input file given for that input.\n";
static const opt_cmd info_cmd = {"info", "MODEL.onnx [options]",
                                 "Describes an ONNX model: inputs (symbolic dims by name), outputs, ops, conv routes\n"
                                 "and memory. Without shapes for symbolic inputs it lists the inputs and outputs only.\n",
                                 info_opts, N_OPTS(info_opts), shapes_note, 1, "model"};
static const opt_cmd run_cmd = {"run", "MODEL.onnx --input NAME=FILE.npy... --output-dir DIR [options]",
                                "Runs an ONNX model once on .npy inputs and writes one .npy per output; on a failure\n"
                                "no output file is left.\n",
                                run_opts, N_OPTS(run_opts), shapes_note, 1, "model"};
static const opt_cmd bench_cmd = {"bench", "MODEL.onnx [options]",
                                  "Times an ONNX model end to end: median and min of --repeat runs.\n", bench_opts,
                                  N_OPTS(bench_opts), shapes_note, 1, "model"};

static int parse_args(const opt_cmd *c, int argc, char **argv, margs *a) {
  memset(a, 0, sizeof *a);
  a->repeat = 10, a->threads = 1, a->device = "cpu", a->tune = -1;
  int npos = 0, r = opts_parse(c, argc, argv, a, &a->model, &npos);
  if (r) return r;
  if (!a->model) return opts_usage(c->name, "no model given");
  if ((r = opts_device(c->name, a->device))) return r;
  if (a->weights == 3) a->weights = LC_WEIGHTS_Q4, a->q4_policy = MARGS_Q4_MIXED; /* q4:fast */
  return 0;
}

static void json_dims(FILE *f, int nd, const int64_t *dims) {
  fputc('[', f);
  for (int d = 0; d < nd; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)dims[d]);
  fputc(']', f);
}

static void json_io(FILE *f, const char *key, const lc_model *m, int outputs, int planned) {
  int n = outputs ? lc_model_n_outputs(m) : lc_model_n_inputs(m);
  fprintf(f, "\"%s\": [", key);
  for (int i = 0; i < n; i++) {
    const lc_tensor *t = outputs ? lc_model_output(m, i) : lc_model_input(m, i);
    fprintf(f, "%s{\"name\": ", i ? ", " : "");
    json_string(f, t->name);
    fprintf(f, ", \"dtype\": ");
    json_string(f, t->dtype ? lc_dtype_name(t->dtype) : NULL);
    fprintf(f, ", \"shape\": ");
    if (outputs && !planned) fprintf(f, "null");
    else json_dims(f, t->ndim, t->dims);
    if (!outputs) {
      fprintf(f, ", \"symbolic\": [");
      for (int d = 0; d < t->ndim; d++) {
        fprintf(f, "%s", d ? ", " : "");
        json_string(f, lc_model_input_dim_name(m, i, d));
      }
      fputc(']', f);
    }
    fputc('}', f);
  }
  fputc(']', f);
}

static void json_layers(FILE *f, const lc_model *m, const double *ms) {
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
    fprintf(f, ", \"workspace_bytes\": %zu, \"inplace\": %s, \"on_host\": %s", li.workspace_bytes,
            li.inplace ? "true" : "false", lc_model_layer_on_host(m, i) ? "true" : "false");
    if (ms) {
      fprintf(f, ", \"ms\": ");
      json_number(f, ms[i]);
      fprintf(f, ", \"gflops\": ");
      json_number(f, ms[i] > 0 ? li.flops / ms[i] / 1e6 : 0);
    }
    fputc('}', f);
  }
  fprintf(f, "]");
}

/* Device plans: where the nodes run, device memory, start and launch costs (start_ms NULL: info). */
static void print_device(lc_model *m, const double *start_ms, double median_ms) {
  lc_model_device_stats d;
  lc_model_get_device_stats(m, &d);
  if (!d.device) return;
  printf("device %s: %d kernels per run, %d nodes on the CPU; device weights %.3f MB, activations %.3f MB; "
         "inputs and outputs in pinned host memory %.3f MB; compile %.0f ms, tune %.0f ms\n", d.device, d.kernels,
         d.fallbacks, d.weight_bytes / 1e6, d.activation_bytes / 1e6, d.pinned_bytes / 1e6, d.compile_ms, d.tune_ms);
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

/* The CPU runner's planned activation bytes for the same model (a dry-run plan, no weights
 * packed): what the device arena is held to (issue 10: at most 1.2x). 0 if it cannot plan. */
static size_t cpu_activation_bytes(const margs *a) {
  margs c = *a;
  c.device = NULL;
  c.weights = LC_WEIGHTS_F32; /* activations only: no q4 plan */
  lc_model *m = NULL;
  minputs in;
  int sym = 0;
  size_t bytes = 0;
  if (!model_open("bench", &c, &m, &in, &sym) && !sym) {
    lc_model_options o;
    lc_model_options_init(&o);
    o.threads = a->threads;
    o.no_fusion = a->no_fusion;
    o.dry_run = 1;
    lc_model_stats st;
    if (!lc_model_plan(m, &o)) lc_model_get_stats(m, &st), bytes = st.peak_activation_bytes;
  }
  minputs_free(&in);
  lc_model_free(m);
  return bytes;
}

static void json_device(lc_model *m, double start_ms, const margs *a) {
  lc_model_device_stats d;
  lc_model_get_device_stats(m, &d);
  if (!d.device) return;
  if (a) printf(", \"cpu_activation_bytes\": %zu, \"arena_buffers\": %d", cpu_activation_bytes(a), d.arena_buffers);
  double us = 0;
  if (start_ms >= 0 && lc_model_device_launch_us(m, &us)) us = 0;
  printf(", \"device\": ");
  json_string(stdout, d.device);
  printf(", \"fallbacks\": %d, \"kernels\": %d, \"device_weight_bytes\": %zu, \"device_activation_bytes\": %zu, "
         "\"pinned_io_bytes\": %zu, \"compile_ms\": %.3f, \"tune_ms\": %.3f", d.fallbacks, d.kernels, d.weight_bytes,
         d.activation_bytes, d.pinned_bytes, d.compile_ms, d.tune_ms);
  if (start_ms >= 0)
    printf(", \"start_ms\": %.3f, \"device_ms\": %.4f, \"launch_us\": %.3f, \"launch_floor_ms\": %.4f", start_ms,
           d.last_run_ms, us, d.kernels * us * 1e-3);
  if (a) printf(", \"io\": %s", a->no_io ? "false" : "true");
}

static void json_stats(FILE *f, const lc_model_stats *s) {
  fprintf(f, "\"weight_bytes\": %zu, \"packed_weight_bytes\": %zu, \"mapped_code_bytes\": %zu, "
             "\"peak_activation_bytes\": %zu, \"scratch_bytes\": %zu, \"nodes_loaded\": %d, \"nodes_planned\": %d, "
             "\"folded\": %d, \"fused_bn\": %d, \"fused_add\": %d, \"fused_act\": %d, \"inplace\": %d",
          s->weight_bytes, s->packed_weight_bytes, s->mapped_code_bytes, s->peak_activation_bytes, s->scratch_bytes,
          s->nodes_loaded, s->nodes_planned, s->folded, s->fused_bn, s->fused_add, s->fused_act, s->inplace);
}

static void print_io(const lc_model *m, int planned) {
  char dims[256];
  for (int i = 0; i < lc_model_n_inputs(m); i++) {
    const lc_tensor *t = lc_model_input(m, i);
    model_dims_text(m, i, t, dims, sizeof dims);
    printf("  input  %-20s %-8s %s\n", t->name, lc_dtype_name(t->dtype), dims);
  }
  for (int i = 0; i < lc_model_n_outputs(m); i++) {
    const lc_tensor *t = lc_model_output(m, i);
    if (planned) model_dims_text(m, -1, t, dims, sizeof dims);
    printf("  output %-20s %-8s %s\n", t->name, t->dtype ? lc_dtype_name(t->dtype) : "?",
           planned ? dims : "(shape after planning)");
  }
}

/* Inputs with symbolic dims and no shape: list what is known and say how to go on. */
static void info_unplanned(const margs *a, const lc_model *m) {
  if (a->json) {
    printf("{\"model\": ");
    json_string(stdout, a->model);
    printf(", \"planned\": false, ");
    json_io(stdout, "inputs", m, 0, 0);
    printf(", ");
    json_io(stdout, "outputs", m, 1, 0);
    printf("}\n");
    return;
  }
  printf("model %s\n", a->model);
  print_io(m, 0);
  const lc_tensor *t = lc_model_input(m, 0);
  printf("symbolic input shapes: give --shape %s=DxDx.. (or --input %s=FILE.npy) for ops, routes and memory\n",
         t ? t->name : "NAME", t ? t->name : "NAME");
}

static void info_text(const margs *a, const lc_model *m, const lc_model_stats *st) {
  int n = lc_model_n_layers(m);
  printf("model %s (IR %lld, opset %lld)\n", a->model, (long long)st->ir_version, (long long)st->opset);
  print_io(m, 1);
  printf("nodes: %d loaded, %d planned (%d folded; fused: %d bn, %d add, %d act; %d in place)\n", st->nodes_loaded,
         st->nodes_planned, st->folded, st->fused_bn, st->fused_add, st->fused_act, st->inplace);
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
  printf("\nweights %.3f MB (packed by the ops %.3f MB), peak activations %.3f MB, conv scratch %.3f MB\n",
         st->weight_bytes / 1e6, st->packed_weight_bytes / 1e6, st->peak_activation_bytes / 1e6,
         st->scratch_bytes / 1e6);
  printf("conv routes:\n");
  for (int i = 0; i < n; i++) {
    lc_layer_info li;
    lc_model_layer(m, i, &li);
    if (strcmp(li.op_type, "Conv")) continue;
    printf("  %-28s %-18s %-14s ws %zu\n", li.name, li.route[0] ? li.route : "?", li.fused, li.workspace_bytes);
  }
}

int cmd_info(int argc, char **argv) {
  margs a;
  int r = parse_args(&info_cmd, argc, argv, &a), symbolic = 0;
  if (r) return r < 0 ? 0 : r;
  lc_model *m = NULL;
  minputs in;
  r = model_open("info", &a, &m, &in, &symbolic);
  minputs_free(&in); /* only their shapes were needed */
  if (!r && symbolic) info_unplanned(&a, m);
  else if (!r && !(r = model_plan("info", &a, m))) {
    lc_model_stats st;
    lc_model_get_stats(m, &st);
    if (a.json) {
      printf("{\"model\": ");
      json_string(stdout, a.model);
      printf(", \"planned\": true, \"ir_version\": %lld, \"opset\": %lld, ", (long long)st.ir_version,
             (long long)st.opset);
      json_io(stdout, "inputs", m, 0, 1);
      printf(", ");
      json_io(stdout, "outputs", m, 1, 1);
      printf(", ");
      json_stats(stdout, &st);
      printf(", ");
      json_layers(stdout, m, NULL);
      json_device(m, -1, NULL);
      printf("}\n");
    } else {
      info_text(&a, m, &st);
      print_device(m, NULL, -1);
    }
  }
  lc_model_free(m);
  return r;
}

/* Loads, fixes shapes, plans and binds the inputs; 0, 1 or 2. */
/* ph (may be NULL): ms spent loading, planning (device: op create and prepare) and binding. */
static int prepare_timed(const char *cmd, const margs *a, lc_model **m, int require, double ph[3]) {
  minputs in;
  double t0 = lc_now_ms();
  int symbolic = 0, r = model_open(cmd, a, m, &in, &symbolic);
  double t1 = lc_now_ms();
  if (!r && symbolic) {
    for (int i = 0; i < lc_model_n_inputs(*m) && !r; i++) {
      const lc_tensor *t = lc_model_input(*m, i);
      for (int d = 1; d < t->ndim && !r; d++) {
        if (t->dims[d] >= 0) continue;
        char dims[256];
        model_dims_text(*m, i, t, dims, sizeof dims);
        r = opts_usage(cmd, "input '%s' has symbolic dims (%s): give --shape %s=DxDx.. or --input %s=FILE.npy",
                       t->name, dims, t->name, t->name);
      }
    }
  }
  if (!r) r = model_plan(cmd, a, *m);
  double t2 = lc_now_ms();
  if (!r) r = model_bind(cmd, *m, &in, require);
  if (ph) ph[0] = t1 - t0, ph[1] = t2 - t1, ph[2] = lc_now_ms() - t2;
  minputs_free(&in);
  return r;
}

static int prepare(const char *cmd, const margs *a, lc_model **m, int require) {
  return prepare_timed(cmd, a, m, require, NULL);
}

int cmd_run(int argc, char **argv) {
  margs a;
  int r = parse_args(&run_cmd, argc, argv, &a);
  if (r) return r < 0 ? 0 : r;
  if (!a.out_dir) return opts_usage("run", "--output-dir is required");
  lc_model *m = NULL;
  if (!(r = prepare("run", &a, &m, 1))) {
    /* the directory is made and checked before the model runs, not after */
    if (opts_mkdirs(a.out_dir) || access(a.out_dir, W_OK | X_OK)) {
      fprintf(stderr, "lowconv run: --output-dir '%s': %s\n", a.out_dir, strerror(errno));
      r = 1;
    }
  }
  lc_status s;
  if (!r && (s = lc_model_run(m))) r = model_fail("run", a.model, s);
  if (!r) r = model_write_outputs("run", m, a.out_dir, !a.json);
  if (!r && a.json) {
    lc_model_stats st;
    lc_model_get_stats(m, &st);
    printf("{");
    json_io(stdout, "outputs", m, 1, 1);
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

/* Per node: median, p90 and max over the runs (sorted[i * rep ...]); then per op type: count,
 * sum of medians and its share, which is what comparing with another runtime's profile needs. */
static void per_layer_table(const lc_model *m, const double *ms, const double *sorted, size_t rep, double sum_med) {
  printf("%-4s %-28s %-18s %-18s %-10s %9s %8s %8s %6s %8s %10s\n", "#", "node", "op", "output", "route", "ms",
         "p90", "max", "%", "GFLOP/s", "workspace");
  int nl = lc_model_n_layers(m), nt = 0;
  const char **types = calloc((size_t)nl + 1, sizeof(char *));
  double *tms = calloc((size_t)nl + 1, sizeof(double));
  int *tcount = calloc((size_t)nl + 1, sizeof(int));
  for (int i = 0; i < nl; i++) {
    lc_layer_info li;
    lc_model_layer(m, i, &li);
    char shape[64] = "", op[96];
    for (int d = 0; d < li.ndim; d++)
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "x" : "", (long long)li.dims[d]);
    snprintf(op, sizeof op, "%s%s%s", li.op_type, li.fused[0] ? "+" : "", li.fused);
    const double *r = sorted + (size_t)i * rep;
    printf("%-4d %-28.28s %-18.18s %-18s %-10s %9.3f %8.3f %8.3f %6.1f %8.2f %10zu\n", i, li.name, op, shape, li.route,
           ms[i], r[rep * 9 / 10 < rep ? rep * 9 / 10 : rep - 1], r[rep - 1], sum_med > 0 ? 100 * ms[i] / sum_med : 0,
           ms[i] > 0 ? li.flops / ms[i] / 1e6 : 0, li.workspace_bytes);
    int t = 0;
    while (types && t < nt && strcmp(types[t], li.op_type)) t++;
    if (!types || !tms || !tcount) continue;
    if (t == nt) types[nt++] = li.op_type;
    tms[t] += ms[i], tcount[t]++;
  }
  printf("\n%-24s %6s %10s %6s\n", "op type", "count", "ms", "%");
  for (int k = 0; k < nt; k++) { /* largest first */
    int b = k;
    for (int q = k + 1; q < nt; q++) b = tms[q] > tms[b] ? q : b;
    const char *ts = types[b];
    double tv = tms[b];
    int tc = tcount[b];
    types[b] = types[k], tms[b] = tms[k], tcount[b] = tcount[k];
    types[k] = ts, tms[k] = tv, tcount[k] = tc;
    printf("%-24s %6d %10.3f %6.1f\n", ts, tc, tv, sum_med > 0 ? 100 * tv / sum_med : 0);
  }
  free(types);
  free(tms);
  free(tcount);
}

int cmd_bench(int argc, char **argv) {
  margs a;
  int r = parse_args(&bench_cmd, argc, argv, &a);
  if (r) return r < 0 ? 0 : r;
  lc_model *m = NULL;
  double t_start = lc_now_ms(), start_ms = 0, ph[3] = {0, 0, 0};
  if ((r = prepare_timed("bench", &a, &m, 0, ph))) {
    lc_model_free(m);
    return r;
  }
  int nl = lc_model_n_layers(m);
  size_t rep = (size_t)a.repeat;
  double *tot = calloc(rep, sizeof(double)), *layer_ms = calloc((size_t)nl + 1, sizeof(double) * rep),
         *med_ms = calloc((size_t)nl + 1, sizeof(double));
  lc_status s = LC_OK;
  if (!tot || !layer_ms || !med_ms) r = model_fail("bench", "timing buffers", LC_ERR_NO_MEMORY);
  else if ((s = lc_model_run(m))) r = model_fail("bench", a.model, s); /* warm-up: first touch of arena and weights */
  start_ms = lc_now_ms() - t_start; /* load to first result */
  for (size_t it = 0; !r && it < rep; it++) {
    double t0 = lc_now_s();
    s = lc_model_run(m);
    tot[it] = (lc_now_s() - t0) * 1e3;
    if (s) r = model_fail("bench", a.model, s);
    for (int i = 0; !r && i < nl; i++) {
      lc_layer_info li;
      lc_model_layer(m, i, &li);
      layer_ms[(size_t)i * rep + it] = li.ms;
    }
  }
  if (!r) {
    qsort(tot, rep, sizeof(double), cmp_d);
    double med = tot[rep / 2], sum_med = 0;
    for (int i = 0; i < nl; i++) {
      qsort(layer_ms + (size_t)i * rep, rep, sizeof(double), cmp_d);
      sum_med += med_ms[i] = layer_ms[(size_t)i * rep + rep / 2];
    }
    lc_model_stats st;
    lc_model_get_stats(m, &st);
    const char *fmt = opts_weight_formats[a.weights];
    if (a.json) {
      printf("{\"model\": ");
      json_string(stdout, a.model);
      printf(", \"threads\": %d, \"repeat\": %d, \"weights\": \"%s\", \"median_ms\": ", a.threads, a.repeat, fmt);
      json_number(stdout, med);
      printf(", \"min_ms\": ");
      json_number(stdout, tot[0]);
      printf(", ");
      json_stats(stdout, &st);
      printf(", ");
      json_layers(stdout, m, med_ms);
      json_device(m, start_ms, &a);
      printf(", \"start_phases_ms\": {\"load\": %.3f, \"plan\": %.3f, \"bind\": %.3f, \"first_run\": %.3f}}\n", ph[0],
             ph[1], ph[2], start_ms - ph[0] - ph[1] - ph[2]);
    } else {
      if (a.per_layer) per_layer_table(m, med_ms, layer_ms, rep, sum_med);
      char wtext[128];
      if (a.weights) /* what the ops hold, quantized; the file's fp32 size beside it */
        snprintf(wtext, sizeof wtext, "weights %.3f MB as %s (%.3f MB fp32 in the file)", st.packed_weight_bytes / 1e6,
                 fmt, st.weight_bytes / 1e6);
      else
        snprintf(wtext, sizeof wtext, "weights %.3f MB", st.weight_bytes / 1e6);
      struct rusage ru;
      long rss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0; /* Linux: KiB */
      printf("%s: median %.3f ms (p90 %.3f, max %.3f), min %.3f ms over %d runs, %.1f runs/s, %d threads; %s, "
             "peak activations %.3f MB, peak RSS %.1f MB\n",
             a.model, med, tot[rep * 9 / 10 < rep ? rep * 9 / 10 : rep - 1], tot[rep - 1], tot[0], a.repeat,
             med > 0 ? 1e3 / med : 0, a.threads, wtext, st.peak_activation_bytes / 1e6, rss_kb / 1024.0);
      print_device(m, &start_ms, med);
    }
  }
  free(tot);
  free(layer_ms);
  free(med_ms);
  lc_model_free(m);
  return r;
}
