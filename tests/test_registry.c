/* The kernel registry: every table names a kernel for every family, names are unique, and the
 * context, lc_qgemv and the CLI's --isa all resolve an lc_isa to the same table. */
#include <string.h>

#include "api/context.h"
#include "kernels/cpu.h"
#include "kernels/registry.h"
#include "quant/quant.h"
#include "testutil.h"

static void check_members(const lc_kernels *k) {
  TU_CHECK(k->name && k->qname && k->mr && k->nr, "%s: name, GEMV name and tile", k->name);
  TU_CHECK(k->f32_gemm && k->f32_dw_row && k->f32_dw_pixel && k->f32_gather, "%s: f32 families", k->name);
  TU_CHECK(k->wino && k->wino->in_tiles && k->wino->in_channels && k->wino->out && k->wino->pad_row &&
               k->wino->weights,
           "%s: Winograd transforms", k->name);
  TU_CHECK(!k->wino_qweights == !k->wino_qweights_ok, "%s: Q8/Q4 Winograd transform and its check go together",
           k->name);
  for (int f = 0; f < 3; f++) {
    TU_CHECK(k->dequant[f] != NULL, "%s: dequant format %d", k->name, f);
    TU_CHECK(k->qgemv[f][LC_QGEMV_ACCURATE] != NULL, "%s: accurate GEMV format %d", k->name, f);
    /* int8 activations need quantized weights */
    TU_CHECK((k->qgemv[f][LC_QGEMV_INT8] != NULL) == (f != LC_WEIGHTS_F32), "%s: int8 GEMV format %d", k->name, f);
  }
}

int main(void) {
  size_t n = lc_kernels_count();
  TU_CHECK(n >= 1 && lc_kernels_at(n) == NULL, "count %zu", n);
  TU_CHECK(strcmp(lc_kernels_at(0)->name, "scalar") == 0 && lc_kernels_runs_here(lc_kernels_at(0)),
           "the first table is scalar and runs anywhere");
  const lc_kernels *best = NULL;
  for (size_t i = 0; i < n; i++) {
    const lc_kernels *k = lc_kernels_at(i);
    check_members(k);
    for (size_t j = 0; j < i; j++) TU_CHECK(strcmp(k->name, lc_kernels_at(j)->name) != 0, "name %s twice", k->name);
    TU_CHECK(lc_kernels_runs_here(k) == ((lc_cpu_features() & k->needs) == k->needs), "%s: runs_here", k->name);
    if (lc_kernels_runs_here(k)) best = k;
    printf("table %-11s isa %-7s gemv %-11s %s\n", k->name, lc_isa_name(k->isa), k->qname,
           lc_kernels_runs_here(k) ? "runs here" : "not on this CPU");
  }
  for (int isa = LC_ISA_AUTO; isa <= LC_ISA_AVX512; isa++) {
    TU_CHECK(lc_isa_from_name(lc_isa_name((lc_isa)isa)) == isa, "isa name %s", lc_isa_name((lc_isa)isa));
    lc_status st;
    const lc_kernels *k = lc_kernels_pick((lc_isa)isa, &st);
    const lc_kernels *c = lc_kernels_clamp((lc_isa)isa);
    TU_CHECK(c && lc_kernels_runs_here(c), "clamp %d gives a table this CPU runs", isa);
    if (isa == LC_ISA_AUTO) TU_CHECK(k == best, "AUTO takes the best table here");
    if (k) {
      TU_CHECK(st == LC_OK && k == c && (isa == LC_ISA_AUTO || k->isa == (lc_isa)isa), "pick %d", isa);
    } else {
      TU_CHECK(st == LC_ERR_UNSUPPORTED && strstr(lc_last_error(), "this CPU"), "pick %d: %s", isa, lc_last_error());
      TU_CHECK(c->isa < (lc_isa)isa, "clamp %d falls below", isa);
    }
    /* a context of that isa holds the same table; lc_qgemv names the same GEMV kernels */
    lc_context_params p;
    lc_context_params_init(&p);
    p.isa = (lc_isa)isa;
    lc_context *ctx = NULL;
    lc_status cs = lc_context_create(&p, &ctx);
    TU_CHECK((cs == LC_OK) == (k != NULL), "context isa %d: %s", isa, cs ? lc_last_error() : "ok");
    if (ctx) {
      TU_CHECK(ctx->k == k && strcmp(lc_context_isa_name(ctx), lc_isa_name(k->isa)) == 0, "context table isa %d",
               isa);
      lc_context_destroy(ctx);
    }
    lc_qgemv_opts o = {LC_QGEMV_ACCURATE, 1, (lc_isa)isa, NULL};
    TU_CHECK(strcmp(lc_qgemv_isa_name(&o), c->qname) == 0, "gemv isa %d: %s", isa, lc_qgemv_isa_name(&o));
  }
  lc_status st;
  TU_CHECK(lc_kernels_pick((lc_isa)42, &st) == NULL && st == LC_ERR_INVALID_ARG, "unknown isa");
  TU_CHECK(lc_kernels_clamp((lc_isa)42) == best, "unknown isa clamps to the best");
  TU_CHECK(lc_isa_from_name("avx512vnni") == -1 && lc_isa_from_name(NULL) == -1, "only lc_isa names");
  return tu_finish("test_registry");
}
