/* Where a warm start's first 0.2 s goes: the driver's own steps before lowconv runs anything, one
 * process per sample (the first OpenCL call of a process is the expensive one). Prints, in ms:
 * dlopen of the vendor library alone, clGetPlatformIDs, clGetDeviceIDs, clCreateContext,
 * clCreateCommandQueue, a first 1 MB buffer written and finished, and the context's release.
 * Run it under different environments (CUDA_MODULE_LOADING, CUDA_DEVICE_MAX_CONNECTIONS, ...) to see
 * whether any of them moves the driver's part.
 * Build: cc -O2 bench/gpu/ctx_probe.c -lOpenCL -ldl; run: ./a.out [vendor library to dlopen first] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe_util.h"

int main(int argc, char **argv) {
  double t0 = now_us();
  if (argc > 1 && !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  double t_dl = now_us();
  cl_platform_id pf;
  cl_uint n = 0;
  if (clGetPlatformIDs(1, &pf, &n) != CL_SUCCESS || !n) return fprintf(stderr, "no platform\n"), 1;
  double t_pf = now_us();
  cl_device_id dev;
  if (clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return fprintf(stderr, "no device\n"), 1;
  double t_dev = now_us();
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (!ctx) return fprintf(stderr, "context: %d\n", err), 1;
  double t_ctx = now_us();
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  if (!q) return fprintf(stderr, "queue: %d\n", err), 1;
  double t_q = now_us();
  size_t bytes = 1 << 20;
  char *h = calloc(bytes, 1);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (!m || !h) return fprintf(stderr, "buffer: %d\n", err), 1;
  clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL);
  clFinish(q);
  double t_buf = now_us();
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(h);
  double t_rel = now_us();
  printf("dlopen %.1f platforms %.1f devices %.1f context %.1f queue %.1f first_buffer %.1f release %.1f "
         "total %.1f\n",
         (t_dl - t0) / 1e3, (t_pf - t_dl) / 1e3, (t_dev - t_pf) / 1e3, (t_ctx - t_dev) / 1e3,
         (t_q - t_ctx) / 1e3, (t_buf - t_q) / 1e3, (t_rel - t_buf) / 1e3, (t_buf - t0) / 1e3);
  return 0;
}
