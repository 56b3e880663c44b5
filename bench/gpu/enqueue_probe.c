/* Host cost of one kernel enqueue on an OpenCL driver, by what the launch carries: queue profiling,
 * plain buffers or sub-buffers of one parent as arguments, arguments set per launch or once per
 * kernel object, the conv struct by value (144 or 16 bytes) or in a __constant buffer. Answers why a 55-kernel network spends more host time than device time.
 * Build: cc -O2 bench/gpu/enqueue_probe.c -lOpenCL (an ICD loader); run: ./a.out [launches] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "probe_util.h"

static const char *src = "__kernel void k(__global float *a, __global float *b, int n) {"
                         " int i = get_global_id(0); if (i < n) b[i] = a[i] * 2.0f + 1.0f; }";

/* The nine arguments of kb/ks/kc: buffers rotated by r, argument 7 the struct (or its buffer). */
static void set9(cl_kernel k, int r, const cl_mem *m, size_t xsize, const void *x) {
  for (int a = 0; a < 9; a++)
    if (a == 7) clSetKernelArg(k, 7, xsize, x);
    else clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &m[(a + r) % 9]);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL)) return 1;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if (clBuildProgram(pr, 1, &d, "", NULL, NULL)) return 2;
  cl_uint align = 0;
  clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL);
  size_t chunk = 1 << 20, nb = 16;
  cl_mem parent = clCreateBuffer(c, CL_MEM_READ_WRITE, chunk * nb, NULL, &e), plain[16], sub[16];
  for (size_t i = 0; i < nb; i++) {
    plain[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, chunk, NULL, &e);
    cl_buffer_region r = {i * chunk, chunk};
    sub[i] = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    if (!sub[i]) return 3;
  }
  cl_mem ov[16]; /* overlapping sub-buffers: a liveness-planned arena's views */
  for (size_t i = 0; i < nb; i++) {
    cl_buffer_region r = {i * (align / 8 > 4096 ? align / 8 : 4096), chunk};
    ov[i] = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    if (!ov[i]) return 3;
  }
  cl_kernel ks[16];
  for (int i = 0; i < 16; i++) ks[i] = clCreateKernel(pr, "k", &e);
  int m = 256;
  size_t g = 256;
  for (int prof = 0; prof < 2; prof++) {
    cl_command_queue q = clCreateCommandQueue(c, d, prof ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    for (int mode = 0; mode < 5; mode++) { /* 0 plain, 1 sub, 2 sub + args once, 3 plain + one kernel, same args, 4 overlapping subs */
      cl_mem *b = mode == 0 || mode == 3 ? plain : mode == 4 ? ov : sub;
      for (int i = 0; i < 16; i++) {
        clSetKernelArg(ks[i], 0, sizeof(cl_mem), &b[i]);
        clSetKernelArg(ks[i], 1, sizeof(cl_mem), &b[(i + 1) % 16]);
        clSetKernelArg(ks[i], 2, sizeof m, &m);
      }
      for (int rep = 0; rep < 2; rep++) {
        clFinish(q);
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
          cl_kernel k = mode == 3 ? ks[0] : ks[i % 16];
          if (mode < 2 || mode == 4) {
            clSetKernelArg(k, 0, sizeof(cl_mem), &b[i % 16]);
            clSetKernelArg(k, 1, sizeof(cl_mem), &b[(i + 1) % 16]);
            clSetKernelArg(k, 2, sizeof m, &m);
          }
          if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)) return 4;
        }
        double t1 = now_us();
        clFinish(q);
        double t2 = now_us();
        if (rep)
          printf("profiling %d, %-28s: enqueue %.2f us/launch, all done %.2f us/launch\n", prof,
                 mode == 0 ? "plain buffers, args per launch" : mode == 1 ? "sub-buffers, args per launch"
                 : mode == 2 ? "sub-buffers, args once" : mode == 3 ? "plain, one kernel, same args" : "overlapping sub-buffers",
                 (t1 - t0) / n, (t2 - t0) / n);
      }
    }
    clReleaseCommandQueue(q);
  }
  printf("base address alignment %u bits\n", align);
  /* What else a conv launch carries: nine arguments with a 128-byte struct, large buffers, many
   * live buffers in the context, a 3-D range with a local size. */
  static const char *src2 = "typedef struct { int v[32]; } args;"
      "__kernel void k9(__global const float *a, __global const float *w, __global const float *s, __global const float *o,"
      " __global const float *bias, __global const float *r, __global float *b, args x, __global float *ws) {"
      " int i = get_global_id(0) + get_global_id(1) * 64 + get_global_id(2) * 4096; if (i < x.v[0]) b[i] = a[i] * w[i] + bias[0]; }";
  cl_program p2 = clCreateProgramWithSource(c, 1, &src2, NULL, &e);
  if (clBuildProgram(p2, 1, &d, "", NULL, NULL)) return 5;
  cl_kernel k9 = clCreateKernel(p2, "k9", &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  struct { int v[32]; } x = {{256}};
  for (int big = 0; big < 2; big++) {
    size_t bytes = big ? (size_t)64 << 20 : (size_t)1 << 20;
    cl_mem m[9];
    for (int i = 0; i < 9; i++) m[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e);
    for (int extra = 0; extra < 2; extra++) {
      cl_mem pad[300];
      int np = extra ? 300 : 0;
      for (int i = 0; i < np; i++) pad[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, 1 << 16, NULL, &e);
      for (int dims = 1; dims <= 3; dims += 2) {
        size_t g3[3] = {dims == 1 ? 256 : 64, 2, 2}, l3[3] = {64, 1, 1};
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
          for (int a = 0; a < 9; a++)
            if (a == 7) clSetKernelArg(k9, 7, sizeof x, &x);
            else clSetKernelArg(k9, (cl_uint)a, sizeof(cl_mem), &m[(a + i) % 9]);
          if (clEnqueueNDRangeKernel(q, k9, (cl_uint)dims, NULL, g3, l3, 0, NULL, NULL)) return 6;
        }
        double t1 = now_us();
        clFinish(q);
        printf("9 args + struct, buffers %3zu MB, %3d more buffers, %d-D range: enqueue %.2f us/launch, done %.2f\n",
               bytes >> 20, np, dims, (t1 - t0) / n, (now_us() - t0) / n);
      }
      for (int i = 0; i < np; i++) clReleaseMemObject(pad[i]);
    }
    for (int i = 0; i < 9; i++) clReleaseMemObject(m[i]);
  }
  /* What the struct costs: lowconv's conv kernels take a 144-byte struct by value. The same
   * nine-argument launch with the struct (36 ints) by value, a 16-byte one, or the struct in a
   * __constant buffer (a pointer), arguments set per launch or once (a kernel object per conv). */
  static const char *src4 = "typedef struct { int v[36]; } big; typedef struct { int v[4]; } small;"
      "__kernel void kb(__global const float *a, __global const float *w, __global const float *s, __global const float *o,"
      " __global const float *bias, __global const float *r, __global float *b, big x, __global float *ws) {"
      " int i = get_global_id(0); if (i < x.v[0]) b[i] = a[i] * w[i] + bias[0] + x.v[35]; }"
      "__kernel void ks(__global const float *a, __global const float *w, __global const float *s, __global const float *o,"
      " __global const float *bias, __global const float *r, __global float *b, small x, __global float *ws) {"
      " int i = get_global_id(0); if (i < x.v[0]) b[i] = a[i] * w[i] + bias[0]; }"
      "__kernel void kc(__global const float *a, __global const float *w, __global const float *s, __global const float *o,"
      " __global const float *bias, __global const float *r, __global float *b, __constant big *x, __global float *ws) {"
      " int i = get_global_id(0); if (i < x->v[0]) b[i] = a[i] * w[i] + bias[0] + x->v[35]; }";
  cl_program p4 = clCreateProgramWithSource(c, 1, &src4, NULL, &e);
  if (clBuildProgram(p4, 1, &d, "", NULL, NULL)) return 9;
  {
    struct { int v[36]; } xb = {{256}};
    struct { int v[4]; } xs = {{256}};
    cl_mem cb = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof xb, &xb, &e), m4[9];
    for (int i = 0; i < 9; i++) m4[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, 1 << 20, NULL, &e);
    static const char *kn[3] = {"kb", "ks", "kc"}, *what[3] = {"144-byte struct", "16-byte struct", "__constant struct"};
    for (int kind = 0; kind < 3; kind++)
      for (int once = 0; once < 2; once++) {
        cl_kernel kk[16];
        for (int j = 0; j < 16; j++) {
          kk[j] = clCreateKernel(p4, kn[kind], &e);
          set9(kk[j], j, m4, kind == 0 ? sizeof xb : kind == 1 ? sizeof xs : sizeof(cl_mem),
               kind == 0 ? (const void *)&xb : kind == 1 ? (const void *)&xs : (const void *)&cb);
        }
        for (int rep = 0; rep < 2; rep++) {
          clFinish(q);
          double t0 = now_us();
          for (int i = 0; i < n; i++) {
            cl_kernel k = kk[i % 16];
            if (!once)
              set9(k, i, m4, kind == 0 ? sizeof xb : kind == 1 ? sizeof xs : sizeof(cl_mem),
                   kind == 0 ? (const void *)&xb : kind == 1 ? (const void *)&xs : (const void *)&cb);
            if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)) return 10;
          }
          double t1 = now_us();
          clFinish(q);
          if (rep)
            printf("9 args, %-18s, args %s: enqueue %.2f us/launch, done %.2f\n", what[kind],
                   once ? "set once      " : "set per launch", (t1 - t0) / n, (now_us() - t0) / n);
        }
        for (int j = 0; j < 16; j++) clReleaseKernel(kk[j]);
      }
    for (int i = 0; i < 9; i++) clReleaseMemObject(m4[i]);
    clReleaseMemObject(cb);
  }
  /* Consecutive launches from different programs (a network alternates conv, elementwise, pool...). */
  cl_kernel kp[8];
  for (int i = 0; i < 8; i++) {
    char opt[32];
    snprintf(opt, sizeof opt, "-DV=%d", i);
    static const char *src3 = "__kernel void k(__global const float *a, __global float *b, int n) {"
                              " int i = get_global_id(0); if (i < n) b[i] = a[i] * V + 1.0f; }";
    cl_program p3 = clCreateProgramWithSource(c, 1, &src3, NULL, &e);
    if (clBuildProgram(p3, 1, &d, opt, NULL, NULL)) return 7;
    kp[i] = clCreateKernel(p3, "k", &e);
  }
  for (int np = 1; np <= 8; np *= 8) {
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
      cl_kernel k = kp[i % np];
      clSetKernelArg(k, 0, sizeof(cl_mem), &plain[i % 16]);
      clSetKernelArg(k, 1, sizeof(cl_mem), &plain[(i + 1) % 16]);
      clSetKernelArg(k, 2, sizeof m, &m);
      if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)) return 8;
    }
    double t1 = now_us();
    clFinish(q);
    printf("launches alternating over %d program%s: enqueue %.2f us/launch, done %.2f\n", np, np > 1 ? "s" : "",
           (t1 - t0) / n, (now_us() - t0) / n);
  }
  return 0;
}
