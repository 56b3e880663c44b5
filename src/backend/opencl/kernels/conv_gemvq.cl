/* 1x1 convolution of one output pixel (groups 1) with integer dot products: family "gemvq"
 * (cl_fam_gemvq.c), for q8/q4 weights on devices whose dp4a probe passed. Each work-group first
 * quantizes the input pixel's channels to int8 in units of 8 (one scale amax / 127 per unit, the
 * rounding documented in cl_fam_gemvq.c) into local memory, then streams the codes of NB oc4
 * blocks: item t reads units t, t + L, ... (16 bytes of q4 or 32 of q8 per unit and block, a warp
 * reading 512 or 1024 contiguous bytes per load), LCQ_U units of every block loaded before any is
 * used. A unit's 4 lanes are transposed with byte permutes into 4-row words and summed with dp4a
 * against the input codes; the unit's integer sums become floats exactly (magic-number add, no
 * conversion instruction) and are scaled by the input unit's and the weight block's scales.
 * One tree reduction in local memory for all NB blocks at the end.
 *
 * q4 lanes 1 and 3 are summed as 16 * u (the high nibbles masked in place), folded out at the end;
 * the codes' +8 (q4) is taken off with the input unit's code sum nq.
 * Built with -DLC_PTX where inline PTX runs (NVIDIA); elsewhere prmt and dp4a are emulated (the
 * tests, PoCL). Global size (ceil(ob / NB) * L), local size L (a power of two, 32..256). */

#ifdef LC_PTX
inline uint lcq_prmt(uint a, uint b, uint s) {
  uint d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(s));
  return d;
}
inline int lcq_dp4a_us(uint a, uint b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#else
/* Byte i of the result is byte (s >> 4i) & 7 of {b:a} (a bytes 0-3). */
inline uint lcq_prmt(uint a, uint b, uint s) {
  ulong v = ((ulong)b << 32) | a;
  uint d = 0;
  for (int i = 0; i < 4; i++) d |= (uint)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return d;
}
inline int lcq_dp4a_us(uint a, uint b, int c) {
  for (int i = 0; i < 4; i++) c += (int)((a >> (8 * i)) & 0xFF) * (int)(char)(b >> (8 * i));
  return c;
}
#endif

#define LCQ_MB 8
#define LCQ_U 2
#define LCQ_MU 8 /* most units per load round of the wR variants */
#if WFMT == 1
#define LCQ_W 2 /* uint4 per unit and block */
#else
#define LCQ_W 1
#endif

/* Unit record {codes of rows 0-3, codes of rows 4-7, scale, sum of the codes} of 8 inputs: scale
 * amax * (1 / 127) (a multiply), codes rint(v * (127 / amax)) (one correctly rounded division).
 * A non-finite input makes the scale NaN (the outputs become NaN as with float weights). */
inline uint4 lcq_unit_rec(const float *v) {
  float amax = 0.0f;
  int bad = 0;
  for (int r = 0; r < 8; r++) {
    bad |= !isfinite(v[r]);
    amax = fmax(amax, fabs(v[r]));
  }
  float s = amax * (1.0f / 127.0f), inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
  uint c0 = 0, c1 = 0;
  int nq = 0;
  for (int r = 0; r < 8; r++) {
    int q = (int)rint(v[r] * inv);
    nq += q;
    if (r < 4)
      c0 |= (uint)(q & 255) << (8 * r);
    else
      c1 |= (uint)(q & 255) << (8 * (r - 4));
  }
  return (uint4)(c0, c1, as_uint(bad ? NAN : s), (uint)nq);
}

/* The records of all nu units into xr; channel c of the input pixel is in[c * sc]. The inputs of
 * LCQ_QU units per item are loaded (as float4 where contiguous) before any is quantized. */
#ifndef LCQ_QU
#define LCQ_QU 1
#endif
inline void lcq_quant_x(__global const float *in, int sc, int nu, __local uint4 *xr) {
  const int t = get_local_id(0), L = get_local_size(0);
  for (int i0 = t; i0 < nu; i0 += LCQ_QU * L) {
    float v[LCQ_QU][8];
    #pragma unroll
    for (int u = 0; u < LCQ_QU; u++) {
      const int i = min(i0 + u * L, nu - 1);
      if (sc == 1) {
        const float4 a = ((__global const float4 *)in)[2 * i], b = ((__global const float4 *)in)[2 * i + 1];
        v[u][0] = a.x, v[u][1] = a.y, v[u][2] = a.z, v[u][3] = a.w;
        v[u][4] = b.x, v[u][5] = b.y, v[u][6] = b.z, v[u][7] = b.w;
      } else {
        #pragma unroll
        for (int r = 0; r < 8; r++) v[u][r] = in[(8 * i + r) * sc];
      }
    }
    #pragma unroll
    for (int u = 0; u < LCQ_QU; u++)
      if (i0 + u * L < nu) xr[i0 + u * L] = lcq_unit_rec(v[u]);
  }
}

/* Integer sums of one unit for the 4 lanes (q4: lanes 1, 3 times 16; both: +8 / +128 not yet
 * taken off), from the unit's raw codes w0 (rows 0-3, q8; rows 0-7, q4), w1 (rows 4-7, q8). */
inline int4 lcq_unit(uint4 w0, uint4 w1, uint x0, uint x1) {
  int4 s;
#if WFMT == 2
  (void)w1;
  const uint m = 0x0F0F0F0Fu;
  uint lx = w0.x & m, ly = w0.y & m, lz = w0.z & m, lw = w0.w & m;
  uint hx = w0.x & ~m, hy = w0.y & ~m, hz = w0.z & ~m, hw = w0.w & ~m;
  s.x = lcq_dp4a_us(lcq_prmt(lz, lw, 0x6420), x1, lcq_dp4a_us(lcq_prmt(lx, ly, 0x6420), x0, 0));
  s.z = lcq_dp4a_us(lcq_prmt(lz, lw, 0x7531), x1, lcq_dp4a_us(lcq_prmt(lx, ly, 0x7531), x0, 0));
  s.y = lcq_dp4a_us(lcq_prmt(hz, hw, 0x6420), x1, lcq_dp4a_us(lcq_prmt(hx, hy, 0x6420), x0, 0));
  s.w = lcq_dp4a_us(lcq_prmt(hz, hw, 0x7531), x1, lcq_dp4a_us(lcq_prmt(hx, hy, 0x7531), x0, 0));
#else
  /* 4x4 byte transposes: rows of 4 lanes into lanes of 4 rows. */
  uint a0 = lcq_prmt(w0.x, w0.y, 0x5140), a1 = lcq_prmt(w0.x, w0.y, 0x7362);
  uint a2 = lcq_prmt(w0.z, w0.w, 0x5140), a3 = lcq_prmt(w0.z, w0.w, 0x7362);
  uint b0 = lcq_prmt(w1.x, w1.y, 0x5140), b1 = lcq_prmt(w1.x, w1.y, 0x7362);
  uint b2 = lcq_prmt(w1.z, w1.w, 0x5140), b3 = lcq_prmt(w1.z, w1.w, 0x7362);
  s.x = lc_dp4a_ss(lcq_prmt(b0, b2, 0x5410), x1, lc_dp4a_ss(lcq_prmt(a0, a2, 0x5410), x0, 0));
  s.y = lc_dp4a_ss(lcq_prmt(b0, b2, 0x7632), x1, lc_dp4a_ss(lcq_prmt(a0, a2, 0x7632), x0, 0));
  s.z = lc_dp4a_ss(lcq_prmt(b1, b3, 0x5410), x1, lc_dp4a_ss(lcq_prmt(a1, a3, 0x5410), x0, 0));
  s.w = lc_dp4a_ss(lcq_prmt(b1, b3, 0x7632), x1, lc_dp4a_ss(lcq_prmt(a1, a3, 0x7632), x0, 0));
#endif
  return s;
}

/* LCQ_MAG: int -> float of a unit's sums, 1.5 * 2^23 + v for |v| < 2^22 (|sums| < 2^19 here),
 * less (q4) the +8 codes' share 8 * nq on lanes 0, 2 and 128 * nq on lanes 1, 3; LCQ_FOLD: q4's
 * lanes 1 and 3 were summed as 16 * u. */
#if WFMT == 2
#define LCQ_FOLD ((float4)(1.0f, 1.0f / 16, 1.0f, 1.0f / 16))
#define LCQ_MAG(nq) ((int4)(0x4B400000 - 8 * (nq), 0x4B400000 - 128 * (nq), 0x4B400000 - 8 * (nq), 0x4B400000 - 128 * (nq)))
#else
#define LCQ_FOLD ((float4)(1.0f))
#define LCQ_MAG(nq) ((int4)(0x4B400000))
#endif

__attribute__((always_inline)) static inline void
lcq_gemv(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
         __global const float *restrict of, __global const float *restrict bias, __global const float *restrict res,
         __global float *restrict out, const lc_cl_conv_args *pa, __local uint4 *lm, const int NB) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), nu = p.cin_g / 8, wg0 = (int)get_group_id(0) * NB;
  /* Unit j's quantization block (8 * j) >> blg: bsz is a power of two, or spans the row (block 0). */
  const int blg = p.bsz & (p.bsz - 1) ? 31 : 31 - clz(p.bsz);
  float4 acc[LCQ_MB], acco[LCQ_MB];
  #pragma unroll
  for (int bw = 0; bw < NB; bw++) acc[bw] = acco[bw] = (float4)(0.0f);
  __global const uint4 *w4 = (__global const uint4 *)w;
  uint4 raw[LCQ_U][LCQ_MB][LCQ_W];
/* Codes of units j0, j0 + L, ... of every block into raw (clamped: the overhang is never used). */
#define LCQ_LOAD(J0)                                                                                    \
  _Pragma("unroll") for (int u = 0; u < LCQ_U; u++) {                                                   \
    const int jj = max(min((J0) + u * L, nu - 1), 0);                                                   \
    _Pragma("unroll") for (int bw = 0; bw < NB; bw++) {                                                 \
      const int wb = min(wg0 + bw, p.ob - 1);                                                           \
      _Pragma("unroll") for (int k = 0; k < LCQ_W; k++) raw[u][bw][k] = w4[(wb * nu + jj) * LCQ_W + k]; \
    }                                                                                                   \
  }
  /* The first codes are in flight while the input is quantized. */
  LCQ_LOAD(t)
  lcq_quant_x(in, p.in_sc, nu, lm);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j0 = t; j0 < nu; j0 += LCQ_U * L) {
    if (j0 != t) {
      LCQ_LOAD(j0)
    }
    #pragma unroll
    for (int u = 0; u < LCQ_U; u++) {
      const int j = j0 + u * L;
      if (j >= nu) break;
      const uint4 xq = lm[j];
      const float sx = as_float(xq.z);
      const int nq = (int)xq.w, blk = (8 * j) >> blg;
      const int4 mag = LCQ_MAG(nq);
#if ASYM
      const float xsum = sx * (float)nq;
#endif
      #pragma unroll
      for (int bw = 0; bw < NB; bw++) {
        const int wb = min(wg0 + bw, p.ob - 1), si = wb * p.nblk + blk;
#if LCQ_W == 2
        const int4 is = lcq_unit(raw[u][bw][0], raw[u][bw][1], xq.x, xq.y);
#else
        const int4 is = lcq_unit(raw[u][bw][0], raw[u][bw][0], xq.x, xq.y);
#endif
        const float4 f = as_float4(is + mag) - 12582912.0f;
        acc[bw] = mad(f * sx, ((__global const float4 *)sc)[si], acc[bw]);
#if ASYM
        acco[bw] = mad((float4)(xsum), ((__global const float4 *)of)[si], acco[bw]);
#endif
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* the input records are dead: lm becomes the reduction's */
  __local float4 *red = (__local float4 *)lm;
  const float4 fold = LCQ_FOLD;
  #pragma unroll
  for (int bw = 0; bw < NB; bw++) red[bw * L + t] = mad(acc[bw], fold, acco[bw]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L >> 1; s > 0; s >>= 1) {
    if (t < s) {
      #pragma unroll
      for (int bw = 0; bw < NB; bw++) red[bw * L + t] += red[bw * L + t + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t < NB && wg0 + t < p.ob) {
    const float4 v = red[t * L];
    const int b = wg0 + t;
    #pragma unroll
    for (int lane = 0; lane < 4; lane++)
      if (b * 4 + lane < p.cout_g) lc_store(out, bias, res, &p, 0, b * 4 + lane, 0, 0, lcd_lane(v, lane));
  }
}

/* ---- variants wR[uU]: 32-item row groups ----
 * Item t of group g = t / 32 sums units lane, lane + 32, ... (lane = t % 32) of R consecutive oc4
 * blocks in turn, one block at a time, U units (codes and scales) loaded at once; each block's 32
 * partial sums are reduced within the group (6 exchanges, no barrier with PTX shuffles) as soon as
 * its row ends. All groups run the same steps, so the emulated exchange's barriers are uniform. */
#ifdef LC_PTX
inline float lcq_xchg(float v, int m, int t, __local float *x) {
  (void)t, (void)x;
  uint d;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(d) : "r"(as_uint(v)), "r"(m));
  return as_float(d);
}
#else
/* v of item t ^ m (m < 32) through local memory; every item of the work-group calls it. */
inline float lcq_xchg(float v, int m, int t, __local float *x) {
  x[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  const float d = x[t ^ m];
  barrier(CLK_LOCAL_MEM_FENCE);
  return d;
}
#endif

/* Sum of v over the group, scattered: lanes 8c .. 8c + 7 get component c. */
inline float lcq_gsum(float4 v, int t, __local float *x) {
  const int hi = t & 16, mid = t & 8;
  float2 keep = hi ? v.zw : v.xy;
  const float2 send = hi ? v.xy : v.zw;
  keep.x += lcq_xchg(send.x, 16, t, x);
  keep.y += lcq_xchg(send.y, 16, t, x);
  float k = mid ? keep.y : keep.x;
  k += lcq_xchg(mid ? keep.x : keep.y, 8, t, x);
  k += lcq_xchg(k, 4, t, x);
  k += lcq_xchg(k, 2, t, x);
  return k + lcq_xchg(k, 1, t, x);
}

__attribute__((always_inline)) static inline void
lcq_rows(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
         __global const float *restrict of, __global const float *restrict bias, __global const float *restrict res,
         __global float *restrict out, const lc_cl_conv_args *pa, __local uint4 *lm, const int R, const int U) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), nu = p.cin_g / 8, lane = t & 31;
  const int b0 = ((int)get_group_id(0) * (L >> 5) + (t >> 5)) * R, S = (nu + 32 * U - 1) / (32 * U);
  const int blg = p.bsz & (p.bsz - 1) ? 31 : 31 - clz(p.bsz); /* as in lcq_gemv */
  __local float *xs = (__local float *)(lm + nu);
  __global const uint4 *w4 = (__global const uint4 *)w;
  __global const float4 *s4 = (__global const float4 *)sc;
#if ASYM
  __global const float4 *o4 = (__global const float4 *)of;
  float4 ro[LCQ_MU];
#endif
  uint4 raw[LCQ_MU][LCQ_W];
  float4 rs[LCQ_MU];
/* Codes and scales of units J0, J0 + 32, ... of block WB (clamped: the overhang is never used). */
#define LCQ_RLOAD(WB, J0)                                                                         \
  _Pragma("unroll") for (int u = 0; u < U; u++) {                                                 \
    const int jj = min((J0) + 32 * u, nu - 1), si = (WB) * p.nblk + ((8 * jj) >> blg); \
    _Pragma("unroll") for (int k = 0; k < LCQ_W; k++) raw[u][k] = w4[((WB) * nu + jj) * LCQ_W + k]; \
    rs[u] = s4[si];                                                                               \
    LCQ_OLOAD(u, si)                                                                              \
  }
#if ASYM
#define LCQ_OLOAD(u, si) ro[u] = o4[si];
#else
#define LCQ_OLOAD(u, si)
#endif
  const float4 fold = LCQ_FOLD;
  LCQ_RLOAD(min(b0, p.ob - 1), lane)
  lcq_quant_x(in, p.in_sc, nu, lm);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = 0; r < R; r++) {
    const int wb = min(b0 + r, p.ob - 1);
    float4 acc = (float4)(0.0f), acco = (float4)(0.0f);
    for (int js = 0; js < S; js++) {
      const int j0 = lane + js * 32 * U;
      if (r || js) {
        LCQ_RLOAD(wb, j0)
      }
      #pragma unroll
      for (int u = 0; u < U; u++) {
        const int j = j0 + 32 * u;
        if (j < nu) {
          const uint4 xq = lm[j];
          const float sx = as_float(xq.z);
          const int nq = (int)xq.w;
          const int4 mag = LCQ_MAG(nq);
          const int4 is = lcq_unit(raw[u][0], raw[u][LCQ_W - 1], xq.x, xq.y);
          acc = mad(as_float4(is + mag) - 12582912.0f, sx * rs[u], acc);
#if ASYM
          acco = mad((float4)(sx * (float)nq), ro[u], acco);
#endif
        }
      }
    }
    /* Every item of the work-group gets here R times (the emulated exchange's barriers). */
    const float v = lcq_gsum(mad(acc, fold, acco), t, xs);
    const int o = (b0 + r) * 4 + ((lane >> 3) & 3);
    if ((lane & 7) == 0 && b0 + r < p.ob && o < p.cout_g) lc_store(out, bias, res, &p, 0, o, 0, 0, v);
  }
}

#define LCQ_RKERNEL(NAME, R, U)                                                                          \
  __kernel void NAME(LC_KERNEL_ARGS, __local uint4 *lm) { lcq_rows(in, w, sc, of, bias, res, out, &p, lm, R, U); }

#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_w1)
LCQ_RKERNEL(gemvq_w1, 1, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_w2)
LCQ_RKERNEL(gemvq_w2, 2, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_w4)
LCQ_RKERNEL(gemvq_w4, 4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_w1u8)
LCQ_RKERNEL(gemvq_w1u8, 1, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_w2u2)
LCQ_RKERNEL(gemvq_w2u2, 2, 2)
#endif

/* ---- variants sR: streamed row groups ----
 * As wR (a 32-item group sums units lane, lane + 32, ... of its oc4 blocks and reduces each block
 * within the group), but a group's R blocks (gw, gw + NW, ...: groups running together read
 * neighbouring blocks) are one stream of R * S steps of LCQ_SU units, and the codes and scales of
 * the next step are loaded before this one is summed (two register sets by step parity). The wR
 * kernels took about the same 15 us for K = 4096, N = 14336 q4 on the H100 and on the H200 (1.45x
 * the bandwidth): each group waits on a chain of dependent load rounds, not on bytes. */
#define LCQ_SU 4

__attribute__((always_inline)) static inline void
lcq_stream(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
           __global const float *restrict of, __global const float *restrict bias, __global const float *restrict res,
           __global float *restrict out, const lc_cl_conv_args *pa, __local uint4 *lm, const int R) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), nu = p.cin_g / 8, lane = t & 31;
  const int NW = (int)get_num_groups(0) * (L >> 5), gw = (int)get_group_id(0) * (L >> 5) + (t >> 5);
  const int S = (nu + 32 * LCQ_SU - 1) / (32 * LCQ_SU), G = R * S;
  const int blg = p.bsz & (p.bsz - 1) ? 31 : 31 - clz(p.bsz); /* as in lcq_gemv */
  __local float *xs = (__local float *)(lm + nu);
  __global const uint4 *w4 = (__global const uint4 *)w;
  __global const float4 *s4 = (__global const float4 *)sc;
#if ASYM
  __global const float4 *o4 = (__global const float4 *)of;
  float4 oa[LCQ_SU], ob[LCQ_SU];
#define LCQ_SOLOAD(OFS, u, si) OFS[u] = o4[si];
#define LCQ_SOUSE(OFS, u) acco = mad((float4)(sx * (float)nq), OFS[u], acco);
#else
#define LCQ_SOLOAD(OFS, u, si)
#define LCQ_SOUSE(OFS, u)
#endif
  const float4 fold = LCQ_FOLD;
  uint4 ra[LCQ_SU][LCQ_W], rb[LCQ_SU][LCQ_W];
  float4 sa[LCQ_SU], sb[LCQ_SU];
  float4 acc = (float4)(0.0f), acco = (float4)(0.0f);
  int lr = 0, ls = 0, cr = 0, cs = 0; /* the step loaded next and summed next: (block, step) */
/* The next step's codes and scales into RAW / SCL / OFS (clamped: the overhang is never used). */
#define LCQ_SLOAD(RAW, SCL, OFS)                                                                     \
  if (lr < R) {                                                                                      \
    const int wb = min(gw + lr * NW, p.ob - 1), jb = lane + ls * 32 * LCQ_SU;                        \
    _Pragma("unroll") for (int u = 0; u < LCQ_SU; u++) {                                             \
      const int jj = min(jb + 32 * u, nu - 1), si = wb * p.nblk + ((8 * jj) >> blg);                 \
      _Pragma("unroll") for (int k = 0; k < LCQ_W; k++) RAW[u][k] = w4[(wb * nu + jj) * LCQ_W + k]; \
      SCL[u] = s4[si];                                                                               \
      LCQ_SOLOAD(OFS, u, si)                                                                         \
    }                                                                                                \
    if (++ls == S) ls = 0, lr++;                                                                     \
  }
/* Sums the step in RAW / SCL / OFS; at a block's last step its row sums go out. Every item of the
 * work-group gets to each block's end together (the emulated exchange's barriers). */
#define LCQ_SCOMP(RAW, SCL, OFS)                                                                     \
  {                                                                                                  \
    const int jb = lane + cs * 32 * LCQ_SU;                                                          \
    _Pragma("unroll") for (int u = 0; u < LCQ_SU; u++) {                                             \
      const int j = jb + 32 * u;                                                                     \
      if (j < nu) {                                                                                  \
        const uint4 xq = lm[j];                                                                      \
        const float sx = as_float(xq.z);                                                             \
        const int nq = (int)xq.w;                                                                    \
        const int4 mag = LCQ_MAG(nq);                                                                \
        const int4 is = lcq_unit(RAW[u][0], RAW[u][LCQ_W - 1], xq.x, xq.y);                          \
        acc = mad(as_float4(is + mag) - 12582912.0f, sx * SCL[u], acc);                              \
        LCQ_SOUSE(OFS, u)                                                                            \
      }                                                                                              \
    }                                                                                                \
    if (++cs == S) {                                                                                 \
      const float v = lcq_gsum(mad(acc, fold, acco), t, xs);                                         \
      const int b = gw + cr * NW, o = b * 4 + ((lane >> 3) & 3);                                     \
      if ((lane & 7) == 0 && b < p.ob && o < p.cout_g) lc_store(out, bias, res, &p, 0, o, 0, 0, v);  \
      acc = acco = (float4)(0.0f);                                                                   \
      cs = 0, cr++;                                                                                  \
    }                                                                                                \
  }
  LCQ_SLOAD(ra, sa, oa)
  lcq_quant_x(in, p.in_sc, nu, lm);
  barrier(CLK_LOCAL_MEM_FENCE);
  LCQ_SLOAD(rb, sb, ob)
  for (int g = 0; g < G; g += 2) {
    LCQ_SCOMP(ra, sa, oa)
    LCQ_SLOAD(ra, sa, oa)
    if (g + 1 < G) {
      LCQ_SCOMP(rb, sb, ob)
      LCQ_SLOAD(rb, sb, ob)
    }
  }
#undef LCQ_SLOAD
#undef LCQ_SCOMP
#undef LCQ_SOLOAD
#undef LCQ_SOUSE
}

#define LCQ_SKERNEL(NAME, R)                                                                             \
  __kernel void NAME(LC_KERNEL_ARGS, __local uint4 *lm) { lcq_stream(in, w, sc, of, bias, res, out, &p, lm, R); }

#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_s2)
LCQ_SKERNEL(gemvq_s2, 2)
#endif

#define LCQ_KERNEL(NAME, NB)                                                                             \
  __kernel void NAME(LC_KERNEL_ARGS, __local uint4 *lm) { lcq_gemv(in, w, sc, of, bias, res, out, &p, lm, NB); }

#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_b1)
LCQ_KERNEL(gemvq_b1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_b2)
LCQ_KERNEL(gemvq_b2, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_b4)
LCQ_KERNEL(gemvq_b4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemvq_b8)
LCQ_KERNEL(gemvq_b8, 8)
#endif
