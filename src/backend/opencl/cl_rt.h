/* OpenCL runtime of the backend: the API loaded at run time (so the library runs, and says why,
 * where no OpenCL library is installed), one device per context, its in-order queue with
 * profiling, programs built from the embedded sources through the on-disk program cache, and
 * kernels cached by (program, options, name). Every cl object is released on every path. */
#ifndef LC_CL_RT_H
#define LC_CL_RT_H

#include "backend/opencl/cl_api.h"
#include "lowconv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct lc_cl_dev_info {
  char platform[128], device[128], vendor[128], driver[64], version[64], c_version[64];
  cl_device_type type;
  cl_uint compute_units, max_clock_mhz;
  size_t max_wg;           /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  size_t max_wi[3];        /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
  cl_ulong local_mem, global_mem, max_alloc;
  int has_fp16, has_dp4a, is_nvidia, is_pocl;
  char fingerprint[512];   /* platform|device|driver|version|c_version|CUs|extension hash */
} lc_cl_dev_info;

typedef struct lc_cl_kernel_entry lc_cl_kernel_entry;
typedef struct lc_cl_program_entry lc_cl_program_entry;

/* A program to build (lc_cl_build_wanted): its cache key, embedded file name and options. */
typedef struct lc_cl_want {
  char key[256], name[64], options[192];
} lc_cl_want;

/* rt->dry: how kernels are enqueued. LC_CL_COLLECT: a kernel whose program is not built yet is
 * only listed in rt->want (lc_cl_kernel gives NULL); arguments are not set and nothing launches.
 * LC_CL_NOLAUNCH: kernels are built and created, nothing is set or launched. Either lets a
 * family's enqueue name the kernels a candidate needs without running it. */
enum { LC_CL_RUN = 0, LC_CL_COLLECT = 1, LC_CL_NOLAUNCH = 2 };
/* Kernels only name their programs: a candidate list being collected, or a model's collect pass
 * (rt->collect_pass: every op of a plan created once to list its programs, then freed, so the
 * whole plan's programs build at once on worker threads). */
#define lc_cl_collecting(rt) ((rt)->dry == LC_CL_COLLECT || (rt)->collect_pass)

typedef struct lc_cl_rt {
  const lc_cl_api *cl;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;  /* in order, profiling enabled */
  lc_cl_dev_info info;
  int platform_index, device_index;
  char *cache_dir;         /* NULL: no on-disk caches */
  int save_binaries;       /* write built programs into cache_dir (lc_cl_programs_init) */
  pthread_mutex_t lock;    /* serialises enqueues and the caches from several caller threads */
  lc_cl_program_entry *programs;
  lc_cl_kernel_entry *kernels;
  double compile_ms;       /* time spent building / loading programs so far */
  int programs_built, programs_loaded; /* from source / from the program cache */
  int staged_used;         /* convs whose weights came packed from before the device opened (cl_conv.c) */
  int warned_cache;        /* a cache problem is warned about once */
  int dry;                 /* LC_CL_RUN, LC_CL_COLLECT or LC_CL_NOLAUNCH (set under lock) */
  lc_cl_want *want;        /* programs listed by LC_CL_COLLECT, built by lc_cl_build_wanted */
  int nwant, capwant;
  int collect_pass;        /* a model's first pass: convs and ops only list their programs (lc_cl_collecting) */
  int group_kernels;       /* the tuner times candidates: kernels of one group share a program (cl_rt.c) */
  atomic_int tune_warm;    /* the tuner has loaded the device once (cl_tune.c warm_clocks) */
  pthread_mutex_t blk;     /* guards programs, the build counters and bg while background builds run */
  pthread_cond_t bcv;      /* signalled when a background build is done */
  struct lc_cl_bg *bg;     /* background builds of a model's collect pass (NULL: none) */
  int ctag;                /* the collect pass's current node (-1: none): its wants are tagged */
  int *tags;               /* pairs (node tag, index in the wanted list) of the collect pass */
  int ntags, captags;
  double pack_ms, upload_ms, prep_ms; /* start-up time: weight repacking, uploads, prepare */
  double scratch_ms, wait_ms;         /* of it: the pinned scratch allocated; waits for background builds */
  double args_ms, enq_ms, xfer_ms;    /* host time in clSetKernelArg, kernel enqueues, transfers */
  long n_enq;
  double tune_launch_ms;  /* the tuner's least host time per launch so far (under lock; 0: none yet) */
  int timing;             /* LOWCONV_CL_TIMING's level (0: off) */
  unsigned char *scratch; /* weight repacking at conv create, reused (under lock) */
  size_t scratch_bytes;
  cl_mem scratch_pin;     /* the buffer scratch is mapped from when it is pinned (NULL: malloc'ed) */
  cl_event up_ev[2];      /* copies still reading from scratch's two halves (lc_cl_uploads_wait) */
  struct lc_pool *pack_pool; /* threads repacking weights (under lock), made at the first large conv */
  int up_next;            /* the half the next weights are packed into */
} lc_cl_rt;

/* Opens platform/device (-1, -1: LOWCONV_OPENCL_DEVICE="P:D" if set, else the first GPU, else the
 * first device). cache_dir: NULL = default ($XDG_CACHE_HOME/lowconv or ~/.cache/lowconv),
 * "" = no on-disk cache. */
lc_status lc_cl_rt_create(int platform, int device, const char *cache_dir, lc_cl_rt **out);
void lc_cl_rt_destroy(lc_cl_rt *rt);

/* Calls cb for every device of every platform. */
lc_status lc_cl_enumerate(void (*cb)(void *u, int p, int d, const lc_cl_dev_info *info), void *u);

/* A kernel of an embedded program ("conv_direct", ...) built with these options (-D...), cached.
 * The kernel object is shared: set its arguments and enqueue under rt->lock. */
lc_status lc_cl_kernel(lc_cl_rt *rt, const char *program, const char *options, const char *name,
                       cl_kernel *out);
/* Kernel `name` of the program built for kernel `want` alone (-DLC_ONE_KERNEL -DLC_WANT_<want>
 * after the options), or with rt->group_kernels for want's group (cl_rt.c), so that a cold start
 * compiles only the kernels it uses; on PoCL, whose builds are slow and whose tests use most
 * kernels, of the whole file. */
lc_status lc_cl_kernel_of(lc_cl_rt *rt, const char *program, const char *options, const char *want, const char *name,
                          cl_kernel *out);
/* Those build options into opt[size]; -1 if they don't fit. */
int lc_cl_kernel_options(int group, const char *options, const char *want, char *opt, size_t size);

/* Buffers. lc_cl_buffer refuses sizes over the device's max allocation with a message. */
/* Pinned host memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer), and whether to use it:
 * LOWCONV_CL_PINNED=0 / 1 overrides dflt. */
int lc_cl_pinned_wanted(int dflt);
lc_status lc_cl_pinned_alloc(lc_cl_rt *rt, size_t bytes, void **ptr, cl_mem *m);
void lc_cl_pinned_free(lc_cl_rt *rt, void *ptr, cl_mem m);
/* rt->scratch grown to `bytes` (caller holds rt->lock); *pinned: it is mapped device-visible memory,
 * so an upload from it is one DMA (write it with lc_cl_write, not CL_MEM_COPY_HOST_PTR). */
lc_status lc_cl_scratch(lc_cl_rt *rt, size_t bytes, int *pinned);
/* Waits for the weight copies still reading scratch and releases their events (rt->lock held). */
lc_status lc_cl_uploads_wait(lc_cl_rt *rt);
lc_status lc_cl_buffer(lc_cl_rt *rt, size_t bytes, const void *init, cl_mem *out);
lc_status lc_cl_write(lc_cl_rt *rt, cl_mem m, size_t offset, size_t bytes, const void *src);
lc_status lc_cl_read(lc_cl_rt *rt, cl_mem m, size_t offset, size_t bytes, void *dst);
void lc_cl_release_mem(lc_cl_rt *rt, cl_mem *m);
lc_status lc_cl_finish(lc_cl_rt *rt);

/* Sets kernel arguments: sizes[i] bytes at vals[i] (a cl_mem by address, or a value). */
lc_status lc_cl_set_args(lc_cl_rt *rt, cl_kernel k, const char *name, int nargs, const size_t *sizes,
                         const void *const *vals);
/* Enqueues a 1-3 D range; lws NULL = the driver's choice; ev (may be NULL) gets the event. */
lc_status lc_cl_enqueue(lc_cl_rt *rt, cl_kernel k, const char *name, int dims, const size_t *gws,
                        const size_t *lws, cl_event *ev);
/* Device time from the start of `first` to the end of `last`, in ms; releases both events. */
lc_status lc_cl_event_ms(lc_cl_rt *rt, cl_event first, cl_event last, double *ms);

/* lc_error with the device named and the OpenCL error decoded: "opencl (NVIDIA H200): what: CL_..." */
lc_status lc_cl_fail(const lc_cl_rt *rt, cl_int err, const char *what, ...);
const char *lc_cl_err_name(cl_int err);

#endif
