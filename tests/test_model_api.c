/* Public model API (lowconv_model.h) on a generated model: Conv(3x3, pads 1) + Relu with a
 * symbolic input shape, checked against lc_conv_reference; every misuse gives a clear status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "lowconv_model.h"
#include "pbwriter.h"
#include "testutil.h"

#define COUT 2

static float g_w[COUT * 9], g_b[COUT] = {0.25f, -0.5f};

/* X[N,1,H,W] -> Conv(W, B, pads 1) -> Relu -> Y[N,2,H,W] */
static buf make_model(void) {
  buf m = {0}, g = {0}, n = {0}, a = {0}, t = {0};
  pb_model_header(&m, 8, 13);
  f_str(&n, 1, "X");
  f_str(&n, 1, "W");
  f_str(&n, 1, "B");
  f_str(&n, 2, "C");
  f_str(&n, 3, "conv0");
  f_str(&n, 4, "Conv");
  f_str(&a, 1, "pads");
  f_int(&a, 20, 7);
  for (int i = 0; i < 4; i++) f_int(&a, 8, 1);
  f_msg(&n, 5, &a);
  f_msg(&g, 1, &n);
  f_str(&n, 1, "C");
  f_str(&n, 2, "Y");
  f_str(&n, 3, "relu0");
  f_str(&n, 4, "Relu");
  f_msg(&g, 1, &n);
  for (int i = 0; i < COUT * 9; i++) g_w[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
  f_int(&t, 1, COUT); f_int(&t, 1, 1); f_int(&t, 1, 3); f_int(&t, 1, 3);
  f_int(&t, 2, 1);
  f_str(&t, 8, "W");
  f_bytes(&t, 9, g_w, sizeof g_w);
  f_msg(&g, 5, &t);
  f_int(&t, 1, COUT);
  f_int(&t, 2, 1);
  f_str(&t, 8, "B");
  f_bytes(&t, 9, g_b, sizeof g_b);
  f_msg(&g, 5, &t);
  static const char *const syms[4] = {"N", NULL, "H", "W"};
  int64_t xd[4] = {-1, 1, -1, -1}, yd[4] = {-1, COUT, -1, -1};
  value_info_syms(&g, 11, "X", 1, 4, xd, syms);
  value_info_syms(&g, 12, "Y", 1, 4, yd, syms);
  f_msg(&m, 7, &g);
  return m;
}

static void expected(const float *x, int h, int w, float *y) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = 1, d.out_channels = COUT, d.kernel_h = d.kernel_w = 3;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.weights = g_w, d.bias = g_b, d.activation = LC_ACT_RELU;
  TU_CHECK(lc_conv_reference(&d, 1, h, w, x, y) == LC_OK, "reference: %s", lc_last_error());
}

static void test_flow(const buf *b) {
  size_t base = lc_alloc_current_bytes();
  lc_net *net = NULL;
  TU_CHECK(lc_net_load_memory(b->p, b->n, NULL, &net) == LC_OK, "load: %s", lc_last_error());
  if (!net) return;
  TU_CHECK(lc_net_n_inputs(net) == 1 && lc_net_n_outputs(net) == 1, "io counts");
  lc_net_io io;
  TU_CHECK(lc_net_input_info(net, 0, &io) == LC_OK && !strcmp(io.name, "X") && io.type == LC_ELEM_FLOAT32, "input");
  TU_CHECK(io.ndim == 4 && io.dims[0] == -1 && io.dims[1] == 1 && io.dims[2] == -1 && io.dims[3] == -1, "declared dims");
  TU_CHECK(io.dim_names[0] && !strcmp(io.dim_names[0], "N") && !io.dim_names[1] && !strcmp(io.dim_names[2], "H") &&
               !strcmp(io.dim_names[3], "W"), "symbolic dim names");
  TU_CHECK(!strcmp(lc_elem_type_name(io.type), "float32"), "type name %s", lc_elem_type_name(io.type));
  TU_CHECK(lc_net_output_info(net, 0, &io) == LC_OK && io.ndim == -1 && io.bytes == 0, "output unknown before prepare");
  TU_CHECK(lc_net_n_layers(net) == 0, "no layers before prepare");
  lc_net_memory_info mi;
  TU_CHECK(lc_net_memory(net, &mi) == LC_ERR_STATE, "memory before prepare");
  /* H and W symbolic: prepare must say which dim to set */
  lc_status s = lc_net_prepare(net);
  TU_CHECK(s == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "symbolic"), "unresolved: %s", lc_last_error());
  lc_net_free(net);

  const int64_t shape[4] = {1, 1, 6, 5};
  TU_CHECK(lc_net_load_memory(b->p, b->n, NULL, &net) == LC_OK, "reload");
  TU_CHECK(lc_net_set_input_shape(net, "image", 4, shape) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "'X'"),
           "unknown input lists names: %s", lc_last_error());
  TU_CHECK(lc_net_set_input_shape(net, "X", 4, shape) == LC_OK, "shape: %s", lc_last_error());
  TU_CHECK(lc_net_prepare(net) == LC_OK, "prepare: %s", lc_last_error());
  TU_CHECK(lc_net_set_input_shape(net, "X", 4, shape) == LC_ERR_STATE, "shape after prepare");
  TU_CHECK(lc_net_input_info(net, 0, &io) == LC_OK && io.dims[2] == 6 && io.dims[3] == 5 && io.bytes == 30 * 4 &&
               io.dim_names[2] && !strcmp(io.dim_names[2], "H"), "planned input");
  TU_CHECK(lc_net_output_info(net, 0, &io) == LC_OK && io.ndim == 4 && io.dims[1] == COUT && io.dims[2] == 6 &&
               io.bytes == COUT * 30 * 4, "planned output");
  float x[30], y[COUT * 30], y2[COUT * 30], ref[COUT * 30];
  for (int i = 0; i < 30; i++) x[i] = (float)(i % 7) - 3.0f;
  expected(x, 6, 5, ref);
  TU_CHECK(lc_net_output_data(net, 0) == NULL, "no output before a run");
  lc_net_buffer in = {"X", 0, x, sizeof x}, out = {"Y", 0, y, sizeof y};
  TU_CHECK(lc_net_run(net, &in, 1, &out, 1) == LC_OK, "run by name: %s", lc_last_error());
  TU_CHECK(tu_max_abs_diff(y, ref, COUT * 30) < 1e-5, "output by name");
  lc_net_buffer in_i = {NULL, 0, x, sizeof x}, out_i = {NULL, 0, y2, sizeof y2};
  TU_CHECK(lc_net_run(net, &in_i, 1, &out_i, 1) == LC_OK, "run by index: %s", lc_last_error());
  TU_CHECK(!memcmp(y, y2, sizeof y) && !memcmp(lc_net_output_data(net, 0), y, sizeof y), "same result by index");
  TU_CHECK(lc_net_input_index(net, "X") == 0 && lc_net_output_index(net, "Y") == 0, "indices");
  TU_CHECK(lc_net_output_index(net, "Z") == -1 && strstr(lc_last_error(), "'Y'"), "output names listed");

  lc_net_buffer bad = {"X", 0, x, sizeof x - 4};
  TU_CHECK(lc_net_run(net, &bad, 1, NULL, 0) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "120 bytes"),
           "short input: %s", lc_last_error());
  TU_CHECK(lc_net_run(net, NULL, 0, NULL, 0) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "not given"),
           "missing input: %s", lc_last_error());
  lc_net_buffer twice[2] = {in, in_i};
  TU_CHECK(lc_net_run(net, twice, 2, NULL, 0) == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "twice"), "twice");
  lc_net_buffer small_out = {"Y", 0, y, 8};
  TU_CHECK(lc_net_run(net, &in, 1, &small_out, 1) == LC_ERR_INVALID_ARG, "short output");
  lc_net_buffer bad_idx = {NULL, 3, x, sizeof x};
  TU_CHECK(lc_net_run(net, &bad_idx, 1, NULL, 0) == LC_ERR_INVALID_ARG, "index out of range");

  int nl = lc_net_n_layers(net);
  lc_net_layer_info li;
  TU_CHECK(nl == 1, "conv+relu fused into one layer, got %d", nl);
  TU_CHECK(lc_net_layer(net, 0, &li) == LC_OK && !strcmp(li.op_type, "Conv") && li.route[0] &&
               strstr(li.fused, "relu") && li.flops == 2.0 * COUT * 30 * 9 && li.ms >= 0, "layer: %s %s %s",
           li.op_type, li.route, li.fused);
  TU_CHECK(lc_net_layer(net, 1, &li) == LC_ERR_INVALID_ARG, "layer out of range");
  TU_CHECK(lc_net_memory(net, &mi) == LC_OK && mi.activation_bytes > 0 && mi.packed_weight_bytes > 0, "memory");
  lc_net_free(net);
  TU_CHECK(lc_alloc_current_bytes() == base, "leak: %zu bytes", lc_alloc_current_bytes() - base);
}

static void test_options_and_file(const buf *b) {
  char path[64];
  snprintf(path, sizeof path, "test_model_api_%d.onnx", (int)(tu_rand_u64() % 100000));
  FILE *f = fopen(path, "wb");
  TU_CHECK(f && fwrite(b->p, 1, b->n, f) == b->n, "write model");
  if (f) fclose(f);
  lc_net_options o;
  lc_net_options_init(&o);
  lc_net_shape sh = {"X", 4, {2, 1, 4, 4}};
  o.shapes = &sh, o.n_shapes = 1, o.threads = 2, o.workspace_budget = 1 << 20;
  o.weight_format = LC_WEIGHTS_Q8, o.weight_block = 0;
  lc_net *net = NULL;
  TU_CHECK(lc_net_load(path, &o, &net) == LC_OK, "load file: %s", lc_last_error());
  if (net) {
    float x[32], y[COUT * 32];
    for (int i = 0; i < 32; i++) x[i] = (float)(i % 5) * 0.5f;
    lc_net_buffer in = {"X", 0, x, sizeof x}, out = {"Y", 0, y, sizeof y};
    TU_CHECK(lc_net_run(net, &in, 1, &out, 1) == LC_OK, "run prepares: %s", lc_last_error());
    lc_net_io io;
    TU_CHECK(lc_net_output_info(net, 0, &io) == LC_OK && io.dims[0] == 2 && io.dims[2] == 4, "shape from options");
    lc_net_free(net);
  }
  o.device = "opencl:0";
  TU_CHECK(lc_net_load(path, &o, &net) == LC_ERR_UNSUPPORTED && !net && strstr(lc_last_error(), "not built"),
           "other device: %s", lc_last_error());
  o.device = "cpu", o.threads = -1;
  TU_CHECK(lc_net_load(path, &o, &net) == LC_ERR_INVALID_ARG, "bad threads");
  remove(path);
  TU_CHECK(lc_net_load(path, NULL, &net) == LC_ERR_IO && !net, "missing file");
  static const char text[] = "hello, this is not a model\n";
  TU_CHECK(lc_net_load_memory(text, sizeof text - 1, NULL, &net) == LC_ERR_IO &&
               strstr(lc_last_error(), "not an ONNX file"), "text: %s", lc_last_error());
  TU_CHECK(lc_net_load_memory(NULL, 0, NULL, &net) == LC_ERR_INVALID_ARG, "null buffer");
  TU_CHECK(lc_net_load(NULL, NULL, NULL) == LC_ERR_INVALID_ARG, "null out");
  lc_net_free(NULL);
}

/* Out of memory at every allocation of load + prepare + run: a status, never a leak or crash. */
static void test_oom(const buf *b) {
  size_t base = lc_alloc_current_bytes();
  float x[16], y[COUT * 16];
  memset(x, 0, sizeof x);
  int ok = 0;
  for (long k = 1; k < 400 && !ok; k++) {
    lc_net_options o;
    lc_net_options_init(&o);
    lc_net_shape sh = {"X", 4, {1, 1, 4, 4}};
    o.shapes = &sh, o.n_shapes = 1;
    lc_alloc_fail_after(k);
    lc_net *net = NULL;
    lc_net_buffer in = {"X", 0, x, sizeof x}, out = {"Y", 0, y, sizeof y};
    lc_status s = lc_net_load_memory(b->p, b->n, &o, &net);
    if (!s) s = lc_net_run(net, &in, 1, &out, 1);
    lc_alloc_fail_after(0);
    ok = s == LC_OK;
    TU_CHECK(ok || lc_last_error()[0], "failure %ld without a message", k);
    lc_net_free(net);
    TU_CHECK(lc_alloc_current_bytes() == base, "leak after failure %ld", k);
  }
  TU_CHECK(ok, "never succeeded");
}

int main(void) {
  tu_seed_from_env(8);
  buf b = make_model();
  test_flow(&b);
  test_options_and_file(&b);
  test_oom(&b);
  free(b.p);
  return tu_finish("test_model_api");
}
