/* `lowconv conv`: times one convolution (or a built-in suite) through the operator API. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchdnn.h"
#include "conv_device.h"
#include "commands.h"
#include "json.h"
#include "lowconv.h"
#include "suites.h"
#include "util/checked.h"

/* Zen4 core: 2 x 256-bit FMA pipes x 8 lanes x 2 flops at ~3.1 GHz all-core. */
#define DEFAULT_PEAK_GFLOPS_PER_CORE 99.0
#define DEFAULT_MIN_TIME_S 0.3
#define DEFAULT_TOL 1e-3

static const char help_text[] =
    "usage: lowconv conv DESC... [options]\n"
    "       lowconv conv --suite NAME [options]     (--suite list: show suites)\n"
    "\n"
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
    "  g == ic == oc is a depthwise convolution. 3-D descriptors (id, kd, ...) are rejected.\n"
    "\n"
    "options (--opt VALUE or --opt=VALUE):\n"
    "  --route R        auto|direct|gemm1x1|im2col|igemm|depthwise (default auto)\n"
    "  --threads T      threads of the context (default 1)\n"
    "  --budget B       workspace budget in bytes, suffix K/M/G = KiB/MiB/GiB (default 0 = none)\n"
    "  --layout L       nchw|nhwc (default nchw)\n"
    "  --isa I          auto|scalar|avx2|avx512 (default auto)\n"
    "  --act A          none|relu|relu6|leaky|hardswish fused activation (default none)\n"
    "  --bias           add a bias\n"
    "  --weights W      f32|q8|q4 weight storage (default f32); --check then compares with the\n"
    "                   reference run on the dequantized weights\n"
    "  --block N        q8/q4 block of input channels: 16|32|64|128|256, 0 = per output channel (default 32)\n"
    "  --asym           q8/q4 with scale and offset per block (default symmetric)\n"
    "  --int8-act       q8/q4 GEMV path: int8 activations and integer dot products\n"
    "  --mb N           override the descriptor's batch (like benchdnn's --mb)\n"
    "  --device D       cpu (default), opencl, opencl:P or opencl:P:D (lowconv devices lists them);\n"
    "                   on a device the time is the kernels' device time from profiling events\n"
    "  --tune L         device kernel choice: none (heuristic), fast (default), normal, heavy;\n"
    "                   results persist in the tuning cache, so a second run times nothing\n"
    "  --repeat N       timed runs (default: enough for ~0.3 s, at least 3 when a run is < 1 s)\n"
    "  --warmup N       untimed runs first (default 1)\n"
    "  --lib-workspace  let the library allocate the workspace in each run (default: the CLI\n"
    "                   allocates shape.workspace_bytes once and passes it)\n"
    "  --check          compare with lc_conv_reference: max_rel_err = max|out-ref| / max|ref|;\n"
    "                   exit 1 if it exceeds --tol (default 1e-3)\n"
    "  --json           one JSON object per conv (keys: desc name route threads layout isa\n"
    "                   median_ms min_ms gflops peak_fraction workspace_bytes max_rel_err,\n"
    "                   and count in suites)\n"
    "  --json-array     the same objects as one JSON array\n"
    "  --dry-run        print each resolved problem as JSON (sizes, pads pt/pl/pb/pr), run nothing\n"
    "  --suite NAME     resnet34-112 | resnet50 | mobilenetv2 | ocr-det; prints a table whose\n"
    "                   total is sum(median x count)\n"
    "\n"
    "GFLOP/s = 2*mb*oc*oh*ow*(ic/g)*kh*kw / median time. Peak = 99 GFLOP/s per core (override with\n"
    "env LOWCONV_PEAK_GFLOPS, per core) x threads.\n"
    "exit status: 0 ok, 1 a run failed or --check exceeded --tol, 2 bad usage or descriptor.\n";

typedef struct opts {
  lc_route route;
  int threads, repeat, warmup, check, json, json_array, bias, lib_ws, dry_run, asym, int8_act, block;
  lc_weight_format weights;
  int64_t mb;
  size_t budget;
  lc_layout layout;
  lc_isa isa;
  lc_activation act;
  double tol, peak_per_core;
  const char *suite;
  const char *device;       /* --device: cpu | opencl[:P[:D]] */
  lc_tune_level tune;       /* --tune (device kernel choice) */
} opts;

typedef struct result {
  lc_status status;
  char error[256];
  lc_route route;
  double median_ms, min_ms, gflops, peak_fraction, max_rel_err;
  size_t workspace_bytes, weight_bytes;
  int checked;
  int on_device;
  double setup_ms;          /* create + prepare, wall clock (weights packing, compile, tuning) */
  conv_device_result dev;
} result;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lowconv conv: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(lowconv conv --help for usage)\n");
  va_end(ap);
  return 2;
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

/* Bytes with an optional K/M/G (binary) suffix, also written KiB/KB. */
static int parse_bytes(const char *s, size_t *out) {
  if (!s || *s < '0' || *s > '9') return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return 0;
  size_t mult = 1;
  if (*end) {
    switch (*end) {
      case 'k': case 'K': mult = (size_t)1 << 10; break;
      case 'm': case 'M': mult = (size_t)1 << 20; break;
      case 'g': case 'G': mult = (size_t)1 << 30; break;
      default: return 0;
    }
    end++;
    if (*end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return 0;
  }
  if (v > SIZE_MAX) return 0;
  return lc_mul_sz((size_t)v, mult, out);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static void fill_desc(lc_conv_desc *d, const bd_conv *c, const opts *o) {
  lc_conv_desc_init(d);
  d->in_channels = c->ic, d->out_channels = c->oc, d->groups = c->g;
  d->kernel_h = c->kh, d->kernel_w = c->kw;
  d->stride_h = c->sh, d->stride_w = c->sw;
  d->dilation_h = c->dh + 1, d->dilation_w = c->dw + 1;
  d->pad_top = c->ph, d->pad_left = c->pw, d->pad_bottom = c->pb, d->pad_right = c->pr;
  d->layout = o->layout;
  d->activation = o->act;
  if (o->act == LC_ACT_CLIP) d->act_min = 0.0f, d->act_max = 6.0f;
  if (o->act == LC_ACT_LEAKY_RELU) d->act_alpha = 0.1f;
  d->route = o->route;
  d->weight_format = o->weights;
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
  for (int i = 0; i < o->warmup; i++) {
    lc_status s = lc_conv_run(conv, in, out, ws, wsz);
    if (s) { set_error(r, s, "run"); return; }
  }
  double t0 = now_s();
  lc_status s = lc_conv_run(conv, in, out, ws, wsz);
  double t1 = now_s() - t0;
  if (s) { set_error(r, s, "run"); return; }
  int n = o->repeat;
  if (n <= 0) {
    double want = ceil(DEFAULT_MIN_TIME_S / (t1 > 1e-7 ? t1 : 1e-7));
    n = want > 10000 ? 10000 : (int)want;
    if (n < 3 && t1 < 1.0) n = 3;
    if (n < 1) n = 1;
  }
  double *t = malloc(sizeof(double) * (size_t)n);
  if (!t) { set_error(r, LC_ERR_NO_MEMORY, "timing"); return; }
  t[0] = t1; /* the calibration run is a timed run too */
  for (int i = 1; i < n; i++) {
    t0 = now_s();
    s = lc_conv_run(conv, in, out, ws, wsz);
    t[i] = now_s() - t0;
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
  lc_conv *conv = NULL;
  lc_conv_desc d;
  lc_conv_shape shape;
  lc_status s;
  if (!w || !in || !out || (o->bias && !bias)) {
    set_error(r, LC_ERR_NO_MEMORY, "buffers");
    goto done;
  }
  fill_desc(&d, c, o);
  d.weights = w;
  d.bias = bias;
  double t_setup = now_s();
  if ((s = lc_conv_create(ctx, &d, &conv))) {
    set_error(r, s, "create");
    goto done;
  }
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
  r->setup_ms = (now_s() - t_setup) * 1e3;
  r->route = shape.route;
  r->workspace_bytes = shape.workspace_bytes;
  r->weight_bytes = lc_conv_weight_bytes(conv);
  size_t wsz = 0;
  if (!o->lib_ws && shape.workspace_bytes) {
    wsz = shape.workspace_bytes;
    ws = aligned_alloc(64, lc_round_up(wsz, 64));
    if (!ws) {
      set_error(r, LC_ERR_NO_MEMORY, "workspace");
      goto done;
    }
  }
  if (lc_context_backend(ctx) != LC_BACKEND_CPU) {
    r->on_device = 1;
    if ((s = conv_device_time(ctx, conv, in, n_in, out, n_out, o->warmup, o->repeat, &r->dev))) {
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
    r->peak_fraction = r->gflops / (o->peak_per_core * lc_context_threads(ctx));
  }
  if (o->check) {
    if (!(ref = alloc_floats(n_out, 0))) {
      set_error(r, LC_ERR_NO_MEMORY, "reference buffer");
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
           "\"candidates\":%d,\"programs_built\":%d,\"wall_ms\":%.5f,\"setup_ms\":%.3f",
           di->local_size[0], di->local_size[1], di->local_size[2], di->compile_ms, di->tune_ms, di->from_cache,
           di->candidates, di->programs_built, r->dev.wall_ms, r->setup_ms);
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
    printf("  wall         %.4f ms per run, back to back\n", r->dev.wall_ms);
  } else {
    printf("  route        %s (threads %d, layout %s, isa %s)\n", lc_route_name(r->route), lc_context_threads(ctx),
           layout_name(o->layout), lc_context_isa_name(ctx));
  }
  printf("  median       %.4f ms (min %.4f ms)\n", r->median_ms, r->min_ms);
  printf("  GFLOP/s      %.2f (%.1f%% of %.0f GFLOP/s peak)\n", r->gflops, 100.0 * r->peak_fraction,
         r->on_device ? r->dev.peak_gflops : o->peak_per_core * lc_context_threads(ctx));
  printf("  workspace    %zu bytes\n", r->workspace_bytes);
  printf("  weights      %zu bytes\n", r->weight_bytes);
  if (r->checked) printf("  max_rel_err  %.3g\n", r->max_rel_err);
}

static int parse_args(int argc, char **argv, opts *o, const char ***descs, int *ndesc) {
  memset(o, 0, sizeof *o);
  o->threads = 1, o->warmup = 1, o->mb = 0, o->tol = DEFAULT_TOL;
  o->layout = LC_NCHW, o->isa = LC_ISA_AUTO, o->act = LC_ACT_NONE, o->route = LC_ROUTE_AUTO;
  o->peak_per_core = DEFAULT_PEAK_GFLOPS_PER_CORE;
  o->block = 32;
  o->tune = LC_TUNE_FAST;
  const char *env = getenv("LOWCONV_PEAK_GFLOPS");
  if (env && *env) {
    char *end;
    double v = strtod(env, &end);
    if (*end || !(v > 0.0) || !isfinite(v)) return usage_error("LOWCONV_PEAK_GFLOPS='%s' is not a positive number", env);
    o->peak_per_core = v;
  }
  *descs = calloc((size_t)argc + 1, sizeof(char *));
  if (!*descs) return usage_error("out of memory");
  *ndesc = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(help_text, stdout);
      return -1;
    }
    if (strncmp(a, "--", 2) != 0) {
      (*descs)[(*ndesc)++] = a;
      continue;
    }
    static const char *const flags[] = {"--check",         "--json",    "--json-array", "--bias",
                                        "--lib-workspace", "--dry-run", "--asym",       "--int8-act"};
    int *const flag_ptr[] = {&o->check, &o->json, &o->json_array, &o->bias, &o->lib_ws, &o->dry_run, &o->asym, &o->int8_act};
    int done = 0;
    for (int f = 0; f < 8 && !done; f++)
      if (!strcmp(a, flags[f])) *flag_ptr[f] = 1, done = 1;
    if (done) continue;
    /* valued option: --key=value or --key value */
    char key[32];
    const char *eq = strchr(a, '='), *val;
    size_t kl = eq ? (size_t)(eq - a) : strlen(a);
    if (kl >= sizeof key) return usage_error("unknown option '%s'", a);
    memcpy(key, a, kl);
    key[kl] = '\0';
    static const char *const valued[] = {"--route", "--threads", "--budget", "--layout", "--isa", "--act",
                                         "--mb",    "--repeat",  "--warmup", "--tol",    "--suite",
                                         "--weights", "--block", "--device", "--tune"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= !strcmp(key, valued[k]);
    if (!known) return usage_error("unknown option '%s'", a);
    if (eq) val = eq + 1;
    else if (i + 1 < argc) val = argv[++i];
    else return usage_error("option %s needs a value", key);
    int64_t v;
    if (!strcmp(key, "--route")) {
      int r = lc_route_from_name(val);
      if (r < 0) return usage_error("unknown route '%s' (auto|direct|gemm1x1|im2col|igemm|depthwise)", val);
      o->route = (lc_route)r;
    } else if (!strcmp(key, "--threads")) {
      if (!parse_i64(val, 1, 1024, &v)) return usage_error("--threads needs 1..1024, got '%s'", val);
      o->threads = (int)v;
    } else if (!strcmp(key, "--budget")) {
      if (!parse_bytes(val, &o->budget)) return usage_error("--budget needs bytes with optional K/M/G, got '%s'", val);
    } else if (!strcmp(key, "--layout")) {
      if (!strcmp(val, "nchw")) o->layout = LC_NCHW;
      else if (!strcmp(val, "nhwc")) o->layout = LC_NHWC;
      else return usage_error("unknown layout '%s' (nchw|nhwc)", val);
    } else if (!strcmp(key, "--isa")) {
      static const char *const names[] = {"auto", "scalar", "avx2", "avx512"};
      int found = -1;
      for (int k = 0; k < 4; k++)
        if (!strcmp(val, names[k])) found = k;
      if (found < 0) return usage_error("unknown isa '%s' (auto|scalar|avx2|avx512)", val);
      o->isa = (lc_isa)found;
    } else if (!strcmp(key, "--act")) {
      static const char *const names[] = {"none", "relu", "relu6", "leaky", "hardswish"};
      static const lc_activation acts[] = {LC_ACT_NONE, LC_ACT_RELU, LC_ACT_CLIP, LC_ACT_LEAKY_RELU,
                                           LC_ACT_HARD_SWISH};
      int found = -1;
      for (int k = 0; k < 5; k++)
        if (!strcmp(val, names[k])) found = k;
      if (found < 0) return usage_error("unknown activation '%s' (none|relu|relu6|leaky|hardswish)", val);
      o->act = acts[found];
    } else if (!strcmp(key, "--weights")) {
      if (!strcmp(val, "f32")) o->weights = LC_WEIGHTS_F32;
      else if (!strcmp(val, "q8")) o->weights = LC_WEIGHTS_Q8;
      else if (!strcmp(val, "q4")) o->weights = LC_WEIGHTS_Q4;
      else return usage_error("--weights needs f32|q8|q4, got '%s'", val);
    } else if (!strcmp(key, "--block")) {
      if (!parse_i64(val, 0, 256, &v) || (v && v != 16 && v != 32 && v != 64 && v != 128 && v != 256))
        return usage_error("--block needs 0, 16, 32, 64, 128 or 256, got '%s'", val);
      o->block = (int)v;
    } else if (!strcmp(key, "--device")) {
      lc_context_params tmp;
      if (lc_device_parse(val, &tmp)) return usage_error("%s", lc_last_error());
      o->device = val;
    } else if (!strcmp(key, "--tune")) {
      static const char *const names[] = {"none", "fast", "normal", "heavy"};
      int found = -1;
      for (int k = 0; k < 4; k++)
        if (!strcmp(val, names[k])) found = k;
      if (found < 0) return usage_error("unknown tune level '%s' (none|fast|normal|heavy)", val);
      o->tune = (lc_tune_level)found;
    } else if (!strcmp(key, "--mb")) {
      if (!parse_i64(val, 1, 1000000, &v)) return usage_error("--mb needs a positive count, got '%s'", val);
      o->mb = v;
    } else if (!strcmp(key, "--repeat")) {
      if (!parse_i64(val, 1, 1000000, &v)) return usage_error("--repeat needs a positive count, got '%s'", val);
      o->repeat = (int)v;
    } else if (!strcmp(key, "--warmup")) {
      if (!parse_i64(val, 0, 1000000, &v)) return usage_error("--warmup needs a count >= 0, got '%s'", val);
      o->warmup = (int)v;
    } else if (!strcmp(key, "--tol")) {
      char *end;
      double t = strtod(val, &end);
      if (*end || !(t >= 0.0)) return usage_error("--tol needs a number >= 0, got '%s'", val);
      o->tol = t;
    } else {
      o->suite = val;
    }
  }
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
    return usage_error("no descriptor given");
  }
  /* Parse everything first so a typo fails before any timing. */
  bd_conv *cs = calloc((size_t)n, sizeof(bd_conv));
  int *counts = calloc((size_t)n, sizeof(int));
  if (!cs || !counts) {
    free(cs), free(counts), free(descs);
    return usage_error("out of memory");
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
  p.isa = o.isa;
  p.tune = o.tune;
  if (o.device) lc_device_parse(o.device, &p); /* validated while parsing */
  lc_context *ctx = NULL;
  double t_ctx = now_s();
  lc_status s = lc_context_create(&p, &ctx);
  t_ctx = (now_s() - t_ctx) * 1e3;
  if (s) {
    fprintf(stderr, "lowconv conv: context: %s: %s\n", lc_status_name(s), lc_last_error());
    free(cs), free(counts);
    return 1;
  }
  const int table = su && !o.json;
  if (table) {
    printf("suite %s (%s): %d shapes, threads %d, layout %s, isa %s, route %s\n", su->name, su->about, su->n,
           lc_context_threads(ctx), layout_name(o.layout), lc_context_isa_name(ctx), lc_route_name(o.route));
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
    double peak = dev_peak > 0 ? dev_peak : o.peak_per_core * lc_context_threads(ctx);
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
