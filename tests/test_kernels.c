/* Every fp32 microkernel of every table this CPU runs, against a naive fp64 loop.
 * Operands live in buffers whose first or last byte touches a PROT_NONE page, so any read or
 * write outside the documented elements faults, in every build, SIMD masked loads included;
 * C is surrounded by sentinel values to catch stray writes inside its allocation. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/registry.h"
#include "testutil.h"

#define EPS_F32 1.1920929e-7

/* ---- guarded buffers ---- */

typedef struct {
  unsigned char *base;
  size_t len;
} gbuf;

/* n floats ending at a guard page (front = 0) or starting right after one (front = 1); every
 * case runs with both placements, operands alternating so each of them meets both.
 * n = 0 yields a pointer onto the guard page: any access faults. */
static float *galloc(gbuf *g, size_t n, int front) {
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  const size_t bytes = n * sizeof(float);
  const size_t dpages = (bytes + pg - 1) / pg;
  g->len = (dpages + 1) * pg;
  void *m = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    fprintf(stderr, "mmap failed\n");
    exit(2);
  }
  g->base = m;
  if (front) {
    mprotect(g->base, pg, PROT_NONE);
    return (float *)(void *)(g->base + pg);
  }
  mprotect(g->base + dpages * pg, pg, PROT_NONE);
  return (float *)(void *)(g->base + dpages * pg - bytes);
}

static void gfree(gbuf *g) {
  if (g->base) munmap(g->base, g->len);
  g->base = NULL;
}

/* A kernel that touches a guard page crashes; name the case it was running. */
static char g_case[256];

static void on_fault(int sig) {
  static const char msg[] = "test_kernels: memory fault (out-of-bounds access) in case: ";
  ssize_t r = write(2, msg, sizeof(msg) - 1);
  r = write(2, g_case, strlen(g_case));
  r = write(2, "\n", 1);
  (void)r;
  _exit(128 + sig);
}

/* ---- reference ---- */

static double ref_act(double v, const lc_gemm_params *p) {
  switch (p->act) {
    case 1: return v > 0 ? v : 0;
    case 2: return v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
    case 3: return v < 0 ? p->act_alpha * v : v;
    case 4: {
      double t = v / 6 + 0.5;
      t = t < 0 ? 0 : (t > 1 ? 1 : t);
      return v * t;
    }
    default: return v;
  }
}

/* Forward error bound of the kernel result. A k-term dot product in fp32 is within
 * gamma_k * sum|a*b| (gamma_k ~ k * eps/2) of the exact value whatever the summation order or FMA
 * use; 4 * (k + 3) * eps doubles that for the kernels' split accumulators and covers the epilogue
 * additions (C, bias, residual), whose magnitudes join the sum. The activation scales the error by
 * its slope (1.5 bounds hardswish, |alpha| leaky) and rounds once more. */
static double tolerance(size_t k, double mag, double out, const lc_gemm_params *p) {
  double slope = 1.0;
  if (p->final && p->act == 3 && fabs(p->act_alpha) > 1) slope = fabs(p->act_alpha);
  if (p->final && p->act == 4) slope = 1.5;
  return 4.0 * (double)(k + 3) * EPS_F32 * mag * slope + 8.0 * EPS_F32 * (1.0 + fabs(out));
}

static double ref_epilogue(double v, double old, double bias, double res, const lc_gemm_params *p, double *mag) {
  if (p->accumulate) v += old, *mag += fabs(old);
  if (!p->final) return v;
  if (p->bias) v += bias, *mag += fabs(bias);
  if (p->residual) v += res, *mag += fabs(res);
  return ref_act(v, p);
}

/* Epilogue settings, enumerated by a counter so that a sweep visits every combination:
 * 5 activations x 3 bias modes x 2 residual x 2 accumulate x 2 final = 120. */
typedef struct {
  int act, bias_mode, residual, accumulate, final;
} epi_cfg;

static epi_cfg epi_from(unsigned idx) {
  epi_cfg e;
  e.act = (int)(idx % 5), idx /= 5;
  e.bias_mode = (int)(idx % 3), idx /= 3; /* 0 none, 1 per row, 2 per column */
  e.residual = (int)(idx % 2), idx /= 2;
  e.accumulate = (int)(idx % 2), idx /= 2;
  e.final = (int)(idx % 2);
  return e;
}

static void params_from(lc_gemm_params *p, const epi_cfg *e) {
  memset(p, 0, sizeof(*p));
  p->accumulate = e->accumulate;
  p->final = e->final;
  p->act = e->act;
  p->act_min = -0.5f;
  p->act_max = 0.75f;
  p->act_alpha = 0.125f;
}

static const float SENTINEL = -7777.25f;

/* ---- GEMM ---- */

enum { LAYOUT_PACKED, LAYOUT_A_ROWS, LAYOUT_A_COLS, LAYOUT_COUNT };

/* wide: the table's f32_gemm_wide (n <= nr_wide), which must also write f32_gemm's bits (two calls
 * past nr columns). */
static void check_gemm_w(const lc_kernels *kt, size_t m, size_t n, size_t k, int layout, unsigned cfg_idx, int front,
                         int wide) {
  const size_t mr = kt->mr, nr = wide ? kt->nr_wide : kt->nr;
  const lc_f32_gemm_fn gemm = wide ? kt->f32_gemm_wide : kt->f32_gemm;
  size_t rs_a, cs_a, a_len, rs_b;
  switch (layout) {
    case LAYOUT_PACKED: rs_a = 1, cs_a = mr, rs_b = nr; break;      /* packed panels */
    case LAYOUT_A_ROWS: rs_a = k + 3, cs_a = 1, rs_b = n + 5; break; /* inputs used in place */
    default: rs_a = 1, cs_a = m + 2, rs_b = n + 1; break;           /* A column-major, not padded */
  }
  a_len = k ? (m - 1) * rs_a + (k - 1) * cs_a + 1 : 0;
  if (layout == LAYOUT_PACKED) a_len = k * mr; /* a real panel: rows >= m hold junk */
  const size_t b_len = k ? (k - 1) * rs_b + n : 0; /* exact: a read past column n faults */
  const size_t rs_c = nr + 3, rs_res = n + 2;
  const size_t c_len = (mr + 2) * rs_c;

  gbuf ga = {0}, gb = {0}, gc = {0}, gbias = {0}, gres = {0};
  float *a = galloc(&ga, a_len, front), *b = galloc(&gb, b_len, !front);
  float *cbuf = galloc(&gc, c_len, front);
  tu_fill(a, a_len, -1.0f, 1.0f);
  tu_fill(b, b_len, -1.0f, 1.0f);
  for (size_t i = 0; i < c_len; i++) cbuf[i] = SENTINEL;
  float *c = cbuf + rs_c + 1; /* one guard row above, one guard column left */
  for (size_t i = 0; i < m; i++) tu_fill(c + i * rs_c, n, -1.0f, 1.0f);
  float *old = malloc(m * n * sizeof(float));
  for (size_t i = 0; i < m; i++) memcpy(old + i * n, c + i * rs_c, n * sizeof(float));

  const epi_cfg e = epi_from(cfg_idx);
  lc_gemm_params p;
  params_from(&p, &e);
  if (e.bias_mode) {
    const size_t len = e.bias_mode == 1 ? m : n;
    float *bias = galloc(&gbias, len, front);
    tu_fill(bias, len, -1.0f, 1.0f);
    p.bias = bias;
    p.bias_per_row = e.bias_mode == 1;
  }
  if (e.residual) {
    const size_t len = (m - 1) * rs_res + n;
    float *res = galloc(&gres, len, !front);
    tu_fill(res, len, -1.0f, 1.0f);
    p.residual = res;
    p.rs_res = rs_res;
  }

  snprintf(g_case, sizeof(g_case), "%s gemm%s m=%zu n=%zu k=%zu layout=%d cfg=%u front=%d", kt->name,
           wide ? "_wide" : "", m, n, k, layout, cfg_idx, front);
  /* f32_gemm_final (when the table has one) must write the same bits, the guards included; the wide
   * kernel f32_gemm's, its columns from nr on in a second call. */
  float *cfin = (wide || kt->f32_gemm_final) ? malloc(c_len * sizeof(float)) : NULL;
  if (cfin) {
    memcpy(cfin, cbuf, c_len * sizeof(float));
    if (!wide) {
      kt->f32_gemm_final(m, n, k, a, rs_a, cs_a, b, rs_b, cfin + rs_c + 1, rs_c, &p);
    } else {
      const size_t n1 = n < kt->nr ? n : kt->nr;
      kt->f32_gemm(m, n1, k, a, rs_a, cs_a, b, rs_b, cfin + rs_c + 1, rs_c, &p);
      if (n > n1) {
        lc_gemm_params p2 = p;
        if (p.bias && !p.bias_per_row) p2.bias = p.bias + n1;
        if (p.residual) p2.residual = p.residual + n1;
        kt->f32_gemm(m, n - n1, k, a, rs_a, cs_a, b + n1, rs_b, cfin + rs_c + 1 + n1, rs_c, &p2);
      }
    }
  }
  /* A prefetch of the next B block (lc_gemm_params.pf) must not change a bit: half the cases run
   * with one, past B's end included (only an address is formed). */
  if (cfg_idx & 1) p.pf = b, p.pf_step = (size_t)64 >> (cfg_idx % 3);
  gemm(m, n, k, a, rs_a, cs_a, b, rs_b, c, rs_c, &p);
  p.pf = NULL;
  if (cfin) {
    TU_CHECK(memcmp(cfin, cbuf, c_len * sizeof(float)) == 0, "%s gemm_%s m=%zu n=%zu k=%zu layout=%d cfg=%u: "
             "bits differ from f32_gemm", kt->name, wide ? "wide" : "final", m, n, k, layout, cfg_idx);
    free(cfin);
  }

  int bad = 0;
  for (size_t i = 0; i < m && !bad; i++) {
    for (size_t j = 0; j < n && !bad; j++) {
      double v = 0, mag = 0;
      for (size_t kk = 0; kk < k; kk++) {
        const double t = (double)a[i * rs_a + kk * cs_a] * b[kk * rs_b + j];
        v += t, mag += fabs(t);
      }
      const double bv = p.bias ? p.bias[p.bias_per_row ? i : j] : 0;
      const double rv = p.residual ? p.residual[i * rs_res + j] : 0;
      const double want = ref_epilogue(v, old[i * n + j], bv, rv, &p, &mag);
      const double got = c[i * rs_c + j];
      const double tol = tolerance(k, mag, want, &p);
      if (!(fabs(got - want) <= tol)) {
        bad = 1;
        TU_CHECK(0, "%s gemm m=%zu n=%zu k=%zu layout=%d cfg=%u: C(%zu,%zu)=%.9g want %.9g tol %.3g", kt->name,
                 m, n, k, layout, cfg_idx, i, j, got, want, tol);
      }
    }
  }
  /* Everything outside the m x n tile keeps its sentinel. */
  for (size_t idx = 0; idx < c_len && !bad; idx++) {
    const size_t off = (size_t)(cbuf + idx - c);
    const int inside = cbuf + idx >= c && off / rs_c < m && off % rs_c < n;
    if (!inside && cbuf[idx] != SENTINEL) {
      bad = 1;
      TU_CHECK(0, "%s gemm m=%zu n=%zu k=%zu layout=%d: write outside C at buffer index %zu", kt->name, m, n,
               k, layout, idx);
    }
  }
  if (!bad) TU_CHECK(1, "ok");
  free(old);
  gfree(&ga), gfree(&gb), gfree(&gc), gfree(&gbias), gfree(&gres);
}

static void check_gemm(const lc_kernels *kt, size_t m, size_t n, size_t k, int layout, unsigned cfg_idx, int front) {
  check_gemm_w(kt, m, n, k, layout, cfg_idx, front, 0);
}

/* k: 0, 1 and the primes, denser where loop tails and unrolling matter. */
static const size_t K_SWEEP[] = {0, 1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 53, 67, 97, 131, 257, 293};
#define N_K (sizeof(K_SWEEP) / sizeof(K_SWEEP[0]))

static void test_gemm(const lc_kernels *kt) {
  unsigned cfg = 0;
  /* Every tile shape, every k, every layout; the epilogue cycles through all 120 settings. */
  for (size_t m = 1; m <= kt->mr; m++)
    for (size_t n = 1; n <= kt->nr; n++)
      for (size_t ki = 0; ki < N_K; ki++)
        for (int layout = 0; layout < LAYOUT_COUNT; layout++)
          for (int front = 0; front < 2; front++) check_gemm(kt, m, n, K_SWEEP[ki], layout, cfg++ * 7, front);
  /* Every epilogue setting on full and ragged tiles. */
  const size_t shapes[][2] = {{kt->mr, kt->nr}, {kt->mr - 1 ? kt->mr - 1 : 1, kt->nr - 3}, {1, 1}};
  for (size_t s = 0; s < 3; s++)
    for (unsigned e = 0; e < 120; e++)
      for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (int front = 0; front < 2; front++) check_gemm(kt, shapes[s][0], shapes[s][1], 19, layout, e, front);
  if (!kt->f32_gemm_wide) return;
  /* The wide tile: the same sweep up to nr_wide columns, and every epilogue on full and ragged tiles. */
  for (size_t m = 1; m <= kt->mr; m++)
    for (size_t n = 1; n <= kt->nr_wide; n++)
      for (size_t ki = 0; ki < N_K; ki++)
        for (int layout = 0; layout < LAYOUT_COUNT; layout++)
          for (int front = 0; front < 2; front++) check_gemm_w(kt, m, n, K_SWEEP[ki], layout, cfg++ * 7, front, 1);
  const size_t wshapes[][2] = {{kt->mr, kt->nr_wide}, {kt->mr - 1 ? kt->mr - 1 : 1, kt->nr_wide - 3}, {3, kt->nr + 1}};
  for (size_t s = 0; s < 3; s++)
    for (unsigned e = 0; e < 120; e++)
      for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (int front = 0; front < 2; front++) check_gemm_w(kt, wshapes[s][0], wshapes[s][1], 19, layout, e, front, 1);
}

/* ---- depthwise, NCHW row ---- */

static void check_dw_row(const lc_kernels *kt, size_t ow, size_t kh, size_t kw, size_t sw, size_t dw, unsigned cfg_idx,
                         int front) {
  const size_t width = (ow - 1) * sw + (kw - 1) * dw + 1;
  gbuf grow[7] = {{0}}, gw = {0}, gout = {0}, gbias = {0}, gres = {0};
  const float *rows[7];
  for (size_t ky = 0; ky < kh; ky++) {
    float *r = galloc(&grow[ky], width, front);
    tu_fill(r, width, -1.0f, 1.0f);
    rows[ky] = r;
  }
  float *w = galloc(&gw, kh * kw, !front);
  tu_fill(w, kh * kw, -1.0f, 1.0f);
  float *obuf = galloc(&gout, ow + 4, front);
  for (size_t i = 0; i < ow + 4; i++) obuf[i] = SENTINEL;
  float *out = obuf + 2;
  tu_fill(out, ow, -1.0f, 1.0f);
  float *old = malloc(ow * sizeof(float));
  memcpy(old, out, ow * sizeof(float));

  epi_cfg e = epi_from(cfg_idx);
  e.final = 1; /* always final for depthwise */
  lc_gemm_params p;
  params_from(&p, &e);
  if (e.bias_mode) {
    float *bias = galloc(&gbias, 1, front);
    bias[0] = tu_rand_float(-1.0f, 1.0f);
    p.bias = bias;
  }
  if (e.residual) {
    float *res = galloc(&gres, ow, !front);
    tu_fill(res, ow, -1.0f, 1.0f);
    p.residual = res;
  }

  snprintf(g_case, sizeof(g_case), "%s dw_row ow=%zu k=%zux%zu s=%zu d=%zu front=%d", kt->name, ow, kh, kw, sw,
           dw, front);
  kt->f32_dw_row(ow, kh, kw, sw, dw, rows, w, out, &p);

  int bad = 0;
  for (size_t ox = 0; ox < ow && !bad; ox++) {
    double v = 0, mag = 0;
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++) {
        const double t = (double)rows[ky][ox * sw + kx * dw] * w[ky * kw + kx];
        v += t, mag += fabs(t);
      }
    const double want = ref_epilogue(v, old[ox], p.bias ? p.bias[0] : 0, p.residual ? p.residual[ox] : 0, &p, &mag);
    const double tol = tolerance(kh * kw, mag, want, &p);
    if (!(fabs(out[ox] - want) <= tol)) {
      bad = 1;
      TU_CHECK(0, "%s dw_row ow=%zu k=%zux%zu s=%zu d=%zu cfg=%u: out[%zu]=%.9g want %.9g", kt->name, ow, kh, kw,
               sw, dw, cfg_idx, ox, out[ox], want);
    }
  }
  if (obuf[0] != SENTINEL || obuf[1] != SENTINEL || obuf[ow + 2] != SENTINEL || obuf[ow + 3] != SENTINEL) {
    bad = 1;
    TU_CHECK(0, "%s dw_row ow=%zu: write outside the output row", kt->name, ow);
  }
  if (!bad) TU_CHECK(1, "ok");
  free(old);
  for (size_t ky = 0; ky < kh; ky++) gfree(&grow[ky]);
  gfree(&gw), gfree(&gout), gfree(&gbias), gfree(&gres);
}

static void test_dw_row(const lc_kernels *kt) {
  const size_t ks[][2] = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {1, 2}, {3, 1}};
  unsigned cfg = 0;
  for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
    for (size_t sw = 1; sw <= 3; sw++)
      for (size_t dw = 1; dw <= 2; dw++)
        for (size_t ow = 1; ow <= 40; ow++)
          for (int front = 0; front < 2; front++) check_dw_row(kt, ow, ks[ki][0], ks[ki][1], sw, dw, cfg++ * 7, front);
}

/* ---- depthwise, NCHW rows read in place (f32_dw_row_unpadded) ---- */

/* rows output rows at once from unpadded input rows of iw floats (left pad pl): bitwise equal to the
 * table's f32_dw_row on padded copies (the route's variants must give the same output), and within
 * the fp64 sum's tolerance. */
static void check_dw_unpadded(const lc_kernels *kt, size_t ow, size_t R, size_t s, size_t k, size_t pl, size_t iw,
                              unsigned cfg_idx, int front) {
  const size_t ni = s * (R - 1) + k, ors = ow + 3, width = (ow - 1) * s + k;
  gbuf grow[40] = {{0}}, gw = {0}, gout = {0}, gbias = {0}, gres = {0};
  const float *rows[40];
  for (size_t i = 0; i < ni; i++) {
    float *r = galloc(&grow[i], iw, (int)((i + (size_t)front) % 2));
    tu_fill(r, iw, -1.0f, 1.0f);
    rows[i] = r;
  }
  float *w = galloc(&gw, k * k, !front);
  tu_fill(w, k * k, -1.0f, 1.0f);
  const size_t olen = R * ors;
  float *out = galloc(&gout, olen, front), *old = malloc(olen * sizeof(float)), *want = malloc(olen * sizeof(float));
  float *pad = malloc(k * width * sizeof(float));
  tu_fill(out, olen, -1.0f, 1.0f);
  for (size_t r = 0; r < R; r++)
    for (size_t x = ow; x < ors; x++) out[r * ors + x] = SENTINEL;
  memcpy(old, out, olen * sizeof(float));
  memcpy(want, out, olen * sizeof(float));
  epi_cfg e = epi_from(cfg_idx);
  e.final = 1;
  lc_gemm_params p;
  params_from(&p, &e);
  if (e.bias_mode) {
    float *bias = galloc(&gbias, 1, front);
    bias[0] = tu_rand_float(-1.0f, 1.0f);
    p.bias = bias;
  }
  float *res = NULL;
  if (e.residual) {
    res = galloc(&gres, olen, !front);
    tu_fill(res, olen, -1.0f, 1.0f);
    p.residual = res;
  }
  snprintf(g_case, sizeof(g_case), "%s dw_unpadded ow=%zu rows=%zu s=%zu k=%zu pl=%zu iw=%zu front=%d", kt->name, ow,
           R, s, k, pl, iw, front);
  kt->f32_dw_row_unpadded(ow, R, ors, s, k, pl, iw, rows, w, out, &p);
  int bad = 0;
  for (size_t r = 0; r < R && !bad; r++) {
    const float *prow[5];
    for (size_t ky = 0; ky < k; ky++) {
      float *d = pad + ky * width;
      for (size_t j = 0; j < width; j++) d[j] = j >= pl && j - pl < iw ? rows[s * r + ky][j - pl] : 0.0f;
      prow[ky] = d;
    }
    lc_gemm_params pr = p;
    pr.residual = res ? res + r * ors : NULL;
    kt->f32_dw_row(ow, k, k, s, 1, prow, w, want + r * ors, &pr);
    for (size_t ox = 0; ox < ors && !bad; ox++) {
      const float got = out[r * ors + ox];
      if (ox >= ow) {
        if (got != SENTINEL) {
          bad = 1;
          TU_CHECK(0, "%s: write outside row %zu at %zu", g_case, r, ox);
        }
        continue;
      }
      double v = 0, mag = 0;
      for (size_t ky = 0; ky < k; ky++)
        for (size_t kx = 0; kx < k; kx++) {
          const double t = (double)prow[ky][ox * s + kx] * w[ky * k + kx];
          v += t, mag += fabs(t);
        }
      const double ref = ref_epilogue(v, old[r * ors + ox], p.bias ? p.bias[0] : 0, res ? res[r * ors + ox] : 0, &p, &mag);
      if (!(fabs(got - ref) <= tolerance(k * k, mag, ref, &p))) {
        bad = 1;
        TU_CHECK(0, "%s cfg=%u: out[%zu][%zu]=%.9g want %.9g", g_case, cfg_idx, r, ox, got, ref);
      } else if (memcmp(&got, &want[r * ors + ox], sizeof got) != 0) {
        bad = 1;
        TU_CHECK(0, "%s cfg=%u: out[%zu][%zu]=%.9g, f32_dw_row gave %.9g", g_case, cfg_idx, r, ox, got,
                 want[r * ors + ox]);
      }
    }
  }
  if (!bad) TU_CHECK(1, "ok");
  for (size_t i = 0; i < ni; i++) gfree(&grow[i]);
  gfree(&gw), gfree(&gout), gfree(&gbias), gfree(&gres);
  free(old), free(want), free(pad);
}

static void test_dw_unpadded(const lc_kernels *kt) {
  if (!kt->f32_dw_row_unpadded) return;
  /* (stride, k, rows): the kernel's groups (4 rows at stride 1, 2 at 3x3 stride 2, else 1) and a
   * plane's worth (the route's one call) with every remainder */
  static const size_t cases[][3] = {{1, 3, 1}, {1, 3, 2}, {1, 3, 4}, {1, 5, 1}, {1, 5, 2}, {1, 5, 4}, {2, 3, 1},
                                    {2, 3, 2}, {2, 5, 1}, {1, 3, 7}, {1, 3, 5}, {1, 5, 6}, {2, 3, 5}, {2, 5, 3}};
  unsigned cfg = 0;
  for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
    for (size_t ow = 1; ow <= 40; ow++)
      for (int front = 0; front < 2; front++) {
        const size_t s = cases[ci][0], k = cases[ci][1], pl = (size_t)tu_rand_int(0, (int)k - 1);
        const size_t width = (ow - 1) * s + k;
        /* the route's geometry (iw about width - 2 pl) and odd ones, down to a single column */
        const size_t iw = front ? (width > 2 * pl ? width - 2 * pl : 1) : (size_t)tu_rand_int(1, (int)width + 3);
        check_dw_unpadded(kt, ow, cases[ci][2], s, k, pl, iw, cfg++ * 7, front);
      }
}

/* Stride 2 at every block kind: the route's input width (width - 2 pl) and one less (the right edge
 * past the row) or more, every output width to 40 (below 8, odd, a tail after whole blocks), left
 * pads 0 .. k / 2, row counts giving the AVX2 table's groups of 8, 4, 2 and 1 and their remainders;
 * each with an epilogue that leaves the sums raw and one that does not. */
static void test_dw_unpadded_s2(const lc_kernels *kt) {
  if (!kt->f32_dw_row_unpadded) return;
  static const size_t rows[] = {1, 2, 3, 5, 8, 12, 17}, ks[] = {3, 5};
  unsigned cfg = 0;
  for (size_t ki = 0; ki < 2; ki++)
    for (size_t pl = 0; pl <= ks[ki] / 2; pl++)
      for (size_t ow = 1; ow <= 40; ow++)
        for (int d = -1; d <= 1; d++) {
          const size_t k = ks[ki], width = (ow - 1) * 2 + k;
          if ((ptrdiff_t)width - 2 * (ptrdiff_t)pl + d < 1) continue;
          const size_t iw = (size_t)((ptrdiff_t)width - 2 * (ptrdiff_t)pl + d);
          for (size_t ri = 0; ri < sizeof(rows) / sizeof(rows[0]); ri++) {
            check_dw_unpadded(kt, ow, rows[ri], 2, k, pl, iw, (unsigned)(ow * 3 + ri) % 15, (int)(ri % 2));
            check_dw_unpadded(kt, ow, rows[ri], 2, k, pl, iw, cfg++ * 7, (int)(ri % 2) ^ 1);
          }
        }
}

/* ---- depthwise, NHWC pixel ---- */

static void check_dw_pixel(const lc_kernels *kt, size_t c, size_t taps, unsigned cfg_idx, int front) {
  gbuf gin[25] = {{0}}, gw = {0}, gout = {0}, gbias = {0}, gres = {0};
  const float *in[25];
  for (size_t t = 0; t < taps; t++) {
    if (taps > 1 && tu_rand_int(0, 4) == 0) { /* padding tap */
      in[t] = NULL;
      continue;
    }
    float *x = galloc(&gin[t], c, front);
    tu_fill(x, c, -1.0f, 1.0f);
    in[t] = x;
  }
  float *w = galloc(&gw, taps * c, !front);
  tu_fill(w, taps * c, -1.0f, 1.0f);
  float *obuf = galloc(&gout, c + 4, front);
  for (size_t i = 0; i < c + 4; i++) obuf[i] = SENTINEL;
  float *out = obuf + 2;
  tu_fill(out, c, -1.0f, 1.0f);
  float *old = malloc(c * sizeof(float));
  memcpy(old, out, c * sizeof(float));

  epi_cfg e = epi_from(cfg_idx);
  e.final = 1;
  lc_gemm_params p;
  params_from(&p, &e);
  if (e.bias_mode) {
    float *bias = galloc(&gbias, c, front);
    tu_fill(bias, c, -1.0f, 1.0f);
    p.bias = bias;
  }
  if (e.residual) {
    float *res = galloc(&gres, c, !front);
    tu_fill(res, c, -1.0f, 1.0f);
    p.residual = res;
  }

  snprintf(g_case, sizeof(g_case), "%s dw_pixel c=%zu taps=%zu front=%d", kt->name, c, taps, front);
  kt->f32_dw_pixel(c, taps, in, w, out, &p);

  int bad = 0;
  for (size_t ch = 0; ch < c && !bad; ch++) {
    double v = 0, mag = 0;
    for (size_t t = 0; t < taps; t++) {
      if (!in[t]) continue;
      const double x = (double)in[t][ch] * w[t * c + ch];
      v += x, mag += fabs(x);
    }
    const double want = ref_epilogue(v, old[ch], p.bias ? p.bias[ch] : 0, p.residual ? p.residual[ch] : 0, &p, &mag);
    const double tol = tolerance(taps, mag, want, &p);
    if (!(fabs(out[ch] - want) <= tol)) {
      bad = 1;
      TU_CHECK(0, "%s dw_pixel c=%zu taps=%zu cfg=%u: out[%zu]=%.9g want %.9g", kt->name, c, taps, cfg_idx, ch,
               out[ch], want);
    }
  }
  if (obuf[0] != SENTINEL || obuf[1] != SENTINEL || obuf[c + 2] != SENTINEL || obuf[c + 3] != SENTINEL) {
    bad = 1;
    TU_CHECK(0, "%s dw_pixel c=%zu: write outside the output", kt->name, c);
  }
  if (!bad) TU_CHECK(1, "ok");
  free(old);
  for (size_t t = 0; t < taps; t++) gfree(&gin[t]);
  gfree(&gw), gfree(&gout), gfree(&gbias), gfree(&gres);
}

static void test_dw_pixel(const lc_kernels *kt) {
  const size_t taps[] = {1, 4, 9, 25};
  unsigned cfg = 0;
  for (size_t ti = 0; ti < 4; ti++)
    for (size_t c = 1; c <= 72; c++)
      for (int front = 0; front < 2; front++) check_dw_pixel(kt, c, taps[ti], cfg++ * 7, front);
}

/* ---- activations on special values: the SIMD epilogues must agree with lc_apply_act ---- */

static void test_special_values(const lc_kernels *kt) {
  const float inf = (float)INFINITY;
  const float vals[] = {NAN, inf, -inf, -0.0f, 0.0f, 1e30f, -1e30f, 3.0f, -3.0f, 2.5f, -0.25f, 0.75f, -0.5f, 1e-40f};
  const size_t nv = sizeof(vals) / sizeof(vals[0]);
  const size_t n = nv < kt->nr ? nv : kt->nr;
  const float one = 1.0f;
  for (int act = 0; act < 5; act++) {
    epi_cfg e = {act, 0, 0, 0, 1};
    lc_gemm_params p;
    params_from(&p, &e);
    for (size_t off = 0; off < nv; off += n) {
      const size_t cnt = nv - off < n ? nv - off : n;
      float out[32], chk[32];
      /* 1 x cnt GEMM with k = 1 and A = 1: C = act(B) */
      kt->f32_gemm(1, cnt, 1, &one, 1, 1, vals + off, cnt, out, cnt, &p);
      /* dw_pixel with one tap of weight 1 */
      const float *ptr = vals + off;
      float w[32];
      for (size_t i = 0; i < cnt; i++) w[i] = 1.0f;
      kt->f32_dw_pixel(cnt, 1, &ptr, w, chk, &p);
      for (size_t i = 0; i < cnt; i++) {
        const float want = lc_apply_act(vals[off + i], &p);
        const float got[2] = {out[i], chk[i]};
        for (int g = 0; g < 2; g++) {
          const int ok =
              isnan(want) ? isnan(got[g]) : (got[g] == want || fabsf(got[g] - want) <= 4e-7f * fabsf(want));
          TU_CHECK(ok, "%s %s act=%d x=%g: got %g want %g", kt->name, g ? "dw_pixel" : "gemm", act,
                   (double)vals[off + i], (double)got[g], (double)want);
        }
      }
    }
  }
}

int main(void) {
  tu_seed_from_env(0x5eed1234u);
  signal(SIGSEGV, on_fault);
  signal(SIGBUS, on_fault);
  for (size_t t = 0; t < lc_kernels_count(); t++) {
    const lc_kernels *k = lc_kernels_at(t);
    if (!lc_kernels_runs_here(k)) {
      printf("table %s: not supported by this CPU, skipped\n", k->name);
      continue;
    }
    const int before = tu_failures, checks = tu_checks;
    test_gemm(k);
    test_dw_row(k);
    test_dw_unpadded(k);
    test_dw_unpadded_s2(k);
    test_dw_pixel(k);
    test_special_values(k);
    printf("%s (mr=%zu nr=%zu): %d checks, %d failed\n", k->name, k->mr, k->nr, tu_checks - checks,
           tu_failures - before);
  }
  return tu_finish("test_kernels");
}
