/* MatMul / Gemm whose B is not a constant, and ConvTranspose, on the device (cl_ops_mm.c). Gemm
 * and MatMul with constant weights run as 1x1 convs through the conv families instead. */

/* g = {M, N, K, nb, batch dims[6], A batch strides[6], B batch strides[6], A row stride, A column
 * stride, B row stride, B column stride, has_c, C row stride, C column stride}. One item per output. */
#if LC_ALL_KERNELS || defined(LC_WANT_matmul_naive)
__kernel void matmul_naive(__global const float *a, __global const float *b, __global const float *c,
                           __global float *y, __constant const int *g, int n, float alpha, float beta) {
  int i = get_global_id(0);
  if (i >= n) return;
  int M = g[0], N = g[1], K = g[2];
  int j = i % N, t = i / N, r = t % M, bt = t / M, oa = 0, ob = 0;
  for (int d = g[3] - 1; d >= 0; d--) {
    int q = bt / g[4 + d], k = bt - q * g[4 + d];
    oa += k * g[10 + d];
    ob += k * g[16 + d];
    bt = q;
  }
  __global const float *pa = a + oa + r * g[22];
  __global const float *pb = b + ob + j * g[25];
  float acc = 0.0f;
  for (int p = 0; p < K; p++) acc = mad(pa[p * g[23]], pb[p * g[24]], acc);
  acc *= alpha;
  if (g[26]) acc += beta * c[r * g[27] + j * g[28]];
  y[i] = acc;
}
#endif

inline float mm_act(int act, float v, float lo, float hi, float al) {
  switch (act) {
  case 1: return fmax(v, 0.0f);
  case 2: return fmin(fmax(v, lo), hi);
  case 3: return v < 0.0f ? v * al : v;
  case 4: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
  default: return v;
  }
}

/* The epilogue of conv_transpose_k2s2 for output element o. */
inline void convt_store(__global float *y, __global const float *res, __constant const int *g,
                        __constant const float *f, int o, float acc) {
  if (g[18]) acc += res[o];
  y[o] = mm_act(g[16], acc, f[0], f[1], f[2]) * f[3] + f[4];
}

/* ConvTranspose with kernel = stride = 2x2, no padding or dilation (the DB head's upsampling):
 * an input pixel feeds one 2x2 patch per output channel, so a work item computes that patch for
 * one (image, channel, input pixel): no tap search, the index math once per 4 outputs (the
 * gather below spent ~90 us on PP-OCR-det-like's 24->24 at 160x160 on the H200). */
#if LC_ALL_KERNELS || defined(LC_WANT_conv_transpose_k2s2)
__kernel void conv_transpose_k2s2(__global const float *x, __global const float *w, __global const float *bias,
                                  __global const float *res, __global float *y, __constant const int *g,
                                  __constant const float *f, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int C = g[1], H = g[2], W = g[3], M = g[4], G = g[5], OW = g[9];
  int iw = i % W, t = i / W, ih = t % H, t2 = t / H, m = t2 % M, b = t2 / M;
  int Cg = C / G, Mg = M / G, grp = m / Mg, mm = m % Mg, HW = H * W;
  __global const float *px = x + ((b * C + grp * Cg) * H + ih) * W + iw;
  __global const float4 *pw = (__global const float4 *)w + grp * Cg * Mg + mm; /* [C][Mg][2][2]: a float4 */
  float4 acc = (float4)(g[17] ? bias[m] : 0.0f);
  for (int c = 0; c < Cg; c++) acc = mad((float4)(px[c * HW]), pw[c * Mg], acc);
  int o = ((b * M + m) * g[8] + 2 * ih) * OW + 2 * iw;
  convt_store(y, res, g, f, o, acc.x);
  convt_store(y, res, g, f, o + 1, acc.y);
  convt_store(y, res, g, f, o + OW, acc.z);
  convt_store(y, res, g, f, o + OW + 1, acc.w);
}
#endif

/* ConvTranspose as a gather: each output element sums the inputs whose taps land on it.
 * g = {N, C, H, W, M, group, KH, KW, OH, OW, sh, sw, dh, dw, pt, pl, act, has_bias, has_res};
 * f = {act_min, act_max, act_alpha, post_mul, post_add}; weights [C][M/group][KH][KW]. */
#if LC_ALL_KERNELS || defined(LC_WANT_conv_transpose)
__kernel void conv_transpose(__global const float *x, __global const float *w, __global const float *bias,
                             __global const float *res, __global float *y, __constant const int *g,
                             __constant const float *f, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int C = g[1], H = g[2], W = g[3], M = g[4], G = g[5], KH = g[6], KW = g[7], OH = g[8], OW = g[9];
  int ow = i % OW, t = i / OW, oh = t % OH, t2 = t / OH, m = t2 % M, b = t2 / M;
  int Cg = C / G, Mg = M / G, grp = m / Mg, mm = m % Mg;
  float acc = g[17] ? bias[m] : 0.0f;
  for (int kh = 0; kh < KH; kh++) {
    int yn = oh + g[14] - kh * g[12];
    if (yn < 0 || yn % g[10]) continue;
    int ih = yn / g[10];
    if (ih >= H) continue;
    for (int kw = 0; kw < KW; kw++) {
      int xn = ow + g[15] - kw * g[13];
      if (xn < 0 || xn % g[11]) continue;
      int iw = xn / g[11];
      if (iw >= W) continue;
      __global const float *px = x + ((b * C + grp * Cg) * H + ih) * W + iw;
      __global const float *pw = w + ((grp * Cg) * Mg + mm) * KH * KW + kh * KW + kw;
      for (int c = 0; c < Cg; c++) acc = mad(px[c * H * W], pw[c * Mg * KH * KW], acc);
    }
  }
  if (g[18]) acc += res[i];
  acc = mm_act(g[16], acc, f[0], f[1], f[2]);
  y[i] = acc * f[3] + f[4];
}
#endif
