/* Integer implicit-GEMM convolution for q8/q4 weights (family "gemmq", cl_fam_gemmq.c).
 * gemmq_quant first quantizes the input once per run into the workspace: per (image, group,
 * unit of LCM_U input channels, pixel) LCM_U int8 codes q = rint(x * 127 / amax) and the scale
 * amax / 127 (asym: also scale * sum q), channels past cin_g coded 0. Layout: unit record
 * r = ((img * G + g) * NU + u) * ih * iw + y * iw + x, codes at 32 * r, scales after all codes,
 * so that the columns of a K tile (successive pixels) read successive records; the records start
 * wsoff bytes into the workspace (split-K partial sums come first, for conv_gemm's gemm_reduce).
 * The GEMM's K tile is one (tap, unit): LCM_U rows that lie in one weight block (the family
 * requires bsz % LCM_U == 0), so one int32 sum per output and tile is scaled once:
 * acc += float(isum) * x_scale * w_scale (+ w_offset * x_scale * sum q when asym). Weights are
 * staged as signed bytes transposed to 4 rows per word (q4 nibbles unpacked, +8 removed), the
 * input codes as they are; each work item then runs RM x RN dot products of 4 bytes (dp4a).
 * Fused tiles (gemmq_f*) skip gemmq_quant: a K tile's two staging items per column each load the
 * unit's 32 floats of the column's pixel and code their half with the same operations, so the codes
 * are gemmq_quant's. At batch 1 that saves a launch (~6 us between events on NVIDIA, more than the
 * staging's extra loads); at large batches the records, read by every tap and row tile, win. */

/* One weight word against 4 columns' words, accumulated into c. */
inline int4 lcm_dot4x4(uint a, uint4 b, int4 c) {
  return (int4)(lc_dp4a_ss(a, b.x, c.x), lc_dp4a_ss(a, b.y, c.y), lc_dp4a_ss(a, b.z, c.z), lc_dp4a_ss(a, b.w, c.w));
}

#define LCM_U 32

/* Full unrolling keeps the tiles in registers on GPUs; PoCL (the tests) compiles unrolled
 * kernels far slower, and speed does not matter there. */
#ifdef POCL_DEVICE_ADDRESS_BITS
#define LCM_UNROLL _Pragma("unroll 1")
#else
#define LCM_UNROLL _Pragma("unroll")
#endif

inline int lcm_nu(const lc_cl_conv_args *p) { return (p->cin_g + LCM_U - 1) / LCM_U; }

/* Unit records of the input (cl_fam_gemmq.c sizes the workspace from the same count). */
inline int lcm_records(const lc_cl_conv_args *p) { return p->n * p->groups * lcm_nu(p) * p->ih * p->iw; }

/* One work item per unit record. A non-finite input makes the record's scale NaN, so its
 * outputs become NaN as with float activations. Scale and inverse correctly rounded (built with
 * -cl-fp32-correctly-rounded-divide-sqrt): the host reproduces the codes (lc_cl_gemmq_input_seen). */
/* Built into every program of this file: a tile's program serves the whole conv. */
__kernel void gemmq_quant(LC_KERNEL_ARGS, __global uchar *restrict wsb) {
  __global uchar *ws = wsb + p.wsoff;
  const int HW = p.ih * p.iw, NU = lcm_nu(&p), R = lcm_records(&p);
  const int i = get_global_id(0);
  if (i >= R) return;
  const int pix = i % HW, rest = i / HW, u = rest % NU, gi = rest / NU, g = gi % p.groups, img = gi / p.groups;
  const int y = pix / p.iw, x = pix - y * p.iw, c0 = u * LCM_U, nc = min(LCM_U, p.cin_g - c0);
  __global const float *src = in + img * p.in_sn + (g * p.cin_g + c0) * p.in_sc + y * p.in_sh + x * p.in_sw;
  const int M4 = 4 * p.groups * p.cout_g, C = p.groups * p.cin_g, ch0 = g * p.cin_g + c0;
  float v[LCM_U], amax = 0.0f;
  int bad = 0;
  for (int j = 0; j < LCM_U; j++) {
    v[j] = j < nc ? src[j * p.in_sc] : 0.0f;
    if (p.in_aff && j < nc) v[j] = fma(v[j], bias[M4 + ch0 + j], bias[M4 + C + ch0 + j]); /* cl_conv_args.h */
    bad |= !isfinite(v[j]);
    amax = fmax(amax, fabs(v[j]));
  }
  const float s = bad ? NAN : amax / 127.0f, inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
  uint q[LCM_U / 4];
  int nq = 0;
  for (int j = 0; j < LCM_U / 4; j++) {
    uint word = 0;
    for (int b = 0; b < 4; b++) {
      int c = bad ? 0 : (int)rint(v[4 * j + b] * inv);
      nq += c;
      word |= (uint)(c & 255) << (8 * b);
    }
    q[j] = word;
  }
  __global uint4 *xq = (__global uint4 *)ws;
  xq[2 * i] = (uint4)(q[0], q[1], q[2], q[3]);
  xq[2 * i + 1] = (uint4)(q[4], q[5], q[6], q[7]);
  __global float *xs = (__global float *)(ws + (size_t)R * LCM_U);
  xs[i] = s;
#if ASYM
  xs[R + i] = s * (float)nq;
#endif
  (void)w, (void)sc, (void)of, (void)res, (void)out;
}

/* 4 rows of one oc4 block (q8: a uint of 4 lanes per row; q4: a ushort of 4 nibbles per row) to
 * 4 words, one per lane, each the lane's 4 rows as signed bytes. */
inline uint4 lcm_lanes(uint4 raw) {
#if WFMT == 1
  uchar16 b = as_uchar16(raw);
  return as_uint4(shuffle(b, (uchar16)(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)));
#else
  const uint m = 0x0F0F0F0Fu;
  uint4 n = (uint4)(raw.x & m, raw.y & m, (raw.x >> 4) & m, (raw.y >> 4) & m); /* nibbles to bytes */
  uint4 t = as_uint4(shuffle(as_uchar16(n), (uchar16)(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)));
  return ((t | 0x80808080u) - 0x08080808u) ^ 0x80808080u; /* u - 8 per byte, no borrows */
#endif
}

/* The raw codes of rows k .. k+3 of oc4 block wb, of which the first nr are rows of this tap
 * (the rest, past cin_g, are zero: their input codes are zero too, and they may lie past the
 * buffer's end). */
inline uint4 lcm_wload(__global const wtype *w, int K, int wb, int k, int nr) {
  uint4 r = (uint4)(0);
#if WFMT == 1
  __global const uint *w4 = (__global const uint *)w + wb * K + k;
  if (nr >= 4) return vload4(0, w4);
  if (nr > 0) r.x = w4[0];
  if (nr > 1) r.y = w4[1];
  if (nr > 2) r.z = w4[2];
#else
  __global const ushort *w2 = (__global const ushort *)w + wb * K + k;
  ushort4 h = (ushort4)(0x8888); /* nibble 8: code 0 */
  if (nr >= 4) h = vload4(0, w2);
  else {
    if (nr > 0) h.x = w2[0];
    if (nr > 1) h.y = w2[1];
    if (nr > 2) h.z = w2[2];
  }
  r.xy = as_uint2(h);
#endif
  return r;
}

/* Fused tiles: the LCM_U floats of one unit at one pixel (element offset off; channels from ch,
 * nc of them valid), with the input affine applied as gemmq_quant does. */
inline void lcm_unit_load(__global const float *restrict in, __global const float *restrict bias,
                          const lc_cl_conv_args *p, int off, int ch, int nc, float *v) {
  const int M4 = 4 * p->groups * p->cout_g, C = p->groups * p->cin_g;
LCM_UNROLL
  for (int j = 0; j < LCM_U; j++) {
    v[j] = j < nc ? in[off + j * p->in_sc] : 0.0f;
    if (p->in_aff && j < nc) v[j] = fma(v[j], bias[M4 + ch + j], bias[M4 + C + ch + j]);
  }
}

/* gemmq_quant's coding of one unit (same operations, so the same codes and scale), for the half
 * h of the 32 channels this staging item stores: 4 words, the scale and (asym) scale * sum q;
 * a column outside the image codes zeros with scale 0. */
inline void lcm_code(const float *v, bool ok, int h, uint4 *bv, float *bs, float *bx) {
  float amax = 0.0f;
  int bad = 0;
LCM_UNROLL
  for (int j = 0; j < LCM_U; j++) {
    bad |= !isfinite(v[j]);
    amax = fmax(amax, fabs(v[j]));
  }
  const float s = bad ? NAN : amax / 127.0f, inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
  uint q[4];
  int nq = 0;
LCM_UNROLL
  for (int j = 0; j < 4; j++) {
    uint word = 0;
LCM_UNROLL
    for (int b = 0; b < 4; b++) {
      const float x = h ? v[16 + 4 * j + b] : v[4 * j + b];
      const int c = bad ? 0 : (int)rint(x * inv);
      word |= (uint)(c & 255) << (8 * b);
    }
    q[j] = word;
  }
#if ASYM
LCM_UNROLL
  for (int j = 0; j < LCM_U; j++) nq += bad ? 0 : (int)rint(v[j] * inv);
#endif
  *bv = ok ? (uint4)(q[0], q[1], q[2], q[3]) : (uint4)(0);
  *bs = ok ? s : 0.0f;
  *bx = ok ? s * (float)nq : 0.0f;
}

/* Local strides: weight rows padded by 4 words, so that the 8 items storing the 8 row groups of
 * one oc4 block hit distinct banks. */
#define LCM_LDA(TM) ((TM) + 4)

static inline __attribute__((always_inline)) void
lcm_gemm(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
         __global const float *restrict of, __global const float *restrict bias, __global const float *restrict res,
         __global float *restrict out, __global uchar *restrict wsb, const lc_cl_conv_args *p,
         __local uint4 *As, __local uint *Bs, __local float4 *Ss, const int TM, const int TN, const int RM,
         const int RN, const int FUSED) {
  const int T = (TM / RM) * (TN / RN), LDA4 = LCM_LDA(TM) / 4;
  const int lid = get_local_id(0);
  const int P = p->oh * p->ow, N = p->n * P, M = p->cout_g, HW = p->ih * p->iw;
  const int n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM, z = get_group_id(2);
  const int SPLIT = p->ksplit > 1; /* split-K: a uniform branch, one kernel per tile for both */
  const int g = z / p->ksplit, sk = z - g * p->ksplit;
  const int NU = lcm_nu(p), R = lcm_records(p), taps = p->kh * p->kw;
  /* K tiles [tbeg, tend) of this work-group: split-K chunks of kchunk tiles */
  const int tbeg = sk * p->kchunk, tend = min(taps * NU, tbeg + p->kchunk); /* kchunk: all tiles if not split */
  const int ntiles = max(tend - tbeg, 0);
  __global const uchar *ws = wsb + p->wsoff;
  __global const uint4 *xq = (__global const uint4 *)ws;
  __global const float *xs = (__global const float *)(ws + (size_t)R * LCM_U);
  __local float *Asc = (__local float *)Ss, *Aof = Asc + TM, *Bsc = Aof + TM, *Bxs = Bsc + TN;

  /* Staging tasks: A, oc4 block ab and row group akg (8 of 4 rows) of the tile, successive items
   * reading successive rows; B, half bh of column bc's unit record, successive items reading
   * successive 16 bytes (the first half's item also loads the column's scales). */
  const int akg = lid % 8, ab = lid / 8, awb = (lid < TM * 2 && m0 / 4 + ab < p->ob) ? g * p->ob + m0 / 4 + ab : -1;
  const int bc = lid / 2, bh = lid % 2, bon = lid < TN * 2;
  int cy = -(1 << 29), cx = 0, cbase = 0, cin0 = 0;
  if (bon && n0 + bc < N) {
    int n = n0 + bc, img = n / P, q = n - img * P, oy = q / p->ow, ox = q - oy * p->ow;
    cy = oy * p->sh - p->pt, cx = ox * p->sw - p->pl;
    cbase = (img * p->groups + g) * NU * HW;
    cin0 = img * p->in_sn + g * p->cin_g * p->in_sc;
  }
  float bf[LCM_U]; /* fused: the column's unit, coded at the next store */
  bool bok = false;
LCM_UNROLL
  for (int j = 0; j < LCM_U; j++) bf[j] = 0.0f;
  /* A's scale tasks: row lid (its oc4 block's lane). */
  const int sm = m0 + lid, swb = (lid < TM && sm < M) ? g * p->ob + sm / 4 : -1;

  int4 acc[8][2];
  float4 accf[8][2];
LCM_UNROLL
  for (int i = 0; i < RM; i++)
LCM_UNROLL
    for (int j = 0; j < RN / 4; j++) accf[i][j] = (float4)(0.0f);
  const int tx = lid % (TN / RN), ty = lid / (TN / RN);

  uint4 av = (uint4)(0), bv = (uint4)(0);
  float asv = 0.0f, aov = 0.0f, bsv = 0.0f, bxv = 0.0f;
  int tap = tbeg / NU, u = tbeg - (tbeg / NU) * NU;
  for (int t = 0; t <= ntiles; t++) {
    if (t > 0) {
      if (FUSED && bon) lcm_code(bf, bok, bh, &bv, &bsv, &bxv);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < TM * 2) As[akg * LDA4 + ab] = awb >= 0 ? lcm_lanes(av) : (uint4)(0);
      if (bon) {
        Bs[(4 * bh + 0) * TN + bc] = bv.x;
        Bs[(4 * bh + 1) * TN + bc] = bv.y;
        Bs[(4 * bh + 2) * TN + bc] = bv.z;
        Bs[(4 * bh + 3) * TN + bc] = bv.w;
      }
      if (lid < TM) Asc[lid] = asv, Aof[lid] = aov;
      if (bon && bh == 0) Bsc[bc] = bsv, Bxs[bc] = bxv;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t < ntiles) {
      const int ky = tap / p->kw, kx = tap - ky * p->kw, c0 = u * LCM_U, k0 = tap * p->cin_g + c0;
      if (awb >= 0) av = lcm_wload(w, p->K, awb, k0 + 4 * akg, p->cin_g - c0 - 4 * akg);
      const int iy = cy + ky * p->dh, ix = cx + kx * p->dw;
      const bool ok = (uint)iy < (uint)p->ih && (uint)ix < (uint)p->iw;
      const int rec = cbase + u * HW + iy * p->iw + ix;
      bv = (uint4)(0);
      if (FUSED) {
        bok = bon && ok;
        if (bok) lcm_unit_load(in, bias, p, cin0 + c0 * p->in_sc + iy * p->in_sh + ix * p->in_sw, g * p->cin_g + c0,
                               p->cin_g - c0, bf);
      } else if (bon && ok) {
        bv = xq[2 * rec + bh];
      }
      if (!FUSED && bon && bh == 0) {
        bsv = ok ? xs[rec] : 0.0f;
#if ASYM
        bxv = ok ? xs[R + rec] : 0.0f;
#endif
      }
      if (swb >= 0) {
        const int si = (swb * p->nblk + tap * p->bpt + c0 / p->bsz) * 4 + (sm & 3);
        asv = sc[si];
#if ASYM
        aov = of[si];
#endif
      } else {
        asv = aov = 0.0f;
      }
      if (++u == NU) u = 0, tap++;
    }
    if (t > 0) {
LCM_UNROLL
      for (int i = 0; i < RM; i++)
LCM_UNROLL
        for (int j = 0; j < RN / 4; j++) acc[i][j] = (int4)(0x4B400000);
LCM_UNROLL
      for (int kg = 0; kg < LCM_U / 4; kg++) {
        uint4 a[2], b[2];
LCM_UNROLL
        for (int i = 0; i < RM / 4; i++) a[i] = As[kg * LDA4 + i * (TM / RM) + ty];
LCM_UNROLL
        for (int j = 0; j < RN / 4; j++) b[j] = ((__local const uint4 *)(Bs + kg * TN))[j * (TN / RN) + tx];
LCM_UNROLL
        for (int i = 0; i < RM / 4; i++)
LCM_UNROLL
          for (int j = 0; j < RN / 4; j++) {
            acc[i * 4 + 0][j] = lcm_dot4x4(a[i].x, b[j], acc[i * 4 + 0][j]);
            acc[i * 4 + 1][j] = lcm_dot4x4(a[i].y, b[j], acc[i * 4 + 1][j]);
            acc[i * 4 + 2][j] = lcm_dot4x4(a[i].z, b[j], acc[i * 4 + 2][j]);
            acc[i * 4 + 3][j] = lcm_dot4x4(a[i].w, b[j], acc[i * 4 + 3][j]);
          }
      }
      /* The sums started at 0x4B400000, so each is the float 1.5 * 2^23 + isum, exact for
       * |isum| < 2^22 (here <= 32 * 128 * 127): one subtraction, no conversion instruction. */
      float4 xsc[2];
#if ASYM
      float4 xsm[2];
#endif
LCM_UNROLL
      for (int j = 0; j < RN / 4; j++) {
        xsc[j] = ((__local const float4 *)Bsc)[j * (TN / RN) + tx];
#if ASYM
        xsm[j] = ((__local const float4 *)Bxs)[j * (TN / RN) + tx];
#endif
      }
LCM_UNROLL
      for (int i = 0; i < RM / 4; i++) {
        const float4 s4 = ((__local const float4 *)Asc)[i * (TM / RM) + ty];
#if ASYM
        const float4 o4 = ((__local const float4 *)Aof)[i * (TM / RM) + ty];
#endif
LCM_UNROLL
        for (int uu = 0; uu < 4; uu++) {
          const float s = lcd_lane(s4, uu);
#if ASYM
          const float o = lcd_lane(o4, uu);
#endif
LCM_UNROLL
          for (int j = 0; j < RN / 4; j++) {
            const float4 f = as_float4(acc[i * 4 + uu][j]) - 12582912.0f;
            accf[i * 4 + uu][j] = mad(f * xsc[j], (float4)(s), accf[i * 4 + uu][j]);
#if ASYM
            accf[i * 4 + uu][j] = mad(xsm[j], (float4)(o), accf[i * 4 + uu][j]);
#endif
          }
        }
      }
    }
  }

  /* Row m = m0 + i*(4*TM/RM) + ty*4 + uu, column n = n0 + j*(4*TN/RN) + tx*4 + v. */
LCM_UNROLL
  for (int j = 0; j < RN / 4; j++)
LCM_UNROLL
    for (int v = 0; v < 4; v++) {
      const int n = n0 + j * (4 * TN / RN) + tx * 4 + v;
      if (n >= N) continue;
      const int img = n / P, q = n - img * P, y = q / p->ow, x = q - y * p->ow;
LCM_UNROLL
      for (int i = 0; i < RM / 4; i++)
LCM_UNROLL
        for (int uu = 0; uu < 4; uu++) {
          const int m = m0 + i * (4 * TM / RM) + ty * 4 + uu;
          if (m >= M) continue;
          const float r = lcd_lane(accf[i * 4 + uu][j], v);
          if (SPLIT)
            ((__global float *)wsb)[((g * p->ksplit + sk) * M + m) * N + n] = r;
          else
            lc_store(out, bias, res, p, img, g * M + m, y, x, r);
        }
    }
  (void)T;
}

#define LCM_KERNEL(NAME, TM, TN, RM, RN, FUSED)                                                    \
  __kernel __attribute__((reqd_work_group_size((TM / RM) * (TN / RN), 1, 1))) void NAME(                   \
      LC_KERNEL_ARGS, __global uchar *restrict ws) {                                                       \
    __local uint4 As[(LCM_U / 4) * LCM_LDA(TM) / 4];                                                       \
    __local uint4 Bs[(LCM_U / 4) * TN / 4];                                                                \
    __local float4 Ss[(2 * TM + 2 * TN) / 4];                                                              \
    lcm_gemm(in, w, sc, of, bias, res, out, ws, &p, As, (__local uint *)Bs, Ss, TM, TN, RM, RN, FUSED);    \
  }

/* Tiles (cl_fam_gemmq.c holds the same table): name, TM, TN, RM, RN; 2 * TM and 2 * TN staging
 * tasks must not exceed the work items. Split-K runs write partial sums (gemm_reduce of
 * conv_gemm.cl adds them and applies the epilogue). */
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_128x128)
LCM_KERNEL(gemmq_128x128, 128, 128, 8, 8, 0)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_128x64)
LCM_KERNEL(gemmq_128x64, 128, 64, 8, 4, 0)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_64x128)
LCM_KERNEL(gemmq_64x128, 64, 128, 4, 8, 0)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_64x64)
LCM_KERNEL(gemmq_64x64, 64, 64, 4, 4, 0)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_32x32)
LCM_KERNEL(gemmq_32x32, 32, 32, 4, 4, 0)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_f64x64)
LCM_KERNEL(gemmq_f64x64, 64, 64, 4, 4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemmq_f32x32)
LCM_KERNEL(gemmq_f32x32, 32, 32, 4, 4, 1)
#endif
