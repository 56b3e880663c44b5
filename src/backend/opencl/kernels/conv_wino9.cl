/* Winograd F(3x3, 3x3) for 9x9 convs (family "wino9", cl_fam_wino9.c): stride 1, dilation 1, one
 * group, fp32 weights. The 9x9 kernel is nine 3x3 sub-kernels (rows 3dy.., columns 3dx..). With
 * output tiles of 3x3 pixels, sub-kernel (dy, dx) of output tile (ty, tx) reads the 5x5 input patch
 * of tile (ty + dy, tx + dx) of a grid with stride 3: each patch is transformed once, and per
 * transformed value xi (25) the conv becomes a 3x3 conv over the tile grid,
 *   M[xi][o](ty, tx) = sum over c, dy, dx of U[xi][o][c](dy, dx) * V[xi][c](ty + dy, tx + dx),
 * i.e. one 3x3 conv of 25 groups, which family wide's tile kernel runs unchanged. 729
 * multiplications per (o, c) and 3x3 outputs become 225 (3.24x fewer).
 *   wino9_wtrans (once, at prepare): U in wide's weight layout (group xi, K = 9 C, row (dy*3+dx)*C + c)
 *   wino9_itrans: V[n][xi*C + c][i][j] = (B^T d B)[xi], d the 5x5 patch at (3i - pt, 3j - pl)
 *   conv_wide's tile: M's partial sums over input-channel chunks (wide's split-K layout)
 *   wino9_otrans: the chunks' sum, A^T M A, then bias, residual, activation (lc_store)
 * Points 0, 1, -1, 2 and infinity (exact rationals, checked: A^T (G g .* B^T d) is the correlation):
 *   G   = [1/2 0 0; -1/2 -1/2 -1/2; -1/6 1/6 -1/6; 1/6 1/3 2/3; 0 0 1]
 *   B^T = [2 -1 -2 1 0; 0 -2 -1 1 0; 0 2 -3 1 0; 0 -1 0 1 0; 0 2 -1 -2 1]
 *   A^T = [1 1 1 1 0; 0 1 -1 2 0; 0 1 1 4 1] */

inline void lc9_g(const float *g, float *t) {
  t[0] = 0.5f * g[0];
  t[1] = -0.5f * (g[0] + g[1] + g[2]);
  t[2] = (1.0f / 6) * (g[1] - g[0] - g[2]);
  t[3] = (1.0f / 6) * g[0] + (1.0f / 3) * g[1] + (2.0f / 3) * g[2];
  t[4] = g[2];
}
inline void lc9_b(const float *d, float *e) {
  e[0] = 2.0f * (d[0] - d[2]) - d[1] + d[3];
  e[1] = d[3] - 2.0f * d[1] - d[2];
  e[2] = 2.0f * d[1] - 3.0f * d[2] + d[3];
  e[3] = d[3] - d[1];
  e[4] = 2.0f * (d[1] - d[3]) - d[2] + d[4];
}
inline void lc9_a(const float *m, float *y) {
  y[0] = m[0] + m[1] + m[2] + m[3];
  y[1] = m[1] - m[2] + 2.0f * m[3];
  y[2] = m[1] + m[2] + 4.0f * m[3] + m[4];
}

/* Global size (4 * ob, cin_g, 9): output channel o, input channel c, sub-kernel dy * 3 + dx. Lanes
 * past cout_g get zeros (wide reads every lane of a block). p is the 9x9 conv's. */
__kernel void wino9_wtrans(__global const float *restrict w, __global float *restrict u, const lc_cl_conv_args p) {
  const int o = get_global_id(0), c = get_global_id(1), sub = get_global_id(2);
  if (o >= 4 * p.ob || c >= p.cin_g || sub >= 9) return;
  const int dy = sub / 3, dx = sub - 3 * dy;
  float g[3][3], t[5][3], r[5], col[3], tc[5];
  for (int ky = 0; ky < 3; ky++)
    for (int kx = 0; kx < 3; kx++)
      g[ky][kx] = o < p.cout_g ? w[((o / 4) * p.K + ((3 * dy + ky) * 9 + 3 * dx + kx) * p.cin_g + c) * 4 + o % 4] : 0.0f;
  for (int kx = 0; kx < 3; kx++) {
    for (int ky = 0; ky < 3; ky++) col[ky] = g[ky][kx];
    lc9_g(col, tc);
    for (int i = 0; i < 5; i++) t[i][kx] = tc[i];
  }
  for (int i = 0; i < 5; i++) {
    lc9_g(t[i], r);
    for (int j = 0; j < 5; j++) u[((((i * 5 + j) * p.ob + o / 4) * 9 + sub) * p.cin_g + c) * 4 + o % 4] = r[j];
  }
}

/* Global size (TYp * TXp rounded up, n * cin_g): tile (i, j) of the grid with the halo, for image n
 * and channel c; V starts voff floats into ws. Patches past the image transform zeros (the
 * columns to TXp, wide's aligned rows, included). */
__kernel void wino9_itrans(__global const float *restrict in, __global float *restrict ws, const lc_cl_conv_args p,
                           const int TYp, const int TXp, const int voff) {
  const int t = get_global_id(0), z = get_global_id(1);
  if (t >= TYp * TXp || z >= p.n * p.cin_g) return;
  const int i = t / TXp, j = t - i * TXp, n = z / p.cin_g, c = z - n * p.cin_g;
  const int y0 = 3 * i - p.pt, x0 = 3 * j - p.pl, base = n * p.in_sn + c * p.in_sc;
  float d[5][5], tt[5][5], col[5], e[5];
  for (int r = 0; r < 5; r++)
    for (int q = 0; q < 5; q++) {
      const int y = y0 + r, x = x0 + q, ok = y >= 0 && y < p.ih && x >= 0 && x < p.iw;
      const float v = in[ok ? base + y * p.in_sh + x * p.in_sw : base];
      d[r][q] = ok ? v : 0.0f;
    }
  for (int q = 0; q < 5; q++) {
    for (int r = 0; r < 5; r++) col[r] = d[r][q];
    lc9_b(col, e);
    for (int r = 0; r < 5; r++) tt[r][q] = e[r];
  }
  const int plane = TYp * TXp;
  __global float *v = ws + voff + (n * 25 * p.cin_g + c) * plane + t;
  for (int r = 0; r < 5; r++) {
    lc9_b(tt[r], e);
    for (int q = 0; q < 5; q++) v[(r * 5 + q) * p.cin_g * plane] = e[q];
  }
}

/* Global size (TY * TX rounded up, n * cout_g): output tile (ty, tx) of image n, channel o. The
 * partial sums are wide's: ws[((xi * ks + s) * cout_g + o) * cols + col], cols = n * TY * TX. */
__kernel void wino9_otrans(__global const float *restrict ws, __global const float *restrict bias,
                           __global const float *restrict res, __global float *restrict out, const lc_cl_conv_args p,
                           const int TY, const int TX, const int ks) {
  const int t = get_global_id(0), z = get_global_id(1);
  if (t >= TY * TX || z >= p.n * p.cout_g) return;
  const int ty = t / TX, tx = t - ty * TX, n = z / p.cout_g, o = z - n * p.cout_g;
  const int cols = p.n * TY * TX, col = n * TY * TX + t;
  float m[5][5], tt[3][5], row[5], y[3];
  for (int xi = 0; xi < 25; xi++) {
    float s = 0.0f;
    for (int k = 0; k < ks; k++) s += ws[((xi * ks + k) * p.cout_g + o) * cols + col];
    m[xi / 5][xi % 5] = s;
  }
  for (int q = 0; q < 5; q++) {
    for (int r = 0; r < 5; r++) row[r] = m[r][q];
    lc9_a(row, y);
    for (int r = 0; r < 3; r++) tt[r][q] = y[r];
  }
  for (int r = 0; r < 3; r++) {
    lc9_a(tt[r], y);
    for (int q = 0; q < 3; q++) {
      const int oy = 3 * ty + r, ox = 3 * tx + q;
      if (oy < p.oh && ox < p.ow) lc_store(out, bias, res, &p, n, o, oy, ox, y[q]);
    }
  }
}
