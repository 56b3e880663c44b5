/* The kernel tables (see registry.h). A family without a kernel of its own for an ISA names the
 * one below it, so what each table runs is spelled out here and nowhere else. */
#include "kernels/registry.h"

#include <string.h>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/cpu.h"
#include "kernels/scalar/scalar_kernels.h"
#include "util/error.h"

/* Which table LC_ISA_AUTO takes on an AVX-512 CPU (0: avx2, for every family). AVX-512 (8x32)
 * measured 1-4% faster than AVX2 (6x16) on packed operands, ~25% on in-place B and ragged tiles
 * (Zen 4, docs/benchmarks.md); on Zen 5 (full-width zmm FMA) 1.9x: 222-232 vs 116-118 GFLOP/s at
 * k = 256-1024 (bench_ukernel). */
#ifndef LC_AUTO_PREFERS_AVX512
#define LC_AUTO_PREFERS_AVX512 1
#endif

#define QGEMV_AVX2                                                                                     \
  {                                                                                                    \
    [LC_WEIGHTS_F32] = {lc_qgemv_f32_accurate_avx2, NULL},                                             \
    [LC_WEIGHTS_Q8] = {lc_qgemv_q8_accurate_avx2, lc_qgemv_q8_int8_avx2},                              \
    [LC_WEIGHTS_Q4] = {lc_qgemv_q4_accurate_avx2, lc_qgemv_q4_int8_avx2},                              \
  }
#define I8GEMM_AVX2 .i8gemm = {NULL, lc_i8gemm_q8_4x16_avx2, lc_i8gemm_q4_4x16_avx2}, .i8prep = lc_i8prep_16_avx2
#define DEQUANT_AVX2 {lc_dequant_f32, lc_dequant_q8_avx2, lc_dequant_q4_avx2}
#define F32_AVX512                                                                                     \
  .mr = 8, .nr = 32, .f32_gemm = lc_f32_gemm_8x32_avx512, .f32_dw_row = lc_f32_dw_row_avx512,            \
  .f32_dw_pixel = lc_f32_dw_pixel_avx512, .f32_gather = lc_f32_gather_avx512, .wino = &lc_wino_avx2,      \
  .f32_gather3_s2 = lc_f32_gather3_s2_avx512, .f32_gather_s2_rows = lc_f32_gather_s2_rows_avx512,      \
  .f32_dw_row_unpadded = lc_f32_dw_row_unpadded_avx512,                                                   \
  .f32_gemm_final = lc_f32_gemm_8x32_final_avx512, .nr_wide = 49, .f32_gemm_wide = lc_f32_gemm_8x49_avx512, \
  .f32_rowconv = lc_f32_rowconv_avx512,                                                           \
  .wino_qweights = lc_wino_qweights_avx512, .wino_qweights_ok = lc_wino_qweights_ok

#define VMATH(isa)                                                                                     \
  {lc_f32_exp_##isa, lc_f32_sigmoid_##isa, lc_f32_tanh_##isa, lc_f32_hard_sigmoid_##isa,                \
   lc_f32_softmax_row_##isa, lc_f32_sum_d_##isa, lc_f32_rows_sum_##isa, lc_f32_pool_row_##isa,      \
   lc_f32_convt2_row_##isa, lc_f32_repeat_row_##isa}
static const lc_vmath_kernels vmath_scalar = VMATH(scalar), vmath_avx2 = VMATH(avx2);

static const lc_kernels tables[] = {
    {.name = "scalar", .isa = LC_ISA_SCALAR, .needs = 0,
     .mr = 4, .nr = 8, .f32_gemm = lc_f32_gemm_4x8_scalar, .f32_dw_row = lc_f32_dw_row_scalar,
     .f32_dw_pixel = lc_f32_dw_pixel_scalar, .f32_gather = lc_f32_gather_scalar, .wino = &lc_wino_scalar,
     .f32_rowconv = lc_f32_rowconv_scalar,
     .qname = "scalar",
     .qgemv = {[LC_WEIGHTS_F32] = {lc_qgemv_f32_accurate_scalar, NULL},
               [LC_WEIGHTS_Q8] = {lc_qgemv_q8_accurate_scalar, lc_qgemv_q8_int8_scalar},
               [LC_WEIGHTS_Q4] = {lc_qgemv_q4_accurate_scalar, lc_qgemv_q4_int8_scalar}},
     .dequant = {lc_dequant_f32, lc_dequant_q8_scalar, lc_dequant_q4_scalar}, .vmath = &vmath_scalar,
     .i8gemm = {NULL, lc_i8gemm_q8_4x16_scalar, lc_i8gemm_q4_4x16_scalar}, .i8prep = lc_i8prep_16_scalar},
    {.name = "avx2", .isa = LC_ISA_AVX2, .needs = LC_CPU_AVX2_FMA,
     .mr = 6, .nr = 16, .f32_gemm = lc_f32_gemm_6x16_avx2, .f32_gemm_final = lc_f32_gemm_6x16_final_avx2,
     .f32_dw_row = lc_f32_dw_row_avx2,
     .f32_dw_pixel = lc_f32_dw_pixel_avx2, .f32_gather = lc_f32_gather_avx2, .wino = &lc_wino_avx2,
     .f32_rowconv = lc_f32_rowconv_avx2, .wino_qweights = lc_wino_qweights_avx2,
     .f32_gather3_s2 = lc_f32_gather3_s2_avx2, .f32_gather_s2_rows = lc_f32_gather_s2_rows_avx2,
     .f32_dw_row_unpadded = lc_f32_dw_row_unpadded_avx2, .f32_dw_c8 = lc_f32_dw_c8_avx2,
     .wino_qweights_ok = lc_wino_qweights_ok,
     .qname = "avx2", .qgemv = QGEMV_AVX2, .dequant = DEQUANT_AVX2, .vmath = &vmath_avx2, I8GEMM_AVX2},
    /* AVX-512 without VNNI: the GEMV kernels of AVX2. */
    {.name = "avx512", .isa = LC_ISA_AVX512, .needs = LC_CPU_AVX512F, F32_AVX512,
     .qname = "avx2", .qgemv = QGEMV_AVX2, .dequant = DEQUANT_AVX2, .vmath = &vmath_avx2, I8GEMM_AVX2},
    {.name = "avx512vnni", .isa = LC_ISA_AVX512, .needs = LC_CPU_AVX512F | LC_CPU_AVX512VNNI, F32_AVX512,
     .qname = "avx512vnni",
     .qgemv = {[LC_WEIGHTS_F32] = {lc_qgemv_f32_accurate_avx2, NULL},
               [LC_WEIGHTS_Q8] = {lc_qgemv_q8_accurate_avx512, lc_qgemv_q8_int8_avx512vnni},
               [LC_WEIGHTS_Q4] = {lc_qgemv_q4_accurate_avx512, lc_qgemv_q4_int8_avx512vnni}},
     .dequant = {lc_dequant_f32, lc_dequant_q8_avx512, lc_dequant_q4_avx512}, .vmath = &vmath_avx2,
     .i8gemm = {NULL, lc_i8gemm_q8_8x32_avx512vnni, lc_i8gemm_q4_8x32_avx512vnni}, .i8prep = lc_i8prep_16_avx2,
     .i8mr = {0, 8, 8}, .i8np = {0, 32, 32}, .i8fill = lc_i8fill_avx512,
     .i8gather = lc_i8gather_avx512},
};
#define NTABLES (sizeof tables / sizeof tables[0])

int lc_wino_qweights_ok(const lc_qmatrix *m) {
  if (m->format != LC_WEIGHTS_Q8 && m->format != LC_WEIGHTS_Q4) return 0;
  size_t cig = m->k / 9;
  return m->scales && m->k % 9 == 0 && (m->bpt == 1 || m->block % 16 == 0) &&
         (m->format == LC_WEIGHTS_Q8 || m->kc == cig || cig % 2 == 0);
}

size_t lc_kernels_count(void) { return NTABLES; }
const lc_kernels *lc_kernels_at(size_t i) { return i < NTABLES ? &tables[i] : NULL; }
int lc_kernels_runs_here(const lc_kernels *k) { return (lc_cpu_features() & k->needs) == k->needs; }

/* Best table this CPU runs for isa (AUTO: any ISA), or NULL. */
static const lc_kernels *best_for(lc_isa isa) {
  for (size_t i = NTABLES; i-- > 0;) {
    const lc_kernels *k = &tables[i];
    if (isa == LC_ISA_AUTO && !LC_AUTO_PREFERS_AVX512 && k->isa == LC_ISA_AVX512) continue;
    if ((isa == LC_ISA_AUTO || k->isa == isa) && lc_kernels_runs_here(k)) return k;
  }
  return NULL;
}

const lc_kernels *lc_kernels_pick(lc_isa isa, lc_status *st) {
  *st = LC_OK;
  if ((unsigned)isa > LC_ISA_AVX512) {
    *st = lc_error(LC_ERR_INVALID_ARG, "context: unknown isa %d", (int)isa);
    return NULL;
  }
  const lc_kernels *k = best_for(isa);
  if (!k)
    *st = lc_error(LC_ERR_UNSUPPORTED, isa == LC_ISA_AVX2 ? "isa avx2: this CPU has no AVX2+FMA"
                                                          : "isa avx512: this CPU (or OS) has no AVX-512 F/BW/DQ/VL");
  return k;
}

const lc_kernels *lc_kernels_clamp(lc_isa isa) {
  if ((unsigned)isa > LC_ISA_AVX512) isa = LC_ISA_AUTO;
  const lc_kernels *k = best_for(isa);
  for (size_t i = NTABLES; !k && i-- > 0;)
    if (tables[i].isa < isa && lc_kernels_runs_here(&tables[i])) k = &tables[i];
  return k;
}

static const char *const isa_names[] = {"auto", "scalar", "avx2", "avx512"};

const char *lc_isa_name(lc_isa isa) { return (unsigned)isa <= LC_ISA_AVX512 ? isa_names[isa] : "unknown"; }

int lc_isa_from_name(const char *name) {
  for (int i = 0; name && i <= (int)LC_ISA_AVX512; i++)
    if (strcmp(name, isa_names[i]) == 0) return i;
  return -1;
}
