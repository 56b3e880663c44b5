/* Whether a driver's cl_khr_command_buffer removes the host's per-launch cost of a batch-1 network:
 * N small dependent kernels per run, enqueued one by one (arguments set per launch, as the model
 * runner does) against recorded once into a command buffer and replayed, wall time per run.
 * Build: cc -O2 bench/gpu/cmdbuf_probe.c -lOpenCL; run: ./a.out [kernels per run] [items per kernel] */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_util.h"

static const char *src = "__kernel void k(__global float *a, __global float *b, int n) {"
                         " int i = get_global_id(0); if (i < n) b[i] = a[i] * 0.5f + 1.0f; }";

#define RUNS 200

int main(int argc, char **argv) {
  int nk = argc > 1 ? atoi(argv[1]) : 72, items = argc > 2 ? atoi(argv[2]) : 65536;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL)) return 1;
  char ext[16384] = "";
  clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  int has = strstr(ext, "cl_khr_command_buffer") != NULL;
  printf("cl_khr_command_buffer: %s\n", has ? "yes" : "no");
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if (clBuildProgram(pr, 1, &d, "", NULL, NULL)) return 2;
  cl_mem b[2];
  for (int i = 0; i < 2; i++) b[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, (size_t)items * 4, NULL, &e);
  cl_kernel *ks = calloc((size_t)nk, sizeof *ks);
  for (int i = 0; i < nk; i++) ks[i] = clCreateKernel(pr, "k", &e);
  size_t g = (size_t)items, l = 128;
  double t[RUNS];
  for (int rep = 0; rep < 2; rep++) {
    for (int r = 0; r < RUNS; r++) {
      double t0 = now_us();
      for (int i = 0; i < nk; i++) {
        clSetKernelArg(ks[i], 0, sizeof(cl_mem), &b[i & 1]);
        clSetKernelArg(ks[i], 1, sizeof(cl_mem), &b[(i + 1) & 1]);
        clSetKernelArg(ks[i], 2, sizeof items, &items);
        clEnqueueNDRangeKernel(q, ks[i], 1, NULL, &g, &l, 0, NULL, NULL);
      }
      clFinish(q);
      t[r] = now_us() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    printf("enqueued one by one: %d kernels of %d items, median %.1f us per run (min %.1f)\n", nk, items,
           t[RUNS / 2], t[0]);
  }
  if (!has) return 0;
  cl_device_command_buffer_capabilities_khr caps = 0;
  cl_command_queue_properties req = 0;
  clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, NULL);
  clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof req, &req, NULL);
  printf("capabilities 0x%llx, required queue properties 0x%llx\n", (unsigned long long)caps, (unsigned long long)req);
  clCreateCommandBufferKHR_fn create =
      (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p, "clCreateCommandBufferKHR");
  clCommandNDRangeKernelKHR_fn nd =
      (clCommandNDRangeKernelKHR_fn)clGetExtensionFunctionAddressForPlatform(p, "clCommandNDRangeKernelKHR");
  clFinalizeCommandBufferKHR_fn fin =
      (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p, "clFinalizeCommandBufferKHR");
  clEnqueueCommandBufferKHR_fn enq =
      (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueCommandBufferKHR");
  if (!create || !nd || !fin || !enq) {
    printf("entry points missing\n");
    return 3;
  }
  cl_command_buffer_khr cb = create(1, &q, NULL, &e);
  if (e) {
    printf("clCreateCommandBufferKHR: %d\n", e);
    return 4;
  }
  double r0 = now_us();
  for (int i = 0; i < nk && !e; i++) {
    clSetKernelArg(ks[i], 0, sizeof(cl_mem), &b[i & 1]);
    clSetKernelArg(ks[i], 1, sizeof(cl_mem), &b[(i + 1) & 1]);
    clSetKernelArg(ks[i], 2, sizeof items, &items);
    e = nd(cb, NULL, NULL, ks[i], 1, NULL, &g, &l, 0, NULL, NULL, NULL);
  }
  if (!e) e = fin(cb);
  printf("recorded %d kernels in %.1f us (status %d)\n", nk, now_us() - r0, e);
  if (e) return 5;
  for (int rep = 0; rep < 2; rep++) {
    for (int r = 0; r < RUNS; r++) {
      double t0 = now_us();
      e = enq(0, NULL, cb, 0, NULL, NULL);
      clFinish(q);
      t[r] = now_us() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    printf("command buffer replayed: median %.1f us per run (min %.1f), status %d\n", t[RUNS / 2], t[0], e);
  }
  return 0;
}
