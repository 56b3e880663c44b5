/* ONNX loader on hand-made protobuf bytes: every field kind we decode, packed and unpacked
 * repeats, and the failure paths (truncation, bad wire types, sizes, injected OOM). */
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "model/onnx_pb.h"
#include "pbwriter.h"
#include "testutil.h"

/* A model exercising most fields: Conv(X, W, B) -> Y with attributes, W as raw_data,
 * B as packed float_data, S as unpacked int64_data. */
static buf make_model(void) {
  buf m = {0}, g = {0}, n = {0}, a = {0}, t = {0};
  pb_model_header(&m, 8, 13);
  f_str(&m, 2, "handmade"); /* producer_name: skipped */

  f_str(&n, 1, "X");
  f_str(&n, 1, "W");
  f_str(&n, 1, "B");
  f_str(&n, 2, "Y");
  f_str(&n, 3, "conv0");
  f_str(&n, 4, "Conv");
  f_str(&a, 1, "kernel_shape"); /* packed ints */
  f_int(&a, 20, 7);
  { buf pk = {0}; varint(&pk, 3); varint(&pk, 3); f_msg(&a, 8, &pk); }
  f_msg(&n, 5, &a);
  f_str(&a, 1, "strides"); /* unpacked ints, no type field */
  f_int(&a, 8, 1);
  f_int(&a, 8, 2);
  f_msg(&n, 5, &a);
  f_str(&a, 1, "alpha");
  f_int(&a, 20, 1);
  f_float(&a, 2, 0.25f);
  f_msg(&n, 5, &a);
  f_str(&a, 1, "auto_pad");
  f_int(&a, 20, 3);
  f_str(&a, 4, "SAME_UPPER");
  f_msg(&n, 5, &a);
  f_str(&a, 1, "scales"); /* unpacked floats */
  f_int(&a, 20, 6);
  f_float(&a, 7, 1.5f);
  f_float(&a, 7, -2.0f);
  f_msg(&n, 5, &a);
  f_str(&a, 1, "value"); /* tensor attribute */
  f_int(&a, 20, 4);
  f_int(&t, 1, 2);
  f_int(&t, 2, 7);
  f_int(&t, 7, -5);
  f_int(&t, 7, 9);
  f_msg(&a, 5, &t);
  f_msg(&n, 5, &a);
  f_msg(&g, 1, &n);

  /* W: 2x1x3x3 raw float data; a 1-byte doc_string before it forces misaligned raw_data */
  f_str(&t, 12, "d");
  f_int(&t, 1, 2); f_int(&t, 1, 1); f_int(&t, 1, 3); f_int(&t, 1, 3);
  f_int(&t, 2, 1);
  f_str(&t, 8, "W");
  float w[18];
  for (int i = 0; i < 18; i++) w[i] = (float)i * 0.5f;
  f_bytes(&t, 9, w, sizeof w);
  f_msg(&g, 5, &t);
  /* B: packed float_data */
  { buf pk = {0}; float bv[2] = {1.0f, -1.0f}; put(&pk, bv, 8); f_int(&t, 1, 2); f_int(&t, 2, 1); f_str(&t, 8, "B"); f_msg(&t, 4, &pk); }
  f_msg(&g, 5, &t);
  /* S: int8 via int32_data, unpacked */
  f_int(&t, 1, 3); f_int(&t, 2, 3); f_str(&t, 8, "S");
  f_int(&t, 5, -1); f_int(&t, 5, 2); f_int(&t, 5, 127);
  f_msg(&g, 5, &t);

  int64_t xd[4] = {-1, 1, 8, 8}, yd[4] = {-1, 2, 4, 4};
  value_info(&g, 11, "X", 1, 4, xd, "N");
  value_info(&g, 12, "Y", 1, 4, yd, "N");
  f_msg(&m, 7, &g);
  return m;
}

static void test_good_model(void) {
  buf b = make_model();
  size_t base = lc_alloc_current_bytes();
  lc_onnx_model *m = NULL;
  lc_status s = lc_onnx_load_buffer(b.p, b.n, &m);
  TU_CHECK(s == LC_OK, "load: %s", lc_last_error());
  if (s) { free(b.p); return; }
  TU_CHECK(m->ir_version == 8 && m->opset == 13, "ir %lld opset %lld", (long long)m->ir_version, (long long)m->opset);
  TU_CHECK(m->n_nodes == 1 && m->n_inits == 3 && m->n_inputs == 1 && m->n_outputs == 1, "counts");
  const lc_node *n = &m->nodes[0];
  TU_CHECK(!strcmp(n->op_type, "Conv") && !strcmp(n->name, "conv0") && n->n_inputs == 3 && n->n_outputs == 1, "node");
  TU_CHECK(!strcmp(n->inputs[1], "W") && !strcmp(n->outputs[0], "Y"), "node io");
  const int64_t *v;
  TU_CHECK(lc_attr_ints(n, "kernel_shape", &v) == 2 && v[0] == 3 && v[1] == 3, "packed ints");
  TU_CHECK(lc_attr_ints(n, "strides", &v) == 2 && v[0] == 1 && v[1] == 2, "unpacked ints");
  TU_CHECK(lc_attr_float(n, "alpha", 0) == 0.25f, "float attr");
  TU_CHECK(!strcmp(lc_attr_string(n, "auto_pad", "x"), "SAME_UPPER"), "string attr");
  const lc_attr *sc = lc_node_attr(n, "scales");
  TU_CHECK(sc && sc->type == LC_ATTR_FLOATS && sc->n == 2 && sc->floats[1] == -2.0f, "floats attr");
  const lc_attr *tv = lc_node_attr(n, "value");
  TU_CHECK(tv && tv->t && tv->t->dtype == LC_DT_INT64 && tv->t->dims[0] == 2 &&
               ((const int64_t *)tv->t->data)[0] == -5 && ((const int64_t *)tv->t->data)[1] == 9, "tensor attr");
  TU_CHECK(lc_attr_int(n, "missing", 42) == 42, "default");
  const lc_tensor *w = &m->inits[0];
  TU_CHECK(!strcmp(w->name, "W") && w->ndim == 4 && w->nbytes == 72 && ((uintptr_t)w->data & 3) == 0, "W meta");
  TU_CHECK(((const float *)w->data)[17] == 8.5f, "W data");
  const lc_tensor *bt = &m->inits[1];
  TU_CHECK(bt->nbytes == 8 && ((const float *)bt->data)[1] == -1.0f, "packed float_data");
  const lc_tensor *st = &m->inits[2];
  TU_CHECK(st->dtype == LC_DT_INT8 && st->nbytes == 3 && ((const int8_t *)st->data)[0] == -1 &&
               ((const int8_t *)st->data)[2] == 127, "int32_data narrowed to int8");
  const lc_onnx_value_info *x = &m->inputs[0];
  TU_CHECK(x->dtype == LC_DT_FLOAT && x->ndim == 4 && x->dims[0] == -1 && x->dim_param[0] &&
               !strcmp(x->dim_param[0], "N") && x->dims[3] == 8, "value info");
  lc_onnx_free(m);
  TU_CHECK(lc_alloc_current_bytes() == base, "leak: %zu bytes", lc_alloc_current_bytes() - base);

  /* Every prefix is either a valid model or an LC_ERR_IO, never a crash (ASan checks reads). */
  int ok = 0;
  for (size_t k = 0; k < b.n; k++) {
    s = lc_onnx_load_buffer(b.p, k, &m);
    if (s == LC_OK) { ok++; lc_onnx_free(m); continue; }
    TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), "onnx:"), "prefix %zu: %d %s", k, s, lc_last_error());
  }
  TU_CHECK(lc_alloc_current_bytes() == base, "leak after prefixes");
  /* Flipped bytes: any status, no crash, no leak. */
  tu_seed(7);
  for (int it = 0; it < 3000; it++) {
    unsigned char *c = malloc(b.n);
    memcpy(c, b.p, b.n);
    for (int j = tu_rand_int(1, 4); j > 0; j--) c[tu_rand_int(0, (int)b.n - 1)] ^= (unsigned char)tu_rand_int(1, 255);
    if (lc_onnx_load_buffer(c, b.n, &m) == LC_OK) lc_onnx_free(m);
    free(c);
  }
  TU_CHECK(lc_alloc_current_bytes() == base, "leak after flips");
  /* Injected allocation failures: NO_MEMORY and no leak, for every allocation in the load. */
  for (long k = 1; k < 200; k++) {
    lc_alloc_fail_after(k);
    s = lc_onnx_load_buffer(b.p, b.n, &m);
    lc_alloc_fail_after(0);
    if (s == LC_OK) { lc_onnx_free(m); break; }
    TU_CHECK(s == LC_ERR_NO_MEMORY, "fail_after %ld: %d %s", k, s, lc_last_error());
  }
  TU_CHECK(lc_alloc_current_bytes() == base, "leak after OOM injection");
  free(b.p);
}

static void expect_io(const buf *b, const char *what, const char *needle) {
  lc_onnx_model *m = NULL;
  lc_status s = lc_onnx_load_buffer(b->p, b->n, &m);
  TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), needle), "%s: status %d msg '%s'", what, s, lc_last_error());
  if (s == LC_OK) lc_onnx_free(m);
}

static void test_errors(void) {
  buf b = {0}, g = {0}, t = {0};
  /* no graph */
  f_int(&b, 1, 7);
  expect_io(&b, "no graph", "no graph");
  /* group wire type */
  b.n = 0;
  tag(&b, 7, 3);
  expect_io(&b, "group", "wire type 3");
  /* overlong varint */
  b.n = 0;
  tag(&b, 1, 0);
  for (int i = 0; i < 11; i++) put(&b, "\xff", 1);
  expect_io(&b, "varint", "(ModelProto field 1)");
  /* length past the end */
  b.n = 0;
  tag(&b, 7, 2);
  varint(&b, 1000);
  expect_io(&b, "length", "truncated value at offset 0 (ModelProto field 7)");
  /* wrong wire type for graph */
  b.n = 0;
  f_int(&b, 7, 3);
  expect_io(&b, "graph wt", "wrong wire type 0 at offset 0 (ModelProto field 7)");
  /* raw_data size mismatch */
  b.n = 0;
  f_int(&t, 1, 4); f_int(&t, 2, 1); f_str(&t, 8, "T"); f_bytes(&t, 9, "abc", 3);
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "raw size", "raw_data has 3 bytes, dims need 16");
  /* float_data count mismatch */
  b.n = 0;
  f_int(&t, 1, 3); f_int(&t, 2, 1); f_str(&t, 8, "T"); f_float(&t, 4, 1.0f);
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "float count", "has 1 values, dims need 3");
  /* packed floats not a multiple of 4 */
  b.n = 0;
  f_int(&t, 1, 1); f_int(&t, 2, 1); f_bytes(&t, 4, "abcde", 5);
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "packed", "not a multiple of 4");
  /* too many dims */
  b.n = 0;
  for (int i = 0; i < 9; i++) f_int(&t, 1, 1);
  f_int(&t, 2, 1);
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "dims", "9 dims");
  /* overflowing dims */
  b.n = 0;
  f_int(&t, 1, INT64_MAX); f_int(&t, 1, INT64_MAX); f_int(&t, 2, 1);
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "overflow", "too large");
  /* unsupported dtype (string) */
  b.n = 0;
  f_int(&t, 2, 8); f_str(&t, 8, "S");
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "dtype", "unsupported data_type 8");
  /* external data from memory */
  b.n = 0;
  {
    buf e = {0};
    f_str(&e, 1, "location");
    f_str(&e, 2, "w.bin");
    f_int(&t, 1, 2); f_int(&t, 2, 1); f_str(&t, 8, "E"); f_msg(&t, 13, &e); f_int(&t, 14, 1);
  }
  f_msg(&g, 5, &t);
  f_msg(&b, 7, &g);
  expect_io(&b, "external", "needs a model path");
  /* node without op_type */
  b.n = 0;
  { buf n = {0}; f_str(&n, 1, "X"); f_msg(&g, 1, &n); }
  f_msg(&b, 7, &g);
  expect_io(&b, "op_type", "no op_type");
  /* second graph */
  b.n = 0;
  f_bytes(&b, 7, "", 0);
  f_bytes(&b, 7, "", 0);
  expect_io(&b, "two graphs", "second graph");
  free(b.p);
  /* empty buffer */
  lc_onnx_model *m;
  TU_CHECK(lc_onnx_load_buffer("", 0, &m) == LC_ERR_IO, "empty");
  TU_CHECK(lc_onnx_load_file("/nonexistent/x.onnx", &m) == LC_ERR_IO && strstr(lc_last_error(), "cannot open"), "no file");
}

int main(void) {
  test_good_model();
  test_errors();
  return tu_finish("test_onnx_loader");
}
