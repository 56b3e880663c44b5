/* The CPU kernel registry: one table per ISA naming a kernel for every ISA-specific family (f32
 * GEMM, depthwise, gather, Winograd transforms, quantized GEMV, dequantization, vector math). A context picks
 * one table at create and every conv it runs reads only that table, so a forced ISA applies to
 * every family. Tests and benchmarks iterate lc_kernels_at(); a new kernel is one line in
 * registry.c plus its file. */
#ifndef LC_KERNELS_REGISTRY_H
#define LC_KERNELS_REGISTRY_H

#include "kernels/kernels.h"
#include "kernels/vmath.h"
#include "kernels/wino.h"
#include "quant/i8gemm.h"
#include "quant/qkernels.h"

typedef struct lc_kernels {
  const char *name;            /* unique in the list: "scalar", "avx2", "avx512", "avx512vnni" */
  lc_isa isa;                  /* the lc_context_params.isa this table serves */
  unsigned needs;              /* LC_CPU_* bits the CPU must have */
  size_t mr, nr;               /* GEMM tile of f32_gemm */
  lc_f32_gemm_fn f32_gemm;
  lc_f32_gemm_fn f32_gemm_final; /* f32_gemm for the last K block (final = 1); NULL: f32_gemm */
  /* mr x nr_wide tiles (nr_wide > nr), same contract and bits as f32_gemm, the final epilogue as
   * f32_gemm_final's; NULL: none. Routes that pick their pixel panels (taprows) may take it. */
  size_t nr_wide;
  lc_f32_gemm_fn f32_gemm_wide;
  lc_f32_dw_row_fn f32_dw_row;
  lc_f32_dw_row_unpadded_fn f32_dw_row_unpadded; /* NULL: the depthwise route pads a copy */
  lc_f32_dw_c8_fn f32_dw_c8;   /* NULL: no channel-interleaved variant */
  lc_f32_dw_pixel_fn f32_dw_pixel;
  lc_f32_gather_fn f32_gather;
  lc_f32_gather3_s2_fn f32_gather3_s2; /* NULL: three f32_gather calls */
  lc_f32_gather_s2_rows_fn f32_gather_s2_rows; /* NULL: f32_gather3_s2 / f32_gather per row */
  lc_f32_rowconv_fn f32_rowconv;
  const lc_wino_kernels *wino; /* Winograd F(2x2, 3x3) transforms */
  /* Winograd transform of Q8/Q4 weights dequantized in registers (f4: F(4x4)'s), usable when
   * wino_qweights_ok; NULL: dequantize with dequant[] and transform with wino->weights(4). */
  void (*wino_qweights)(const lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n, float *u,
                        size_t xs, int f4);
  int (*wino_qweights_ok)(const lc_qmatrix *m);
  const char *qname;                /* name of the GEMV kernel set ("avx512vnni", ...) */
  lc_qgemv_kernel qgemv[3][2];      /* [lc_weight_format][lc_qgemv_mode]; NULL: no such kernel */
  lc_dequant_fn dequant[3];         /* [lc_weight_format] */
  lc_i8gemm_fn i8gemm[3];           /* [lc_weight_format]: int8-activation GEMM (Q8/Q4 only) */
  unsigned char i8mr[3], i8np[3];   /* its tile: rows and pixels (0: LC_I8_MR x LC_I8_NR) */
  lc_i8fill_fn i8fill;              /* the input quantized once per run (NULL: per patch panel) */
  lc_i8gather_fn i8gather;          /* the planes' panels (NULL: copied a value at a time) */
  lc_i8prep_fn i8prep;              /* its activation quantizer */
  const lc_vmath_kernels *vmath;    /* the non-conv operators' exp, softmax, sums, pooling */
} lc_kernels;

/* Every table built into the library, in ascending order of preference. */
size_t lc_kernels_count(void);
const lc_kernels *lc_kernels_at(size_t i);
/* 1 when this CPU (and OS) can run table k. */
int lc_kernels_runs_here(const lc_kernels *k);

/* The table for a context: LC_ISA_AUTO takes the best this CPU runs; a forced ISA takes the best of
 * its tables this CPU runs, else NULL and an error naming what the CPU lacks. */
const lc_kernels *lc_kernels_pick(lc_isa isa, lc_status *st);
/* Same, but a forced ISA this CPU lacks (or an unknown value) falls to the best table below it:
 * for callers without a context (lc_qgemv, lc_dequant_rows). */
const lc_kernels *lc_kernels_clamp(lc_isa isa);

/* "auto", "scalar", "avx2", "avx512"; lc_isa_from_name gives -1 for any other name. */
const char *lc_isa_name(lc_isa isa);
int lc_isa_from_name(const char *name);

#endif
