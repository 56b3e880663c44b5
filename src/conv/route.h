/* The conv routes: the table every route is listed in (name, plan, run, weights read, help), and
 * what the routes share (the job a run hands the pool, the plan helpers, the task decoder).
 * Dependencies point one way: op.c and select.c read the table (routes.c), the table names the
 * route files, and those use only route_util.c, qweights.c, pack.c and the kernels. */
#ifndef LC_CONV_ROUTE_H
#define LC_CONV_ROUTE_H

#include <stdio.h>

#include "conv/conv.h"
#include "util/checked.h"

/* Weight representations (lc_conv fields) a route reads; it can run when it holds any of them. */
enum {
  LC_WREP_PACKED = 1u << 0, /* wpack */
  LC_WREP_QUANT = 1u << 1,  /* qw */
  LC_WREP_DW = 1u << 2,     /* wdw */
  LC_WREP_WINO = 1u << 3,   /* wwino */
  LC_WREP_WINO4 = 1u << 4   /* wwino4 */
};

typedef struct lc_route_def {
  const char *name;
  const char *help; /* one line for the CLI's --help */
  /* Sets the plan's route, tile, threads and ws_thread; LC_ERR_UNSUPPORTED or LC_ERR_BUDGET when
   * it can't run the shape within the budget. NULL for auto (select.c). */
  lc_status (*plan)(const lc_conv *c, lc_conv_plan *p);
  lc_status (*run)(const lc_conv *c, const float *in, float *out, unsigned char *ws);
  unsigned reads; /* LC_WREP_* */
} lc_route_def;

/* The entry of route r, NULL when r >= LC_ROUTE_COUNT. */
const lc_route_def *lc_route_def_of(lc_route r);
/* Route r's plan of c (r a real route), LC_ERR_UNSUPPORTED for one that can't pad with c->padv. */
lc_status lc_route_plan(const lc_conv *c, lc_route r, lc_conv_plan *p);
/* The route names separated by sep, cut to cap bytes (returns buf); a line per route for --help. */
char *lc_route_names_join(char *buf, size_t cap, const char *sep);
void lc_route_print_help(FILE *f);

/* What a route's run hands each task. */
typedef struct lc_route_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
} lc_route_job;

/* Runs tasks [0, tasks) of fn over the plan's threads, each given the job {c, in, out, ws}. */
void lc_route_launch(const lc_conv *c, const float *in, float *out, unsigned char *ws, size_t tasks,
                     void (*fn)(void *job, size_t task, int thread));

/* Weight panels split into this many tasks per tile when tasks < threads (small late layers). */
static inline size_t lc_route_ocsplit(size_t tasks, int threads, size_t npanels) {
  if (threads > 1 && tasks < (size_t)threads) return lc_min_sz(npanels, lc_div_up((size_t)threads, tasks));
  return 1;
}

/* The plan's tail: route, per-thread workspace and threads. */
static inline lc_status lc_route_planned(lc_conv_plan *p, lc_route r, size_t ws_thread, int threads) {
  p->route = r;
  p->ws_thread = ws_thread;
  p->threads = threads;
  return LC_OK;
}

/* Where task t of a GEMM-like route lies: tasks are image x group x tile x weight-panel split
 * (split fastest); [q0, q1) is the split's share of the route's npanels weight panels. */
typedef struct lc_task_pos {
  size_t n, g, tile, q0, q1;
} lc_task_pos;

static inline lc_task_pos lc_task_decode(const lc_conv_plan *p, size_t groups, size_t npanels, size_t task) {
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

/* A GEMM-like task's place, its image's input and output, the group's first input channel, and its
 * thread's workspace slot (NULL when the plan has none). */
typedef struct lc_task_view {
  lc_task_pos tp;
  const float *img, *img_g;
  float *img_out;
  unsigned char *slot;
} lc_task_view;

static inline lc_task_view lc_task_view_of(const lc_route_job *jb, size_t task, int thread) {
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  lc_task_view v;
  v.tp = lc_task_decode(p, (size_t)c->d.groups, c->npanels, task);
  v.img = jb->in + v.tp.n * (size_t)c->d.in_channels * p->ihw;
  v.img_g = v.img + v.tp.g * (size_t)c->cin_g * (c->d.layout == LC_NCHW ? p->ihw : 1);
  v.img_out = jb->out + v.tp.n * (size_t)c->d.out_channels * p->ohw;
  v.slot = jb->ws ? jb->ws + (size_t)thread * p->ws_thread : NULL;
  return v;
}

/* A weight block's GEMM calls prefetch the next block (bytes long; NULL: none) for call j of
 * ncalls, k steps each: its lines spread evenly over the calls, at most one line a step (two a
 * step, or all in the first calls, ran slower: bench_conv_cold, 256@14 and 512@7). */
static inline void lc_pf_spread(lc_gemm_params *ep, const void *next, size_t bytes, size_t ncalls, size_t k,
                                size_t j) {
  size_t step = k && ncalls ? lc_min_sz(64, lc_round_up(lc_div_up(bytes, ncalls * k), 4)) : 0;
  ep->pf = next && step && j * step * k < bytes ? (const unsigned char *)next + j * step * k : NULL;
  ep->pf_step = step;
}

/* Threads usable when each needs per_thread bytes under the budget; 0 if not even one fits. */
int lc_threads_for_budget(const lc_conv *c, size_t per_thread);
/* Epilogue parameters for a tile (bias offset by the caller). PRelu (c->slopes): act 5 with slope =
 * c->slopes, offset by the route as bias; only lc_route_prelu_inline routes see slopes. */
void lc_conv_epilogue(const lc_conv *c, lc_gemm_params *p);
/* The route applies PRelu / adds the residual (c->res, before the activation) in its own output
 * pass, while the tile is in cache; lc_conv_run_route does it after the others. */
int lc_route_prelu_inline(lc_route r);
int lc_route_res_inline(lc_route r);
/* PRelu, then p's post affine, on rows of n values (row i: slope[i]), rows rs apart. */
void lc_prelu_rows(float *y, size_t rows, size_t n, size_t rs, const float *slope, const lc_gemm_params *p);
/* The route of c->plan on (in, out) with residual res (NULL: none), then the residual, activation
 * and post affine where the route cannot apply them (every run and the tuner). */
lc_status lc_conv_run_route(const lc_conv *c, const float *in, float *out, const float *res, unsigned char *ws);

/* The routes (route_*.c). */
lc_status lc_direct_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_direct_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
lc_status lc_gemm1x1_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_gemm1x1_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
lc_status lc_im2col_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_igemm_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_gemm_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
lc_status lc_depthwise_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_depthwise_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
lc_status lc_winograd_plan(const lc_conv *c, lc_conv_plan *p);
void lc_run_winograd(const lc_conv *c, const float *in, float *out, unsigned char *ws);
/* Winograd weights (transformed at create when the conv is 3x3, stride 1, dilation 1): NULL otherwise. */
lc_status lc_winograd_pack(lc_conv *c, const float *w);
/* 1 when AUTO should try winograd for this conv (shape, layout and channel thresholds). */
int lc_winograd_auto(const lc_conv *c);
struct lc_wino_kernels;
/* NCHW Winograd input: row `iy` of a plane, columns [x0, x0 + w), pv outside the image: a pointer
 * into the plane when the span is inside, zero (>= w floats) when the row is padding and pv 0,
 * else a copy in buf. */
const float *lc_wino_plane_row(const lc_conv_plan *p, const struct lc_wino_kernels *wk, const float *plane, int64_t iy,
                               int64_t x0, int64_t w, float *buf, const float *zero, float pv);

/* Q8/Q4 Winograd U (F(4x4) if f4, else F(2x2)) of output channels [oc0, oc0 + noc) in a panel of
 * pw, input channels [k0, k0 + kn), xi planes xs floats apart ([xi][kn][pw]): dequantized in
 * registers where lc_wino_qfused, else through D (the 9 taps of LC_WINO_QSEG channels at a time,
 * pw * 9 * LC_WINO_QSEG floats). */
#define LC_WINO_QSEG 64
int lc_wino_qfused(const lc_conv *c, size_t pw);
void lc_wino_q_u(const lc_conv *c, int f4, size_t oc0, size_t noc, size_t pw, size_t k0, size_t kn, float *U, size_t xs,
                 float *D);
lc_status lc_winograd4_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_winograd4_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
/* F(4x4) weights, transformed at create for fp32 3x3 stride-1 convs when asked, tuned or when
 * lc_winograd4_auto says AUTO may take it (Q8/Q4: per task in run, none kept). */
lc_status lc_winograd4_pack(lc_conv *c, const float *w);
/* AUTO's F(4x4) rule on the output size (select.c), F(4x4) weights aside. */
int lc_wino4_size_first(const lc_conv *c, int64_t oh, int64_t ow);
/* Input channels up to which Winograd chunks stay small: F(4x4) plans them in half its slot
 * (route_winograd4.c w4_chunk_bytes) and select.c's balance does not grow them. */
#define LC_WINO_SMALL_K_CIN 32
/* 1 when AUTO may pick winograd4 for this conv (create-time features: shape, channels, table). */
int lc_winograd4_auto(const lc_conv *c);

/* Few input channels (route_stem.c): output rows from stride-phased input rows, no patch panel. */
lc_status lc_stem_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_stem_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
/* NCHW (route_taprows.c): per tile of output rows, B gathered by whole rows and read in place. */
lc_status lc_taprows_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_taprows_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
/* 1 when AUTO should try taprows before im2col (3x3 stride 2; 1x1 stride 2 at 7-32 px, 7-20 at 2+
 * threads, with the AVX-512 table's wide tile: measured shapes; select.c). */
int lc_taprows_auto(const lc_conv *c, const lc_conv_plan *p);

/* Q8/Q4 with int8 activations through integer dot products (route_i8gemm.c); lc_i8gemm_wanted: the
 * descriptor or LOWCONV_INT8_ACT asks for int8 activations. */
lc_status lc_i8gemm_plan(const lc_conv *c, lc_conv_plan *p);
lc_status lc_i8gemm_run(const lc_conv *c, const float *in, float *out, unsigned char *ws);
int lc_i8gemm_wanted(const lc_conv *c);
/* Weight panels of the kernel table's i8gemm tile (rows per panel: the table's i8mr). */
size_t lc_i8gemm_panels(const lc_conv *c);

/* Picks the route for LC_ROUTE_AUTO (select.c). */
lc_status lc_select_route(const lc_conv *c, lc_conv_plan *p);

#endif
