/* The OpenCL backend's context state and its conv entry points (backend/backend.h). */
#ifndef LC_CL_BACKEND_H
#define LC_CL_BACKEND_H

#include "backend/backend.h"
#include "backend/opencl/cl_conv.h"

struct lc_conv;
struct lc_tune_cache;

typedef struct lc_cl_ctx {
  lc_cl_rt *rt;
  struct lc_tune_cache *tc;   /* tuning cache of this device (tune/tune_cache.h), NULL if none */
  lc_tune_level tune;
  int tuned_since_save;       /* entries put since the last save */
} lc_cl_ctx;

lc_status lc_cl_conv_create(struct lc_conv *c, const lc_conv_desc *d);
void lc_cl_conv_free(struct lc_conv *c);
lc_status lc_cl_conv_prepare(struct lc_conv *c, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape);
lc_status lc_cl_conv_run_host(struct lc_conv *c, const float *in, float *out);
lc_status lc_cl_conv_weights(const struct lc_conv *c, float *oihw);
/* Weights packed while the device still opens (lc_backend_ops.stage_*; ctx->dev is not used):
 * add notes an fp32 OIHW array in the device layout for node `tag` (0: not noted, e.g. past
 * `limit` bytes in all), run packs every noted one on a few threads, drop frees tag's (-1: all).
 * A conv created from the same array, geometry and format then copies the image. */
int lc_cl_stage_add(lc_context *ctx, const float *src, size_t G, size_t cout_g, size_t cin_g, size_t taps, int tag,
                    size_t limit);
lc_status lc_cl_stage_run(lc_context *ctx);
void lc_cl_stage_drop(lc_context *ctx, int tag);

/* Enqueues the prepared conv (no wait). */
lc_status lc_cl_conv_enqueue(struct lc_conv *c, cl_mem in, cl_mem out, cl_mem res);

/* Device time of each of reps runs (profiling events, ms), one at a time. */
lc_status lc_cl_conv_time(struct lc_conv *c, const lc_buffer *in, lc_buffer *out, int reps, double *ms);

/* Measured limits of the device: fp32 FMA rate, read bandwidth, back-to-back launch latency
 * (cl_limits.c; cached in the tuning cache, so measured once per device and driver). */
typedef struct lc_cl_limits {
  double fma_gflops, read_gbs, launch_us;
} lc_cl_limits;
lc_status lc_cl_limits_get(lc_context *ctx, lc_cl_limits *out);

/* Sets rt->info.has_dp4a (NVIDIA: inline-PTX probe, cached in the tuning cache). */
void lc_cl_probe_features(lc_cl_ctx *x);

/* Chooses the candidate for the prepared conv (cl_tune.c): tuning cache, else timing at the
 * context's level, else the heuristic; allocates cc->ws when the choice needs workspace. */
lc_status lc_cl_tune(struct lc_conv *c, lc_cl_conv *cc, lc_cl_cand *out, lc_conv_device_info *info);

#endif
