/* Model edge cases from issue 7: zero-element tensors through every kind of op (folded at plan
 * and run), and allocation failure injected at every allocation of load + plan + run (no leak,
 * LC_ERR_NO_MEMORY or success; the sanitize suite runs this under LeakSanitizer). */
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "model/model.h"
#include "pbwriter.h"
#include "testutil.h"

/* Loads, plans and runs (inputs zeroed); the first failing status. */
static int threads = 1;

static lc_status load_plan_run(const buf *b, size_t cap) {
  lc_model *m = NULL;
  lc_status s = lc_model_load_buffer(b->p, b->n, &m);
  lc_model_options o;
  lc_model_options_init(&o);
  o.max_memory_bytes = cap;
  o.threads = threads;
  if (!s) s = lc_model_plan(m, &o);
  for (int i = 0; !s && i < lc_model_n_inputs(m); i++) {
    lc_tensor t = *lc_model_input(m, i);
    t.data = calloc(1, t.nbytes + 1);
    s = lc_model_set_input(m, t.name, &t);
    free(t.data);
  }
  for (int r = 0; !s && r < 2; r++) s = lc_model_run(m);
  lc_model_free(m);
  return s;
}

/* One op on a [1, 0, 3] tensor: X a graph input (runs) or an initializer (folds at plan). */
static buf zero_model(const char *op, int folded, int binary) {
  buf g = {0}, at = {0};
  int64_t d[3] = {1, 0, 3};
  if (!strcmp(op, "Cast")) pb_attr_int(&at, "to", 1);
  pb_node(&g, op, binary ? "X,X" : "X", "Y", "zero", &at);
  if (folded) pb_tensor(&g, 5, "X", 1, 3, d, "", 0);
  else value_info(&g, 11, "X", 1, 3, d, "N");
  value_info(&g, 12, "Y", 1, 3, d, "N");
  return pb_model(&g, "", 13);
}

static void test_zero_elements(void) {
  static const char *unary[] = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip", "Sqrt",
                                "Reciprocal", "Exp", "Erf", "Neg", "Abs", "Identity", "Dropout", "Softmax",
                                "Flatten", "Transpose", "Cast", "Shape"};
  static const char *binary[] = {"Add", "Sub", "Mul", "Div", "Pow", "PRelu", "MatMul", "Concat"};
  size_t base = lc_alloc_current_bytes();
  for (int folded = 0; folded < 2; folded++) {
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
      buf b = zero_model(unary[i], folded, 0);
      lc_status s = load_plan_run(&b, 0);
      TU_CHECK(s == LC_OK, "%s on a zero-element %s: %s", unary[i], folded ? "constant" : "input", lc_last_error());
      free(b.p);
    }
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
      buf b = zero_model(binary[i], folded, 1);
      lc_status s = load_plan_run(&b, 0);
      /* MatMul of [1,0,3] by itself is a shape error; the point is no UB and a clean status */
      TU_CHECK(s == LC_OK || (!strcmp(binary[i], "MatMul") && s == LC_ERR_INVALID_ARG), "%s on zero-element %s: %s",
               binary[i], folded ? "constants" : "inputs", lc_last_error());
      free(b.p);
    }
  }
  /* issue 7's reproducer (fuzzer, UBSan): ConstantOfShape of shape [0] folded, then a folded Relu. */
  buf g = {0};
  int64_t zero[1] = {0}, one[1] = {1}, d2[2] = {1, 4};
  pb_tensor(&g, 5, "shape", 7, 1, one, zero, sizeof zero);
  pb_node(&g, "ConstantOfShape", "shape", "E", "cos", NULL);
  pb_node(&g, "Relu", "E", "R", "relu", NULL);
  pb_node(&g, "Relu", "X", "Y", "relu2", NULL);
  value_info(&g, 11, "X", 1, 2, d2, "N");
  value_info(&g, 12, "Y", 1, 2, d2, "N");
  value_info(&g, 12, "R", 1, 1, zero, "N");
  buf b = pb_model(&g, "", 13);
  TU_CHECK(load_plan_run(&b, 0) == LC_OK, "ConstantOfShape([0]) -> Relu: %s", lc_last_error());
  free(b.p);
  /* Absent outputs: before a present one (Split ",B": the op still writes all its outputs) and
   * all of them (Relu ""): folded and at run time. */
  for (int folded = 0; folded < 2; folded++)
    for (int v = 0; v < 2; v++) {
      buf h = {0};
      int64_t d4[2] = {1, 4};
      float c[4] = {1, -2, 3, -4};
      if (folded) pb_tensor(&h, 5, "C", 1, 2, d4, c, sizeof c);
      else value_info(&h, 11, "C", 1, 2, d4, "N");
      pb_node(&h, v ? "Split" : "Relu", "C", v ? ",B" : "", "absent", NULL);
      pb_node(&h, "Relu", "C", "Y", "relu", NULL);
      value_info(&h, 12, "Y", 1, 2, d4, "N");
      buf hb = pb_model(&h, "", 13);
      TU_CHECK(load_plan_run(&hb, 0) == LC_OK, "%s with absent outputs (%s): %s", v ? "Split" : "Relu",
               folded ? "folded" : "run", lc_last_error());
      free(hb.p);
    }
  TU_CHECK(lc_alloc_current_bytes() == base, "leak: %zu bytes", lc_alloc_current_bytes() - base);
}

/* Conv + BN + Relu + Add + MaxPool + Gemm with a folded branch: most of the plan's allocations. */
static buf small_net(void) {
  buf g = {0}, at = {0};
  float w[4 * 3 * 3 * 3], bn[4] = {1, 2, 0.5f, 1}, wg[4 * 5];
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((int)(i % 7) - 3) * 0.1f;
  for (size_t i = 0; i < sizeof wg / sizeof wg[0]; i++) wg[i] = (float)((int)(i % 5) - 2) * 0.2f;
  int64_t xd[4] = {1, 3, 8, 8}, wd[4] = {4, 3, 3, 3}, c4[1] = {4}, gd[2] = {5, 4}, yd[2] = {1, 5}, k3[2] = {3, 3},
          p1[4] = {1, 1, 1, 1}, k2[2] = {2, 2}, sh[1] = {3}, shv[3] = {1, 4, 1};
  pb_attr_ints(&at, "kernel_shape", 2, k3);
  pb_attr_ints(&at, "pads", 4, p1);
  pb_node(&g, "Conv", "X,W", "c", "conv", &at);
  pb_node(&g, "BatchNormalization", "c,s,b,m,v", "n", "bn", NULL);
  pb_node(&g, "Relu", "n", "r", "relu", NULL);
  pb_node(&g, "ConstantOfShape", "shp", "k", "cos", NULL); /* folded: [1, 4, 1] of 0 */
  pb_node(&g, "Unsqueeze", "k,ax", "k4", "unsq", NULL);
  pb_node(&g, "Add", "r,k4", "a", "add", NULL);
  pb_attr_ints(&at, "kernel_shape", 2, k2);
  pb_attr_ints(&at, "strides", 2, k2);
  pb_node(&g, "MaxPool", "a", "p", "pool", &at);
  pb_node(&g, "GlobalAveragePool", "p", "q", "gap", NULL);
  pb_node(&g, "Flatten", "q", "f", "flat", NULL);
  pb_attr_int(&at, "transB", 1);
  pb_node(&g, "Gemm", "f,Wg", "Y", "fc", &at);
  int64_t ax[1] = {3};
  pb_tensor(&g, 5, "W", 1, 4, wd, w, sizeof w);
  pb_tensor(&g, 5, "s", 1, 1, c4, bn, sizeof bn);
  pb_tensor(&g, 5, "b", 1, 1, c4, bn, sizeof bn);
  pb_tensor(&g, 5, "m", 1, 1, c4, bn, sizeof bn);
  pb_tensor(&g, 5, "v", 1, 1, c4, bn, sizeof bn);
  pb_tensor(&g, 5, "shp", 7, 1, sh, shv, sizeof shv);
  pb_tensor(&g, 5, "ax", 7, 1, (int64_t[]){1}, ax, sizeof ax);
  pb_tensor(&g, 5, "Wg", 1, 2, gd, wg, sizeof wg);
  value_info(&g, 11, "X", 1, 4, xd, "N");
  value_info(&g, 12, "Y", 1, 2, yd, "N");
  return pb_model(&g, "", 13);
}

static void test_alloc_failures(void) {
  buf b = small_net();
  size_t base = lc_alloc_current_bytes();
  lc_status s = load_plan_run(&b, 0);
  TU_CHECK(s == LC_OK, "small net: %s", lc_last_error());
  long k, failed = 0;
  for (k = 1; k < 100000; k++) {
    lc_alloc_fail_after(k);
    s = load_plan_run(&b, 0);
    lc_alloc_fail_after(0);
    TU_CHECK(lc_alloc_current_bytes() == base, "allocation %ld failed: leak of %zu bytes", k,
             lc_alloc_current_bytes() - base);
    if (s == LC_OK) break; /* k is past the last allocation */
    failed++;
    TU_CHECK(s == LC_ERR_NO_MEMORY, "allocation %ld failed: status %s, '%s'", k, lc_status_name(s), lc_last_error());
  }
  printf("  load + plan + run, %d thread(s): each of %ld allocations failed in turn, all refused cleanly\n", threads,
         failed);
  TU_CHECK(failed > 20, "only %ld allocations seen", failed);
  free(b.p);
}

/* Fuzzer finds, kept as bytes: each must be refused (or run) without UB. */
static const unsigned char split_sum_overflow[] = { /* Split whose split values sum past int64 */
    0x08, 0x07, 0x12, 0x0c, 0x62, 0x61, 0x63, 0x6b, 0x65, 0x6e, 0x64, 0x2d, 0x74, 0x65, 0x73, 0x74,
    0x3a, 0xd8, 0x01, 0x0a, 0x33, 0x0a, 0x05, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x0a, 0x05, 0x73, 0x70,
    0x6c, 0x69, 0x74, 0x12, 0x08, 0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x31, 0x12, 0x08, 0x6f,
    0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x32, 0x12, 0x08, 0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f,
    0x33, 0x22, 0x05, 0x53, 0x70, 0x6c, 0x69, 0x74, 0x12, 0x23, 0x74, 0x65, 0x73, 0x74, 0x5f, 0x73,
    0x70, 0x6c, 0x69, 0x74, 0x5f, 0x7a, 0x65, 0x72, 0x6f, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x5f, 0x73,
    0x70, 0x6c, 0x69, 0x74, 0x73, 0x5f, 0x6f, 0x70, 0x73, 0x65, 0x74, 0x31, 0x33, 0x2a, 0x0d, 0x08,
    0x00, 0x10, 0x01, 0x42, 0x05, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x4a, 0x00, 0x2a, 0x25, 0x08, 0x03,
    0x10, 0x07, 0x42, 0x05, 0x73, 0x70, 0x6c, 0x69, 0x74, 0x4a, 0x18, 0x00, 0x00, 0x00, 0x00, 0x25,
    0x08, 0x03, 0x10, 0x07, 0x42, 0x05, 0x73, 0x70, 0x6c, 0x69, 0x74, 0x4a, 0x18, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x62, 0x16, 0x0a, 0x08, 0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x31, 0x12,
    0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x00, 0x62, 0x16, 0x0a, 0x08, 0x6f,
    0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x32, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a,
    0x02, 0x08, 0x00, 0x62, 0x16, 0x0a, 0x08, 0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x33, 0x12,
    0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x00, 0x42, 0x04, 0x0a, 0x00, 0x10,
    0x0d,
};

static void test_fuzz_finds(void) {
  buf b = {(unsigned char *)split_sum_overflow, sizeof split_sum_overflow, 0};
  lc_status s = load_plan_run(&b, (size_t)16 << 20);
  TU_CHECK(s == LC_ERR_INVALID_ARG, "Split past int64: status %s, '%s'", lc_status_name(s), lc_last_error());
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  test_fuzz_finds();
  test_zero_elements();
  test_alloc_failures();
  threads = 2; /* the pool's allocations too */
  test_alloc_failures();
  return tu_finish("test_model_edge");
}
