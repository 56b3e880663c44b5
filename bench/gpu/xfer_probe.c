/* Host <-> device copy time by how the copy is made: od96's 4.9 MB input up and 1.6 MB output down
 * (issue 10's 1.7 ms includes them). From pinned memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer, as
 * lowconv's model runner does), from pageable malloc, as one copy or in pieces, through
 * clEnqueueCopyBuffer from the pinned buffer, and a kernel reading the pinned buffer in place.
 * Each figure: median of 41 runs, wall time from enqueue to clFinish.
 * Build: cc -O2 bench/gpu/xfer_probe.c -lOpenCL; run: ./a.out [up bytes] [down bytes] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_util.h"

enum { RUNS = 41 };
static cl_command_queue q;
static cl_kernel kcopy;

/* mode 0 write, 1 read, 2 copy pinned->dev, 3 kernel reads pinned, 4 write then read */
static double one(int mode, cl_mem dev, cl_mem pin, void *host, size_t n, int pieces, cl_mem dev2, void *host2,
                  size_t n2) {
  double t0 = now_us();
  size_t step = (n / pieces + 255) & ~(size_t)255;
  for (size_t o = 0; o < n; o += step) {
    size_t m = n - o < step ? n - o : step;
    if (mode == 0 || mode == 4) clEnqueueWriteBuffer(q, dev, CL_FALSE, o, m, (char *)host + o, 0, NULL, NULL);
    if (mode == 1) clEnqueueReadBuffer(q, dev, CL_FALSE, o, m, (char *)host + o, 0, NULL, NULL);
    if (mode == 2) clEnqueueCopyBuffer(q, pin, dev, o, o, m, 0, NULL, NULL);
  }
  if (mode == 3) {
    size_t gws = n / 16;
    clSetKernelArg(kcopy, 0, sizeof pin, &pin);
    clSetKernelArg(kcopy, 1, sizeof dev, &dev);
    clEnqueueNDRangeKernel(q, kcopy, 1, NULL, &gws, NULL, 0, NULL, NULL);
  }
  if (mode == 4) clEnqueueReadBuffer(q, dev2, CL_FALSE, 0, n2, host2, 0, NULL, NULL);
  clFinish(q);
  return now_us() - t0;
}

static void report(const char *what, int mode, cl_mem dev, cl_mem pin, void *host, size_t n, int pieces, cl_mem dev2,
                   void *host2, size_t n2) {
  double t[RUNS];
  one(mode, dev, pin, host, n, pieces, dev2, host2, n2);
  for (int i = 0; i < RUNS; i++) t[i] = one(mode, dev, pin, host, n, pieces, dev2, host2, n2);
  qsort(t, RUNS, sizeof t[0], cmp);
  size_t bytes = n + (mode == 4 ? n2 : 0);
  printf("%-46s %8zu B, %d piece(s): median %7.1f us (min %7.1f, p90 %7.1f), %5.1f GB/s\n", what, bytes, pieces,
         t[RUNS / 2], t[0], t[RUNS * 9 / 10], bytes / (t[RUNS / 2] * 1e3));
}

int main(int argc, char **argv) {
  size_t up = argc > 1 ? strtoul(argv[1], NULL, 10) : 4915200, down = argc > 2 ? strtoul(argv[2], NULL, 10) : 1638400;
  cl_platform_id pl;
  cl_device_id dv;
  cl_int e;
  if (clGetPlatformIDs(1, &pl, NULL) || clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dv, NULL)) {
    fprintf(stderr, "no OpenCL device\n");
    return 1;
  }
  cl_context c = clCreateContext(NULL, 1, &dv, NULL, NULL, &e);
  q = clCreateCommandQueue(c, dv, 0, &e);
  const char *src = "__kernel void cp(__global const float4 *a, __global float4 *b) {"
                    " size_t i = get_global_id(0); b[i] = a[i]; }";
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(p, 1, &dv, "", NULL, NULL);
  kcopy = clCreateKernel(p, "cp", &e);
  cl_mem dev = clCreateBuffer(c, CL_MEM_READ_WRITE, up, NULL, &e);
  cl_mem dev2 = clCreateBuffer(c, CL_MEM_READ_WRITE, down, NULL, &e);
  cl_mem pin = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, up, NULL, &e);
  cl_mem pin2 = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, down, NULL, &e);
  void *hp = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, up, 0, NULL, NULL, &e);
  void *hp2 = clEnqueueMapBuffer(q, pin2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, down, 0, NULL, NULL, &e);
  void *hm = malloc(up), *hm2 = malloc(down);
  memset(hp, 1, up), memset(hm, 1, up), memset(hp2, 0, down), memset(hm2, 0, down);
  for (int r = 0; r < 2; r++) {
    printf("-- round %d\n", r + 1);
    for (int k = 1; k <= 8; k *= 2) report("up, pinned", 0, dev, pin, hp, up, k, NULL, NULL, 0);
    report("up, pageable", 0, dev, pin, hm, up, 1, NULL, NULL, 0);
    report("up, clEnqueueCopyBuffer from the pinned buffer", 2, dev, pin, hp, up, 1, NULL, NULL, 0);
    report("up, a kernel reading the pinned buffer", 3, dev, pin, hp, up, 1, NULL, NULL, 0);
    for (int k = 1; k <= 4; k *= 2) report("down, pinned", 1, dev2, pin2, hp2, down, k, NULL, NULL, 0);
    report("down, pageable", 1, dev2, pin2, hm2, down, 1, NULL, NULL, 0);
    report("up + down, pinned", 4, dev, pin, hp, up, 1, dev2, hp2, down);
    report("up + down, pageable", 4, dev, pin, hm, up, 1, dev2, hm2, down);
  }
  clEnqueueUnmapMemObject(q, pin, hp, 0, NULL, NULL);
  clEnqueueUnmapMemObject(q, pin2, hp2, 0, NULL, NULL);
  clFinish(q);
  clReleaseMemObject(pin), clReleaseMemObject(pin2), clReleaseMemObject(dev), clReleaseMemObject(dev2);
  clReleaseKernel(kcopy), clReleaseProgram(p), clReleaseCommandQueue(q), clReleaseContext(c);
  free(hm), free(hm2);
  return 0;
}
