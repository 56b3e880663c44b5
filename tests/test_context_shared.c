/* The threading contract of include/lowconv.h: one context with threads = 2 shared by 4 caller
 * threads, each creating, preparing and running its own convs (every route, both layouts) and
 * its own models on that context, in a loop. Outputs are checked against lc_conv_reference,
 * computed before the threads start. Beside them, when an OpenCL device opens, one more caller
 * plans the model on the device, whose context opens on a thread of its own while the plan
 * folds and packs the weights (lc_context_create_async), and destroys contexts still opening.
 * Also built with -fsanitize=thread (scripts/test.sh). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "api/context.h"
#include "conv_cases.h"
#include "model/model.h"
#include "pbwriter.h"

#define NCALLERS 4

typedef struct rcase {
  cc_case c;
  lc_route route;
  float *in, *ref;
  cc_bound b;
} rcase;

static const struct { lc_route route; int64_t cin, cout, groups, k, stride, hw; } shapes[] = {
    {LC_ROUTE_DIRECT, 8, 16, 1, 3, 2, 21},
    {LC_ROUTE_GEMM1X1, 32, 24, 1, 1, 1, 20},
    {LC_ROUTE_IM2COL, 12, 20, 1, 3, 1, 19},
    {LC_ROUTE_IGEMM, 16, 24, 1, 3, 1, 18},
    {LC_ROUTE_DEPTHWISE, 32, 32, 32, 3, 1, 24},
    {LC_ROUTE_WINOGRAD, 64, 64, 1, 3, 1, 48}, /* issue 7's reproducer */
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])
#define NCASES (2 * NSHAPES)

static rcase cases[NCASES];
static lc_context *shared;
static atomic_int failures, convs_run, models_run;
static int rounds;

/* The model: Y = Relu(Conv(X, W, B)) + X, 16 channels, 3x3 pads 1 (fused into one conv node). */
#define MC 16
#define MHW 20
static buf model_bytes;
static float *model_in, *model_ref;

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  atomic_fetch_add(&failures, 1);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static void make_case(rcase *r, int s, lc_layout layout) {
  lc_conv_desc *d = &r->c.d;
  lc_conv_desc_init(d);
  d->in_channels = shapes[s].cin;
  d->out_channels = shapes[s].cout;
  d->groups = shapes[s].groups;
  d->kernel_h = d->kernel_w = shapes[s].k;
  d->stride_h = d->stride_w = shapes[s].stride;
  d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = shapes[s].k / 2;
  d->layout = layout;
  d->activation = LC_ACT_RELU;
  r->c.n = 1;
  r->c.h = r->c.w = shapes[s].hw;
  r->route = shapes[s].route;
  cc_fill(&r->c, 1);
  size_t nin = cc_in_count(&r->c), nout = cc_out_count(&r->c);
  r->in = malloc(nin * sizeof(float));
  r->ref = malloc(nout * sizeof(float));
  tu_fill(r->in, nin, -1.0f, 1.0f);
  lc_status st = lc_conv_reference(d, r->c.n, r->c.h, r->c.w, r->in, r->ref);
  TU_CHECK(st == LC_OK, "reference: %s", lc_last_error());
  TU_CHECK(cc_bound_make(&r->c, r->in, &r->b) == LC_OK, "bound");
}

static void run_case(const rcase *r, float *out) {
  lc_conv_desc d = r->c.d;
  d.route = r->route;
  lc_conv *conv = NULL;
  lc_conv_shape shape;
  lc_status st = lc_conv_create(shared, &d, &conv);
  if (st == LC_OK) st = lc_conv_prepare(conv, r->c.n, r->c.h, r->c.w, &shape);
  if (st == LC_OK) st = lc_conv_run(conv, r->in, out, NULL, 0);
  lc_conv_destroy(conv);
  const char *lay = d.layout == LC_NHWC ? "nhwc" : "nchw";
  if (st != LC_OK) {
    fail("route %s %s: %s\n", lc_route_name(r->route), lay, lc_last_error());
    return;
  }
  if (shape.route != r->route) fail("route %s %s: ran %s\n", lc_route_name(r->route), lay, lc_route_name(shape.route));
  size_t at;
  double e = cc_err_ratio(&r->b, r->route, out, r->ref, cc_out_count(&r->c), &at);
  if (e > 1.0) fail("route %s %s: output off the reference by %g x the bound\n", lc_route_name(r->route), lay, e);
  atomic_fetch_add(&convs_run, 1);
}

static void run_model(void) {
  lc_model *m = NULL;
  lc_model_options o;
  lc_model_options_init(&o);
  o.context = shared;
  lc_tensor x = {.name = "X", .dtype = LC_DT_FLOAT, .ndim = 4, .dims = {1, MC, MHW, MHW}, .data = model_in,
                 .nbytes = sizeof(float) * MC * MHW * MHW};
  lc_status st = lc_model_load_buffer(model_bytes.p, model_bytes.n, &m);
  if (!st) st = lc_model_plan(m, &o);
  if (!st) st = lc_model_set_input(m, "X", &x);
  for (int i = 0; i < 2 && !st; i++) {
    st = lc_model_run(m);
    const float *y = st ? NULL : lc_model_output(m, 0)->data;
    double worst = 0;
    for (size_t k = 0; y && k < (size_t)MC * MHW * MHW; k++) worst = fmax(worst, fabs((double)y[k] - model_ref[k]));
    if (worst > 1e-4) fail("model: max |diff| %g\n", worst);
  }
  if (st) fail("model: %s\n", lc_last_error());
  else atomic_fetch_add(&models_run, 1);
  lc_model_free(m);
}

/* The model on the OpenCL device (its context opened asynchronously by the plan), and contexts
 * destroyed while their device opens and after it opened. */
static atomic_int device_runs;
static void *device_caller(void *arg) {
  (void)arg;
  for (int r = 0; r < rounds; r++) {
    lc_model *m = NULL;
    lc_model_options o;
    lc_model_options_init(&o);
    o.device = "opencl";
    o.device_tune = 0;
    lc_tensor x = {.name = "X", .dtype = LC_DT_FLOAT, .ndim = 4, .dims = {1, MC, MHW, MHW}, .data = model_in,
                   .nbytes = sizeof(float) * MC * MHW * MHW};
    lc_status st = lc_model_load_buffer(model_bytes.p, model_bytes.n, &m);
    if (!st) st = lc_model_plan(m, &o);
    if (!st) st = lc_model_set_input(m, "X", &x);
    if (!st) st = lc_model_run(m);
    const float *y = st ? NULL : lc_model_output(m, 0)->data;
    double worst = 0;
    for (size_t k = 0; y && k < (size_t)MC * MHW * MHW; k++) worst = fmax(worst, fabs((double)y[k] - model_ref[k]));
    if (st) fail("device model: %s\n", lc_last_error());
    else if (worst > 1e-4) fail("device model: max |diff| %g\n", worst);
    else atomic_fetch_add(&device_runs, 1);
    lc_model_free(m);
    lc_context_params p;
    lc_context_params_init(&p);
    p.backend = LC_BACKEND_OPENCL;
    lc_context *c = NULL;
    if ((st = lc_context_create_async(&p, &c))) fail("async open: %s\n", lc_last_error());
    lc_context_destroy(c); /* while it opens */
    if (!(st = lc_context_create_async(&p, &c)) && (st = lc_context_wait(c))) fail("async open: %s\n", lc_last_error());
    lc_context_destroy(c);
  }
  return NULL;
}

static void *caller(void *arg) {
  int id = (int)(intptr_t)arg;
  size_t most = 0;
  for (int i = 0; i < NCASES; i++) most = most > cc_out_count(&cases[i].c) ? most : cc_out_count(&cases[i].c);
  float *out = malloc(most * sizeof(float));
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < NCASES; i++) run_case(&cases[(i + id * 3) % NCASES], out); /* callers mix routes */
    run_model();
  }
  free(out);
  return NULL;
}

static void make_model(void) {
  size_t nw = (size_t)MC * MC * 9, nx = (size_t)MC * MHW * MHW;
  float *w = malloc(nw * sizeof(float)), b[MC];
  tu_fill(w, nw, -0.5f, 0.5f);
  tu_fill(b, MC, -0.5f, 0.5f);
  model_in = malloc(nx * sizeof(float));
  model_ref = malloc(nx * sizeof(float));
  tu_fill(model_in, nx, -1.0f, 1.0f);
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = d.out_channels = MC;
  d.kernel_h = d.kernel_w = 3;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.weights = w;
  d.bias = b;
  d.activation = LC_ACT_RELU;
  TU_CHECK(lc_conv_reference(&d, 1, MHW, MHW, model_in, model_ref) == LC_OK, "model reference");
  for (size_t k = 0; k < nx; k++) model_ref[k] += model_in[k];
  buf g = {0}, at = {0};
  int64_t xd[4] = {1, MC, MHW, MHW}, wd[4] = {MC, MC, 3, 3}, bd[1] = {MC}, k3[2] = {3, 3}, p1[4] = {1, 1, 1, 1};
  pb_attr_ints(&at, "kernel_shape", 2, k3);
  pb_attr_ints(&at, "pads", 4, p1);
  pb_node(&g, "Conv", "X,W,B", "C", "conv", &at);
  pb_node(&g, "Relu", "C", "R", "relu", NULL);
  pb_node(&g, "Add", "R,X", "Y", "add", NULL);
  pb_tensor(&g, 5, "W", 1, 4, wd, w, nw * sizeof(float));
  pb_tensor(&g, 5, "B", 1, 1, bd, b, sizeof b);
  value_info(&g, 11, "X", 1, 4, xd, "N");
  value_info(&g, 12, "Y", 1, 4, xd, "N");
  model_bytes = pb_model(&g, "", 13);
  free(w);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(0x5AEDC7Cull);
  rounds = cc_quick() ? 2 : 4;
  const char *e = getenv("LC_SHARED_ROUNDS");
  if (e && atoi(e) > 0) rounds = atoi(e);
  for (int s = 0; s < NSHAPES; s++) {
    make_case(&cases[2 * s], s, LC_NCHW);
    make_case(&cases[2 * s + 1], s, LC_NHWC);
  }
  make_model();
  lc_context_params p;
  lc_context_params_init(&p);
  p.threads = 2;
  TU_CHECK(lc_context_create(&p, &shared) == LC_OK, "context: %s", lc_last_error());
  int dev = !tu_no_opencl();
  pthread_t t[NCALLERS + 1];
  for (int i = 0; i < NCALLERS; i++)
    TU_CHECK(pthread_create(&t[i], NULL, caller, (void *)(intptr_t)i) == 0, "pthread_create");
  if (dev) TU_CHECK(pthread_create(&t[NCALLERS], NULL, device_caller, NULL) == 0, "pthread_create");
  for (int i = 0; i < NCALLERS + dev; i++) pthread_join(t[i], NULL);
  lc_context_destroy(shared);
  printf("  %d callers x %d rounds: %d convs, %d models, %d wrong\n", NCALLERS, rounds, atomic_load(&convs_run),
         atomic_load(&models_run), atomic_load(&failures));
  TU_CHECK(atomic_load(&failures) == 0, "%d wrong results or errors", atomic_load(&failures));
  TU_CHECK(atomic_load(&convs_run) == NCALLERS * rounds * NCASES, "convs run");
  TU_CHECK(atomic_load(&models_run) == NCALLERS * rounds, "models run");
  if (dev) printf("  the device caller: %d models planned on a device opened beside the plan\n", atomic_load(&device_runs));
  TU_CHECK(!dev || atomic_load(&device_runs) == rounds, "device models run");
  for (int i = 0; i < NCASES; i++) {
    free(cases[i].in);
    free(cases[i].ref);
    free(cases[i].b.s);
    cc_free(&cases[i].c);
  }
  free(model_bytes.p);
  free(model_in);
  free(model_ref);
  return tu_finish("test_context_shared");
}
