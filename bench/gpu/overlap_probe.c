/* Device-side cost per kernel in a chain of small kernels, by how they are queued: one in-order
 * queue, two or four in-order queues taking turns, an out-of-order queue with and without an event
 * chain. Everything is enqueued behind a user event first, so the wall time from releasing it to
 * clFinish is the device's (and driver's) alone, not the host's enqueue cost. Answers whether
 * NVIDIA's ~5 us between back-to-back kernels overlaps across queues.
 * Build: cc -O2 bench/gpu/overlap_probe.c -lOpenCL; run: ./a.out [kernels] [elements per kernel] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "probe_util.h"

static const char *src = "__kernel void k(__global float *a, int n) {"
                         " int i = get_global_id(0); if (i < n) a[i] = a[i] * 0.999f + 1.0f; }";

enum { NQ = 4 };

/* mode 0: nq in-order queues in turns; 1: out-of-order, independent; 2: out-of-order, chained. */
static double run(cl_context c, cl_command_queue *q, int nq, cl_kernel *k, int mode, int n, size_t gws) {
  cl_int e;
  cl_event gate = clCreateUserEvent(c, &e), prev = NULL;
  for (int i = 0; i < nq; i++) clEnqueueMarkerWithWaitList(q[i], 1, &gate, NULL);
  for (int i = 0; i < n; i++) {
    cl_event ev = NULL;
    int qi = mode ? 0 : i % nq;
    cl_event *wait = mode == 2 && prev ? &prev : NULL;
    clEnqueueNDRangeKernel(q[qi], k[i % NQ], 1, NULL, &gws, NULL, wait ? 1 : 0, wait, mode == 2 ? &ev : NULL);
    if (prev) clReleaseEvent(prev);
    prev = ev;
  }
  if (prev) clReleaseEvent(prev);
  for (int i = 0; i < nq; i++) clFlush(q[i]);
  double t0 = now_us();
  clSetUserEventStatus(gate, CL_COMPLETE);
  for (int i = 0; i < nq; i++) clFinish(q[i]);
  double t = now_us() - t0;
  clReleaseEvent(gate);
  return t / n;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 400;
  size_t elems = argc > 2 ? (size_t)atol(argv[2]) : 65536;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL)) return 1;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if (clBuildProgram(pr, 1, &d, "", NULL, NULL)) return 2;
  cl_command_queue q[NQ], qo = clCreateCommandQueue(c, d, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
  if (!qo) printf("no out-of-order queue (%d)\n", e);
  for (int i = 0; i < NQ; i++) q[i] = clCreateCommandQueue(c, d, 0, &e);
  cl_kernel k[NQ];
  cl_mem m[NQ];
  int ne = (int)elems;
  for (int i = 0; i < NQ; i++) { /* one buffer per kernel object: the queues' kernels are independent */
    m[i] = clCreateBuffer(c, CL_MEM_READ_WRITE, elems * 4, NULL, &e);
    k[i] = clCreateKernel(pr, "k", &e);
    clSetKernelArg(k[i], 0, sizeof m[i], &m[i]);
    clSetKernelArg(k[i], 1, sizeof ne, &ne);
  }
  printf("%d kernels of %zu elements; us per kernel, median of 5\n", n, elems);
  const char *names[] = {"1 in-order queue", "2 in-order queues", "4 in-order queues", "out-of-order, independent",
                         "out-of-order, event chain"};
  for (int v = 0; v < 5; v++) {
    if (v >= 3 && !qo) continue;
    double t[5];
    for (int r = 0; r < 6; r++) {
      double x = v < 3 ? run(c, q, v == 0 ? 1 : v == 1 ? 2 : 4, k, 0, n, elems) : run(c, &qo, 1, k, v - 2, n, elems);
      if (r) t[r - 1] = x; /* the first is a warm-up */
    }
    for (int i = 0; i < 5; i++)
      for (int j = i + 1; j < 5; j++)
        if (t[j] < t[i]) {
          double s = t[i];
          t[i] = t[j], t[j] = s;
        }
    printf("%-28s %.2f (min %.2f)\n", names[v], t[2], t[0]);
  }
  return 0;
}
