/* A convolution on the OpenCL device: weights repacked once at create (cl_conv_args.h layout;
 * q8/q4 codes stay codes), and kernel families, each a table entry: which convs it can run, its
 * tile variants and local sizes, and how it is enqueued. The tuner (cl_tune.c) times the
 * candidates the families offer and keeps the fastest that matches the baseline's output. */
#ifndef LC_CL_CONV_H
#define LC_CL_CONV_H

#include "backend/opencl/cl_conv_args.h"
#include "backend/opencl/cl_rt.h"

/* One way to run a conv: a family's variant with a local size. */
typedef struct lc_cl_cand {
  int family, variant;
  size_t lws[3];              /* lws[0] == 0: the driver's choice */
} lc_cl_cand;

typedef struct lc_cl_conv {
  lc_cl_rt *rt;
  lc_weight_format wfmt;
  int asym;
  int depthwise;              /* groups == cin == cout */
  int is1x1;                  /* 1x1, stride 1, no pad, dilation 1 */
  cl_mem w, sc, of, bias;     /* sc/of/bias: a 4-byte dummy when absent (kernels never read it) */
  cl_mem ws;                  /* split-K partial sums (grown at prepare), NULL if none */
  size_t ws_bytes;
  cl_mem wu;                  /* Winograd-transformed weights (family wino), NULL unless it may run */
  size_t wu_bytes;
  int wu_m, wu_op;            /* what wu holds: F(wu_m x wu_m, 3x3), output channels padded to wu_op */
  size_t weight_bytes;        /* device bytes of w + sc + of + bias */
  char options[64];           /* program build options: "-DWFMT=2 -DASYM=1" */
  lc_cl_conv_args a;          /* filled at create (weights, act) and prepare (sizes, strides) */
  lc_cl_cand cand;            /* chosen at prepare */
  cl_mem stage_in, stage_out; /* lc_conv_run on host pointers: staging buffers, grown as needed */
  size_t stage_in_bytes, stage_out_bytes;
} lc_cl_conv;

#define LC_CL_MAX_LWS 16

typedef struct lc_cl_family {
  const char *name;           /* "direct", "gemm", "gemv", "dw" */
  const char *program;        /* embedded source (kernels/<program>.cl) */
  int nvariants;
  const char *const *variants; /* variant names: "c4h1w1", "64x64", ... */
  /* 1 if variant v can run the conv c (c->a holds the prepared sizes). */
  int (*eligible)(const lc_cl_conv *c, int v);
  /* Local sizes to try, the heuristic's first; level 0 none .. 3 heavy (more sizes). */
  int (*local_sizes)(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max);
  /* Device workspace bytes the candidate needs (split-K partials), 0 if none. */
  size_t (*ws_bytes)(const lc_cl_conv *c, const lc_cl_cand *cand);
  /* Sets arguments and enqueues every kernel of the candidate (under rt->lock). first/last get
   * the events of the first and last kernel (the same event retained twice if there is one);
   * either may be NULL when not timing. res may be NULL (c->a.has_res says). */
  lc_status (*enqueue)(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                       cl_event *first, cl_event *last);
} lc_cl_family;

extern const lc_cl_family lc_cl_family_ref;    /* cl_fam_ref.c: the baseline, one output per item */
extern const lc_cl_family lc_cl_family_direct; /* cl_fam_direct.c: c4h1w1 ... c8h1w4 */
extern const lc_cl_family lc_cl_family_dw;     /* cl_fam_direct.c: depthwise */
extern const lc_cl_family lc_cl_family_gemv;   /* cl_fam_direct.c: 1x1 on few pixels */
extern const lc_cl_family lc_cl_family_gemm;   /* cl_fam_gemm.c: local-memory implicit GEMM */
extern const lc_cl_family lc_cl_family_wino;   /* cl_fam_wino.c: Winograd F(2x2, 3x3) */

/* Family wino's transformed weights for variant v: made on the device before its candidates run
 * (again only when the transform changes), released when another family is chosen. */
lc_status lc_cl_wino_ready(lc_cl_conv *c, int v);
void lc_cl_wino_release(lc_cl_conv *c);
extern const lc_cl_family lc_cl_family_gemvq;  /* cl_fam_gemvq.c: 1x1 on one pixel, dp4a */
extern const lc_cl_family lc_cl_family_gemmq;  /* cl_fam_gemmq.c: q8/q4 implicit GEMM, dp4a */
extern const lc_cl_family lc_cl_family_wide;   /* cl_fam_wide.c: large kernels, few output channels */
extern const lc_cl_family lc_cl_family_split;  /* cl_fam_split.c: the reduction split in a work-group */
extern const lc_cl_family lc_cl_family_wino9;  /* cl_fam_wino9.c: Winograd F(3x3) over a 9x9's sub-kernels */

/* Family wino9's transformed weights (c->wu, wu_m 9): made before its candidates run. */
lc_status lc_cl_wino9_ready(lc_cl_conv *c);

/* Family wide's pieces that wino9 runs on its grouped 3x3 conv over the tile grid (c: that conv):
 * eligibility, local sizes (lws[2]: the split multiplier), the partial sums' bytes, and the tile
 * kernel alone (partials into c->ws at offset 0, in read at c->a.in_off; *ksplit: their chunks). */
int lc_cl_wide_eligible(const lc_cl_conv *c, int v);
int lc_cl_wide_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max);
size_t lc_cl_wide_partial_bytes(const lc_cl_conv *c, int v, size_t mul);
lc_status lc_cl_wide_partials(const lc_cl_conv *c, int v, const size_t lws[3], cl_mem in, int *ksplit, cl_event *ev);

/* Every family, in the order the heuristic tries them (cl_families.c); the baseline is last. */
extern const lc_cl_family *const lc_cl_families[];
extern const int lc_cl_nfamilies;

/* Candidates that quantize the activations (gemvq) write the input as their kernels see it (x of
 * n floats, dequantized) to xd and return 1; others return 0 (the input as given). The tuner's
 * reference and the tests use it. */
int lc_cl_input_seen(const lc_cl_conv *c, int family, const float *x, size_t n, float *xd);
/* The same for family gemmq (cl_fam_gemmq.c: units of 32 channels per pixel). */
int lc_cl_gemmq_input_seen(const lc_cl_conv *c, int family, const float *x, size_t n, float *xd);

/* The 8 standard kernel arguments (common.cl LC_KERNEL_ARGS) of conv c set on kernel k. */
lc_status lc_cl_conv_set_std_args(const lc_cl_conv *c, cl_kernel k, const char *name, cl_mem in, cl_mem out,
                                  cl_mem res);
/* Enqueues kernel `name` of `program` with the standard arguments over gws (rounded up to the
 * candidate's local size); first/last as in lc_cl_family.enqueue (one event, retained twice). */
lc_status lc_cl_conv_enqueue_std(const lc_cl_conv *c, const lc_cl_cand *cand, const char *program, const char *name,
                                 int dims, const size_t gws[3], cl_mem in, cl_mem out, cl_mem res, cl_event *first,
                                 cl_event *last);
/* Builds the programs of candidates cands[0..n) on worker threads (lc_cl_build_wanted), without
 * running anything; only running out of memory fails. */
lc_status lc_cl_conv_prebuild(lc_cl_conv *c, const lc_cl_cand *cands, int n);
/* Only lists those programs in rt->want (built later by lc_cl_build_wanted). */
lc_status lc_cl_conv_collect(lc_cl_conv *c, const lc_cl_cand *cands, int n);
/* Builds and creates every kernel of one candidate without launching it (errors with the log). */
lc_status lc_cl_conv_build(lc_cl_conv *c, const lc_cl_cand *cand);
/* Hands the one event ev of a single-kernel candidate to first and last (retained twice when both
 * want it; either may be NULL); releases it on failure. */
lc_status lc_cl_conv_hand_events(const lc_cl_conv *c, cl_event ev, const char *name, cl_event *first,
                                 cl_event *last);
/* Kernel `name` of the program built for kernel `want` of `program`, its nargs arguments set,
 * enqueued over the 3-D gws / lws (ev may be NULL). */
lc_status lc_cl_conv_launch(const lc_cl_conv *c, const char *program, const char *want, const char *name, int nargs,
                            const size_t *sz, const void *const *val, const size_t gws[3], const size_t lws[3],
                            cl_event *ev);
/* A multi-kernel candidate's end: on failure s releases e0 and e1, else hands them to first and
 * last (either may be NULL). Returns s. */
lc_status lc_cl_conv_end_events(const lc_cl_conv *c, lc_status s, cl_event e0, cl_event e1, cl_event *first,
                                cl_event *last);
/* Of variants [0, nv) with ok(c, v): the one of lowest model(c, v) (-1 if none), and how many
 * rank before v. The families' heuristics (tuning level none) and level fast's short lists. */
int lc_cl_model_pick(const lc_cl_conv *c, int nv, int (*ok)(const lc_cl_conv *, int),
                     double (*model)(const lc_cl_conv *, int));
int lc_cl_model_rank(const lc_cl_conv *c, int v, int nv, int (*ok)(const lc_cl_conv *, int),
                     double (*model)(const lc_cl_conv *, int));
/* Tuning level fast's short lists (fewer programs to build on a cold start) unless
 * LOWCONV_CL_FAST_WIDE=1 asks for the longer ones the level had before (A/B runs). */
int lc_cl_fast_short(void);
/* The kernel `name` of program `program` built with c's options. */
lc_status lc_cl_conv_kernel(const lc_cl_conv *c, const char *program, const char *name, cl_kernel *k);
/* Work items and local memory of family gemm's kernel gemm_<tm>x<tn> (Winograd's GEMMs run it
 * too); -1 if there is none. */
int lc_cl_gemm_tile_size(int tm, int tn, size_t *items, size_t *local_bytes);
/* Kernel `name` of the program built for kernel `want` (a kernel every program of that source holds). */
lc_status lc_cl_conv_kernel_of(const lc_cl_conv *c, const char *program, const char *want, const char *name,
                               cl_kernel *k);

#endif
