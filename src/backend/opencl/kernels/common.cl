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

inline float lc_act(float v, const lc_cl_conv_args *p) {
  switch (p->act) {
  case 1: return fmax(v, 0.0f);
  case 2: return fmin(fmax(v, p->act_min), p->act_max);
  case 3: return v < 0.0f ? v * p->act_alpha : v;
  case 4: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
  default: return v;
  }
}

/* Epilogue and store of output element (n, o, y, x); o is the global output channel. */
inline void lc_store(__global float *out, __global const float *bias, __global const float *res,
                     const lc_cl_conv_args *p, int n, int o, int y, int x, float acc) {
  int i = n * p->out_sn + o * p->out_sc + y * p->out_sh + x * p->out_sw;
  if (p->has_bias) acc += bias[o];
  if (p->has_res) acc += res[i];
  out[i] = lc_act(acc, p);
}

/* ---- direct / dw / gemv families (cl_fam_direct.c) ---- */

/* Lane i of v (OpenCL C 1.2 has no vector subscript). */
inline float lcd_lane(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

/* Raw codes of the 4 lanes of oc4 block wb at row k, as floats (q4: code + 8 is in 0..15). */
inline float4 lcd_codes(__global const wtype *w, int K, int wb, int k) {
#if WFMT == 0
  return vload4(wb * K + k, w);
#elif WFMT == 1
  return convert_float4(vload4(wb * K + k, w));
#else
  uchar2 b = vload2(wb * K + k, w);
  return (float4)((float)(b.x & 15), (float)(b.x >> 4), (float)(b.y & 15), (float)(b.y >> 4)) - 8.0f;
#endif
}

/* Scale (s) and offset (o) of block blk of oc4 block wb, so that weight = code * s + o. */
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

/* Dequantized weights from codes q and the block's s, o (f32: q itself). */
inline float4 lcd_deq(float4 q, float4 s, float4 o) {
#if WFMT == 0
  return q;
#elif ASYM
  return mad(q, s, o);
#else
  return q * s;
#endif
}
