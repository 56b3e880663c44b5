/* 1x1 convolution on few pixels (n * oh * ow <= 8, no padding, any stride): the fully connected
 * case, bound by reading the weights once. A work-group of L items (a power of two, 32..256)
 * computes BW oc4 blocks (of one group) for PP pixels per pass; item t reads chunks t, t + L,
 * t + 2L, ... of each block (a chunk is 16 bytes of codes: 8 rows of q4, 4 rows of q8, or one f32
 * row), so a warp reads 512 contiguous bytes per load; LCG_U chunks are loaded before any is used
 * to keep enough bytes in flight. Sums stay in registers per item (per block in the code domain:
 * the scale and offset are applied once per chunk, which lies in one quantization block), then
 * one tree reduction in local memory per (block, pixel).
 *
 * Nibbles and bytes become floats without int-to-float conversions (a quarter-rate instruction
 * on NVIDIA): OR-ing a code, left in place at bit 4 * lane, into the mantissa of 2^23 gives
 * 2^23 + code * 2^(4 lane) exactly; the lane's power of two is folded into its scale.
 *
 * Global size (ceil(groups * ob / BW) * L), local size (L). Variants pPP[bBW]; r1 / r1p4 read
 * one row at a time with lc_w4 and run any K and block size (the fast ones need cin_g a multiple
 * of the chunk's rows and quantization blocks that are whole chunks; BW > 1 needs groups == 1). */

#define LCG_MP 8
#define LCG_MB 4
#define LCG_LMAX 256
#if WFMT == 0
#define LCG_R 1
#define LCG_U 8
typedef float4 lcg_raw;
typedef float lcg_xt;
#elif WFMT == 1
#define LCG_R 4
#define LCG_U 4
typedef uint4 lcg_raw;
typedef float4 lcg_xt;
#else
#define LCG_R 8
#define LCG_U 4
typedef uint4 lcg_raw;
typedef float8 lcg_xt;
#endif
#define LCG_M23 8388608.0f

/* Input element offsets of pixel pi at channel 0 of group g. */
inline int lcg_xbase(const lc_cl_conv_args *p, int pi, int g) {
  int ohw = p->oh * p->ow, n = pi / ohw, r = pi % ohw;
  return n * p->in_sn + (r / p->ow) * p->sh * p->in_sh + (r % p->ow) * p->sw * p->in_sw + g * p->cin_g * p->in_sc;
}

/* The LCG_R inputs of chunk j at xb; vx: contiguous and 16-byte aligned. */
inline lcg_xt lcg_x(__global const float *in, int xb, int j, int sc, int vx) {
#if WFMT == 0
  return in[xb + j * sc];
#elif WFMT == 1
  if (vx) return ((__global const float4 *)(in + xb))[j];
  int i = xb + j * 4 * sc;
  return (float4)(in[i], in[i + sc], in[i + 2 * sc], in[i + 3 * sc]);
#else
  if (vx) {
    __global const float4 *v = (__global const float4 *)(in + xb);
    return (float8)(v[2 * j], v[2 * j + 1]);
  }
  int i = xb + j * 8 * sc;
  return (float8)(in[i], in[i + sc], in[i + 2 * sc], in[i + 3 * sc], in[i + 4 * sc], in[i + 5 * sc],
                  in[i + 6 * sc], in[i + 7 * sc]);
#endif
}

#if WFMT == 2
/* Row of 4 nibbles in the low 16 bits of v: 2^(4 lane) * u, u = code + 8. */
inline float4 lcg_nib(uint v) {
  return as_float4(((uint4)(v) & (uint4)(0xF, 0xF0, 0xF00, 0xF000)) | (uint4)(0x4B000000)) - LCG_M23;
}
#elif WFMT == 1
/* Row of 4 signed bytes: 2^(8 (lane & 1)) * u, u = code + 128. */
inline float4 lcg_byte(uint v) {
  v ^= 0x80808080u;
  uint h = v >> 16;
  return as_float4(((uint4)(v, v, h, h) & (uint4)(0xFF, 0xFF00, 0xFF, 0xFF00)) | (uint4)(0x4B000000)) - LCG_M23;
}
#endif

/* Tree sum of v over the work-group (L a power of two); the total is returned to item 0. */
inline float4 lcg_reduce(__local float4 *red, float4 v, int t, int L) {
  red[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L >> 1; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* Only item 0 reads the total: the others may already be writing the next sum. */
  return t == 0 ? red[0] : v;
}

/* Stores the 4 lanes of block wb (global block index) for pixel pi. */
inline void lcg_store(__global float *out, __global const float *bias, __global const float *res,
                      const lc_cl_conv_args *p, int wb, int pi, float4 v) {
  int g = wb / p->ob, b = wb % p->ob, ohw = p->oh * p->ow, n = pi / ohw, r = pi % ohw;
  #pragma unroll
  for (int lane = 0; lane < 4; lane++)
    if (b * 4 + lane < p->cout_g)
      lc_store(out, bias, res, p, n, g * p->cout_g + b * 4 + lane, r / p->ow, r % p->ow, lcd_lane(v, lane));
}

inline void lcg_fast(__global const float *restrict in, __global const wtype *restrict w,
                     __global const float *restrict sc, __global const float *restrict of,
                     __global const float *restrict bias, __global const float *restrict res,
                     __global float *restrict out, const lc_cl_conv_args *pa, __local float4 *red, const int PP,
                     const int BW) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), nbt = p.groups * p.ob;
  const int wg0 = (int)get_group_id(0) * BW, npix = p.n * p.oh * p.ow, nch = p.cin_g / LCG_R;
  const int g = min(wg0, nbt - 1) / p.ob;
  int wb[LCG_MB];
  #pragma unroll
  for (int bw = 0; bw < BW; bw++) wb[bw] = min(wg0 + bw, nbt - 1);
#if WFMT == 2
  const float4 ls = (float4)(1.0f, 1.0f / 16, 1.0f / 256, 1.0f / 4096);
  const float cz = 8.0f;
#elif WFMT == 1
  const float4 ls = (float4)(1.0f, 1.0f / 256, 1.0f, 1.0f / 256);
  const float cz = 128.0f;
#endif
  for (int p0 = 0; p0 < npix; p0 += PP) {
    int xb[LCG_MP];
    int vx = p.in_sc == 1;
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      xb[q] = lcg_xbase(&p, min(p0 + q, npix - 1), g);
      vx = vx && (xb[q] & 3) == 0;
    }
    float4 acc[LCG_MB][LCG_MP];
    #pragma unroll
    for (int bw = 0; bw < BW; bw++)
      #pragma unroll
      for (int q = 0; q < PP; q++) acc[bw][q] = (float4)(0.0f);
    for (int j0 = t; j0 < nch; j0 += LCG_U * L) {
      lcg_raw raw[LCG_U][LCG_MB];
      #pragma unroll
      for (int u = 0; u < LCG_U; u++) {
        int jj = min(j0 + u * L, nch - 1);
        #pragma unroll
        for (int bw = 0; bw < BW; bw++) raw[u][bw] = ((__global const lcg_raw *)w)[wb[bw] * nch + jj];
      }
      #pragma unroll
      for (int u = 0; u < LCG_U; u++) {
        int j = j0 + u * L;
        if (j >= nch) break;
        lcg_xt x[LCG_MP];
        #pragma unroll
        for (int q = 0; q < PP; q++) x[q] = lcg_x(in, xb[q], j, p.in_sc, vx);
#if WFMT == 0
        #pragma unroll
        for (int bw = 0; bw < BW; bw++)
          #pragma unroll
          for (int q = 0; q < PP; q++) acc[bw][q] = mad((float4)(x[q]), raw[u][bw], acc[bw][q]);
#else
        float xs[LCG_MP];
        #pragma unroll
        for (int q = 0; q < PP; q++) {
#if WFMT == 2
          float4 h = x[q].lo + x[q].hi;
#else
          float4 h = x[q];
#endif
          xs[q] = (h.x + h.y) + (h.z + h.w);
        }
        const int blk = lc_blk(&p, 0, j * LCG_R);
        #pragma unroll
        for (int bw = 0; bw < BW; bw++) {
          float4 s, o;
          lcd_scales(sc, of, &p, wb[bw], blk, &s, &o);
          const uint4 r = raw[u][bw];
          float4 c = o - cz * s;
          s *= ls;
          #pragma unroll
          for (int q = 0; q < PP; q++) {
#if WFMT == 2
            float4 d = (float4)(x[q].s0) * lcg_nib(r.x);
            d = mad((float4)(x[q].s1), lcg_nib(r.x >> 16), d);
            d = mad((float4)(x[q].s2), lcg_nib(r.y), d);
            d = mad((float4)(x[q].s3), lcg_nib(r.y >> 16), d);
            d = mad((float4)(x[q].s4), lcg_nib(r.z), d);
            d = mad((float4)(x[q].s5), lcg_nib(r.z >> 16), d);
            d = mad((float4)(x[q].s6), lcg_nib(r.w), d);
            d = mad((float4)(x[q].s7), lcg_nib(r.w >> 16), d);
#else
            float4 d = (float4)(x[q].s0) * lcg_byte(r.x);
            d = mad((float4)(x[q].s1), lcg_byte(r.y), d);
            d = mad((float4)(x[q].s2), lcg_byte(r.z), d);
            d = mad((float4)(x[q].s3), lcg_byte(r.w), d);
#endif
            acc[bw][q] = mad(s, d, mad(c, (float4)(xs[q]), acc[bw][q]));
          }
        }
#endif
      }
    }
    #pragma unroll
    for (int bw = 0; bw < BW; bw++)
      #pragma unroll
      for (int q = 0; q < PP; q++) {
        float4 v = lcg_reduce(red, acc[bw][q], t, L);
        if (t == 0 && wg0 + bw < nbt && p0 + q < npix) lcg_store(out, bias, res, &p, wb[bw], p0 + q, v);
      }
  }
}

/* Any K and block size: one row per step, lc_w4 dequantizing it. */
inline void lcg_rows(__global const float *restrict in, __global const wtype *restrict w,
                     __global const float *restrict sc, __global const float *restrict of,
                     __global const float *restrict bias, __global const float *restrict res,
                     __global float *restrict out, const lc_cl_conv_args *pa, __local float4 *red, const int PP) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), wb = get_group_id(0), npix = p.n * p.oh * p.ow;
  const int g = wb / p.ob;
  for (int p0 = 0; p0 < npix; p0 += PP) {
    int xb[LCG_MP];
    float4 acc[LCG_MP];
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      xb[q] = lcg_xbase(&p, min(p0 + q, npix - 1), g);
      acc[q] = (float4)(0.0f);
    }
    for (int k = t; k < p.cin_g; k += L) {
#if WFMT == 0
      int blk = 0;
#else
      int blk = lc_blk(&p, 0, k);
#endif
      float4 wv = lc_w4(w, sc, of, &p, wb, k, blk);
      #pragma unroll
      for (int q = 0; q < PP; q++) acc[q] = mad((float4)(in[xb[q] + k * p.in_sc]), wv, acc[q]);
    }
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      float4 v = lcg_reduce(red, acc[q], t, L);
      if (t == 0 && p0 + q < npix) lcg_store(out, bias, res, &p, wb, p0 + q, v);
    }
  }
}

#define LCG_FAST(NAME, PP, BW)                                          \
  __kernel void NAME(LC_KERNEL_ARGS) {                                  \
    __local float4 red[LCG_LMAX];                                       \
    lcg_fast(in, w, sc, of, bias, res, out, &p, red, PP, BW);           \
  }
#define LCG_ROWS(NAME, PP)                                              \
  __kernel void NAME(LC_KERNEL_ARGS) {                                  \
    __local float4 red[LCG_LMAX];                                       \
    lcg_rows(in, w, sc, of, bias, res, out, &p, red, PP);               \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1)
LCG_FAST(gemv_p1, 1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1b2)
LCG_FAST(gemv_p1b2, 1, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1b4)
LCG_FAST(gemv_p1b4, 1, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p2)
LCG_FAST(gemv_p2, 2, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p4)
LCG_FAST(gemv_p4, 4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p8)
LCG_FAST(gemv_p8, 8, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_r1)
LCG_ROWS(gemv_r1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_r1p4)
LCG_ROWS(gemv_r1p4, 4)
#endif
