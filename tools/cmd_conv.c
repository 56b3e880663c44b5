/* `lowconv conv`: times one convolution (or a built-in suite) through the operator API. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchdnn.h"
#include "opts.h"
#include "peak.h"
#include "conv_device.h"
#include "commands.h"
#include "json.h"
#include "lowconv.h"
#include "suites.h"
#include "util/checked.h"
#include "util/timer.h"

#define DEFAULT_MIN_TIME_S 0.3
#define DEFAULT_TOL 1e-3

static const char about[] =
    "Times a float convolution through the lowconv operator API (create, prepare, run) on\n"
    "random data (fixed seed) and prints route, median ms, GFLOP/s, % of FMA peak, workspace.\n"
    "\n"
    "DESC is a oneDNN benchdnn conv problem descriptor, e.g.\n"
    "  mb1ic256ih80oc256kh9ph4\n"
    "  g1mb1ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3_n\"resnet:conv1\"\n"
    "  keys: g groups, mb batch, ic/oc channels, ih iw input, oh ow output, kh kw kernel,\n"
    "  sh sw strides, ph pw pads, dh dw dilations; '_' is ignored; n\"NAME\" names the problem\n"
    "  (benchdnn form: an unquoted n... runs to the end of the string; a quoted one may come first).\n"
    "  Defaults, as in benchdnn except mb:\n"
    "  - mb1 (benchdnn's default is mb2; lowconv targets single-image inference), g1.\n"
    "  - if no w value is given, every w value copies h (iw=ih, kw=kh, ow=oh, sw=sh, pw=ph, dw=dh);\n"
    "    with only w values it is a 1-D problem (ih=kh=1). If some w values are given, the others\n"
    "    take benchdnn's defaults (sw1, dw0, pw derived as below); iw and kw, which benchdnn then\n"
    "    requires, default to ih and kh.\n"
    "  - stride 1, dilation 0. Dilation is benchdnn's: d0 = dense, dX = X holes between taps\n"
    "    (ONNX dilation X+1).\n"
    "  - oh absent: oh = (ih + 2ph - ((kh-1)(dh+1)+1)) / sh + 1, ph absent = 0.\n"
    "  - oh given, ph absent: ph = ((oh-1)sh - ih + (kh-1)(dh+1)+1) / 2 and the bottom pad takes\n"
    "    the rest (so 'same' padding of even kernels is asymmetric, as in benchdnn).\n"
    "  - oh given: it must be consistent; the bottom pad is (oh-1)sh - ih + (kh-1)(dh+1)+1 - ph\n"
    "    (0 if negative, when the stride skips the last rows) and must reproduce oh.\n"
    "  g == ic == oc is a depthwise convolution. 3-D descriptors (id, kd, ...) are rejected.\n";

static const char epilog[] =
    "GFLOP/s = 2*mb*oc*oh*ow*(ic/g)*kh*kw / median time. Peak = this core's FMA rate for the ISA in\n"
    "use, measured once (a 0.1 s loop of independent FMAs) and cached per CPU model and ISA in\n"
    "$XDG_CACHE_HOME/lowconv/peak (~/.cache/lowconv/peak), x min(threads, online cores);\n"
    "env LOWCONV_PEAK_GFLOPS (per core) overrides it. Winograd does 2.25x fewer multiplies for the same\n"
    "result, so its rate can pass 100% of peak.\n";

typedef struct opts {
  int route, threads, repeat, warmup, check, json, json_array, bias, lib_ws, dry_run, asym, int8_act, block, rotate;
  int weights, mb, layout, isa, act, tune;       /* tune: lc_tune_level */
  size_t budget;
  double tol, peak, warmup_ms;
  const char *suite, *device;
} opts;

static const char *const layouts[] = {"nchw", "nhwc", NULL};
static const char *const isas[] = {"auto", "scalar", "avx2", "avx512", NULL}; /* lc_isa order */
static const char *const acts[] = {"none", "relu", "relu6", "leaky", "hardswish", NULL}; /* lc_activation order */
static const char *route_names[LC_ROUTE_COUNT + 1]; /* from lc_route_name, so every route is listed */

#define O(f) offsetof(opts, f)
static const opt_def conv_opts[] = {
    {"--route", "R", OPT_CHOICE, O(route), 0, 0, route_names, "route to force"},
    {"--threads", "T", OPT_INT, O(threads), 1, 1024, NULL, "threads of the context"},
    {"--budget", "B", OPT_BYTES, O(budget), 0, 0, NULL,
     "workspace budget in bytes, suffix K/M/G = KiB/MiB/GiB\n(default 0 = none)"},
    {"--layout", "L", OPT_CHOICE, O(layout), 0, 0, layouts, "tensor layout"},
    {"--isa", "I", OPT_CHOICE, O(isa), 0, 0, isas, "kernel table"},
    {"--act", "A", OPT_CHOICE, O(act), 0, 0, acts, "fused activation"},
    {"--bias", NULL, OPT_FLAG, O(bias), 0, 0, NULL, "add a bias"},
    {"--weights", "W", OPT_CHOICE, O(weights), 0, 0, opts_weight_formats,
     "weight storage; --check then compares with the reference\nrun on the dequantized weights"},
    {"--block", "N", OPT_INT, O(block), 0, 256, NULL,
     "q8/q4 block of input channels: 16|32|64|128|256,\n0 = per output channel"},
    {"--asym", NULL, OPT_FLAG, O(asym), 0, 0, NULL, "q8/q4 with scale and offset per block (default symmetric)"},
    {"--int8-act", NULL, OPT_FLAG, O(int8_act), 0, 0, NULL,
     "q8/q4: int8 activations and integer dot products (the GEMV path, the i8gemm route)"},
    {"--mb", "N", OPT_INT, O(mb), 1, 1000000, NULL,
     "override the descriptor's batch (like benchdnn's --mb)\n(default: the descriptor's)"},
    {"--repeat", "N", OPT_INT, O(repeat), 1, 1000000, NULL,
     "timed runs (default: enough for ~0.3 s, at least 3\nwhen a run is < 1 s)"},
    {"--warmup", "N", OPT_INT, O(warmup), 0, 1000000, NULL, "untimed runs first"},
    {"--warmup-ms", "MS", OPT_DOUBLE, O(warmup_ms), 0, 0, NULL,
     "after --warmup, untimed runs until MS ms have passed (default 0): on a VM a\n"
     "second vCPU woken from idle may be off-core for ms at a time, for ~20 ms"},
    {"--rotate", "N", OPT_INT, O(rotate), 1, 64, NULL,
     "device: the wall time of back-to-back runs cycles over N copies of\nthe conv and its weights (weights larger than the cache come\nfrom memory, as in a network; default 1)"},
    {"--lib-workspace", NULL, OPT_FLAG, O(lib_ws), 0, 0, NULL,
     "let the library allocate the workspace in each run (default:\n"
     "the CLI allocates shape.workspace_bytes once and passes it)"},
    {"--check", NULL, OPT_FLAG, O(check), 0, 0, NULL,
     "compare with lc_conv_reference: max_rel_err = max|out-ref| / max|ref|;\nexit 1 if it exceeds --tol"},
    {"--tol", "X", OPT_DOUBLE, O(tol), 0, 0, NULL, "tolerance of --check"},
    {"--json", NULL, OPT_FLAG, O(json), 0, 0, NULL,
     "one JSON object per conv (keys: desc name route threads layout isa\nmedian_ms min_ms gflops peak_fraction "
     "workspace_bytes weight_bytes\nweights max_rel_err, and count in suites)"},
    {"--json-array", NULL, OPT_FLAG, O(json_array), 0, 0, NULL, "the same objects as one JSON array"},
    {"--dry-run", NULL, OPT_FLAG, O(dry_run), 0, 0, NULL,
     "print each resolved problem as JSON (sizes, pads pt/pl/pb/pr), run nothing"},
    {"--suite", "NAME", OPT_STRING, O(suite), 0, 0, NULL,
     "a built-in layer list (--suite list shows them); prints a table whose\ntotal is sum(median x count)"},
    {"--device", "D", OPT_STRING, O(device), 0, 0, NULL,
     "cpu, opencl, opencl:P or opencl:P:D (lowconv devices lists them);\n"
     "on a device the time is the kernels' device time from profiling events"},
    {"--tune", "L", OPT_CHOICE, O(tune), 0, 0, opts_tune_levels,
     "timed choice: device kernels (default fast) or, on the cpu, the routes x\n"
     "tiles x splits (x threads at heavy) of auto convs (default none = the\n"
     "heuristic's); results persist in the tuning cache, so a second run\n"
     "times nothing"},
};
#undef O

static const opt_cmd conv_cmd = {
    "conv", "DESC... [options]\n       lowconv conv --suite NAME [options]     (--suite list: show suites)", about,
    conv_opts, (int)(sizeof conv_opts / sizeof conv_opts[0]), epilog, 1 << 20, "descriptor"};

typedef struct result {
  lc_status status;
  char error[256];
  lc_route route;
  lc_conv_device_info cpu; /* the CPU route's label and tuning figures */
  double median_ms, min_ms, gflops, peak_fraction, max_rel_err;
  size_t workspace_bytes, weight_bytes;
  int checked;
  int on_device;
  double setup_ms;          /* create + prepare, wall clock (weights packing, compile, tuning) */
  double create_ms;         /* create alone (quantizing, repacking, uploading the weights) */
  conv_device_result dev;
} result;

static uint64_t rng_state;
static float rng_float(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 0x2545F4914F6CDD1DULL;
  return (float)((double)(r >> 40) / (double)(1u << 23) - 1.0);
}

static float *alloc_floats(size_t n, int fill) {
  size_t bytes;
  if (!lc_mul_sz(n ? n : 1, sizeof(float), &bytes) || !lc_add_sz(bytes, 63, &bytes)) return NULL;
  float *p = aligned_alloc(64, bytes / 64 * 64);
  if (p && fill)
    for (size_t i = 0; i < n; i++) p[i] = rng_float();
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void set_error(result *r, lc_status s, const char *what) {
  r->status = s;
  snprintf(r->error, sizeof r->error, "%s: %s: %s", what, lc_status_name(s), lc_last_error());
}

/* The CLI's own allocations: no library message to add. */
static void set_oom(result *r, const char *what, size_t bytes) {
  r->status = LC_ERR_NO_MEMORY;
  snprintf(r->error, sizeof r->error, "%s: out of memory (%zu bytes)", what, bytes);
}

static void fill_desc(lc_conv_desc *d, const bd_conv *c, const opts *o) {
  lc_conv_desc_init(d);
  d->in_channels = c->ic, d->out_channels = c->oc, d->groups = c->g;
  d->kernel_h = c->kh, d->kernel_w = c->kw;
  d->stride_h = c->sh, d->stride_w = c->sw;
  d->dilation_h = c->dh + 1, d->dilation_w = c->dw + 1;
  d->pad_top = c->ph, d->pad_left = c->pw, d->pad_bottom = c->pb, d->pad_right = c->pr;
  d->layout = (lc_layout)o->layout;
  d->activation = (lc_activation)o->act;
  if (o->act == LC_ACT_CLIP) d->act_min = 0.0f, d->act_max = 6.0f;
  if (o->act == LC_ACT_LEAKY_RELU) d->act_alpha = 0.1f;
  d->route = (lc_route)o->route;
  d->weight_format = (lc_weight_format)o->weights;
  d->block_size = o->block;
  d->asym = o->asym;
  d->int8_activations = o->int8_act;
}

/* max|out - ref| / max|ref| (absolute if ref is all zeros); +inf if out has a non-finite value. */
static double rel_err(const float *out, const float *ref, size_t n) {
  double md = 0.0, mr = 0.0;
  for (size_t i = 0; i < n; i++) {
    double dv = fabs((double)out[i] - (double)ref[i]);
    if (!(dv <= md)) md = isnan(dv) ? INFINITY : dv;
    if (fabs((double)ref[i]) > mr) mr = fabs((double)ref[i]);
  }
  return mr > 0.0 ? md / mr : md;
}

static void time_runs(lc_conv *conv, const float *in, float *out, void *ws, size_t wsz, const opts *o,
                      result *r, double flops) {
  double tw = lc_now_s();
  for (int i = 0; i < o->warmup || (lc_now_s() - tw) * 1e3 < o->warmup_ms; i++) {
    lc_status s = lc_conv_run(conv, in, out, ws, wsz);
    if (s) { set_error(r, s, "run"); return; }
  }
  double t0 = lc_now_s();
  lc_status s = lc_conv_run(conv, in, out, ws, wsz);
  double t1 = lc_now_s() - t0;
  if (s) { set_error(r, s, "run"); return; }
  int n = o->repeat;
  if (n <= 0) {
    double want = ceil(DEFAULT_MIN_TIME_S / (t1 > 1e-7 ? t1 : 1e-7));
    n = want > 10000 ? 10000 : (int)want;
    if (n < 3 && t1 < 1.0) n = 3;
    if (n < 1) n = 1;
  }
  double *t = malloc(sizeof(double) * (size_t)n);
  if (!t) { set_oom(r, "timing", sizeof(double) * (size_t)n); return; }
  t[0] = t1; /* the calibration run is a timed run too */
  for (int i = 1; i < n; i++) {
    t0 = lc_now_s();
    s = lc_conv_run(conv, in, out, ws, wsz);
    t[i] = lc_now_s() - t0;
    if (s) {
      free(t);
      set_error(r, s, "run");
      return;
    }
  }
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  r->median_ms = med * 1e3;
  r->min_ms = t[0] * 1e3;
  r->gflops = flops / med * 1e-9;
  free(t);
}

/* Creates, prepares, times and optionally checks one conv. Failures land in r. */
static void run_one(lc_context *ctx, const opts *o, const bd_conv *c, result *r) {
  memset(r, 0, sizeof *r);
  r->max_rel_err = NAN;
  rng_state = 0x9E3779B97F4A7C15ULL; /* same data for every run of a shape */
  size_t n_in, n_out, n_w;
  const int64_t fin[] = {c->mb, c->ic, c->ih, c->iw}, fout[] = {c->mb, c->oc, c->oh, c->ow},
                fw[] = {c->oc, c->ic / c->g, c->kh, c->kw};
  if (!lc_mul_n(&n_in, 4, fin) || !lc_mul_n(&n_out, 4, fout) || !lc_mul_n(&n_w, 4, fw)) {
    r->status = LC_ERR_OVERFLOW;
    snprintf(r->error, sizeof r->error, "tensor sizes overflow");
    return;
  }
  float *w = alloc_floats(n_w, 1), *bias = o->bias ? alloc_floats((size_t)c->oc, 1) : NULL;
  float *in = alloc_floats(n_in, 1), *out = alloc_floats(n_out, 0), *ref = NULL;
  void *ws = NULL;
  lc_conv *conv = NULL, **extra = NULL;
  lc_conv_desc d;
  lc_conv_shape shape;
  lc_status s;
  if (!w || !in || !out || (o->bias && !bias)) {
    set_oom(r, "input/output/weight buffers", (n_in + n_out + n_w) * sizeof(float));
    goto done;
  }
  fill_desc(&d, c, o);
  d.weights = w;
  d.bias = bias;
  double t_setup = lc_now_s();
  if ((s = lc_conv_create(ctx, &d, &conv))) {
    set_error(r, s, "create");
    goto done;
  }
  r->create_ms = (lc_now_s() - t_setup) * 1e3;
  if ((s = lc_conv_prepare(conv, c->mb, c->ih, c->iw, &shape))) {
    set_error(r, s, "prepare");
    goto done;
  }
  if (shape.out_h != c->oh || shape.out_w != c->ow) {
    r->status = LC_ERR_INTERNAL;
    snprintf(r->error, sizeof r->error, "prepare gave output %lldx%lld, descriptor says %lldx%lld",
             (long long)shape.out_h, (long long)shape.out_w, (long long)c->oh, (long long)c->ow);
    goto done;
  }
  r->setup_ms = (lc_now_s() - t_setup) * 1e3;
  r->route = shape.route;
  lc_conv_device_info_get(conv, &r->cpu);
  r->workspace_bytes = shape.workspace_bytes;
  r->weight_bytes = lc_conv_weight_bytes(conv);
  size_t wsz = 0;
  if (!o->lib_ws && shape.workspace_bytes) {
    wsz = shape.workspace_bytes;
    ws = aligned_alloc(64, lc_round_up(wsz, 64));
    if (!ws) {
      set_oom(r, "workspace", wsz);
      goto done;
    }
  }
  if (lc_context_backend(ctx) != LC_BACKEND_CPU) {
    r->on_device = 1;
    int nx = o->rotate > 1 ? o->rotate - 1 : 0;
    if (nx && !(extra = calloc((size_t)nx, sizeof *extra))) {
      set_oom(r, "conv copies", (size_t)nx * sizeof *extra);
      goto done;
    }
    for (int i = 0; i < nx; i++) /* the copies find the first's choice in the tuning cache */
      if ((s = lc_conv_create(ctx, &d, &extra[i])) || (s = lc_conv_prepare(extra[i], c->mb, c->ih, c->iw, &shape))) {
        set_error(r, s, "create (--rotate copy)");
        goto done;
      }
    if ((s = conv_device_time(ctx, conv, extra, nx, in, n_in, out, n_out, o->warmup, o->repeat, &r->dev))) {
      set_error(r, s, "run");
      goto done;
    }
    r->median_ms = r->dev.device_ms, r->min_ms = r->dev.min_ms;
    r->gflops = bd_flops(c) / (r->median_ms * 1e-3) * 1e-9;
    r->peak_fraction = r->dev.peak_gflops > 0 ? r->gflops / r->dev.peak_gflops : NAN;
    r->workspace_bytes = r->dev.info.device_bytes - r->weight_bytes;
  } else {
    time_runs(conv, in, out, ws, wsz, o, r, bd_flops(c));
    if (r->status) goto done;
    r->peak_fraction = r->gflops / o->peak;
  }
  if (o->check) {
    if (!(ref = alloc_floats(n_out, 0))) {
      set_oom(r, "reference buffer", n_out * sizeof(float));
      goto done;
    }
    /* Quantized weights: the expected result is the conv with the dequantized weights. */
    if (d.weight_format != LC_WEIGHTS_F32) {
      if ((s = lc_conv_get_weights(conv, w))) {
        set_error(r, s, "weights");
        goto done;
      }
      d.weight_format = LC_WEIGHTS_F32;
    }
    if ((s = lc_conv_reference(&d, c->mb, c->ih, c->iw, in, ref))) {
      set_error(r, s, "reference");
      goto done;
    }
    r->max_rel_err = rel_err(out, ref, n_out);
    r->checked = 1;
  }
done:
  for (int i = 0; extra && i < o->rotate - 1; i++) lc_conv_destroy(extra[i]);
  free(extra);
  lc_conv_destroy(conv);
  free(ws);
  free(ref);
  free(out);
  free(in);
  free(bias);
  free(w);
}

static const char *layout_name(lc_layout l) { return l == LC_NHWC ? "nhwc" : "nchw"; }

static void print_json(const opts *o, lc_context *ctx, const bd_conv *c, const char *canon, int count,
                       const result *r) {
  printf("{\"desc\":");
  json_string(stdout, canon);
  printf(",\"name\":");
  json_string(stdout, c->name[0] ? c->name : NULL);
  if (count > 0) printf(",\"count\":%d", count);
  printf(",\"route\":");
  json_string(stdout, r->status ? NULL : lc_route_name(r->route));
  printf(",\"threads\":%d,\"layout\":\"%s\",\"isa\":", lc_context_threads(ctx), layout_name(o->layout));
  json_string(stdout, lc_context_isa_name(ctx));
  printf(",\"median_ms\":");
  json_number(stdout, r->status ? NAN : r->median_ms);
  printf(",\"min_ms\":");
  json_number(stdout, r->status ? NAN : r->min_ms);
  printf(",\"gflops\":");
  json_number(stdout, r->status ? NAN : r->gflops);
  printf(",\"peak_fraction\":");
  json_number(stdout, r->status ? NAN : r->peak_fraction);
  printf(",\"workspace_bytes\":");
  if (r->status) printf("null");
  else printf("%zu", r->workspace_bytes);
  printf(",\"weight_bytes\":");
  if (r->status) printf("null");
  else printf("%zu", r->weight_bytes);
  printf(",\"weights\":\"%s\"", o->weights == LC_WEIGHTS_Q8 ? "q8" : o->weights == LC_WEIGHTS_Q4 ? "q4" : "f32");
  printf(",\"max_rel_err\":");
  /* a non-finite error is reported as a huge one, not as null (= not checked) */
  if (r->checked) json_number(stdout, isfinite(r->max_rel_err) ? r->max_rel_err : 1e300);
  else printf("null");
  if (r->on_device && !r->status) {
    const lc_conv_device_info *di = &r->dev.info;
    printf(",\"device\":");
    json_string(stdout, lc_context_device_name(ctx));
    printf(",\"variant\":");
    json_string(stdout, di->kernel);
    printf(",\"local_size\":[%zu,%zu,%zu],\"compile_ms\":%.3f,\"tune_ms\":%.3f,\"tune_cached\":%d,"
           "\"candidates\":%d,\"programs_built\":%d,\"wall_ms\":%.5f,\"weight_copies\":%d,\"setup_ms\":%.3f,"
           "\"create_ms\":%.3f",
           di->local_size[0], di->local_size[1], di->local_size[2], di->compile_ms, di->tune_ms, di->from_cache,
           di->candidates, di->programs_built, r->dev.wall_ms, o->rotate > 1 ? o->rotate : 1, r->setup_ms, r->create_ms);
  }
  if (!r->on_device && !r->status && r->cpu.kernel[0] && strcmp(r->cpu.kernel, lc_route_name(r->route))) {
    printf(",\"tuned\":");
    json_string(stdout, r->cpu.kernel);
    printf(",\"tune_cached\":%d,\"candidates\":%d,\"tune_ms\":%.3f", r->cpu.from_cache, r->cpu.candidates,
           r->cpu.tune_ms);
  }
  if (r->status) {
    printf(",\"error\":");
    json_string(stdout, r->error);
  }
  printf("}");
}

static void print_text(const opts *o, lc_context *ctx, const char *canon, const result *r) {
  printf("conv %s\n", canon);
  if (r->status) return; /* the message went to stderr */
  if (r->on_device) {
    const lc_conv_device_info *di = &r->dev.info;
    printf("  device       %s: %s, local %zux%zux%zu (%s; compile %.1f ms, tune %.1f ms)\n", lc_context_device_name(ctx),
           di->kernel, di->local_size[0], di->local_size[1], di->local_size[2],
           di->from_cache ? "from the tuning cache" : "tuned now", di->compile_ms, di->tune_ms);
    printf("  wall         %.4f ms per run, back to back%s\n", r->dev.wall_ms,
           o->rotate > 1 ? " over the weight copies" : "");
  } else {
    printf("  route        %s (threads %d, layout %s, isa %s)\n", r->cpu.kernel[0] ? r->cpu.kernel : lc_route_name(r->route),
           lc_context_threads(ctx), layout_name(o->layout), lc_context_isa_name(ctx));
    if (r->cpu.candidates)
      printf("  tuned        %d candidates in %.1f ms\n", r->cpu.candidates, r->cpu.tune_ms);
  }
  printf("  median       %.4f ms (min %.4f ms)\n", r->median_ms, r->min_ms);
  printf("  GFLOP/s      %.2f (%.1f%% of %.0f GFLOP/s peak)\n", r->gflops, 100.0 * r->peak_fraction,
         r->on_device ? r->dev.peak_gflops : o->peak);
  printf("  workspace    %zu bytes\n", r->workspace_bytes);
  printf("  weights      %zu bytes\n", r->weight_bytes);
  if (r->checked) printf("  max_rel_err  %.3g\n", r->max_rel_err);
}

static int parse_args(int argc, char **argv, opts *o, const char ***descs, int *ndesc) {
  memset(o, 0, sizeof *o);
  o->threads = 1, o->warmup = 1, o->tol = DEFAULT_TOL, o->block = 32, o->tune = -1, o->device = "cpu";
  for (int r = 0; r < LC_ROUTE_COUNT; r++) route_names[r] = lc_route_name((lc_route)r);
  *descs = calloc((size_t)argc + 1, sizeof(char *));
  if (!*descs) return opts_usage("conv", "out of memory");
  int rc = opts_parse(&conv_cmd, argc, argv, o, *descs, ndesc);
  if (rc) return rc;
  if (o->block && o->block != 16 && o->block != 32 && o->block != 64 && o->block != 128 && o->block != 256)
    return opts_usage("conv", "--block needs 0, 16, 32, 64, 128 or 256, got '%d'", o->block);
  lc_context_params tmp;
  if (lc_device_parse(o->device, &tmp)) return opts_usage("conv", "--device: %s", lc_last_error());
  if (o->json_array) o->json = 1;
  return 0;
}

static void print_resolved(const bd_conv *c, int count) {
  char canon[256];
  bd_conv noname = *c;
  noname.name[0] = '\0';
  bd_format(&noname, canon, sizeof canon);
  printf("{\"desc\":");
  json_string(stdout, canon);
  printf(",\"name\":");
  json_string(stdout, c->name);
  printf(",\"count\":%d,\"g\":%lld,\"mb\":%lld,\"ic\":%lld,\"ih\":%lld,\"iw\":%lld,\"oc\":%lld,\"oh\":%lld,"
         "\"ow\":%lld,\"kh\":%lld,\"kw\":%lld,\"sh\":%lld,\"sw\":%lld,\"pt\":%lld,\"pl\":%lld,\"pb\":%lld,"
         "\"pr\":%lld,\"dh\":%lld,\"dw\":%lld,\"flops\":%.0f}\n",
         count > 0 ? count : 1, (long long)c->g, (long long)c->mb, (long long)c->ic, (long long)c->ih,
         (long long)c->iw, (long long)c->oc, (long long)c->oh, (long long)c->ow, (long long)c->kh, (long long)c->kw,
         (long long)c->sh, (long long)c->sw, (long long)c->ph, (long long)c->pw, (long long)c->pb, (long long)c->pr,
         (long long)c->dh, (long long)c->dw, bd_flops(c));
}

static void list_suites(FILE *f) {
  for (int i = 0; suite_at(i); i++) fprintf(f, "  %-14s %s\n", suite_at(i)->name, suite_at(i)->about);
}

int cmd_conv(int argc, char **argv) {
  opts o;
  const char **descs = NULL;
  int ndesc = 0;
  int rc = parse_args(argc, argv, &o, &descs, &ndesc);
  if (rc) {
    free(descs);
    return rc < 0 ? 0 : rc;
  }
  const suite *su = NULL;
  if (o.suite) {
    if (!strcmp(o.suite, "list")) {
      list_suites(stdout);
      free(descs);
      return 0;
    }
    if (!(su = suite_find(o.suite))) {
      fprintf(stderr, "lowconv conv: unknown suite '%s'; suites:\n", o.suite);
      list_suites(stderr);
      free(descs);
      return 2;
    }
  }
  int n = ndesc + (su ? su->n : 0);
  if (n == 0) {
    free(descs);
    return opts_usage("conv", "no descriptor given");
  }
  /* Parse everything first so a typo fails before any timing. */
  bd_conv *cs = calloc((size_t)n, sizeof(bd_conv));
  int *counts = calloc((size_t)n, sizeof(int));
  if (!cs || !counts) {
    free(cs), free(counts), free(descs);
    return opts_usage("conv", "out of memory");
  }
  for (int i = 0; i < n; i++) {
    const char *str = i < ndesc ? descs[i] : su->layers[i - ndesc].desc;
    counts[i] = i < ndesc ? 0 : su->layers[i - ndesc].count;
    char err[256];
    if (bd_parse(str, &cs[i], err, sizeof err)) {
      fprintf(stderr, "lowconv conv: invalid descriptor '%s': %s\n", str, err);
      free(cs), free(counts), free(descs);
      return 2;
    }
    if (o.mb) cs[i].mb = o.mb;
  }
  free(descs);
  if (o.dry_run) {
    for (int i = 0; i < n; i++) print_resolved(&cs[i], counts[i]);
    free(cs), free(counts);
    return 0;
  }

  lc_context_params p;
  lc_context_params_init(&p);
  p.threads = o.threads;
  p.workspace_budget = o.budget;
  p.isa = (lc_isa)o.isa;
  p.tune = o.tune < 0 ? LC_TUNE_FAST : (lc_tune_level)o.tune;
  if (o.device) lc_device_parse(o.device, &p); /* validated while parsing */
  if (p.backend == LC_BACKEND_CPU && o.tune > 0) p.cpu_tune = (lc_tune_level)o.tune;
  lc_context *ctx = NULL;
  double t_ctx = lc_now_s();
  lc_status s = lc_context_create(&p, &ctx);
  t_ctx = (lc_now_s() - t_ctx) * 1e3;
  if (s) {
    fprintf(stderr, "lowconv conv: context: %s: %s\n", lc_status_name(s), lc_last_error());
    free(cs), free(counts);
    return 1;
  }
  const char *peak_src = "device";
  if (lc_context_backend(ctx) == LC_BACKEND_CPU) {
    char err[160];
    if (peak_gflops_per_core(lc_context_isa_name(ctx), &o.peak, &peak_src, err, sizeof err)) {
      lc_context_destroy(ctx);
      free(cs), free(counts);
      return opts_usage("conv", "%s", err);
    }
    int cores = opts_online_cores();
    o.peak *= lc_context_threads(ctx) < cores ? lc_context_threads(ctx) : cores;
  }
  const int table = su && !o.json;
  if (table) {
    printf("suite %s (%s): %d shapes, threads %d, layout %s, isa %s, route %s, peak %.0f GFLOP/s (%s)\n", su->name,
           su->about, su->n, lc_context_threads(ctx), layout_name(o.layout), lc_context_isa_name(ctx),
           lc_route_name((lc_route)o.route), o.peak, peak_src);
    printf("%-24s %-36s %5s %-9s %10s %9s %6s %11s%s\n", "name", "desc", "count", "route", "median_ms", "GFLOP/s",
           "%peak", "workspace", o.check ? "  max_rel_err" : "");
  }
  if (o.json_array) printf("[\n");
  double total_ms = 0.0, total_flop = 0.0, total_setup_ms = t_ctx, dev_peak = 0.0;
  int failed = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    result r;
    run_one(ctx, &o, &cs[i], &r);
    char canon[256];
    bd_conv noname = cs[i];
    noname.name[0] = '\0';
    bd_format(&noname, canon, sizeof canon);
    const int cnt = counts[i] ? counts[i] : 1;
    if (r.status) {
      failed++;
      /* a forced route that cannot run a shape of a suite is expected, not a failure */
      const int expected = su && (r.status == LC_ERR_UNSUPPORTED || r.status == LC_ERR_BUDGET);
      if (!o.json && !expected) fprintf(stderr, "lowconv conv: %s: %s\n", canon, r.error);
      if (!expected) bad++;
    } else {
      total_ms += r.median_ms * cnt;
      total_setup_ms += r.setup_ms;
      if (r.on_device) dev_peak = r.dev.peak_gflops;
      total_flop += bd_flops(&cs[i]) * cnt;
      if (r.checked && !(r.max_rel_err <= o.tol)) bad++;
    }
    if (o.json) {
      print_json(&o, ctx, &cs[i], canon, counts[i], &r);
      printf(o.json_array && i + 1 < n ? ",\n" : "\n");
    } else if (table) {
      printf("%-24s %-36s %5d %-9s", cs[i].name, canon, cnt,
             r.status ? "-" : r.on_device ? r.dev.info.kernel : lc_route_name(r.route));
      if (r.status)
        printf(" %10s %9s %6s %11s  (%s)\n", "-", "-", "-", "-", lc_status_name(r.status));
      else {
        printf(" %10.4f %9.2f %6.1f %11zu", r.median_ms, r.gflops, 100.0 * r.peak_fraction, r.workspace_bytes);
        if (r.checked) printf("  %11.3g", r.max_rel_err);
        printf("\n");
      }
    } else {
      print_text(&o, ctx, canon, &r);
    }
    fflush(stdout);
  }
  if (o.json_array) printf("]\n");
  if (table) {
    double peak = dev_peak > 0 ? dev_peak : o.peak;
    double gf = total_ms > 0 ? total_flop / (total_ms * 1e-3) * 1e-9 : 0.0;
    printf("total %.3f ms (sum of median x count), %.3f GFLOP, %.2f GFLOP/s, %.1f%% of peak%s\n", total_ms,
           total_flop * 1e-9, gf, 100.0 * gf / peak, failed ? " (failed shapes excluded)" : "");
    printf("setup %.1f ms (context %.1f ms + create and prepare of every shape)\n", total_setup_ms, t_ctx);
  }
  lc_context_destroy(ctx);
  free(cs);
  free(counts);
  return bad ? 1 : 0;
}
