/* Winograd F(2x2, 3x3) convolution (family "wino", cl_fam_wino.c): 3x3, stride 1, dilation 1, one
 * group, fp32 weights. Output tiles of 2x2 pixels, P = n * th * tw of them (th = ceil(oh / 2)).
 *   wino_wtrans (once, at prepare): U[xi][c][o] = (G g G^T)[xi] of weight (o, c), xi = 4 * i + j
 *   wino_itrans:  V[xi][c][t] = (B^T d B)[xi] of the 4x4 input patch of tile t, channel c
 *   wino_gemm_*:  M[xi][o][t] = sum_c U[xi][c][o] V[xi][c][t]   (16 independent GEMMs)
 *   wino_otrans:  the 2x2 outputs A^T M A, then bias, residual, activation (lc_store)
 * Every matrix is zero-padded (c to Cp, o to Op, t to Pp: multiples of the GEMM tiles), so the
 * GEMM has no bounds tests. U lives in its own buffer, V and M in the conv's workspace (M at
 * float offset moff). */

#if LC_ALL_KERNELS || defined(LC_WANT_wino_wtrans)
/* Global size [Op, Cp]. U = G g G^T with G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]. */
__kernel void wino_wtrans(__global const float *restrict w, __global float *restrict u, const lc_cl_conv_args p,
                          const int Cp, const int Op) {
  const int o = get_global_id(0), c = get_global_id(1);
  if (o >= Op || c >= Cp) return;
  const int O = p.cout_g;
  float g[3][3], t[4][3];
  for (int ky = 0; ky < 3; ky++)
    for (int kx = 0; kx < 3; kx++)
      g[ky][kx] = o < O && c < p.cin_g ? w[((o / 4) * p.K + (ky * 3 + kx) * p.cin_g + c) * 4 + o % 4] : 0.0f;
  for (int j = 0; j < 3; j++) { /* t = G g */
    t[0][j] = g[0][j];
    t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
    t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
    t[3][j] = g[2][j];
  }
  for (int i = 0; i < 4; i++) { /* U = t G^T */
    float r[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
    for (int j = 0; j < 4; j++) u[((i * 4 + j) * Cp + c) * Op + o] = r[j];
  }
}
#endif

#if LC_ALL_KERNELS || defined(LC_WANT_wino_itrans)
/* Global size [Pp, Cp]: tiles fastest, so the 16 stores of a warp are 16 coalesced rows. B^T =
 * [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
__kernel void wino_itrans(__global const float *restrict in, __global float *restrict v, const lc_cl_conv_args p,
                          const int Cp, const int Pp) {
  const int t = get_global_id(0), c = get_global_id(1);
  if (t >= Pp || c >= Cp) return;
  const int tw = (p.ow + 1) / 2, th = (p.oh + 1) / 2;
  float d[4][4];
  if (t < p.n * th * tw && c < p.cin_g) {
    const int img = t / (th * tw), q = t - img * th * tw, ty = q / tw, tx = q - ty * tw;
    const int y0 = ty * 2 - p.pt, x0 = tx * 2 - p.pl;
    __global const float *x = in + img * p.in_sn + c * p.in_sc;
    for (int i = 0; i < 4; i++) {
      const int y = y0 + i;
      for (int j = 0; j < 4; j++) {
        const int xx = x0 + j;
        d[i][j] = y >= 0 && y < p.ih && xx >= 0 && xx < p.iw ? x[y * p.in_sh + xx * p.in_sw] : 0.0f;
      }
    }
  } else {
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) d[i][j] = 0.0f;
  }
  float e[4][4];
  for (int j = 0; j < 4; j++) { /* e = B^T d */
    e[0][j] = d[0][j] - d[2][j];
    e[1][j] = d[1][j] + d[2][j];
    e[2][j] = d[2][j] - d[1][j];
    e[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; i++) { /* V = e B */
    float r[4] = {e[i][0] - e[i][2], e[i][1] + e[i][2], e[i][2] - e[i][1], e[i][1] - e[i][3]};
    for (int j = 0; j < 4; j++) v[((i * 4 + j) * Cp + c) * Pp + t] = r[j];
  }
}
#endif

/* C[Op][Pp] = A[Cp][Op]^T B[Cp][Pp] for matrix xi = group id 2; TM x TN tile per work-group,
 * 4x4 per work item, TK rows of K staged in local memory per step. */
#ifdef POCL_DEVICE_ADDRESS_BITS
#define LCW_UNROLL _Pragma("unroll 1")
#else
#define LCW_UNROLL _Pragma("unroll")
#endif
#define LCW_TK 16

static inline __attribute__((always_inline)) void
lcw_gemm(__global const float *restrict u, __global const float *restrict v, __global float *restrict m,
         const int Cp, const int Op, const int Pp, __local float *As, __local float *Bs, const int TM, const int TN) {
  const int T = (TM / 4) * (TN / 4), lid = get_local_id(0);
  const int xi = get_group_id(2), n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM;
  __global const float *A = u + xi * Cp * Op + m0, *B = v + xi * Cp * Pp + n0;
  const int tx = lid % (TN / 4), ty = lid / (TN / 4);
  float4 acc[4] = {(float4)(0.0f), (float4)(0.0f), (float4)(0.0f), (float4)(0.0f)};
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
      const float4 a = vload4(ty, As + k * TM), b = vload4(tx, Bs + k * TN);
      acc[0] = mad((float4)(a.x), b, acc[0]);
      acc[1] = mad((float4)(a.y), b, acc[1]);
      acc[2] = mad((float4)(a.z), b, acc[2]);
      acc[3] = mad((float4)(a.w), b, acc[3]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  __global float *C = m + xi * Op * Pp + (m0 + ty * 4) * Pp + n0 + tx * 4;
  for (int i = 0; i < 4; i++) vstore4(acc[i], 0, C + i * Pp);
}

#define LCW_GEMM_KERNEL(NAME, TM, TN)                                                                        \
  __kernel __attribute__((reqd_work_group_size((TM / 4) * (TN / 4), 1, 1))) void NAME(                       \
      __global const float *restrict u, __global float *ws, const int moff, const int Cp, const int Op,     \
      const int Pp) {                                                                                        \
    __local float As[LCW_TK * TM], Bs[LCW_TK * TN];                                                          \
    lcw_gemm(u, ws, ws + moff, Cp, Op, Pp, As, Bs, TM, TN);                                                  \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_wino_gemm_64x64)
LCW_GEMM_KERNEL(wino_gemm_64x64, 64, 64)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wino_gemm_32x32)
LCW_GEMM_KERNEL(wino_gemm_32x32, 32, 32)
#endif

#if LC_ALL_KERNELS || defined(LC_WANT_wino_otrans)
/* Global size [P, O]. A^T = [1 1 1 0; 0 1 -1 -1]. */
__kernel void wino_otrans(__global const float *restrict ws, const int moff, __global const float *restrict bias,
                          __global const float *restrict res, __global float *restrict out, const lc_cl_conv_args p,
                          const int Op, const int Pp) {
  const int t = get_global_id(0), o = get_global_id(1);
  const int tw = (p.ow + 1) / 2, th = (p.oh + 1) / 2;
  if (t >= p.n * th * tw || o >= p.cout_g) return;
  __global const float *m = ws + moff;
  float s[4][4];
  for (int i = 0; i < 16; i++) s[i / 4][i % 4] = m[(i * Op + o) * Pp + t];
  float e[2][4];
  for (int j = 0; j < 4; j++) { /* e = A^T s */
    e[0][j] = s[0][j] + s[1][j] + s[2][j];
    e[1][j] = s[1][j] - s[2][j] - s[3][j];
  }
  const int img = t / (th * tw), q = t - img * th * tw, ty = q / tw, tx = q - ty * tw;
  for (int i = 0; i < 2; i++) {
    const float y0 = e[i][0] + e[i][1] + e[i][2], y1 = e[i][1] - e[i][2] - e[i][3]; /* e A */
    const int y = ty * 2 + i;
    if (y >= p.oh) break;
    lc_store(out, bias, res, &p, img, o, y, tx * 2, y0);
    if (tx * 2 + 1 < p.ow) lc_store(out, bias, res, &p, img, o, y, tx * 2 + 1, y1);
  }
}
#endif
