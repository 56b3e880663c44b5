/* Conv weights stored quantized in the model file (DequantizeLinear of an int8 / int4 initializer,
 * e.g. `lowconv quantize` output or onnxruntime.quantization's QDQ per-channel weights), handed to
 * lc_conv as codes: never expanded to fp32, never re-quantized (qweight.c). */
#ifndef LC_MODEL_QWEIGHT_H
#define LC_MODEL_QWEIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"
#include "model/model.h"

typedef struct lc_qweight {
  lc_weight_format format;  /* LC_WEIGHTS_Q8 (int8 codes) or LC_WEIGHTS_Q4 (int4 codes) */
  int block;                /* lc_conv / lc_quant_spec block (0 = one block per output channel) */
  int asym;                 /* nonzero zero points: offsets = -zero_point * scale */
  int64_t n, kc, taps;      /* output channels, input channels (per group), kernel taps */
  const uint8_t *codes;     /* the file's data: int8, or int4 two per byte (low nibble first) */
  size_t cs_row, cs_ch, cs_tap; /* element strides of the codes (OIHW conv, [K][N] or [N][K] matrix) */
  const float *scales;      /* lowconv order [n][taps][blocks per tap], in the model arena */
  const float *offsets;     /* same shape, NULL when symmetric */
  size_t nb;                /* scales per output channel */
  int biased;               /* int4 codes stored as uint4 (code + 8): lowconv's own nibbles */
  size_t slack;             /* bytes readable past the codes' end where they are mapped */
  int in_place;             /* a conv / matrix reads the codes where they are mapped: keep them */
} lc_qweight;

/* Finds DequantizeLinear nodes whose constant int8/int4/uint4 output is read only as the weights
 * of a Conv (directly, or through a Transpose with perm [0, 3, 1, 2]: [O][kh][kw][I] codes, the
 * layout lowconv runs from in place), a MatMul (B, 2-D) or a Gemm with transA = 0,
 * validates them (scale / zero point shapes, finite scales, supported block size) and turns each
 * output into a constant carrying an lc_qweight (lc_tensor.quant); the node is marked dead.
 * Other DequantizeLinear nodes are left alone. */
lc_status lc_qweight_map(lc_model *m);

/* q with every output channel o's scales (and offsets) multiplied by f[o] (BN folding): in place,
 * since q's only reader is the conv being folded; *out = q. */
lc_status lc_qweight_scaled(lc_model *m, const lc_qweight *q, const double *f, const lc_qweight **out);

/* Creates the conv from q. Where the codes are already in lowconv's layout (int8, or uint4 nibbles;
 * rows of [tap][channel]; slack after them) and ctx is the CPU's, the conv reads them where they
 * are mapped, scales from the model's arena: nothing copied. Otherwise the descriptor's q_codes
 * (one int8 per weight, in lc_conv's order, for the call only) / q_scales / q_offsets are filled. */
lc_status lc_qweight_conv_create(lc_context *ctx, const lc_qweight *q, lc_conv_desc *d, lc_conv **out);

/* The weights as a quantized matrix of n rows of kc values (MatMul / Gemm): in place under the
 * same conditions as lc_qweight_conv_create (the host reads it), else codes copied. */
struct lc_qmatrix;
lc_status lc_qweight_qmatrix(const lc_qweight *q, struct lc_qmatrix *out);

#endif
