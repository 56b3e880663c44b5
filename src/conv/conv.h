/* Internal conv operator: descriptor, packed weights, and the plan made by prepare. */
#ifndef LC_CONV_CONV_H
#define LC_CONV_CONV_H

#include "api/context.h"
#include "kernels/kernels.h"
#include "lowconv.h"
#include "quant/quant.h"

/* K blocking of every GEMM route: K is consumed in blocks of LC_KC so an A micro-panel
 * (mr x KC) stays in L1 and a tile of B (KC x tile) in L2. Fixed (not derived from the budget or
 * the thread count) so every route's summation order, and thus its output, is the same for any
 * budget and thread count. */
#define LC_KC 256
/* Pixels per im2col tile when the budget allows: 256 x 256 floats = 256 KiB, half the L2 of the
 * machines we target, leaving room for the weight panels. */
#define LC_TILE_PIX_MAX 256

typedef struct lc_plan {
  lc_route route;
  int64_t n, ih, iw, oh, ow;
  int64_t pt, pl, pb, pr;
  size_t ihw, ohw;
  size_t tile;          /* pixels per tile (im2col, gemm1x1) or chunk (igemm); multiple of the panel width */
  size_t ntiles;        /* tiles per image and group */
  size_t ocsplit;       /* weight panels split into this many tasks per tile (GEMM routes) */
  int variant;          /* route-specific way of running (depthwise: row / long-row / low-budget) */
  size_t ws_thread;     /* bytes of workspace per thread slot (64-aligned) */
  int threads;          /* threads used (<= context threads; fewer when the budget is tight) */
  size_t ws_total;
} lc_plan;

struct lc_conv {
  lc_context *ctx;
  lc_conv_desc d;       /* copy; weights/bias pointers cleared */
  int64_t cin_g, cout_g, taps;
  size_t K;             /* cin_g * kh * kw, ordered (ky, kx, ic) */
  size_t pw;            /* width of a packed weight panel (mr for NCHW, nr for NHWC) */
  size_t npanels;       /* weight panels per group */
  float *wpack;         /* [groups][npanels][K][pw], zero padded */
  float *wdw;           /* depthwise layout: NCHW [c][taps], NHWC [taps][c]; NULL unless depthwise */
  float *bias;          /* out_channels or NULL */
  float *wwino;         /* Winograd-domain weights (route_winograd.c) or NULL */
  lc_qmatrix *qw;       /* Q8/Q4: the weights as [out_channel][K], blocks along ic per tap; wpack is NULL */
  size_t weight_bytes;
  int depthwise;        /* groups == in == out channels */
  int prepared;
  lc_plan plan;
  void *dev;            /* device backend's conv (backend/backend.h); NULL on the CPU */
  lc_conv_device_info dev_info;
};

/* Where task t of a GEMM-like route lies: tasks are image x group x tile x weight-panel split
 * (split fastest); [q0, q1) is the split's share of the route's npanels weight panels. */
typedef struct lc_task_pos {
  size_t n, g, tile, q0, q1;
} lc_task_pos;

static inline lc_task_pos lc_task_decode(const lc_plan *p, size_t groups, size_t npanels, size_t task) {
  lc_task_pos t;
  size_t split = task % p->ocsplit;
  task /= p->ocsplit;
  t.tile = task % p->ntiles;
  t.g = task / p->ntiles % groups;
  t.n = task / p->ntiles / groups;
  t.q0 = npanels * split / p->ocsplit;
  t.q1 = npanels * (split + 1) / p->ocsplit;
  return t;
}

/* Epilogue parameters for a tile (bias offset by the caller). */
void lc_conv_epilogue(const lc_conv *c, lc_gemm_params *p);

/* Quantized weights (qweights.c). */
lc_status lc_conv_quantize(lc_conv *c, const lc_conv_desc *d);
/* Bytes of a thread's panel buffer for dequantized weights (0 for fp32 weights). */
size_t lc_qpanel_bytes(const lc_conv *c);
/* The weight panel q of group g for k in [k0, k0 + kn): element (oc i, k) at [i * rs + k * cs].
 * fp32: a pointer into wpack ([k][pw]: rs 1, cs pw); Q8/Q4: dequantized into buf (lc_qpanel_bytes),
 * row-major for NCHW (the A operand takes any strides), [k][pw] for NHWC (B needs rows of pw). */
const float *lc_conv_wpanel(const lc_conv *c, int64_t g, size_t q, size_t k0, size_t kn, float *buf, size_t *rs,
                           size_t *cs);
/* Row oc (K values, order (ky, kx, ic)) dequantized into row (Q8/Q4 only). */
void lc_conv_qrow(const lc_conv *c, int64_t oc, float *row);
/* Q8/Q4 1x1 conv over few pixels as a GEMV (lc_qgemv); 1 if this plan uses it. */
int lc_conv_use_qgemv(const lc_conv *c, const lc_plan *p);
/* Upper bound of the bytes the GEMV path allocates in run (counted against the budget). */
size_t lc_qgemv_bytes_bound(const lc_conv *c, const lc_plan *p);
lc_status lc_run_qgemv(const lc_conv *c, const float *in, float *out);

/* Weight (oc within group g, k) from the packed layout; used by the direct route. */
static inline float lc_conv_w(const lc_conv *c, int64_t g, int64_t ocg, size_t k) {
  size_t panel = (size_t)g * c->npanels + (size_t)ocg / c->pw;
  return c->wpack[(panel * c->K + k) * c->pw + (size_t)ocg % c->pw];
}

/* Route planning (sets plan->tile, ws_thread, threads) and running. Return LC_ERR_UNSUPPORTED or
 * LC_ERR_BUDGET when the route can't run this shape within the budget. */
lc_status lc_plan_direct(const lc_conv *c, lc_plan *p);
lc_status lc_plan_gemm1x1(const lc_conv *c, lc_plan *p);
lc_status lc_plan_im2col(const lc_conv *c, lc_plan *p);
lc_status lc_plan_igemm(const lc_conv *c, lc_plan *p);
lc_status lc_plan_depthwise(const lc_conv *c, lc_plan *p);
lc_status lc_plan_winograd(const lc_conv *c, lc_plan *p);
void lc_run_direct(const lc_conv *c, const float *in, float *out, unsigned char *ws);
void lc_run_gemm(const lc_conv *c, const float *in, float *out, unsigned char *ws);
void lc_run_depthwise(const lc_conv *c, const float *in, float *out, unsigned char *ws);
void lc_run_winograd(const lc_conv *c, const float *in, float *out, unsigned char *ws);
/* Winograd weights (transformed at create when the conv is 3x3, stride 1, dilation 1): NULL otherwise. */
lc_status lc_winograd_pack(lc_conv *c, const float *w);
/* 1 when AUTO should try winograd for this conv (shape, layout and channel thresholds). */
int lc_winograd_auto(const lc_conv *c);

lc_status lc_conv_desc_check(const lc_conv_desc *d);
/* A device conv run on host pointers: upload, run, download (backend/opencl). */
lc_status lc_conv_run_host(lc_conv *c, const float *in, float *out);

/* 1 if the weights route r reads are held (not released by lc_conv_release_unused). */
int lc_conv_has_weights_for(const lc_conv *c, lc_route r);

/* Picks the route for LC_ROUTE_AUTO. */
lc_status lc_select_route(const lc_conv *c, lc_plan *p);

/* Threads usable when each needs per_thread bytes under the budget; 0 if not even one fits. */
int lc_threads_for_budget(const lc_conv *c, size_t per_thread);

#endif
