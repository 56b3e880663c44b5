#include "backend/opencl/cl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/error.h"

static lc_cl_api real, api;
static int loaded; /* 1 ok, -1 failed */
static char load_msg[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_long fault_countdown;

void lc_cl_inject_fault(long n) { atomic_store(&fault_countdown, n); }
long lc_cl_fault_left(void) { return atomic_load(&fault_countdown); }

static int fault_hit(void) {
  long v = atomic_load(&fault_countdown);
  while (v > 0) {
    if (atomic_compare_exchange_weak(&fault_countdown, &v, v - 1)) return v == 1;
  }
  return 0;
}

/* Wrappers of the calls that return an object and an error code, and of those returning cl_int. */
#define OBJ_WRAP(ret, name, params, args, errp)                                                          \
  static ret w_##name params {                                                                           \
    if (fault_hit()) {                                                                                   \
      if (errp) *(errp) = CL_OUT_OF_RESOURCES;                                                           \
      return NULL;                                                                                       \
    }                                                                                                    \
    return real.name args;                                                                               \
  }
#define INT_WRAP(name, params, args)                                                                     \
  static cl_int w_##name params { return fault_hit() ? CL_OUT_OF_RESOURCES : real.name args; }

OBJ_WRAP(cl_context, CreateContext,
         (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
          void(CL_CALLBACK *f)(const char *, const void *, size_t, void *), void *u, cl_int *e),
         (p, n, d, f, u, e), e)
OBJ_WRAP(cl_command_queue, CreateCommandQueue, (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *e),
         (c, d, p, e), e)
OBJ_WRAP(cl_mem, CreateBuffer, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e), (c, f, s, h, e), e)
OBJ_WRAP(cl_program, CreateProgramWithSource, (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e),
         (c, n, s, l, e), e)
OBJ_WRAP(cl_program, CreateProgramWithBinary,
         (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b, cl_int *bs,
          cl_int *e),
         (c, n, d, l, b, bs, e), e)
OBJ_WRAP(cl_mem, CreateSubBuffer, (cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *r, cl_int *e),
         (m, f, t, r, e), e)
OBJ_WRAP(void *, EnqueueMapBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t s, cl_uint n, const cl_event *w,
          cl_event *ev, cl_int *e),
         (q, m, b, f, o, s, n, w, ev, e), e)
OBJ_WRAP(cl_kernel, CreateKernel, (cl_program p, const char *n, cl_int *e), (p, n, e), e)
INT_WRAP(BuildProgram,
         (cl_program p, cl_uint n, const cl_device_id *d, const char *o, void(CL_CALLBACK *f)(cl_program, void *),
          void *u),
         (p, n, d, o, f, u))
INT_WRAP(SetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
INT_WRAP(EnqueueNDRangeKernel,
         (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g, const size_t *l, cl_uint n,
          const cl_event *w, cl_event *e),
         (q, k, d, o, g, l, n, w, e))
INT_WRAP(EnqueueReadBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p, cl_uint n, const cl_event *w,
          cl_event *e),
         (q, m, b, o, s, p, n, w, e))
INT_WRAP(EnqueueWriteBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void *p, cl_uint n, const cl_event *w,
          cl_event *e),
         (q, m, b, o, s, p, n, w, e))
INT_WRAP(EnqueueCopyBuffer,
         (cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s, cl_uint n, const cl_event *w,
          cl_event *e),
         (q, a, b, oa, ob, s, n, w, e))
INT_WRAP(Finish, (cl_command_queue q), (q))
INT_WRAP(WaitForEvents, (cl_uint n, const cl_event *e), (n, e))
INT_WRAP(GetEventProfilingInfo, (cl_event e, cl_profiling_info i, size_t s, void *v, size_t *r), (e, i, s, v, r))

static void load(void) {
  const char *name = getenv("LOWCONV_OPENCL_LIBRARY");
  if (!name || !*name) name = "libOpenCL.so.1";
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    snprintf(load_msg, sizeof load_msg,
             "opencl: cannot load the OpenCL library '%s' (%s); install an ICD loader and a driver "
             "(Debian: ocl-icd-libopencl1 and pocl-opencl-icd or a GPU vendor's ICD)",
             name, why ? why : "unknown error");
    loaded = -1;
    return;
  }
  int ok = 1;
#define SYM(f)                                                                                           \
  do {                                                                                                   \
    *(void **)&real.f = dlsym(h, "cl" #f);                                                               \
    if (!real.f && ok) {                                                                                 \
      ok = 0;                                                                                            \
      snprintf(load_msg, sizeof load_msg, "opencl: '%s' has no cl" #f " (not an OpenCL 1.2 library)", name); \
    }                                                                                                    \
  } while (0)
  SYM(GetPlatformIDs); SYM(GetPlatformInfo); SYM(GetDeviceIDs); SYM(GetDeviceInfo);
  SYM(CreateContext); SYM(ReleaseContext); SYM(CreateCommandQueue); SYM(ReleaseCommandQueue);
  SYM(CreateBuffer); SYM(ReleaseMemObject); SYM(CreateProgramWithSource); SYM(CreateProgramWithBinary);
  SYM(BuildProgram); SYM(GetProgramBuildInfo); SYM(GetProgramInfo); SYM(ReleaseProgram);
  SYM(CreateKernel); SYM(ReleaseKernel); SYM(SetKernelArg); SYM(GetKernelWorkGroupInfo);
  SYM(EnqueueNDRangeKernel); SYM(EnqueueReadBuffer); SYM(EnqueueWriteBuffer); SYM(EnqueueCopyBuffer);
  SYM(Finish); SYM(Flush); SYM(WaitForEvents); SYM(GetEventProfilingInfo); SYM(RetainEvent);
  SYM(ReleaseEvent); SYM(CreateSubBuffer); SYM(EnqueueMapBuffer); SYM(EnqueueUnmapMemObject);
#undef SYM
  if (!ok) {
    dlclose(h);
    loaded = -1;
    return;
  }
  /* The library stays loaded for the process: drivers do not support being unloaded. */
  api = real;
  api.CreateContext = w_CreateContext;
  api.CreateCommandQueue = w_CreateCommandQueue;
  api.CreateBuffer = w_CreateBuffer;
  api.CreateProgramWithSource = w_CreateProgramWithSource;
  api.CreateProgramWithBinary = w_CreateProgramWithBinary;
  api.CreateKernel = w_CreateKernel;
  api.CreateSubBuffer = w_CreateSubBuffer;
  api.EnqueueMapBuffer = w_EnqueueMapBuffer;
  api.BuildProgram = w_BuildProgram;
  api.SetKernelArg = w_SetKernelArg;
  api.EnqueueNDRangeKernel = w_EnqueueNDRangeKernel;
  api.EnqueueReadBuffer = w_EnqueueReadBuffer;
  api.EnqueueWriteBuffer = w_EnqueueWriteBuffer;
  api.EnqueueCopyBuffer = w_EnqueueCopyBuffer;
  api.Finish = w_Finish;
  api.WaitForEvents = w_WaitForEvents;
  api.GetEventProfilingInfo = w_GetEventProfilingInfo;
  loaded = 1;
}

const lc_cl_api *lc_cl_api_get(void) {
  pthread_once(&once, load);
  if (loaded < 0) {
    lc_error(LC_ERR_UNSUPPORTED, "%s", load_msg);
    return NULL;
  }
  return &api;
}
