/* Host cost of one kernel enqueue on an OpenCL driver, by what the launch carries: queue profiling,
 * plain buffers or sub-buffers of one parent as arguments, arguments set per launch or once per
 * kernel object. Answers why a 55-kernel network spends more host time than device time.
 * Build: cc -O2 bench/gpu/enqueue_probe.c -lOpenCL (an ICD loader); run: ./a.out [launches] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static const char *src = "__kernel void k(__global float *a, __global float *b, int n) {"
                         " int i = get_global_id(0); if (i < n) b[i] = a[i] * 2.0f + 1.0f; }";

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
  return 0;
}
