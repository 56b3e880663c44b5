/* Internal conv operator: descriptor, packed weights, and the plan made by prepare. The routes
 * and what they share are in conv/route.h. */
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

typedef struct lc_conv_plan {
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
  size_t hint_tile;     /* tuner's tile size for the routes that take one (0 = the route's choice) */
} lc_conv_plan;

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
  float *slopes;        /* LC_ACT_PRELU: out_channels slopes, else NULL */
  const float *res;     /* the residual of one run (output's shape), set on that run's copy only */
  float *padv;          /* lc_conv_desc.pad_values (in_channels), NULL when none or all 0 */
  float *wpadv;         /* with padv: [out_channel][tap] sum over ic of w * padv (route_direct.c) */
  float *wwino;         /* Winograd-domain weights (route_winograd.c) or NULL */
  size_t wwino_bytes;
  float *wwino4;        /* F(4x4) weights (route_winograd4.c) or NULL */
  size_t wwino4_bytes;
  lc_qmatrix *qw;       /* Q8/Q4: the weights as [out_channel][K], blocks along ic per tap; wpack is NULL */
  size_t weight_bytes;
  int depthwise;        /* groups == in == out channels */
  int prepared;
  int released;         /* lc_conv_release_unused ran */
  lc_conv_plan plan;
  void *dev;            /* device backend's conv (backend/backend.h); NULL on the CPU */
  lc_conv_device_info dev_info; /* CPU: the route label and the tuner's figures (conv/autotune.h) */
  int tune_src;         /* LC_TSRC_* (conv/autotune.h) */
};

/* Flushes every weight representation of c out of the CPU caches (x86; a no-op elsewhere): the
 * tuner times each run from there, as a layer of a model finds its weights (autotune.c). */
void lc_conv_evict_weights(const lc_conv *c);

/* Quantized weights (qweights.c). */
lc_status lc_conv_quantize(lc_conv *c, const lc_conv_desc *d);
/* c takes qm (the struct copied; arrays it borrows stay borrowed) as its quantized weights. */
lc_status lc_conv_adopt_qmatrix(lc_conv *c, const lc_qmatrix *qm);
/* lc_conv_create for weights already in lowconv's quantized layout (e.g. codes mapped from a
 * model file, lc_qmatrix_wrap): nothing is copied; the borrowed arrays must outlive the conv.
 * desc gives the shape (its weight pointers are ignored). CPU contexts only: */
lc_status lc_conv_create_qm(lc_context *ctx, const lc_conv_desc *desc, const lc_qmatrix *qm, lc_conv **out);
/* 1 if ctx's convs can adopt a host lc_qmatrix (the CPU backend); device backends pack their own. */
int lc_conv_takes_qmatrix(const lc_context *ctx);
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
int lc_conv_use_qgemv(const lc_conv *c, const lc_conv_plan *p);
/* Upper bound of the bytes the GEMV path allocates in run (counted against the budget). */
size_t lc_qgemv_bytes_bound(const lc_conv *c, const lc_conv_plan *p);
lc_status lc_run_qgemv(const lc_conv *c, const float *in, float *out);

/* Weight (oc within group g, k) from the packed layout; used by the direct route. */
static inline float lc_conv_w(const lc_conv *c, int64_t g, int64_t ocg, size_t k) {
  size_t panel = (size_t)g * c->npanels + (size_t)ocg / c->pw;
  return c->wpack[(panel * c->K + k) * c->pw + (size_t)ocg % c->pw];
}

lc_status lc_conv_desc_check(const lc_conv_desc *d);
/* A device conv run on host pointers: upload, run, download (backend/opencl). */
lc_status lc_conv_run_host(lc_conv *c, const float *in, float *out);

/* 1 if the conv holds weights route r reads (routes.c). */
int lc_conv_has_weights_for(const lc_conv *c, lc_route r);

#endif
