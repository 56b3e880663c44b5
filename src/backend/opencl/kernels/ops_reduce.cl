/* Pools, reductions and softmax of the model runner on the device (cl_ops_reduce.c). */

/* MaxPool / AveragePool, one work item per output element. g = {planes, H, W, OH, OW, kh, kw,
 * sh, sw, dh, dw, pt, pl, pb, pr, is_max, count_include_pad}. Taps are visited in the CPU's order
 * (kernel rows, then columns) so the sums round the same way. */
#if LC_ALL_KERNELS || defined(LC_WANT_pool2d)
__kernel void pool2d(__global const float *x, __global float *y, __constant const int *g, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int H = g[1], W = g[2], OH = g[3], OW = g[4];
  int ow = i % OW, t = i / OW, oh = t % OH, pl = t / OH;
  int y0 = oh * g[7] - g[11], x0 = ow * g[8] - g[12];
  int is_max = g[15];
  __global const float *p = x + pl * H * W;
  float acc = is_max ? -INFINITY : 0.0f;
  int ch = 0, cw = 0, ph = 0, pw = 0;
  for (int ky = 0; ky < g[5]; ky++) {
    int iy = y0 + ky * g[9];
    ph += iy >= -g[11] && iy < H + g[13];
    if (iy < 0 || iy >= H) continue;
    ch++;
    for (int kx = 0; kx < g[6]; kx++) {
      int ix = x0 + kx * g[10];
      if (ix < 0 || ix >= W) continue;
      float v = p[iy * W + ix];
      acc = is_max ? (v > acc ? v : acc) : acc + v;
    }
  }
  if (!is_max) {
    for (int kx = 0; kx < g[6]; kx++) {
      int ix = x0 + kx * g[10];
      cw += ix >= 0 && ix < W;
      pw += ix >= -g[12] && ix < W + g[14];
    }
    int cnt = g[16] ? ph * pw : ch * cw;
    acc *= cnt > 0 ? 1.0f / (float)cnt : 0.0f;
  }
  y[i] = acc;
}
#endif

/* Reductions: g = {nk, kept dims[8], kept strides[8], nr, reduced dims[8], reduced strides[8]}
 * (input strides, outermost first); kind 0 mean, 1 sum, 2 max, 3 min, 4 L1, 5 L2, 6 sum of
 * squares, 7 log-sum-exp, 8 product. Sums and products accumulate in double where the device
 * has it, as the CPU does (its float result then within 1 ulp of the exact one); max / min
 * propagate NaN, as the CPU's. */
inline int red_off(__constant const int *dims, __constant const int *st, int nd, int i) {
  int o = 0;
  for (int d = nd - 1; d >= 0; d--) {
    int q = i / dims[d];
    o += (i - q * dims[d]) * st[d];
    i = q;
  }
  return o;
}

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double racc;
#else
typedef float racc;
#endif

inline racc red_init(int kind) { return kind == 2 ? -INFINITY : kind == 3 ? INFINITY : kind == 8 ? 1.0f : 0.0f; }
inline racc red_term(int kind, float v) {
  racc x = v;
  return kind == 4 ? fabs(x) : kind == 5 || kind == 6 ? x * x : kind == 7 ? exp(x) : x;
}
inline racc red_comb(int kind, racc a, racc v) {
  return kind == 2 ? (v > a || isnan(v) ? v : a) : kind == 3 ? (v < a || isnan(v) ? v : a) : kind == 8 ? a * v : a + v;
}
inline racc red_step(int kind, racc a, float v) { return red_comb(kind, a, red_term(kind, v)); }
inline float red_fin(int kind, racc a, int cnt) {
  return (float)(kind == 0 ? a / (racc)cnt : kind == 5 ? sqrt(a) : kind == 7 ? log(a) : a);
}

/* One work item per output element (few elements reduced each). */
#if LC_ALL_KERNELS || defined(LC_WANT_reduce_item)
__kernel void reduce_item(__global const float *x, __global float *y, __constant const int *g, int n, int cnt,
                          int kind) {
  int i = get_global_id(0);
  if (i >= n) return;
  __global const float *p = x + red_off(g + 1, g + 9, g[0], i);
  racc acc = red_init(kind);
  for (int r = 0; r < cnt; r++) acc = red_step(kind, acc, p[red_off(g + 18, g + 26, g[17], r)]);
  y[i] = red_fin(kind, acc, cnt);
}
#endif

#define RED_LWS 64

/* One work group of RED_LWS items per output element (many elements reduced each). */
#if LC_ALL_KERNELS || defined(LC_WANT_reduce_group)
__kernel void reduce_group(__global const float *x, __global float *y, __constant const int *g, int n, int cnt,
                           int kind) {
  __local racc part[RED_LWS];
  int i = get_group_id(0), l = get_local_id(0);
  __global const float *p = x + red_off(g + 1, g + 9, g[0], i);
  racc acc = red_init(kind);
  for (int r = l; r < cnt; r += RED_LWS) acc = red_step(kind, acc, p[red_off(g + 18, g + 26, g[17], r)]);
  part[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RED_LWS / 2; s > 0; s >>= 1) {
    if (l < s) part[l] = red_comb(kind, part[l], part[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) y[i] = red_fin(kind, part[0], cnt);
}
#endif

#define RED_ROWS_LWS 256

/* Reduced elements contiguous (trailing axes: GlobalAveragePool, a last-axis mean): row i is
 * x[i * cnt ..], read in float4 when cnt allows, one work group of RED_ROWS_LWS per row. */
#if LC_ALL_KERNELS || defined(LC_WANT_reduce_rows_group)
__kernel void reduce_rows_group(__global const float *x, __global float *y, int n, int cnt, int kind) {
  __local racc part[RED_ROWS_LWS];
  int i = get_group_id(0), l = get_local_id(0);
  __global const float *p = x + (size_t)i * (size_t)cnt;
  racc acc = red_init(kind);
  if ((cnt & 3) == 0) {
    __global const float4 *p4 = (__global const float4 *)p;
    for (int r = l; r < cnt / 4; r += RED_ROWS_LWS) {
      float4 v = p4[r];
      acc = red_comb(kind, red_step(kind, red_step(kind, acc, v.x), v.y),
                     red_step(kind, red_term(kind, v.z), v.w));
    }
  } else {
    for (int r = l; r < cnt; r += RED_ROWS_LWS) acc = red_step(kind, acc, p[r]);
  }
  part[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RED_ROWS_LWS / 2; s > 0; s >>= 1) {
    if (l < s) part[l] = red_comb(kind, part[l], part[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) y[i] = red_fin(kind, part[0], cnt);
}
#endif

/* LayerNormalization, InstanceNormalization, GroupNormalization over rows of len (one work group
 * of RED_ROWS_LWS per row): the mean, then the mean square deviation (two passes: no
 * cancellation), both in racc as the CPU's double, then y = (x - mean) * inv * scale + bias with
 * scale / bias index (row % srows) * (len / every) + j / every (LayerNormalization: every 1,
 * srows 1; a channel's spatial size for Instance- and GroupNormalization). */
inline racc lc_group_sum(__local racc *part, racc v) {
  int l = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE); /* part may still be read by the previous sum */
  part[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RED_ROWS_LWS / 2; s > 0; s >>= 1) {
    if (l < s) part[l] += part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return part[0];
}

#if LC_ALL_KERNELS || defined(LC_WANT_norm_group)
__kernel void norm_group(__global const float *x, __global float *y, __global const float *scale,
                         __global const float *bias, int len, int every, int srows, float eps) {
  __local racc part[RED_ROWS_LWS];
  int i = get_group_id(0), l = get_local_id(0);
  __global const float *p = x + (size_t)i * (size_t)len;
  __global float *q = y + (size_t)i * (size_t)len;
  racc s = 0.0f;
  for (int r = l; r < len; r += RED_ROWS_LWS) s += p[r];
  racc mean = lc_group_sum(part, s) / (racc)len;
  racc v = 0.0f;
  for (int r = l; r < len; r += RED_ROWS_LWS) v += ((racc)p[r] - mean) * ((racc)p[r] - mean);
  float inv = (float)((racc)1.0f / sqrt(lc_group_sum(part, v) / (racc)len + (racc)eps));
  int base = (i % srows) * (len / every);
  for (int r = l; r < len; r += RED_ROWS_LWS) {
    int k = base + r / every;
    q[r] = (float)((racc)p[r] - mean) * inv * scale[k] + bias[k];
  }
}
#endif

/* The same, one work item per row (short rows). */
#if LC_ALL_KERNELS || defined(LC_WANT_reduce_rows_item)
__kernel void reduce_rows_item(__global const float *x, __global float *y, int n, int cnt, int kind) {
  int i = get_global_id(0);
  if (i >= n) return;
  __global const float *p = x + (size_t)i * (size_t)cnt;
  racc acc = red_init(kind);
  for (int r = 0; r < cnt; r++) acc = red_step(kind, acc, p[r]);
  y[i] = red_fin(kind, acc, cnt);
}
#endif

/* Softmax (lg 0) and LogSoftmax (lg 1) over rows of len elements at stride inner; one work item
 * per row (rows of one outer index are consecutive items, so the loads coalesce when inner > 1).
 * The exponentials are summed in racc, as the CPU sums them in double. */
inline float sm_out(int lg, float v, float m, racc s) {
  return lg ? (float)((racc)v - (log(s) + (racc)m)) : (float)((racc)exp(v - m) / s);
}

#if LC_ALL_KERNELS || defined(LC_WANT_softmax_item)
__kernel void softmax_item(__global const float *x, __global float *y, int rows, int len, int inner, int lg) {
  int r = get_global_id(0);
  if (r >= rows) return;
  int base = (r / inner) * len * inner + r % inner;
  float m = -INFINITY;
  racc s = 0.0f;
  for (int j = 0; j < len; j++) m = fmax(m, x[base + j * inner]);
  for (int j = 0; j < len; j++) s += exp(x[base + j * inner] - m);
  for (int j = 0; j < len; j++) y[base + j * inner] = sm_out(lg, x[base + j * inner], m, s);
}
#endif

/* One work group per contiguous row (inner == 1, long rows). */
#if LC_ALL_KERNELS || defined(LC_WANT_softmax_group)
__kernel void softmax_group(__global const float *x, __global float *y, int len, int lg) {
  __local racc part[RED_LWS];
  int r = get_group_id(0), l = get_local_id(0);
  __global const float *p = x + r * len;
  racc m = -INFINITY;
  for (int j = l; j < len; j += RED_LWS) m = fmax(m, (racc)p[j]);
  part[l] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RED_LWS / 2; s > 0; s >>= 1) {
    if (l < s) part[l] = fmax(part[l], part[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float mf = (float)part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  racc sum = 0.0f;
  for (int j = l; j < len; j += RED_LWS) sum += exp(p[j] - mf);
  part[l] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RED_LWS / 2; s > 0; s >>= 1) {
    if (l < s) part[l] += part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int j = l; j < len; j += RED_LWS) y[r * len + j] = sm_out(lg, p[j], mf, part[0]);
}
#endif

/* ArgMax (mx 1) / ArgMin over len elements at stride inner, one work item per output, as the
 * CPU's loop: the first extreme (the last with select_last_index), NaN wins over numbers;
 * dt 0 float, 2 int32, 3 uint8. */
#if LC_ALL_KERNELS || defined(LC_WANT_arg_reduce)
__kernel void arg_reduce(__global const uchar *x, __global long *y, int n, int len, int inner, int mx, int last,
                         int dt) {
  int i = get_global_id(0);
  if (i >= n) return;
  int base = (i / inner) * len * inner + i % inner, best = 0;
  if (dt == 0) {
    __global const float *p = (__global const float *)x + base;
    float bv = 0.0f;
    for (int j = 0; j < len; j++) {
      float v = p[j * inner];
      if (j == 0 || (mx ? v > bv : v < bv) || (last && v == bv) || (isnan(v) && !isnan(bv))) best = j, bv = v;
    }
  } else {
    long bv = 0;
    for (int j = 0; j < len; j++) {
      int k = base + j * inner;
      long v = dt == 2 ? (long)((__global const int *)x)[k] : (long)x[k];
      if (j == 0 || (mx ? v > bv : v < bv) || (last && v == bv)) best = j, bv = v;
    }
  }
  y[i] = best;
}
#endif
