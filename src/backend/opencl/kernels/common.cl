/* Helpers shared by the conv kernels: weight loads that dequantize in registers, and the epilogue.
 * Built with -DWFMT=0|1|2 (f32, q8, q4) and -DASYM=0|1; cl_conv_args.h is prepended by the host. */
#ifndef WFMT
#define WFMT 0
#endif
#ifndef ASYM
#define ASYM 0
#endif
/* The host builds one program per kernel (-DLC_WANT_<name>), so a cold start compiles only the
 * kernels it tries; without any LC_WANT_ every kernel of the file is compiled. */
#ifndef LC_ONE_KERNEL
#define LC_ALL_KERNELS 1
#else
#define LC_ALL_KERNELS 0
#endif
#if WFMT == 0
typedef float wtype;
#elif WFMT == 1
typedef char wtype;
#else
typedef uchar wtype;
#endif

#define LC_KERNEL_ARGS                                                                                  \
  __global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc, \
      __global const float *restrict of, __global const float *restrict bias,                           \
      __global const float *restrict res, __global float *restrict out, const lc_cl_conv_args p

/* Register tiles (families gemm, wide): full unrolling keeps the register tile in registers on GPUs; PoCL (CPU, the tests) compiles the
 * unrolled kernels ~10x slower (measured: 23 s vs 2.4 s of CPU for gemm_128x128), and speed does not
 * matter there. */
#ifdef POCL_DEVICE_ADDRESS_BITS
#define LC_UNROLL _Pragma("unroll 1")
#else
#define LC_UNROLL _Pragma("unroll")
#endif

/* Quantization block of row k = (tap, ic). */
inline int lc_blk(const lc_cl_conv_args *p, int tap, int ic) { return tap * p->bpt + ic / p->bsz; }

/* The 4 weights of oc4 block wb (= g*ob + b) at row k, whose quantization block is blk. */
inline float4 lc_w4(__global const wtype *w, __global const float *sc, __global const float *of,
                    const lc_cl_conv_args *p, int wb, int k, int blk) {
#if WFMT == 0
  return vload4(wb * p->K + k, w);
#else
  int si = wb * p->nblk + blk;
  float4 s = vload4(si, sc);
#if WFMT == 1
  float4 q = convert_float4(vload4(wb * p->K + k, w));
#else
  uchar2 b = vload2(wb * p->K + k, w);
  float4 q = (float4)((float)(b.x & 15), (float)(b.x >> 4), (float)(b.y & 15), (float)(b.y >> 4)) - 8.0f;
#endif
#if ASYM
  return mad(q, s, vload4(si, of));
#else
  return q * s;
#endif
#endif
}

/* One weight (lane of oc4 block wb) at row k, block blk. */
inline float lc_w1(__global const wtype *w, __global const float *sc, __global const float *of,
                   const lc_cl_conv_args *p, int wb, int lane, int k, int blk) {
#if WFMT == 0
  return w[(wb * p->K + k) * 4 + lane];
#else
  int si = (wb * p->nblk + blk) * 4 + lane;
#if WFMT == 1
  float q = (float)w[(wb * p->K + k) * 4 + lane];
#else
  uchar b = w[(wb * p->K + k) * 2 + (lane >> 1)];
  float q = (float)((lane & 1) ? (b >> 4) : (b & 15)) - 8.0f;
#endif
#if ASYM
  return mad(q, sc[si], of[si]);
#else
  return q * sc[si];
#endif
#endif
}

/* Every activation in one branch-free form: clamp(v * a + b, lo, hi) (none, leaky: unclamped),
 * times v for hard swish, then leaky's slope below 0. The parameters depend on p only, so a
 * register tile's inlined copies share them: on the H200 a switch per element made the five
 * large GEMM tiles' builds 1.6x longer (7.5 against 4.8 s) and ran no faster. */
inline float lc_act(float v, const lc_cl_conv_args *p) {
  const int k = p->act, sig = k == LC_CL_ACT_HARD_SIGMOID, sw = k == 4;
  const float a = sig ? p->act_alpha : sw ? 1.0f / 6.0f : 1.0f, b = sig ? p->act_beta : sw ? 0.5f : 0.0f;
  const float lo = k == 2 ? p->act_min : 0.0f, hi = k == 2 ? p->act_max : k == 1 ? INFINITY : 1.0f;
  const float sl = k == 3 ? p->act_alpha : 1.0f, m = mad(v, a, b);
  float t = (k == 0 || k == 3) ? m : fmin(fmax(m, lo), hi); /* NaN stays NaN without a clamp */
  t = sw ? v * t : t;
  return t < 0.0f ? t * sl : t;
}

/* Residual element of output (n, o, y, x) when the residual is the small NCHW tensor that a
 * nearest Resize by res_up = f would have upsampled (cl_conv_args.h): (y / f, x / f) of it. */
inline int lc_res_up_index(const lc_cl_conv_args *p, int n, int o, int y, int x) {
  const int f = p->res_up, rh = p->oh / f, rw = p->ow / f;
  return ((n * p->groups * p->cout_g + o) * rh + y / f) * rw + x / f;
}

/* The epilogue after the bias and the residual, for output channel o: the per-channel tables
 * (cl_conv_args.h), the activation, PRelu. */
inline float lc_epi_tail(__global const float *bias, const lc_cl_conv_args *p, int o, float acc) {
  if (p->epi) {
    int M = p->groups * p->cout_g;
    if (p->epi & 2) acc = mad(acc, bias[2 * M + o], bias[3 * M + o]);
    acc = lc_act(acc, p);
    return p->epi & 1 && acc < 0.0f ? acc * bias[M + o] : acc;
  }
  return lc_act(acc, p);
}

/* Epilogue and store of output element (n, o, y, x); o is the global output channel. Register
 * tiles inline it once per element they hold; LC_EPI_NOINLINE (an experiment's build option)
 * keeps one copy, called. */
#ifdef LC_EPI_NOINLINE
__attribute__((noinline)) void lc_store(
#else
inline void lc_store(
#endif
    __global float *out, __global const float *bias, __global const float *res, const lc_cl_conv_args *p, int n,
    int o, int y, int x, float acc) {
  int i = n * p->out_sn + o * p->out_sc + y * p->out_sh + x * p->out_sw;
  if (p->has_bias) acc += bias[o];
  if (p->has_res) acc += res[p->res_up > 1 ? lc_res_up_index(p, n, o, y, x) : i];
  out[i] = lc_epi_tail(bias, p, o, acc);
}

/* Split-K epilogue of families gemm and wide: one work item per output element, columns fastest
 * (coalesced for NCHW); adds the p->ksplit partial sums ws[((g * ksplit + s) * M + m) * N + n]. */
inline void lc_ksplit_reduce(__global float *out, __global const float *bias, __global const float *res,
                             const lc_cl_conv_args *p, __global const float *ws) {
  const int P = p->oh * p->ow, N = p->n * P, M = p->cout_g;
  const int i = get_global_id(0);
  if (i >= p->groups * M * N) return;
  int gm = i / N, n = i - gm * N;
  int g = gm / M, m = gm - g * M;
  __global const float *src = ws + (g * p->ksplit * M + m) * N + n;
  float acc = 0.0f;
  for (int s = 0; s < p->ksplit; s++) acc += src[s * M * N];
  int img = n / P, q = n - img * P;
  int y = q / p->ow, x = q - y * p->ow;
  lc_store(out, bias, res, p, img, gm, y, x, acc);
}

/* ---- direct / dw / gemv families (cl_fam_direct.c) ---- */

/* Lane i of v (OpenCL C 1.2 has no vector subscript). */
inline float lcd_lane(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

/* Codes become floats without int-to-float conversions (a quarter-rate instruction on NVIDIA): a
 * code left in place at bit 4 * lane (q4) or 8 * (lane & 1) (q8), OR-ed into the mantissa of
 * 2^23, gives 2^23 + u * 2^bit exactly, u = code + 8 (q4) or code + 128 (q8). lcd_fold moves the
 * powers of two and the +8 / +128 into the block's scale and offset: weight = value * s + o. */
#define LCD_M23 8388608.0f

/* q4 row (4 nibbles in the low 16 bits of v): lane l is u * 16^l. */
inline float4 lcd_nib4(uint v) {
  return as_float4(((uint4)(v) & (uint4)(0xF, 0xF0, 0xF00, 0xF000)) | (uint4)(0x4B000000)) - LCD_M23;
}

/* q8 row (4 signed bytes): lane l is u * 256^(l & 1). */
inline float4 lcd_byte4(uint v) {
  v ^= 0x80808080u;
  uint h = v >> 16;
  return as_float4(((uint4)(v, v, h, h) & (uint4)(0xFF, 0xFF00, 0xFF, 0xFF00)) | (uint4)(0x4B000000)) - LCD_M23;
}

/* A block's scale and offset (offset 0 when symmetric) adjusted to lcd_nib4 / lcd_byte4 values. */
inline void lcd_fold(float4 *s, float4 *o) {
#if WFMT == 2
  *o -= 8.0f * *s;
  *s *= (float4)(1.0f, 1.0f / 16, 1.0f / 256, 1.0f / 4096);
#elif WFMT == 1
  *o -= 128.0f * *s;
  *s *= (float4)(1.0f, 1.0f / 256, 1.0f, 1.0f / 256);
#endif
}

/* The 4 lanes of oc4 block wb at row k: f32 weights, or lcd_nib4 / lcd_byte4 values. */
inline float4 lcd_codes(__global const wtype *w, int K, int wb, int k) {
#if WFMT == 0
  return vload4(wb * K + k, w);
#elif WFMT == 1
  return lcd_byte4(((__global const uint *)w)[wb * K + k]);
#else
  return lcd_nib4(((__global const ushort *)w)[wb * K + k]);
#endif
}

/* Scale (s) and offset (o) of block blk of oc4 block wb, folded for lcd_codes' values. */
inline void lcd_scales(__global const float *sc, __global const float *of, const lc_cl_conv_args *p, int wb,
                       int blk, float4 *s, float4 *o) {
#if WFMT == 0
  *s = (float4)(1.0f);
  *o = (float4)(0.0f);
#else
  int si = wb * p->nblk + blk;
  *s = vload4(si, sc);
#if ASYM
  *o = vload4(si, of);
#else
  *o = (float4)(0.0f);
#endif
  lcd_fold(s, o);
#endif
}

/* Rows of one quantization block walked at once: the whole tap for f32 (no scales). */
inline int lcd_blk_rows(const lc_cl_conv_args *p) {
#if WFMT == 0
  return p->cin_g;
#else
  return min(p->bsz, p->cin_g);
#endif
}

/* Weights from lcd_codes' values q and the block's folded s, o (f32: q itself). */
inline float4 lcd_deq(float4 q, float4 s, float4 o) {
#if WFMT == 0
  return q;
#else
  return mad(q, s, o);
#endif
}

/* ---- gemm family (cl_fam_gemm.c) ---- */

/* 4-lane weight row `row` (= wb*K + k) as floats: f32 weights, or the row's codes. A code's
 * unsigned form u (q8: code + 128 via the XOR, q4: the nibble) OR-ed into the mantissa of 2^23 is
 * 2^23 + u exactly; subtracting 2^23 + 128 (+ 8) gives the code exactly, so with one 4-byte (q8)
 * or 2-byte (q4) load and no int-to-float conversion the weights equal lc_w4's bit for bit. */
#if WFMT != 0
/* The raw word of a quantized row (q8: 4 bytes, q4: 2 bytes), and its codes. */
inline uint lcg_word(__global const wtype *w, int row) {
#if WFMT == 1
  return ((__global const uint *)w)[row];
#else
  return ((__global const ushort *)w)[row];
#endif
}

inline float4 lcg_word_codes(uint v) {
#if WFMT == 1
  uint4 u = ((uint4)(v ^ 0x80808080u) >> (uint4)(0, 8, 16, 24)) & (uint4)(0xFFu);
  return as_float4(u | (uint4)(0x4B000000u)) - 8388736.0f;
#else
  uint4 u = ((uint4)(v) >> (uint4)(0, 4, 8, 12)) & (uint4)(0xFu);
  return as_float4(u | (uint4)(0x4B000000u)) - 8388616.0f;
#endif
}
#endif

inline float4 lcg_codes(__global const wtype *w, int row) {
#if WFMT == 0
  return vload4(row, w);
#else
  return lcg_word_codes(lcg_word(w, row));
#endif
}

/* Scale and offset (0 when symmetric) of scale index si (one 16-byte load per operand). */
inline void lcg_scales(__global const float *sc, __global const float *of, int si, float4 *s, float4 *o) {
  *s = ((__global const float4 *)sc)[si];
#if ASYM
  *o = ((__global const float4 *)of)[si];
#else
  (void)of;
  *o = (float4)(0.0f);
#endif
}

/* Dequantized row from lcg_codes' q and its block's scale s and offset o. */
inline float4 lcg_deq(float4 q, float4 s, float4 o) {
#if ASYM
  return mad(q, s, o);
#else
  (void)o;
  return q * s;
#endif
}

/* c + the dot product of the four signed bytes of a and b: dp4a on NVIDIA (inline PTX, LC_PTX
 * set by the integer families gemvq and gemmq), emulated elsewhere. */
#ifdef LC_PTX
inline int lc_dp4a_ss(uint a, uint b, int c) {
  int d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#else
inline int lc_dp4a_ss(uint a, uint b, int c) {
  int4 x = convert_int4(as_char4(a)), y = convert_int4(as_char4(b));
  return c + x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
}
#endif
