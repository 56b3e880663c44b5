/* Does an OpenCL driver build programs in parallel? N builds of one source (each with its own
 * -DPROBE_ID so that no driver cache can answer), timed: one after another; on N threads sharing
 * one context; on N threads with a context each; in N processes (forked before any OpenCL call).
 * NVIDIA's cold start is these builds (docs/benchmarks.md), so this says which parallelism pays.
 * Usage: build_probe SOURCE.cl N "OPTIONS"   (links -lOpenCL; the first GPU of the first platform) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *src;
static const char *opts;
static cl_platform_id plat;
static cl_device_id dev;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int pick(void) {
  cl_uint n = 0;
  if (clGetPlatformIDs(1, &plat, &n) != CL_SUCCESS || !n) return -1;
  if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, &n) != CL_SUCCESS || !n) return -1;
  return 0;
}

static cl_context make_ctx(void) {
  cl_context_properties p[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
  cl_int e;
  return clCreateContext(p, 1, &dev, NULL, NULL, &e);
}

static int build(cl_context ctx, int id) {
  char o[1024];
  snprintf(o, sizeof o, "%s -DPROBE_ID=%d", opts, id);
  const char *s = src;
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &e);
  if (!p) return -1;
  e = clBuildProgram(p, 1, &dev, o, NULL, NULL);
  if (e != CL_SUCCESS) {
    char log[2048] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "build failed (%d): %s\n", e, log);
  }
  clReleaseProgram(p);
  return e == CL_SUCCESS ? 0 : -1;
}

typedef struct job {
  cl_context ctx; /* NULL: make one */
  int id, rc;
} job;

static void *run(void *a) {
  job *j = a;
  cl_context c = j->ctx ? j->ctx : make_ctx();
  j->rc = c ? build(c, j->id) : -1;
  if (!j->ctx && c) clReleaseContext(c);
  return NULL;
}

static double threads(int n, cl_context shared, int base) {
  pthread_t th[64];
  job js[64];
  double t0 = now_ms();
  for (int i = 0; i < n; i++) {
    js[i] = (job){shared, base + i, 0};
    pthread_create(&th[i], NULL, run, &js[i]);
  }
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < n; i++)
    if (js[i].rc) return -1;
  return now_ms() - t0;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: %s SOURCE.cl N [OPTIONS]\n", argv[0]), 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return perror(argv[1]), 1;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  src = calloc((size_t)len + 1, 1);
  if (!src || fread(src, 1, (size_t)len, f) != (size_t)len) return fclose(f), 1;
  fclose(f);
  int n = atoi(argv[2]);
  if (n < 1 || n > 64) return 2;
  opts = argc > 3 ? argv[3] : "";
  /* Processes first: a child forked after the parent started the driver could not use it. */
  double t0 = now_ms();
  for (int i = 0; i < n; i++)
    if (fork() == 0) {
      if (pick()) _exit(3);
      cl_context c = make_ctx();
      _exit(c && !build(c, 1000 + i) ? 0 : 4);
    }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int st = 0;
    wait(&st);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  }
  double tp = now_ms() - t0;
  t0 = now_ms();
  if (pick()) return fprintf(stderr, "no OpenCL device\n"), 1;
  cl_context ctx = make_ctx();
  if (!ctx) return fprintf(stderr, "no context\n"), 1;
  double tc = now_ms() - t0;
  t0 = now_ms();
  for (int i = 0; i < n; i++)
    if (build(ctx, 2000 + i)) return 1;
  double ts = now_ms() - t0;
  double t1 = threads(n, ctx, 3000), tn = threads(n, NULL, 4000);
  printf("%d builds: serial %.0f ms (%.0f each), threads on one context %.0f ms, threads with a context each "
         "%.0f ms, processes %.0f ms%s (first context %.0f ms)\n",
         n, ts, ts / n, t1, tn, tp, bad ? " (some failed)" : "", tc);
  clReleaseContext(ctx);
  return 0;
}
