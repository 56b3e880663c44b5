/* OpenCL runtime: device choice, fingerprint, queue, buffers, kernels and events. Programs are
 * built in cl_program.c. */
#include "backend/opencl/cl_rt.h"
#include "util/threadpool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/cl_program.h"
#include "tune/hash.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

const char *lc_cl_err_name(cl_int e) {
  switch (e) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_BUILD_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE)
    E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE_TYPE) E(CL_PLATFORM_NOT_FOUND_KHR)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef E
  default: return "unknown OpenCL error";
  }
}

lc_status lc_cl_fail(const lc_cl_rt *rt, cl_int err, const char *what, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, what);
  vsnprintf(msg, sizeof msg, what, ap);
  va_end(ap);
  lc_status s = LC_ERR_INTERNAL;
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY)
    s = LC_ERR_NO_MEMORY;
  return lc_error(s, "opencl (%s): %s: %s (%d)", rt ? rt->info.device : "no device", msg, lc_cl_err_name(err),
                  (int)err);
}

static void str_info(const lc_cl_api *cl, cl_device_id d, cl_device_info what, char *buf, size_t n) {
  buf[0] = 0;
  if (cl->GetDeviceInfo(d, what, n, buf, NULL) != CL_SUCCESS) buf[0] = 0;
  buf[n - 1] = 0;
}

/* Extensions are long: only their hash enters the fingerprint, a few flags are read from them. */
static void read_info(const lc_cl_api *cl, cl_platform_id p, cl_device_id d, lc_cl_dev_info *in) {
  memset(in, 0, sizeof *in);
  if (cl->GetPlatformInfo(p, CL_PLATFORM_NAME, sizeof in->platform, in->platform, NULL) != CL_SUCCESS)
    in->platform[0] = 0;
  in->platform[sizeof in->platform - 1] = 0;
  str_info(cl, d, CL_DEVICE_NAME, in->device, sizeof in->device);
  str_info(cl, d, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
  str_info(cl, d, CL_DRIVER_VERSION, in->driver, sizeof in->driver);
  str_info(cl, d, CL_DEVICE_VERSION, in->version, sizeof in->version);
  str_info(cl, d, CL_DEVICE_OPENCL_C_VERSION, in->c_version, sizeof in->c_version);
  cl->GetDeviceInfo(d, CL_DEVICE_TYPE, sizeof in->type, &in->type, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof in->compute_units, &in->compute_units, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof in->max_clock_mhz, &in->max_clock_mhz, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof in->max_wg, &in->max_wg, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof in->max_wi, in->max_wi, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof in->local_mem, &in->local_mem, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof in->global_mem, &in->global_mem, NULL);
  cl->GetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof in->max_alloc, &in->max_alloc, NULL);
  if (!in->max_wg) in->max_wg = 1;
  for (int i = 0; i < 3; i++)
    if (!in->max_wi[i]) in->max_wi[i] = 1;
  size_t elen = 0;
  uint64_t eh = 0;
  if (cl->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &elen) == CL_SUCCESS && elen) {
    char *ext = lc_malloc(elen + 1);
    if (ext && cl->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, elen, ext, NULL) == CL_SUCCESS) {
      ext[elen] = 0;
      in->has_fp16 = strstr(ext, "cl_khr_fp16") != NULL;
      eh = lc_hash64(ext, strlen(ext));
    }
    lc_free(ext);
  }
  in->is_nvidia = strstr(in->vendor, "NVIDIA") != NULL || strstr(in->platform, "NVIDIA") != NULL;
  in->is_pocl = strstr(in->platform, "Portable Computing Language") != NULL;
  snprintf(in->fingerprint, sizeof in->fingerprint, "%s|%s|%s|%s|%s|cu%u|ext%016llx", in->platform, in->device,
           in->driver, in->version, in->c_version, (unsigned)in->compute_units, (unsigned long long)eh);
}

/* "P:D", "P" or empty: the env choice of LOWCONV_OPENCL_DEVICE. */
static int parse_env_device(int *p, int *d) {
  const char *e = getenv("LOWCONV_OPENCL_DEVICE");
  if (!e || !*e) return 0;
  char *end;
  long pv = strtol(e, &end, 10), dv = -1;
  if (end == e || pv < 0) return -1;
  if (*end == ':') {
    const char *s = end + 1;
    dv = strtol(s, &end, 10);
    if (end == s || dv < 0) return -1;
  }
  if (*end) return -1;
  *p = (int)pv, *d = (int)dv;
  return 1;
}

#define LC_CL_MAX_PLATFORMS 16
#define LC_CL_MAX_DEVICES 64

/* Chooses (platform, device): explicit indices, else the first GPU, else the first device. */
static lc_status pick_device(const lc_cl_api *cl, int want_p, int want_d, lc_cl_rt *rt) {
  cl_platform_id plats[LC_CL_MAX_PLATFORMS];
  cl_uint np = 0;
  cl_int e = cl->GetPlatformIDs(LC_CL_MAX_PLATFORMS, plats, &np);
  if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0))
    return lc_error(LC_ERR_UNSUPPORTED,
                    "opencl: no OpenCL platform found (the ICD loader lists vendors in /etc/OpenCL/vendors or "
                    "$OCL_ICD_VENDORS; Debian: install pocl-opencl-icd or a GPU driver's ICD)");
  if (e != CL_SUCCESS) return lc_cl_fail(NULL, e, "clGetPlatformIDs");
  if (np > LC_CL_MAX_PLATFORMS) np = LC_CL_MAX_PLATFORMS;
  if (want_p >= (int)np)
    return lc_error(LC_ERR_INVALID_ARG, "opencl: platform %d asked for, but %u platform%s found", want_p,
                    (unsigned)np, np == 1 ? "" : "s");
  for (int pass = 0; pass < 2; pass++) {
    for (cl_uint pi = 0; pi < np; pi++) {
      if (want_p >= 0 && (int)pi != want_p) continue;
      cl_device_id devs[LC_CL_MAX_DEVICES];
      cl_uint nd = 0;
      if (cl->GetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, LC_CL_MAX_DEVICES, devs, &nd) != CL_SUCCESS) nd = 0;
      if (nd > LC_CL_MAX_DEVICES) nd = LC_CL_MAX_DEVICES;
      if (want_p >= 0 && want_d >= (int)nd)
        return lc_error(LC_ERR_INVALID_ARG, "opencl: device %d of platform %d asked for, but it has %u device%s",
                        want_d, want_p, (unsigned)nd, nd == 1 ? "" : "s");
      for (cl_uint di = 0; di < nd; di++) {
        if (want_d >= 0 && (int)di != want_d) continue;
        cl_device_type t = 0;
        cl->GetDeviceInfo(devs[di], CL_DEVICE_TYPE, sizeof t, &t, NULL);
        if (pass == 0 && want_d < 0 && !(t & CL_DEVICE_TYPE_GPU)) continue;
        rt->platform = plats[pi], rt->device = devs[di];
        rt->platform_index = (int)pi, rt->device_index = (int)di;
        return LC_OK;
      }
    }
  }
  return lc_error(LC_ERR_UNSUPPORTED, "opencl: no OpenCL device found on %u platform%s%s", (unsigned)np,
                  np == 1 ? "" : "s", want_p >= 0 ? " (in the platform asked for)" : "");
}

lc_status lc_cl_rt_create(int platform, int device, const char *cache_dir, lc_cl_rt **out) {
  *out = NULL;
  const lc_cl_api *cl = lc_cl_api_get();
  if (!cl) return LC_ERR_UNSUPPORTED; /* message set by the loader */
  if (platform < 0) {
    int ep = -1, ed = -1, r = parse_env_device(&ep, &ed);
    if (r < 0)
      return lc_error(LC_ERR_INVALID_ARG, "opencl: LOWCONV_OPENCL_DEVICE='%s' is not P or P:D (e.g. 0:0)",
                      getenv("LOWCONV_OPENCL_DEVICE"));
    if (r > 0) platform = ep, device = ed;
  }
  lc_cl_rt *rt = lc_calloc(1, sizeof *rt);
  if (!rt) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  rt->cl = cl;
  rt->ctag = -1;
  const char *tenv = getenv("LOWCONV_CL_TIMING");
  rt->timing = tenv ? (atoi(tenv) > 1 ? atoi(tenv) : 1) : 0;
  pthread_mutex_init(&rt->lock, NULL);
  pthread_mutex_init(&rt->blk, NULL);
  pthread_cond_init(&rt->bcv, NULL);
  double t0 = lc_now_ms();
  lc_status s = pick_device(cl, platform, device, rt);
  if (s) goto fail;
  double t1 = lc_now_ms();
  read_info(cl, rt->platform, rt->device, &rt->info);
  double t1b = lc_now_ms();
  cl_int e;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)rt->platform, 0};
  rt->context = cl->CreateContext(props, 1, &rt->device, NULL, NULL, &e);
  if (!rt->context) {
    s = lc_cl_fail(rt, e, "creating a context");
    goto fail;
  }
  double t1c = lc_now_ms();
  rt->queue = cl->CreateCommandQueue(rt->context, rt->device, CL_QUEUE_PROFILING_ENABLE, &e);
  if (!rt->queue) {
    s = lc_cl_fail(rt, e, "creating a command queue");
    goto fail;
  }
  double t2 = lc_now_ms();
  if ((s = lc_cl_programs_init(rt, cache_dir))) goto fail;
  if (rt->timing) /* the driver's own start (NVIDIA: CUDA initialization) is in the first two */
    fprintf(stderr, "lowconv: opencl context: platforms + devices %.1f ms, context + queue %.1f ms (device info %.1f, "
            "context %.1f, queue %.1f), caches %.1f ms\n", t1 - t0, t2 - t1, t1b - t1, t1c - t1b, t2 - t1c, lc_now_ms() - t2);
  *out = rt;
  return LC_OK;
fail:
  lc_cl_rt_destroy(rt);
  return s;
}

struct lc_cl_kernel_entry {
  lc_cl_kernel_entry *next;
  cl_kernel k;
  char key[];
};

int lc_cl_pinned_wanted(int dflt) {
  const char *env = getenv("LOWCONV_CL_PINNED");
  return env ? strcmp(env, "0") != 0 : dflt;
}

lc_status lc_cl_pinned_alloc(lc_cl_rt *rt, size_t bytes, void **ptr, cl_mem *m) {
  cl_int e;
  size_t n = bytes ? bytes : 4;
  *ptr = NULL;
  *m = rt->cl->CreateBuffer(rt->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, n, NULL, &e);
  if (*m) *ptr = rt->cl->EnqueueMapBuffer(rt->queue, *m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &e);
  if (*ptr) return LC_OK;
  if (*m) rt->cl->ReleaseMemObject(*m);
  *m = NULL;
  return lc_cl_fail(rt, e, "pinning %zu bytes of host memory", bytes);
}

void lc_cl_pinned_free(lc_cl_rt *rt, void *ptr, cl_mem m) {
  rt->cl->EnqueueUnmapMemObject(rt->queue, m, ptr, 0, NULL, NULL);
  rt->cl->Finish(rt->queue);
  rt->cl->ReleaseMemObject(m);
}

lc_status lc_cl_uploads_wait(lc_cl_rt *rt) {
  lc_status s = LC_OK;
  for (int h = 0; h < 2; h++)
    if (rt->up_ev[h]) {
      cl_int e = rt->cl->WaitForEvents(1, &rt->up_ev[h]);
      rt->cl->ReleaseEvent(rt->up_ev[h]);
      rt->up_ev[h] = NULL;
      if (e != CL_SUCCESS && !s) s = lc_cl_fail(rt, e, "uploading weights");
    }
  return s;
}

static void scratch_free(lc_cl_rt *rt) {
  (void)lc_cl_uploads_wait(rt); /* lc_cl_scratch has waited; at destroy a failure no longer matters */
  if (rt->scratch_pin) lc_cl_pinned_free(rt, rt->scratch, rt->scratch_pin);
  else lc_free(rt->scratch);
  rt->scratch = NULL, rt->scratch_pin = NULL, rt->scratch_bytes = 0;
}

/* Pinned on GPUs: NVIDIA's writes from pageable memory go through the driver's staging at a few
 * GB/s (IResNet-34's 143 MB took 48 ms on the H200). PoCL's device is the host: plain memory
 * unless LOWCONV_CL_PINNED=1 (tests take this path on PoCL too). */
lc_status lc_cl_scratch(lc_cl_rt *rt, size_t bytes, int *pinned) {
  if (rt->scratch_bytes >= bytes) {
    *pinned = rt->scratch_pin != NULL;
    return LC_OK;
  }
  lc_status s = lc_cl_uploads_wait(rt);
  if (s) return s;
  scratch_free(rt);
  void *p;
  cl_mem m;
  double t0 = lc_now_ms();
  if (lc_cl_pinned_wanted(!rt->info.is_pocl) && !lc_cl_pinned_alloc(rt, bytes, &p, &m)) {
    rt->scratch = p, rt->scratch_pin = m, rt->scratch_bytes = bytes;
    *pinned = 1;
    rt->scratch_ms += lc_now_ms() - t0;
    return LC_OK;
  } /* else no pinned memory to spare: the plain kind works too */
  *pinned = 0;
  if (!(rt->scratch = lc_malloc(bytes)))
    return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory for %zu bytes of repacking scratch", bytes);
  rt->scratch_bytes = bytes;
  return LC_OK;
}

void lc_cl_rt_destroy(lc_cl_rt *rt) {
  if (!rt) return;
  lc_cl_build_join(rt); /* background builds use the context */
  if (getenv("LOWCONV_CL_TIMING"))
    fprintf(stderr, "lowconv: opencl start-up: packing %.1f ms (%d convs packed before the device opened: copies), uploads %.1f ms, pinned scratch %.1f ms, conv prepare %.1f ms "
            "(programs %.1f ms: %d built, %d loaded; waited for %.1f ms); host: %ld enqueues %.1f ms, arguments %.1f ms, "
            "transfers %.1f ms\n",
            rt->pack_ms, rt->staged_used, rt->upload_ms, rt->scratch_ms, rt->prep_ms, rt->compile_ms, rt->programs_built, rt->programs_loaded,
            rt->wait_ms, rt->n_enq, rt->enq_ms, rt->args_ms, rt->xfer_ms);
  for (lc_cl_kernel_entry *e = rt->kernels, *n; e; e = n) {
    n = e->next;
    rt->cl->ReleaseKernel(e->k);
    lc_free(e);
  }
  lc_cl_programs_free(rt);
  lc_pool_destroy(rt->pack_pool);
  scratch_free(rt);
  if (rt->queue) rt->cl->ReleaseCommandQueue(rt->queue);
  if (rt->context) rt->cl->ReleaseContext(rt->context);
  pthread_cond_destroy(&rt->bcv);
  pthread_mutex_destroy(&rt->blk);
  pthread_mutex_destroy(&rt->lock);
  lc_free(rt);
}

/* Kernels that level fast times together: built as one program when the tuner runs. NVIDIA's
 * builds have a large fixed part (H200, driver 580, one program / one per kernel: direct's three
 * tiles 547 / 142 + 235 + 369 ms, gemm 32x32 + 64x64 590 / 417 + 367 ms). A group is fixed, not
 * made from what a model asks for, so that a warm start asking for one kernel finds its program. */
static const char *const kernel_groups[] = {
    "conv_c4h1w1 conv_c4h1w2 conv_c8h2w1", "gemm_32x32 gemm_64x64",   "gemmq_32x32 gemmq_64x64",
    "wino_wtrans4 wino_itrans4 wino_otrans4", "wino_wtrans2 wino_itrans2 wino_otrans2", "split_c4 split_c8",
};

static const char *group_of(const char *want) {
  size_t n = strlen(want);
  for (size_t g = 0; g < sizeof kernel_groups / sizeof kernel_groups[0]; g++)
    for (const char *p = kernel_groups[g]; p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL)
      if (!strncmp(p, want, n) && (p[n] == ' ' || p[n] == 0)) return kernel_groups[g];
  return NULL;
}

int lc_cl_kernel_options(int group, const char *options, const char *want, char *opt, size_t size) {
  const char *g = group ? group_of(want) : NULL;
  int n = snprintf(opt, size, "%s -DLC_ONE_KERNEL", options ? options : "");
  for (const char *p = g ? g : want; n >= 0 && (size_t)n < size && p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL) {
    int len = (int)(strchr(p, ' ') ? (size_t)(strchr(p, ' ') - p) : strlen(p));
    n += snprintf(opt + n, size - (size_t)n, " -DLC_WANT_%.*s", len, p);
  }
  return n >= 0 && (size_t)n < size ? 0 : -1;
}

lc_status lc_cl_kernel_of(lc_cl_rt *rt, const char *program, const char *options, const char *want, const char *name,
                          cl_kernel *out) {
  if (rt->info.is_pocl) return lc_cl_kernel(rt, program, options, name, out);
  char opt[192]; /* what a wanted program's options hold (lc_cl_want) */
  if (lc_cl_kernel_options(rt->group_kernels, options, want, opt, sizeof opt))
    return lc_error(LC_ERR_INVALID_ARG, "opencl: build options for %s too long", name);
  return lc_cl_kernel(rt, program, opt, name, out);
}

lc_status lc_cl_kernel(lc_cl_rt *rt, const char *program, const char *options, const char *name, cl_kernel *out) {
  char key[256];
  int n = snprintf(key, sizeof key, "%s|%s|%s", program, options ? options : "", name);
  if (n < 0 || (size_t)n >= sizeof key) return lc_error(LC_ERR_INVALID_ARG, "opencl: kernel key too long");
  for (lc_cl_kernel_entry *e = rt->kernels; e; e = e->next)
    if (!strcmp(e->key, key)) {
      *out = e->k;
      return LC_OK;
    }
  if (lc_cl_collecting(rt) && !lc_cl_program_known(rt, program, options)) {
    *out = NULL;
    return lc_cl_want_program(rt, program, options);
  }
  cl_program prog;
  lc_status s = lc_cl_program(rt, program, options, &prog);
  if (s) return s;
  lc_cl_kernel_entry *e = lc_malloc(sizeof *e + (size_t)n + 1);
  if (!e) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  cl_int err;
  e->k = rt->cl->CreateKernel(prog, name, &err);
  if (!e->k) {
    lc_free(e);
    return lc_cl_fail(rt, err, "creating kernel %s of program %s", name, program);
  }
  memcpy(e->key, key, (size_t)n + 1);
  e->next = rt->kernels;
  rt->kernels = e;
  *out = e->k;
  return LC_OK;
}

lc_status lc_cl_buffer(lc_cl_rt *rt, size_t bytes, const void *init, cl_mem *out) {
  *out = NULL;
  if (!bytes) bytes = 4;
  if (bytes > rt->info.max_alloc)
    return lc_error(LC_ERR_UNSUPPORTED, "opencl (%s): a buffer of %zu bytes exceeds the device's largest "
                    "allocation (%llu bytes)", rt->info.device, bytes, (unsigned long long)rt->info.max_alloc);
  cl_int e;
  cl_mem_flags f = CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0);
  *out = rt->cl->CreateBuffer(rt->context, f, bytes, (void *)init, &e);
  if (!*out) return lc_cl_fail(rt, e, "allocating %zu bytes", bytes);
  return LC_OK;
}

lc_status lc_cl_write(lc_cl_rt *rt, cl_mem m, size_t off, size_t bytes, const void *src) {
  cl_int e = rt->cl->EnqueueWriteBuffer(rt->queue, m, CL_TRUE, off, bytes, src, 0, NULL, NULL);
  return e ? lc_cl_fail(rt, e, "uploading %zu bytes", bytes) : LC_OK;
}

lc_status lc_cl_read(lc_cl_rt *rt, cl_mem m, size_t off, size_t bytes, void *dst) {
  cl_int e = rt->cl->EnqueueReadBuffer(rt->queue, m, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
  return e ? lc_cl_fail(rt, e, "downloading %zu bytes", bytes) : LC_OK;
}

void lc_cl_release_mem(lc_cl_rt *rt, cl_mem *m) {
  if (*m) rt->cl->ReleaseMemObject(*m);
  *m = NULL;
}

lc_status lc_cl_finish(lc_cl_rt *rt) {
  cl_int e = rt->cl->Finish(rt->queue);
  return e ? lc_cl_fail(rt, e, "waiting for the queue") : LC_OK;
}

lc_status lc_cl_set_args(lc_cl_rt *rt, cl_kernel k, const char *name, int nargs, const size_t *sizes,
                         const void *const *vals) {
  if (rt->dry || rt->collect_pass) return LC_OK;
  double t0 = lc_now_ms();
  for (int i = 0; i < nargs; i++) {
    cl_int e = rt->cl->SetKernelArg(k, (cl_uint)i, sizes[i], vals[i]);
    if (e) return lc_cl_fail(rt, e, "setting argument %d of kernel %s", i, name);
  }
  rt->args_ms += lc_now_ms() - t0;
  return LC_OK;
}

lc_status lc_cl_enqueue(lc_cl_rt *rt, cl_kernel k, const char *name, int dims, const size_t *gws, const size_t *lws,
                        cl_event *ev) {
  if (ev) *ev = NULL;
  if (rt->dry || rt->collect_pass) return LC_OK;
  size_t g[3];
  for (int i = 0; i < dims; i++) {
    g[i] = gws[i];
    if (lws && lws[i]) g[i] = (gws[i] + lws[i] - 1) / lws[i] * lws[i]; /* kernels guard the overhang */
    if (!g[i]) return lc_error(LC_ERR_INTERNAL, "opencl: kernel %s enqueued with an empty range", name);
  }
  double t0 = lc_now_ms();
  cl_int e = rt->cl->EnqueueNDRangeKernel(rt->queue, k, (cl_uint)dims, NULL, g, lws && lws[0] ? lws : NULL, 0,
                                          NULL, ev);
  rt->enq_ms += lc_now_ms() - t0, rt->n_enq++;
  if (e) {
    if (ev) *ev = NULL;
    return lc_cl_fail(rt, e, "launching kernel %s (global %zu x %zu x %zu, local %zu x %zu x %zu)", name, g[0],
                      dims > 1 ? g[1] : 1, dims > 2 ? g[2] : 1, lws ? lws[0] : 0, lws && dims > 1 ? lws[1] : 0,
                      lws && dims > 2 ? lws[2] : 0);
  }
  return LC_OK;
}

lc_status lc_cl_event_ms(lc_cl_rt *rt, cl_event first, cl_event last, double *ms) {
  cl_ulong t0 = 0, t1 = 0;
  cl_int e = rt->cl->WaitForEvents(1, &last);
  if (!e) e = rt->cl->GetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  if (!e) e = rt->cl->GetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  rt->cl->ReleaseEvent(first);
  rt->cl->ReleaseEvent(last);
  if (e) return lc_cl_fail(rt, e, "reading a kernel's profiling times");
  *ms = t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
  return LC_OK;
}

lc_status lc_cl_enumerate(void (*cb)(void *u, int p, int d, const lc_cl_dev_info *info), void *u) {
  const lc_cl_api *cl = lc_cl_api_get();
  if (!cl) return LC_ERR_UNSUPPORTED;
  cl_platform_id plats[LC_CL_MAX_PLATFORMS];
  cl_uint np = 0;
  cl_int e = cl->GetPlatformIDs(LC_CL_MAX_PLATFORMS, plats, &np);
  if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0))
    return lc_error(LC_ERR_UNSUPPORTED, "opencl: no OpenCL platform found (no vendor ICD registered in "
                    "/etc/OpenCL/vendors or $OCL_ICD_VENDORS)");
  if (e) return lc_cl_fail(NULL, e, "clGetPlatformIDs");
  if (np > LC_CL_MAX_PLATFORMS) np = LC_CL_MAX_PLATFORMS;
  lc_cl_dev_info *info = lc_malloc(sizeof *info);
  if (!info) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  for (cl_uint pi = 0; pi < np; pi++) {
    cl_device_id devs[LC_CL_MAX_DEVICES];
    cl_uint nd = 0;
    if (cl->GetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, LC_CL_MAX_DEVICES, devs, &nd) != CL_SUCCESS) nd = 0;
    if (nd > LC_CL_MAX_DEVICES) nd = LC_CL_MAX_DEVICES;
    for (cl_uint di = 0; di < nd; di++) {
      read_info(cl, plats[pi], devs[di], info);
      cb(u, (int)pi, (int)di, info);
    }
  }
  lc_free(info);
  return LC_OK;
}
