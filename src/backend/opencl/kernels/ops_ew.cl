/* Elementwise operators of the model runner on the device (cl_ops_ew.c): one work item per
 * output element, consecutive items on consecutive addresses. Unary kinds follow the order of
 * src/model/ops/ops_elementwise.c; 13 = affine (x * a + b, also BatchNormalization per channel);
 * 14..16 Floor, Ceil, Round (half to even, as the CPU's rintf); 17 x / a (Mean's division). */

inline float ew_un(int k, float x, float a, float b) {
  switch (k) {
  case 0: return x > 0.0f ? x : 0.0f;
  case 1: return x < 0.0f ? a * x : x;
  case 2: return isnan(x) ? x : 1.0f / (1.0f + exp(-x));
  case 3: return clamp(a * x + b, 0.0f, 1.0f);
  case 4: return x * clamp(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
  case 5: return tanh(x);
  case 6: { float v = x < a ? a : x; return v > b ? b : v; }
  case 7: return sqrt(x);
  case 8: return 1.0f / x;
  case 9: return erf(x);
  case 10: return exp(x);
  case 11: return -x;
  case 12: return fabs(x);
  case 14: return floor(x);
  case 15: return ceil(x);
  case 16: return rint(x);
  case 17: return x / a;
  default: return x * a + b;
  }
}

#if LC_ALL_KERNELS || defined(LC_WANT_ew_unary)
__kernel void ew_unary(__global const float *x, __global float *y, int n, int kind, float a, float b) {
  int i = get_global_id(0);
  if (i < n) y[i] = ew_un(kind, x[i], a, b);
}
#endif

/* Four elements per work item where the count allows: 16-byte accesses keep enough bytes in flight
 * per compute unit (one float each ran at ~0.7 TB/s on the H200, a sixth of its read rate). */
#if LC_ALL_KERNELS || defined(LC_WANT_ew_unary4)
__kernel void ew_unary4(__global const float4 *x, __global float4 *y, int n4, int kind, float a, float b) {
  int i = get_global_id(0);
  if (i >= n4) return;
  float4 v = x[i];
  y[i] = (float4)(ew_un(kind, v.x, a, b), ew_un(kind, v.y, a, b), ew_un(kind, v.z, a, b), ew_un(kind, v.w, a, b));
}
#endif

/* y = x * k[c] + o[c] with c = (i / inner) % C (BatchNormalization, folded scale and offset), on
 * floats or float4s (then n and inner count float4s; inner a multiple of 4 floats). */
#define LC_CHAN_AFFINE(NAME, T)                                                                            \
  __kernel void NAME(__global const T *x, __global T *y, __global const float *k, __global const float *o, int n, \
                     int inner, int C) {                                                                   \
    int i = get_global_id(0);                                                                              \
    if (i >= n) return;                                                                                    \
    int c = (i / inner) % C;                                                                               \
    y[i] = x[i] * k[c] + o[c];                                                                             \
  }
#if LC_ALL_KERNELS || defined(LC_WANT_ew_chan_affine)
LC_CHAN_AFFINE(ew_chan_affine, float)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_ew_chan_affine4)
LC_CHAN_AFFINE(ew_chan_affine4, float4)
#endif

/* Offsets of output element i in a and b from the coalesced broadcast plan
 * g = {nd, dims[8], sa[8], sb[8]} (outermost first). */
inline void ew_bcast(__constant const int *g, int i, int *ia, int *ib) {
  int nd = g[0], a = 0, b = 0;
  for (int d = nd - 1; d >= 0; d--) {
    int n = g[1 + d], q = i / n, r = i - q * n;
    a += r * g[9 + d];
    b += r * g[17 + d];
    i = q;
  }
  *ia = a, *ib = b;
}

inline float ew_bin(int k, float x, float y) {
  switch (k) {
  case 0: return x + y;
  case 1: return x - y;
  case 2: return x * y;
  case 3: return x / y;
  case 4: return x < 0.0f ? x * y : x;
  case 6: return y < x || isnan(y) ? y : x; /* variadic Min / Max: NaN propagates, as the CPU's */
  case 7: return y > x || isnan(y) ? y : x;
  default: return y == 2.0f ? x * x : y == 1.0f ? x : (y == 0.5f && x > 0.0f) ? sqrt(x) : pow(x, y);
  }
}

#if LC_ALL_KERNELS || defined(LC_WANT_ew_binary)
__kernel void ew_binary(__global const float *a, __global const float *b, __global float *y,
                        __constant const int *g, int n, int kind) {
  int i = get_global_id(0), ia, ib;
  if (i >= n) return;
  ew_bcast(g, i, &ia, &ib);
  y[i] = ew_bin(kind, a[ia], b[ib]);
}
#endif

/* Two fast forms of ew_binary on float4s: both operands contiguous (a residual Add), and b one
 * value per row of inner4 float4s (an SE block's Mul by [N, C, 1, 1], PRelu's slopes). */
#if LC_ALL_KERNELS || defined(LC_WANT_ew_binary_flat4)
__kernel void ew_binary_flat4(__global const float4 *a, __global const float4 *b, __global float4 *y, int n4,
                              int kind) {
  int i = get_global_id(0);
  if (i >= n4) return;
  float4 x = a[i], z = b[i];
  y[i] = (float4)(ew_bin(kind, x.x, z.x), ew_bin(kind, x.y, z.y), ew_bin(kind, x.z, z.z), ew_bin(kind, x.w, z.w));
}
#endif

#if LC_ALL_KERNELS || defined(LC_WANT_ew_binary_row4)
__kernel void ew_binary_row4(__global const float4 *a, __global const float *b, __global float4 *y, int n4,
                             int inner4, int kind) {
  int i = get_global_id(0);
  if (i >= n4) return;
  float4 x = a[i];
  float z = b[i / inner4];
  y[i] = (float4)(ew_bin(kind, x.x, z), ew_bin(kind, x.y, z), ew_bin(kind, x.z, z), ew_bin(kind, x.w, z));
}
#endif

/* int64 Add / Sub / Mul / Div, wrapping through ulong; the host checks divisors for zero. */
#if LC_ALL_KERNELS || defined(LC_WANT_ew_binary_i64)
__kernel void ew_binary_i64(__global const long *a, __global const long *b, __global long *y,
                            __constant const int *g, int n, int kind) {
  int i = get_global_id(0), ia, ib;
  if (i >= n) return;
  ew_bcast(g, i, &ia, &ib);
  ulong x = (ulong)a[ia], v = (ulong)b[ib];
  long r;
  switch (kind) {
  case 0: r = (long)(x + v); break;
  case 1: r = (long)(x - v); break;
  case 2: r = (long)(x * v); break;
  default: r = (long)v == -1 ? (long)(0ul - x) : (long)v == 0 ? 0 : (long)x / (long)v; break;
  }
  y[i] = r;
}
#endif

/* Cast between float, uint8, int8, int32, int64 and bool (ONNX dtype codes 1, 2, 3, 6, 7, 9), as the
 * CPU does it: integers through long, float to integer saturating (NaN to 0), then narrowed with
 * saturation. The codes are uniform across the range, so the switches do not diverge. */
#if LC_ALL_KERNELS || defined(LC_WANT_ew_cast)
__kernel void ew_cast(__global const uchar *x, __global uchar *y, int n, int from, int to) {
  int i = get_global_id(0);
  if (i >= n) return;
  float f = 0.0f;
  long v = 0;
  switch (from) {
  case 1: f = ((__global const float *)x)[i]; break;
  case 3: v = ((__global const char *)x)[i]; break;
  case 6: v = ((__global const int *)x)[i]; break;
  case 7: v = ((__global const long *)x)[i]; break;
  default: v = x[i]; break;
  }
  if (from == 1 && to != 1)
    v = to == 9 ? f != 0.0f : isnan(f) ? 0 : f >= 9.2e18f ? LONG_MAX : f <= -9.2e18f ? LONG_MIN : (long)f;
  else if (from != 1)
    f = (float)v;
  switch (to) {
  case 1: ((__global float *)y)[i] = f; break;
  case 3: ((__global char *)y)[i] = (char)clamp(v, -128L, 127L); break;
  case 6: ((__global int *)y)[i] = (int)clamp(v, (long)INT_MIN, (long)INT_MAX); break;
  case 7: ((__global long *)y)[i] = v; break;
  case 9: y[i] = v != 0; break;
  default: y[i] = (uchar)clamp(v, 0L, 255L); break;
  }
}
#endif

/* Offsets of output element i in up to three operands from the broadcast plan
 * g = {nd, dims[8], s0[8], s1[8], s2[8]} (outermost first). */
inline void ew_nb(__constant const int *g, int i, int *o) {
  int a = 0, b = 0, c = 0;
  for (int d = g[0] - 1; d >= 0; d--) {
    int m = g[1 + d], q = i / m, r = i - q * m;
    a += r * g[9 + d], b += r * g[17 + d], c += r * g[25 + d];
    i = q;
  }
  o[0] = a, o[1] = b, o[2] = c;
}

inline long ew_ld(__global const uchar *p, int dt, int i) {
  switch (dt) {
  case 1: return ((__global const long *)p)[i];
  case 2: return ((__global const int *)p)[i];
  case 4: return ((__global const char *)p)[i];
  default: return p[i];
  }
}

/* Comparisons (kinds 0..4: ==, <, >, <=, >=) and logic (5 and, 6 or, 7 xor, 8 not of a) to bool,
 * as the CPU's cmp_f / cmp_i; dt 0 float, 1 int64, 2 int32, 3 uint8 / bool, 4 int8. */
#if LC_ALL_KERNELS || defined(LC_WANT_ew_compare)
__kernel void ew_compare(__global const uchar *a, __global const uchar *b, __global uchar *y, __constant const int *g,
                         int n, int kind, int dt) {
  int i = get_global_id(0), o[3];
  if (i >= n) return;
  ew_nb(g, i, o);
  int r;
  if (dt == 0) {
    float x = ((__global const float *)a)[o[0]], v = ((__global const float *)b)[o[1]];
    r = kind == 0 ? x == v : kind == 1 ? x < v : kind == 2 ? x > v : kind == 3 ? x <= v : x >= v;
  } else {
    long x = ew_ld(a, dt, o[0]), v = ew_ld(b, dt, o[1]);
    switch (kind) {
    case 0: r = x == v; break;
    case 1: r = x < v; break;
    case 2: r = x > v; break;
    case 3: r = x <= v; break;
    case 4: r = x >= v; break;
    case 5: r = x && v; break;
    case 6: r = x || v; break;
    case 7: r = !x != !v; break;
    default: r = !x; break;
    }
  }
  y[i] = (uchar)r;
}
#endif

/* Where: out = c ? x : y, elements moved as their bits. */
#define LC_WHERE(T, NAME)                                                                             \
  __kernel void NAME(__global const uchar *c, __global const T *x, __global const T *y, __global T *out, \
                     __constant const int *g, int n) {                                                \
    int i = get_global_id(0), o[3];                                                                   \
    if (i >= n) return;                                                                               \
    ew_nb(g, i, o);                                                                                   \
    out[i] = c[o[0]] ? x[o[1]] : y[o[2]];                                                             \
  }
#if LC_ALL_KERNELS || defined(LC_WANT_where_u8)
LC_WHERE(uchar, where_u8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_where_u32)
LC_WHERE(uint, where_u32)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_where_u64)
LC_WHERE(ulong, where_u64)
#endif
