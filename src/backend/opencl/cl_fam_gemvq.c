/* Kernel family "gemvq" (kernels/conv_gemvq.cl): the fully connected case (1x1, one output pixel,
 * groups 1) with q8/q4 weights through dp4a, on devices whose inline-PTX probe passed
 * (LOWCONV_CL_DP4A_EMU=1 offers it elsewhere with dp4a emulated: the tests). The activations are
 * quantized to int8 per 8 channels, q = rint(x * (127 / amax)) (the division correctly rounded:
 * -cl-fp32-correctly-rounded-divide-sqrt), dequantized as q * (amax * (1 / 127)), so that the host
 * reproduces the device's codes and scales exactly (lc_cl_input_seen). Accuracy: each activation moves
 * by at most amax / 254 of its unit of 8; an output by at most sum |w| * amax / 254 over its row.
 * The float families stay candidates: at tuning level none they run, above it timing decides. */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* wR[uU]: 32-item row groups, R oc4 blocks each (gq_nb), U units loaded at once; bNB: NB oc4 blocks
 * per work-group, every item on all of them; s2: row groups streaming 2 blocks, the next step's
 * loads in flight while one is summed (K = 4096, N = 14336 q4 on the H100, stop 21: s2 13.8-15.5 us,
 * w1 13.9-15.9, q8 s2 0.96x w1; s4 17.9-22 us, so not offered). The heuristic takes the first
 * eligible. */
static const char *const gq_names[] = {"w1", "w2", "w4", "w1u8", "w2u2", "b1", "b2", "b4", "b8", "s2"};
static const char *const gq_kernels[] = {"gemvq_w1",   "gemvq_w2", "gemvq_w4", "gemvq_w1u8", "gemvq_w2u2",
                                         "gemvq_b1",   "gemvq_b2", "gemvq_b4", "gemvq_b8",   "gemvq_s2"};
static const int gq_nb[] = {1, 2, 4, 1, 2, 1, 2, 4, 8, 2};
#define GQ_STREAM(v) ((v) >= 9) /* an sR variant */
#define GQ_ROWS(v) ((v) < 5 || GQ_STREAM(v)) /* 32-item row groups: wR and sR */
#define GQ_NV ((int)(sizeof gq_names / sizeof gq_names[0]))
#define GQ_U 2 /* units per item and block loaded at once (conv_gemvq.cl LCQ_U) */

/* LOWCONV_CL_DP4A=0 keeps the activations in float (this family is then never offered). */
static int gq_device(const lc_cl_conv *c) {
  const char *e = getenv("LOWCONV_CL_DP4A_EMU"), *off = getenv("LOWCONV_CL_DP4A");
  if (off && off[0] == '0') return 0;
  return c->rt->info.has_dp4a || (e && e[0] == '1');
}

/* Local memory of a work-group of L items: the input's unit records, then (bNB) the reduction in
 * the same place or (wR) the emulated exchanges' L floats after them. */
static size_t gq_local(const lc_cl_conv *c, int v, size_t L) {
  size_t nu = (size_t)c->a.cin_g / 8, red = (size_t)gq_nb[v] * L;
  if (GQ_ROWS(v)) return 16 * nu + 4 * L;
  return 16 * (nu > red ? nu : red);
}

static int gq_eligible(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  if (v < 0 || v >= GQ_NV || c->wfmt == LC_WEIGHTS_F32 || !gq_device(c)) return 0;
  if (a->groups != 1 || a->kh != 1 || a->kw != 1 || a->pt || a->pl || (int64_t)a->n * a->oh * a->ow != 1) return 0;
  if (a->cin_g % 8 || (a->bsz & (a->bsz - 1) && a->bsz < a->cin_g)) return 0; /* units inside blocks */
  if (!GQ_ROWS(v) && gq_nb[v] > 1 && a->ob < gq_nb[v]) return 0;
  return gq_local(c, v, 32) <= c->rt->info.local_mem;
}

static size_t gq_pow2(size_t v) {
  size_t r = 1;
  while (r < v && r < 256) r <<= 1;
  return r;
}

/* wR: the largest work-group (256 down to 32) that still makes 6 per compute unit (K = 4096,
 * N = 14336 on the H200: 128 items, 896 work-groups), so that every unit gets about the same
 * number of blocks; bNB: each item loads GQ_U units per block 4 times, 32..256 items (K = 4096 on
 * the H200, 12:15 run: the tuner chose 64 of 256/128/64 for q4 and q8; q4 b8 took 0.0190 ms with
 * 64 items, 0.0306 with 256). Then halves and doubles; level fast tries 3 sizes. */
static int gq_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  const lc_cl_dev_info *d = &c->rt->info;
  size_t lim = d->max_wg < d->max_wi[0] ? d->max_wg : d->max_wi[0], h = gq_pow2((size_t)c->a.cin_g / 8 / GQ_U / 4);
  if (GQ_STREAM(v))
    h = 128; /* few work-groups: each quantizes the input once for R blocks per group */
  else if (GQ_ROWS(v))
    for (h = 256; h > 32 && ((size_t)c->a.ob + h / 32 * gq_nb[v] - 1) / (h / 32 * gq_nb[v]) < 6 * (size_t)d->compute_units;)
      h >>= 1;
  if (h < 32) h = 32;
  while (h > 32 && (h > lim || gq_local(c, v, h) > d->local_mem)) h >>= 1;
  if (h > lim || max < 1 || (level == 1 && (v == 5 || v == 6))) return 0; /* fast: not b1, b2 (slower) */
  const char *fl = getenv("LOWCONV_CL_GEMVQ_LWS"); /* measuring one size: only that one */
  if (fl && *fl) {
    size_t L = (size_t)strtoul(fl, NULL, 10);
    if (L < 32 || L > 256 || (L & (L - 1)) || L > lim || gq_local(c, v, L) > d->local_mem) return 0;
    lws[0][0] = L, lws[0][1] = 1, lws[0][2] = 1;
    return 1;
  }
  int n = 0, want = level <= 0 ? 1 : level == 1 ? 3 : 6;
  const size_t order[] = {h, h / 2, h * 2, h / 4, h * 4, h / 8};
  for (int i = 0; i < 6 && n < want && n < max; i++) {
    size_t L = order[i];
    if (L < 32 || L > 256 || L > lim || gq_local(c, v, L) > d->local_mem) continue;
    lws[n][0] = L, lws[n][1] = 1, lws[n][2] = 1, n++;
  }
  return n;
}

static size_t gq_ws_none(const lc_cl_conv *c, const lc_cl_cand *x) {
  (void)c, (void)x;
  return 0;
}

static lc_status gq_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                            cl_event *first, cl_event *last) {
  size_t L = cand->lws[0] ? cand->lws[0] : 128;
  const char *name = gq_kernels[cand->variant];
  if (L > 256 || (L & (L - 1)))
    return lc_error(LC_ERR_UNSUPPORTED, "opencl gemvq: local size %zu is not a power of two up to 256", L);
  char opt[160];
  int n = snprintf(opt, sizeof opt, "%s -cl-fp32-correctly-rounded-divide-sqrt%s", c->options,
                   c->rt->info.has_dp4a ? " -DLC_PTX" : "");
  if (n < 0 || (size_t)n >= sizeof opt) return lc_error(LC_ERR_INTERNAL, "opencl gemvq: build options too long");
  cl_kernel k;
  lc_status s = lc_cl_kernel_of(c->rt, "conv_gemvq", opt, name, name, &k);
  if (!s) s = lc_cl_conv_set_std_args(c, k, name, in, out, res);
  /* The local buffer (argument 8); a dry enqueue (rt->dry: only naming kernels) sets nothing. */
  cl_int e = s || c->rt->dry ? CL_SUCCESS : c->rt->cl->SetKernelArg(k, 8, gq_local(c, cand->variant, L), NULL);
  if (!s && e != CL_SUCCESS) s = lc_cl_fail(c->rt, e, "setting the local memory of %s", name);
  if (s) return s;
  if (GQ_ROWS(cand->variant) && L < 32)
    return lc_error(LC_ERR_UNSUPPORTED, "opencl gemvq: %s needs a local size of at least 32", name);
  size_t nb = (size_t)gq_nb[cand->variant] * (GQ_ROWS(cand->variant) ? L / 32 : 1);
  size_t gws[3] = {((size_t)c->a.ob + nb - 1) / nb * L, 1, 1}, lws[3] = {L, 1, 1};
  cl_event ev = NULL;
  s = lc_cl_enqueue(c->rt, k, name, 1, gws, lws, first || last ? &ev : NULL);
  if (s) return s;
  return lc_cl_conv_hand_events(c, ev, name, first, last);
}

/* The device's quantization of one unit of 8 channels, in the same float operations. */
static void gq_unit(const float *x, size_t stride, float *xd) {
  float v[8], amax = 0.0f;
  int bad = 0;
  for (int r = 0; r < 8; r++) {
    v[r] = x[(size_t)r * stride];
    bad |= !isfinite(v[r]);
    amax = fmaxf(amax, fabsf(v[r]));
  }
  float s = amax * (1.0f / 127.0f), inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
  for (int r = 0; r < 8; r++) xd[(size_t)r * stride] = bad ? NAN : (float)(int)rintf(v[r] * inv) * s;
}

/* The one input pixel read, (0, 0) of image 0: channel ic at ic * in_sc. */
int lc_cl_input_seen(const lc_cl_conv *c, int family, const float *x, size_t n, float *xd) {
  if (family < 0 || family >= lc_cl_nfamilies || lc_cl_families[family] != &lc_cl_family_gemvq) return 0;
  size_t sc = (size_t)c->a.in_sc, cin = (size_t)c->a.cin_g;
  for (size_t i = 0; i < n; i++) xd[i] = x[i];
  if (cin && (cin - 1) * sc >= n) return 0;
  for (size_t u = 0; u < cin / 8; u++) gq_unit(x + u * 8 * sc, sc, xd + u * 8 * sc);
  return 1;
}

const lc_cl_family lc_cl_family_gemvq = {"gemvq",        "conv_gemvq", GQ_NV,     gq_names, gq_eligible,
                                         gq_local_sizes, gq_ws_none,   gq_enqueue};
