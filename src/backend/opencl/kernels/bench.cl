/* Micro-benchmarks behind `lowconv devices` and the "% of peak" figures (cl_limits.c). */

/* 8 independent float4 FMA chains of 256 steps per item: 8 * 4 * 2 * 256 flops. */
__kernel void bench_fma(__global float *out, float a, float b) {
  float4 x0 = (float4)(get_global_id(0)) * 1e-9f, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
  float4 x4 = x0 + 4.0f, x5 = x0 + 5.0f, x6 = x0 + 6.0f, x7 = x0 + 7.0f;
  for (int i = 0; i < 256; i++) {
    x0 = mad(x0, a, b), x1 = mad(x1, a, b), x2 = mad(x2, a, b), x3 = mad(x3, a, b);
    x4 = mad(x4, a, b), x5 = mad(x5, a, b), x6 = mad(x6, a, b), x7 = mad(x7, a, b);
  }
  float4 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  if (s.x + s.y + s.z + s.w == 1234.5f) out[0] = s.x; /* keeps the chains alive, never true */
}

/* Reads n float4s (grid-stride), one store per item that never happens. */
__kernel void bench_read(__global const float4 *in, int n, __global float *out) {
  float4 s = (float4)(0.0f);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) s += in[i];
  if (s.x + s.y + s.z + s.w == 1234.5f) out[0] = s.x;
}

__kernel void bench_empty(__global float *out) {
  if (get_global_id(0) == 0x7fffffff) out[0] = 0.0f;
}
