/* Data-moving operators of the model runner on the device (cl_ops_data.c): one work item per
 * element written, the innermost dim on consecutive items. Element types by size: u8, u32, u64
 * (any dtype moves as its bits). */

/* Strided copy: g = {nd, dims[8], src strides[8], dst strides[8], src offset, dst offset}, strides
 * in elements (negative for Slice's negative steps). Slice, Transpose, Expand, Split, Concat. */
#define LC_COPY(T, NAME)                                                                       \
  __kernel void NAME(__global const T *x, __global T *y, __constant const int *g, int n) {     \
    int i = get_global_id(0);                                                                  \
    if (i >= n) return;                                                                        \
    int s = g[25], d = g[26];                                                                  \
    for (int k = g[0] - 1; k >= 0; k--) {                                                      \
      int m = g[1 + k], q = i / m, r = i - q * m;                                              \
      s += r * g[9 + k];                                                                       \
      d += r * g[17 + k];                                                                      \
      i = q;                                                                                   \
    }                                                                                          \
    y[d] = x[s];                                                                               \
  }
#if LC_ALL_KERNELS || defined(LC_WANT_copy_u8)
LC_COPY(uchar, copy_u8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_copy_u32)
LC_COPY(uint, copy_u32)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_copy_u64)
LC_COPY(ulong, copy_u64)
#endif

/* Source index along one axis of Pad, -1 for the constant (mode 0 constant, 1 reflect, 2 edge, 3 wrap). */
inline int pad_src(int mode, int i, int d) {
  if (i >= 0 && i < d) return i;
  if (mode == 0) return -1;
  if (mode == 2) return i < 0 ? 0 : d - 1;
  if (mode == 3) return ((i % d) + d) % d;
  if (d == 1) return 0;
  int per = 2 * (d - 1);
  i = ((i % per) + per) % per;
  return i < d ? i : per - i;
}

/* g = {rank, mode, out dims[8], in dims[8], pads before[8], in strides[8]}. */
#define LC_PAD(T, NAME)                                                                          \
  __kernel void NAME(__global const T *x, __global T *y, __constant const int *g, int n, ulong cv) { \
    int i = get_global_id(0);                                                                    \
    if (i >= n) return;                                                                          \
    int o = i, s = 0, out = 0;                                                                   \
    for (int k = g[0] - 1; k >= 0; k--) {                                                        \
      int m = g[2 + k], q = o / m, r = o - q * m;                                                \
      int j = pad_src(g[1], r - g[18 + k], g[10 + k]);                                           \
      if (j < 0) out = 1;                                                                        \
      s += j * g[26 + k];                                                                        \
      o = q;                                                                                     \
    }                                                                                            \
    y[i] = out ? (T)cv : x[s];                                                                   \
  }
#if LC_ALL_KERNELS || defined(LC_WANT_pad_u8)
LC_PAD(uchar, pad_u8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_pad_u32)
LC_PAD(uint, pad_u32)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_pad_u64)
LC_PAD(ulong, pad_u64)
#endif

/* Gather along an axis: out[b][j][e] = x[b][idx[j]][e]; idx normalized on the host. */
#define LC_GATHER(T, NAME)                                                                         \
  __kernel void NAME(__global const T *x, __global T *y, __global const int *idx, int n, int ni,   \
                     int inner, int d) {                                                           \
    int i = get_global_id(0);                                                                      \
    if (i >= n) return;                                                                            \
    int e = i % inner, t = i / inner, j = t % ni, b = t / ni;                                      \
    y[i] = x[(b * d + idx[j]) * inner + e];                                                        \
  }
#if LC_ALL_KERNELS || defined(LC_WANT_gather_u8)
LC_GATHER(uchar, gather_u8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gather_u32)
LC_GATHER(uint, gather_u32)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gather_u64)
LC_GATHER(ulong, gather_u64)
#endif

/* Resize of the last two axes from per-axis tables (the CPU's): rows h0/h1 with weight hw,
 * columns w0/w1 with weight ww; nearest uses h0, w0 only. */
#if LC_ALL_KERNELS || defined(LC_WANT_resize2d)
__kernel void resize2d(__global const float *x, __global float *y, __global const int *h0, __global const int *h1,
                       __global const float *hw, __global const int *w0, __global const int *w1,
                       __global const float *ww, int n, int H, int W, int OH, int OW, int linear) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ow = i % OW, t = i / OW, oh = t % OH, pl = t / OH;
  __global const float *r0 = x + (pl * H + h0[oh]) * W;
  if (!linear) {
    y[i] = r0[w0[ow]];
    return;
  }
  __global const float *r1 = x + (pl * H + h1[oh]) * W;
  int a0 = w0[ow], a1 = w1[ow];
  float f = ww[ow];
  float top = r0[a0] + (r0[a1] - r0[a0]) * f;
  float bot = r1[a0] + (r1[a1] - r1[a0]) * f;
  y[i] = top + (bot - top) * hw[oh];
}
#endif

/* UpConcat (cl_ops_data.c): channels [c0, c0 + C) of the NCHW output y (CT channels) from up to k = 4
 * inputs, input j plain (mode 0) or read through its Resize's tables (1 nearest, 2 linear, as
 * resize2d): m[7 j ..] = {first channel, channels, H, W, mode, offset in tab (h0, h1, w0, w1),
 * offset in wt (weights of h1, w1)}. */
#if LC_ALL_KERNELS || defined(LC_WANT_concat_up4)
__kernel void concat_up4(__global const float *x0, __global const float *x1, __global const float *x2,
                         __global const float *x3, __global float *y, __global const int *tab,
                         __global const float *wt, __global const int *m, int n, int k, int C, int c0, int CT,
                         int OH, int OW) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ow = i % OW, t = i / OW, oh = t % OH;
  t /= OH;
  int c = t % C, b = t / C, j = 0;
  for (int q = 1; q < k; q++) j = c >= m[7 * q] ? q : j;
  __global const int *mj = m + 7 * j;
  __global const float *x = j == 0 ? x0 : j == 1 ? x1 : j == 2 ? x2 : x3;
  int H = mj[2], W = mj[3], mode = mj[4], pl = b * mj[1] + c - mj[0];
  float v;
  if (mode == 0) {
    v = x[(pl * OH + oh) * OW + ow];
  } else {
    __global const int *ti = tab + mj[5];
    __global const float *r0 = x + (pl * H + ti[oh]) * W;
    int a0 = ti[2 * OH + ow];
    if (mode == 1) {
      v = r0[a0];
    } else {
      __global const float *r1 = x + (pl * H + ti[OH + oh]) * W;
      int a1 = ti[2 * OH + OW + ow];
      float f = wt[mj[6] + OH + ow];
      float top = r0[a0] + (r0[a1] - r0[a0]) * f;
      float bot = r1[a0] + (r1[a1] - r1[a0]) * f;
      v = top + (bot - top) * wt[mj[6] + oh];
    }
  }
  y[((b * CT + c0 + c) * OH + oh) * OW + ow] = v;
}
#endif
