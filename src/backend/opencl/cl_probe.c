/* Compile-and-run probes of device features that no query reports. NVIDIA's OpenCL accepts inline
 * PTX; dp4a (4-way int8 dot product, compute capability >= 6.1) is there if the probe builds and
 * gives the right sum. The answer is kept in the tuning cache: one probe per device and driver. */
#include <string.h>

#include "backend/opencl/cl_backend.h"
#include "tune/tune_cache.h"

static const char dp4a_src[] =
    "__kernel void probe(__global int *o, int a, int b) {\n"
    "  int r;\n"
    "  asm(\"dp4a.s32.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(0));\n"
    "  o[0] = r;\n"
    "}\n";

static int run_dp4a_probe(lc_cl_rt *rt) {
  const lc_cl_api *cl = rt->cl;
  cl_int e;
  const char *srcs[1] = {dp4a_src};
  cl_program p = cl->CreateProgramWithSource(rt->context, 1, srcs, NULL, &e);
  cl_kernel k = NULL;
  cl_mem o = NULL;
  int ok = 0, got = 0;
  if (!p || cl->BuildProgram(p, 1, &rt->device, "", NULL, NULL) != CL_SUCCESS) goto done;
  if (!(k = cl->CreateKernel(p, "probe", &e)) || lc_cl_buffer(rt, sizeof(int), NULL, &o)) goto done;
  int a = 0x01020304, b = 0x01010101; /* bytes 1+2+3+4 = 10 */
  size_t one = 1;
  if (cl->SetKernelArg(k, 0, sizeof o, &o) || cl->SetKernelArg(k, 1, sizeof a, &a) ||
      cl->SetKernelArg(k, 2, sizeof b, &b) ||
      cl->EnqueueNDRangeKernel(rt->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL) ||
      cl->EnqueueReadBuffer(rt->queue, o, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL))
    goto done;
  ok = got == 10;
done:
  if (o) cl->ReleaseMemObject(o);
  if (k) cl->ReleaseKernel(k);
  if (p) cl->ReleaseProgram(p);
  return ok;
}

void lc_cl_probe_features(lc_cl_ctx *x) {
  lc_cl_rt *rt = x->rt;
  if (!rt->info.is_nvidia) return; /* inline PTX is NVIDIA's */
  const char *v = x->tc ? lc_tune_cache_get(x->tc, "probe dp4a") : NULL;
  if (v) {
    rt->info.has_dp4a = !strcmp(v, "1");
    return;
  }
  rt->info.has_dp4a = run_dp4a_probe(rt);
  if (x->tc && !lc_tune_cache_put(x->tc, "probe dp4a", rt->info.has_dp4a ? "1" : "0")) x->tuned_since_save++;
}
