/* Winograd F(m x m, 3x3) convolution, m = 2 or 4 (family "wino", cl_fam_wino.c): 3x3, stride 1,
 * dilation 1, one group, fp32 weights. Output tiles of m x m pixels, P = n * th * tw of them
 * (th = ceil(oh / m)); a = m + 2 input rows per tile, X = a * a transformed values per tile.
 *   wino_wtrans<m> (once, at prepare): U[xi][o / 4][c][o % 4] = (G g G^T)[xi] of weight (o, c)
 *   wino_itrans<m>:  V[xi][c][t] = (B^T d B)[xi] of the a x a input patch of tile t, channel c
 *   conv_gemm's tile: M[xi][o][t] = sum_c U[xi][o][c] V[xi][c][t]   (X independent GEMMs: a 1x1
 *                    conv of X groups over a 1 x P image, U in that family's weight layout, so the
 *                    Winograd route builds no GEMM program of its own on a cold start)
 *   wino_otrans<m>:  the m x m outputs A^T M A, then bias, residual, activation (lc_store)
 * xi = a * i + j. Matrices of Lavin & Gray's F(2x2, 3x3) and F(4x4, 3x3). c is zero-padded to Cp,
 * t strided by Pp. U lives in its own buffer, M and V in the conv's workspace (V at float offset
 * voff). */

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

/* Global size [ob * 4, Cp] (ob = p.ob, every lane of the last block written, zeros past cout_g). */
#define LCW_WTRANS(NAME, M, GT)                                                                              \
  __kernel void NAME(__global const float *restrict w, __global float *restrict u, const lc_cl_conv_args p,  \
                     const int Cp) {                                                                         \
    const int o = get_global_id(0), c = get_global_id(1), A = M + 2;                                         \
    if (o >= 4 * p.ob || c >= Cp) return;                                                                    \
    float g[3][3], t[6][3], r[6];                                                                            \
    for (int ky = 0; ky < 3; ky++)                                                                           \
      for (int kx = 0; kx < 3; kx++)                                                                         \
        g[ky][kx] =                                                                                          \
            o < p.cout_g && c < p.cin_g ? w[((o / 4) * p.K + (ky * 3 + kx) * p.cin_g + c) * 4 + o % 4] : 0.0f; \
    LCW_COLUMNS(g, t, 3, 3, A, GT)                                                                           \
    for (int i = 0; i < A; i++) {                                                                            \
      GT(t[i], r);                                                                                           \
      for (int j = 0; j < A; j++) u[(((i * A + j) * p.ob + o / 4) * Cp + c) * 4 + o % 4] = r[j];             \
    }                                                                                                        \
  }

/* Global size [Pp, Cp]: tiles fastest, so a warp's stores are coalesced rows. */
#define LCW_ITRANS(NAME, M, BT)                                                                              \
  __kernel void NAME(__global const float *restrict in, __global float *restrict ws, const lc_cl_conv_args p, \
                     const int Cp, const int Pp, __global const float *restrict bias, const int voff) {      \
    __global float *v = ws + voff;                                                                           \
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
