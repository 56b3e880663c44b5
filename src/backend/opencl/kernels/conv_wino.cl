/* Winograd F(m x m, 3x3) convolution, m = 2 or 4 (family "wino", cl_fam_wino.c): 3x3, stride 1,
 * dilation 1, one group, fp32 weights. Output tiles of m x m pixels, P = n * th * tw of them
 * (th = ceil(oh / m)); a = m + 2 input rows per tile, X = a * a transformed values per tile.
 *   wino_wtrans<m> (once, at prepare): U[xi][c][o] = (G g G^T)[xi] of weight (o, c)
 *   wino_itrans<m>:  V[xi][c][t] = (B^T d B)[xi] of the a x a input patch of tile t, channel c
 *   wino_gemm_*:     M[xi][o][t] = sum_c U[xi][c][o] V[xi][c][t]   (X independent GEMMs)
 *   wino_otrans<m>:  the m x m outputs A^T M A, then bias, residual, activation (lc_store)
 * xi = a * i + j. Matrices of Lavin & Gray's F(2x2, 3x3) and F(4x4, 3x3). Every matrix is
 * zero-padded (c to Cp, o to Op, t to Pp: multiples of the GEMM tiles), so the GEMM has no bounds
 * tests. U lives in its own buffer, V and M in the conv's workspace (M at float offset moff). */

/* The 1-D transforms, applied to columns then rows. */
inline void lcw_g2(const float *g, float *t) { /* G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1] */
  t[0] = g[0];
  t[1] = 0.5f * (g[0] + g[1] + g[2]);
  t[2] = 0.5f * (g[0] - g[1] + g[2]);
  t[3] = g[2];
}
inline void lcw_g4(const float *g, float *t) {
  t[0] = 0.25f * g[0];
  t[1] = (-1.0f / 6) * (g[0] + g[1] + g[2]);
  t[2] = (-1.0f / 6) * (g[0] - g[1] + g[2]);
  t[3] = (1.0f / 24) * g[0] + (1.0f / 12) * g[1] + (1.0f / 6) * g[2];
  t[4] = (1.0f / 24) * g[0] - (1.0f / 12) * g[1] + (1.0f / 6) * g[2];
  t[5] = g[2];
}
inline void lcw_b2(const float *d, float *e) { /* B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] */
  e[0] = d[0] - d[2];
  e[1] = d[1] + d[2];
  e[2] = d[2] - d[1];
  e[3] = d[1] - d[3];
}
inline void lcw_b4(const float *d, float *e) {
  e[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
  e[1] = -4.0f * (d[1] + d[2]) + d[3] + d[4];
  e[2] = 4.0f * (d[1] - d[2]) - d[3] + d[4];
  e[3] = 2.0f * (d[3] - d[1]) - d[2] + d[4];
  e[4] = 2.0f * (d[1] - d[3]) - d[2] + d[4];
  e[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
}
inline void lcw_a2(const float *m, float *y) { /* A^T = [1 1 1 0; 0 1 -1 -1] */
  y[0] = m[0] + m[1] + m[2];
  y[1] = m[1] - m[2] - m[3];
}
inline void lcw_a4(const float *m, float *y) {
  y[0] = m[0] + m[1] + m[2] + m[3] + m[4];
  y[1] = m[1] - m[2] + 2.0f * (m[3] - m[4]);
  y[2] = m[1] + m[2] + 4.0f * (m[3] + m[4]);
  y[3] = m[1] - m[2] + 8.0f * (m[3] - m[4]) + m[5];
}

/* dst = F applied to every column j < NC of src (NI rows in, NO rows out). */
#define LCW_COLUMNS(src, dst, NC, NI, NO, F)                                                                 \
  for (int j_ = 0; j_ < (NC); j_++) {                                                                        \
    float ci_[6], co_[6];                                                                                    \
    for (int i_ = 0; i_ < (NI); i_++) ci_[i_] = src[i_][j_];                                                 \
    F(ci_, co_);                                                                                             \
    for (int i_ = 0; i_ < (NO); i_++) dst[i_][j_] = co_[i_];                                                 \
  }

/* Global size [Op, Cp]. */
#define LCW_WTRANS(NAME, M, GT)                                                                              \
  __kernel void NAME(__global const float *restrict w, __global float *restrict u, const lc_cl_conv_args p,  \
                     const int Cp, const int Op) {                                                           \
    const int o = get_global_id(0), c = get_global_id(1), A = M + 2;                                         \
    if (o >= Op || c >= Cp) return;                                                                          \
    float g[3][3], t[6][3], r[6];                                                                            \
    for (int ky = 0; ky < 3; ky++)                                                                           \
      for (int kx = 0; kx < 3; kx++)                                                                         \
        g[ky][kx] =                                                                                          \
            o < p.cout_g && c < p.cin_g ? w[((o / 4) * p.K + (ky * 3 + kx) * p.cin_g + c) * 4 + o % 4] : 0.0f; \
    LCW_COLUMNS(g, t, 3, 3, A, GT)                                                                           \
    for (int i = 0; i < A; i++) {                                                                            \
      GT(t[i], r);                                                                                           \
      for (int j = 0; j < A; j++) u[((i * A + j) * Cp + c) * Op + o] = r[j];                                 \
    }                                                                                                        \
  }

/* Global size [Pp, Cp]: tiles fastest, so a warp's stores are coalesced rows. */
#define LCW_ITRANS(NAME, M, BT)                                                                              \
  __kernel void NAME(__global const float *restrict in, __global float *restrict v, const lc_cl_conv_args p, \
                     const int Cp, const int Pp, __global const float *restrict bias) {                      \
    const int t = get_global_id(0), c = get_global_id(1), A = M + 2;                                         \
    if (t >= Pp || c >= Cp) return;                                                                          \
    const int tw = (p.ow + M - 1) / M, th = (p.oh + M - 1) / M;                                              \
    float d[6][6], e[6][6], r[6];                                                                            \
    const int ok = t < p.n * th * tw && c < p.cin_g;                                                         \
    const int img = t / (th * tw), q = t - img * th * tw, ty = q / tw, tx = q - ty * tw;                     \
    const int y0 = ty * M - p.pt, x0 = tx * M - p.pl;                                                        \
    __global const float *x = in + img * p.in_sn + c * p.in_sc;                                              \
    const int M4 = 4 * p.groups * p.cout_g; /* the input affine (cl_conv_args.h); groups is 1 here */        \
    const float xs = p.in_aff && ok ? bias[M4 + c] : 1.0f, xt = p.in_aff && ok ? bias[M4 + p.cin_g + c] : 0.0f; \
    for (int i = 0; i < A; i++)                                                                              \
      for (int j = 0; j < A; j++) {                                                                          \
        const int y = y0 + i, xx = x0 + j;                                                                   \
        d[i][j] = ok && y >= 0 && y < p.ih && xx >= 0 && xx < p.iw ? fma(x[y * p.in_sh + xx * p.in_sw], xs, xt) \
                                                                   : 0.0f;                                   \
      }                                                                                                      \
    LCW_COLUMNS(d, e, A, A, A, BT)                                                                           \
    for (int i = 0; i < A; i++) {                                                                            \
      BT(e[i], r);                                                                                           \
      for (int j = 0; j < A; j++) v[((i * A + j) * Cp + c) * Pp + t] = r[j];                                 \
    }                                                                                                        \
  }

/* C[Op][Pp] = A[Cp][Op]^T B[Cp][Pp] for matrix xi = group id 2; TM x TN tile per work-group, RM x RN
 * per work item (float4 groups strided by TM / RM and TN / RN, so a warp's local reads are
 * broadcasts or consecutive), TK rows of K staged in local memory per step. */
#ifdef POCL_DEVICE_ADDRESS_BITS
#define LCW_UNROLL _Pragma("unroll 1")
#else
#define LCW_UNROLL _Pragma("unroll")
#endif
#define LCW_TK 16

static inline __attribute__((always_inline)) void
lcw_gemm(__global const float *restrict u, __global const float *restrict v, __global float *restrict m,
         const int Cp, const int Op, const int Pp, __local float *As, __local float *Bs, const int TM, const int TN,
         const int RM, const int RN) {
  const int T = (TM / RM) * (TN / RN), lid = get_local_id(0);
  const int xi = get_group_id(2), n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM;
  __global const float *A = u + xi * Cp * Op + m0, *B = v + xi * Cp * Pp + n0;
  const int tx = lid % (TN / RN), ty = lid / (TN / RN);
  float4 acc[8][2]; /* [row][column group]: RM <= 8, RN <= 8 */
LCW_UNROLL
  for (int i = 0; i < RM; i++)
LCW_UNROLL
    for (int q = 0; q < RN / 4; q++) acc[i][q] = (float4)(0.0f);
  for (int k0 = 0; k0 < Cp; k0 += LCW_TK) {
LCW_UNROLL
    for (int i = lid; i < LCW_TK * TM / 4; i += T) {
      const int r = i / (TM / 4), c4 = i - r * (TM / 4);
      vstore4(vload4(0, A + (k0 + r) * Op + c4 * 4), 0, As + r * TM + c4 * 4);
    }
LCW_UNROLL
    for (int i = lid; i < LCW_TK * TN / 4; i += T) {
      const int r = i / (TN / 4), c4 = i - r * (TN / 4);
      vstore4(vload4(0, B + (k0 + r) * Pp + c4 * 4), 0, Bs + r * TN + c4 * 4);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
LCW_UNROLL
    for (int k = 0; k < LCW_TK; k++) {
      float4 b[2];
LCW_UNROLL
      for (int q = 0; q < RN / 4; q++) b[q] = vload4(tx + q * (TN / RN), Bs + k * TN);
LCW_UNROLL
      for (int r = 0; r < RM / 4; r++) {
        const float4 a = vload4(ty + r * (TM / RM), As + k * TM);
LCW_UNROLL
        for (int q = 0; q < RN / 4; q++) {
          acc[4 * r + 0][q] = mad((float4)(a.x), b[q], acc[4 * r + 0][q]);
          acc[4 * r + 1][q] = mad((float4)(a.y), b[q], acc[4 * r + 1][q]);
          acc[4 * r + 2][q] = mad((float4)(a.z), b[q], acc[4 * r + 2][q]);
          acc[4 * r + 3][q] = mad((float4)(a.w), b[q], acc[4 * r + 3][q]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  __global float *C = m + xi * Op * Pp + m0 * Pp + n0;
LCW_UNROLL
  for (int r = 0; r < RM / 4; r++)
LCW_UNROLL
    for (int i = 0; i < 4; i++)
LCW_UNROLL
      for (int q = 0; q < RN / 4; q++)
        vstore4(acc[4 * r + i][q], 0, C + ((ty + r * (TM / RM)) * 4 + i) * Pp + (tx + q * (TN / RN)) * 4);
}

#define LCW_GEMM_KERNEL(NAME, TM, TN, RM, RN)                                                                \
  __kernel __attribute__((reqd_work_group_size((TM / RM) * (TN / RN), 1, 1))) void NAME(                     \
      __global const float *restrict u, __global float *ws, const int moff, const int Cp, const int Op,     \
      const int Pp) {                                                                                        \
    __local float As[LCW_TK * TM], Bs[LCW_TK * TN];                                                          \
    lcw_gemm(u, ws, ws + moff, Cp, Op, Pp, As, Bs, TM, TN, RM, RN);                                          \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_wino_gemm_128x128)
LCW_GEMM_KERNEL(wino_gemm_128x128, 128, 128, 8, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_gemm_64x64)
LCW_GEMM_KERNEL(wino_gemm_64x64, 64, 64, 4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_gemm_32x32)
LCW_GEMM_KERNEL(wino_gemm_32x32, 32, 32, 4, 4)
#endif

/* Global size [P, O]. */
#define LCW_OTRANS(NAME, M, AT)                                                                              \
  __kernel void NAME(__global const float *restrict ws, const int moff, __global const float *restrict bias,  \
                     __global const float *restrict res, __global float *restrict out, const lc_cl_conv_args p, \
                     const int Op, const int Pp) {                                                           \
    const int t = get_global_id(0), o = get_global_id(1), A = M + 2;                                         \
    const int tw = (p.ow + M - 1) / M, th = (p.oh + M - 1) / M;                                              \
    if (t >= p.n * th * tw || o >= p.cout_g) return;                                                         \
    __global const float *m = ws + moff + o * Pp + t;                                                        \
    float s[6][6], e[4][6], y[4];                                                                            \
    for (int i = 0; i < A; i++)                                                                              \
      for (int j = 0; j < A; j++) s[i][j] = m[(i * A + j) * Op * Pp];                                        \
    LCW_COLUMNS(s, e, A, A, M, AT)                                                                           \
    const int img = t / (th * tw), q = t - img * th * tw, ty = q / tw, tx = q - ty * tw;                     \
    for (int i = 0; i < M && ty * M + i < p.oh; i++) {                                                       \
      AT(e[i], y);                                                                                           \
      for (int j = 0; j < M && tx * M + j < p.ow; j++)                                                     \
        lc_store(out, bias, res, &p, img, o, ty * M + i, tx * M + j, y[j]);                                  \
    }                                                                                                        \
  }

/* The transforms' kernels, m = 2 and 4 (each compiled alone on GPUs: -DLC_WANT_<name>). */
#if LC_ALL_KERNELS || defined(LC_WANT_wino_wtrans2)
LCW_WTRANS(wino_wtrans2, 2, lcw_g2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_wtrans4)
LCW_WTRANS(wino_wtrans4, 4, lcw_g4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_itrans2)
LCW_ITRANS(wino_itrans2, 2, lcw_b2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_itrans4)
LCW_ITRANS(wino_itrans4, 4, lcw_b4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_otrans2)
LCW_OTRANS(wino_otrans2, 2, lcw_a2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_otrans4)
LCW_OTRANS(wino_otrans4, 4, lcw_a4)
#endif
