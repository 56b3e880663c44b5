/* The vector math of every kernel table this CPU runs (kernels/vmath.h) against fp64 references,
 * with the error bounds vmath.h states: dense sweeps over the float range for exp / sigmoid /
 * tanh / HardSigmoid / HardSwish, the special values ONNX fixes (NaN stays NaN, +-inf, -0, overflow to inf, underflow to 0),
 * every length 0..40 (all vector remainders) in place and out of place, and the sums and
 * pooling rows read from buffers that end at an unmapped page, so a read past the last element
 * the contract names faults. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/registry.h"
#include "testutil.h"

#define U (1.0 / 16777216.0)
/* vmath.h's bounds; a sweep of every 97th float measured 8.1e-8 (avx2 exp; libm expf 6.0e-8),
 * 1.44e-7 (sigmoid, both) and 1.75e-7 (avx2 tanh; glibc tanhf 1.61e-7) */
#define EXP_REL 1.2e-7
#define SIG_REL 2e-7 /* plus 2e-38 absolute */
#define TANH_REL 2e-7

static const char *g_name;
static const lc_vmath_kernels *g_vm;

/* HardSigmoid with a model's alpha / beta and HardSwish, as map_fn for the sweeps */
#define HS_A 0.2f
#define HS_B 0.5f
static void hsig(float *y, const float *x, size_t n) { g_vm->hard_sigmoid(y, x, n, HS_A, HS_B, 0); }
static void hswish(float *y, const float *x, size_t n) { g_vm->hard_sigmoid(y, x, n, 1.0f / 6.0f, 0.5f, 1); }

/* ---- n floats that end where an unmapped page begins ---- */

typedef struct {
  void *map;
  size_t len;
} guard;

static float *guarded(guard *g, size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (n * sizeof(float) + pg - 1) / pg * pg;
  g->len = data + pg;
  g->map = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->map == MAP_FAILED) {
    fprintf(stderr, "mmap failed\n");
    exit(2);
  }
  mprotect((char *)g->map + data, pg, PROT_NONE);
  return (float *)(void *)((char *)g->map + data) - n;
}

static void unguard(guard *g) { munmap(g->map, g->len); }

/* ---- elementwise: exp, sigmoid, tanh ---- */

typedef void (*map_fn)(float *y, const float *x, size_t n);

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Error of y against the reference of x in units of the stated bound (> 1 fails). */
static double map_err(int which, float x, float y) {
  if (isnan(x)) return isnan(y) ? 0 : INFINITY;
  if (which == 0) {
    double r = exp((double)x);
    if (r > FLT_MAX * (1 + EXP_REL)) return y == INFINITY ? 0 : INFINITY;
    if (r < FLT_MIN) return fabs(y - r) / 0x1p-149; /* subnormal results: one rounding */
    return fabs(y - r) / (EXP_REL * r);
  }
  if (which >= 3) { /* one rounding of a x + b (two without FMA), one of the product */
    int sw = which == 4;
    double a = sw ? 1.0f / 6.0f : HS_A, b = sw ? 0.5 : HS_B, h = fmin(1.0, fmax(0.0, a * x + b));
    double r = sw ? x * h : h;
    if (isnan(r) || isinf(r)) return (isnan(r) ? isnan(y) : y == r) ? 0 : INFINITY;
    return fabs(y - r) / (2 * U * (fabs(a * x) + b) * (sw ? fabs(x) : 1.0) + U * fabs(r) + 1e-45);
  }
  if (which == 1) {
    double r = ref_sigmoid(x);
    return fabs(y - r) / (SIG_REL * r + 2e-38);
  }
  double r = tanh((double)x);
  if (x == 0) return y == x && signbit(y) == signbit(x) ? 0 : INFINITY; /* -0 stays -0 */
  return fabs(y - r) / (TANH_REL * fabs(r));
}

/* Every k-th float bit pattern (both signs) plus the special values, in blocks of odd length. */
static void sweep_map(const lc_vmath_kernels *v, int which, map_fn f, const char *what) {
  enum { B = 1021 };
  static float x[B], y[B];
  double worst = 0;
  float worst_x = 0;
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f,
                           88.72283f, 88.7229f, 88.8f, 89.0f, 100.0f, -87.0f, -87.33f, -87.34f, -100.0f,
                           -103.9f, -104.0f, -200.0f, 9.0f, 9.2f, -9.2f, 0.55f, -0.55f, 0.5499999f, 43.6f, -43.6f};
  size_t nspec = sizeof special / sizeof special[0], m = 0;
  for (uint32_t bits = 0;; bits += 4093) {
    for (int sgn = 0; sgn < 2; sgn++) {
      union { uint32_t u; float f; } c = {bits | (sgn ? 0x80000000u : 0)};
      x[m++] = c.f;
      if (m == B) {
        f(y, x, m);
        for (size_t i = 0; i < m; i++) {
          double e = map_err(which, x[i], y[i]);
          if (e > worst) worst = e, worst_x = x[i];
        }
        m = 0;
      }
    }
    if (bits > 0x7f800000u) break; /* past +inf: NaN payloads follow, the first few are enough */
  }
  memcpy(x, special, sizeof special);
  memcpy(y, special, sizeof special);
  f(y, y, nspec); /* in place */
  for (size_t i = 0; i < nspec; i++) {
    double e = map_err(which, x[i], y[i]);
    if (e > worst) worst = e, worst_x = x[i];
  }
  if (getenv("LC_TEST_VERBOSE")) printf("%s %s: %.3f of the bound at x = %.9g\n", g_name, what, worst, worst_x);
  TU_CHECK(worst <= 1.0, "%s %s: error %.3g x the stated bound at x = %.9g", g_name, what, worst, worst_x);
  if (which == 1) {
    f(y, special, 4);
    TU_CHECK(y[2] == 1.0f && y[3] >= 0.0f && y[3] <= 2e-38f, "%s sigmoid(+-inf) = %g, %g", g_name, y[2], y[3]);
  }
  if (which == 2) {
    f(y, special, 4);
    TU_CHECK(y[2] == 1.0f && y[3] == -1.0f, "%s tanh(+-inf) = %g, %g", g_name, y[2], y[3]);
    float p[64], q[64], r[64];
    for (int i = 0; i < 64; i++) p[i] = tu_rand_float(-12, 12), q[i] = -p[i];
    f(r, p, 64);
    f(q, q, 64);
    int odd = 1;
    for (int i = 0; i < 64; i++) odd &= q[i] == -r[i];
    TU_CHECK(odd, "%s tanh(-x) != -tanh(x)", g_name);
  }
}

/* Every length 0..40, out of place (the input ends at a guard page; the output keeps its
 * sentinels past n) and in place, against the same results. */
static void lengths_map(map_fn f, const char *what) {
  for (size_t n = 0; n <= 40; n++) {
    guard g;
    float *x = guarded(&g, n), y[48], z[48];
    for (size_t i = 0; i < n; i++) x[i] = tu_rand_float(-30, 30);
    for (size_t i = 0; i < 48; i++) y[i] = -7.0f;
    f(y, x, n);
    memcpy(z, x, n * sizeof(float));
    f(z, z, n);
    int ok = 1;
    for (size_t i = n; i < 48; i++) ok &= y[i] == -7.0f;
    for (size_t i = 0; i < n; i++) ok &= y[i] == z[i];
    TU_CHECK(ok, "%s %s n=%zu: stray write or in-place result differs", g_name, what, n);
    unguard(&g);
  }
}

/* ---- softmax rows ---- */

/* The bounds of src/model/ops/ops_norm.c, as in test_ops_numerics.c. */
static double softmax_err(const float *x, const float *y, size_t len, int lg) {
  double m = -INFINITY, sum = 0, dmax = 0, worst = 0;
  for (size_t j = 0; j < len; j++) m = fmax(m, x[j]);
  for (size_t j = 0; j < len; j++) sum += exp((double)x[j] - m), dmax = fmax(dmax, m - x[j]);
  for (size_t j = 0; j < len; j++) {
    double d = (double)x[j] - m, ref = lg ? d - log(sum) : exp(d) / sum;
    double bound = lg ? U * fabs(ref) + 2e-7 + U * dmax : (4e-7 + U * fabs(d)) * ref + 2e-38;
    worst = fmax(worst, fabs(y[j] - ref) / bound);
  }
  return worst;
}

static void test_softmax(const lc_vmath_kernels *v) {
  for (int lg = 0; lg < 2; lg++) {
    double worst = 0;
    for (size_t len = 1; len <= 40; len++) {
      guard g;
      float *x = guarded(&g, len), y[40];
      for (size_t i = 0; i < len; i++) x[i] = tu_rand_float(-20, 20);
      v->softmax_row(x, y, len, lg);
      worst = fmax(worst, softmax_err(x, y, len, lg));
      unguard(&g);
    }
    size_t big = 20011; /* an odd size past the 18k */
    float *x = malloc(big * sizeof(float)), *y = malloc(big * sizeof(float));
    for (size_t i = 0; i < big; i++) x[i] = tu_rand_float(-60, 60);
    v->softmax_row(x, y, big, lg);
    worst = fmax(worst, softmax_err(x, y, big, lg));
    v->softmax_row(x, x, big, lg); /* in place: the same values */
    TU_CHECK(!memcmp(x, y, big * sizeof(float)), "%s softmax lg=%d in place differs", g_name, lg);
    free(x), free(y);
    TU_CHECK(worst <= 1.0, "%s softmax lg=%d: error %.3g x the stated bound", g_name, lg, worst);
  }
  /* -inf logits (masks) give exactly 0; a NaN or +inf anywhere makes the row NaN */
  float x[19], y[19];
  for (int i = 0; i < 19; i++) x[i] = (float)i * 0.1f;
  x[3] = x[17] = -INFINITY;
  x[5] = -100.0f;
  v->softmax_row(x, y, 19, 0);
  TU_CHECK(y[3] == 0.0f && y[17] == 0.0f && y[5] == 0.0f, "%s softmax of -inf / -100 below the max: %g %g %g", g_name,
           y[3], y[17], y[5]);
  v->softmax_row(x, y, 19, 1);
  TU_CHECK(y[3] == -INFINITY && isfinite(y[5]), "%s logsoftmax of -inf: %g", g_name, y[3]);
  for (int bad = 0; bad < 2; bad++) {
    x[11] = bad ? INFINITY : NAN;
    for (int lg = 0; lg < 2; lg++) {
      v->softmax_row(x, y, 19, lg);
      int all = 1;
      for (int i = 0; i < 19; i++) all &= isnan(y[i]);
      TU_CHECK(all, "%s softmax lg=%d with %s: not all NaN", g_name, lg, bad ? "+inf" : "NaN");
    }
  }
  for (int i = 0; i < 19; i++) x[i] = -INFINITY;
  v->softmax_row(x, y, 19, 0);
  TU_CHECK(isnan(y[0]) && isnan(y[18]), "%s softmax of all -inf: %g", g_name, y[0]);
}

/* ---- sums and pooling rows ---- */

static void test_sums(const lc_vmath_kernels *v) {
  for (size_t n = 0; n <= 40; n++) {
    guard g;
    float *x = guarded(&g, n);
    double ref = 0, abs = 0;
    for (size_t i = 0; i < n; i++) x[i] = tu_rand_float(-1e3f, 1e3f), ref += x[i], abs += fabs(x[i]);
    double s = v->sum_d(x, n);
    TU_CHECK(fabs(s - ref) <= (double)n * 0x1p-52 * abs, "%s sum_d n=%zu: %.17g vs %.17g", g_name, n, s, ref);
    unguard(&g);
  }
  size_t big = 100003;
  float *x = malloc(big * sizeof(float));
  long double ref = 0;
  double abs = 0;
  for (size_t i = 0; i < big; i++) x[i] = tu_rand_float(0, 1), ref += x[i], abs += x[i];
  double s = v->sum_d(x, big);
  TU_CHECK(fabs(s - (double)ref) <= (double)big * 0x1p-53 * abs, "%s sum_d 100k: %.17g vs %.17Lg", g_name, s, ref);
  free(x);
}

/* rows_sum and pool_row against naive loops, every length to 40, random windows; x ends at the
 * last element the contract lets them read. */
static void test_pool_rows(const lc_vmath_kernels *v) {
  double worst = 0;
  for (int it = 0; it < 600; it++) {
    size_t n = (size_t)tu_rand_int(1, 40), rows = (size_t)tu_rand_int(1, 4), s = (size_t)tu_rand_int(1, 3);
    size_t k = (size_t)tu_rand_int(1, 4), d = (size_t)tu_rand_int(1, 2);
    if (it % 3 == 0) s = 2, k = 2, d = 1; /* the 2x2-style fast path */
    size_t wid = (n - 1) * s + (k - 1) * d + 1, stride = wid + (size_t)tu_rand_int(0, 5);
    size_t len = (rows - 1) * stride + wid;
    guard g;
    float *x = guarded(&g, len), inv[40], y[48];
    for (size_t i = 0; i < len; i++) x[i] = tu_rand_float(-4, 4);
    for (size_t i = 0; i < n; i++) inv[i] = 1.0f / (float)tu_rand_int(1, 16);
    for (size_t i = 0; i < 48; i++) y[i] = -7.0f;
    v->pool_row(y, x, n, rows, stride, s, k, d, inv);
    int sentinel = 1;
    for (size_t i = n; i < 48; i++) sentinel &= y[i] == -7.0f;
    TU_CHECK(sentinel, "%s pool_row n=%zu: stray write", g_name, n);
    for (size_t i = 0; i < n; i++) {
      double acc = 0, mag = 0;
      for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < k; j++) acc += x[r * stride + i * s + j * d], mag += fabs(x[r * stride + i * s + j * d]);
      /* rows * k float additions and the scale: (rows k + 1) u of the magnitudes */
      worst = fmax(worst, fabs(y[i] - acc * inv[i]) / ((double)(rows * k + 1) * U * mag * inv[i] + 1e-30));
    }
    float rs[128];
    v->rows_sum(rs, x, wid, rows, stride); /* wid <= 39 * 3 + 3 * 2 + 1 = 124 */
    for (size_t i = 0; i < wid; i++) {
      double acc = 0, mag = 0;
      for (size_t r = 0; r < rows; r++) acc += x[r * stride + i], mag += fabs(x[r * stride + i]);
      worst = fmax(worst, fabs(rs[i] - acc) / ((double)rows * U * mag + 1e-30));
    }
    unguard(&g);
  }
  TU_CHECK(worst <= 1.0, "%s pool_row / rows_sum: error %.3g x (terms * u * sum|x|)", g_name, worst);
}

/* convt2_row against a double reference: random channel and pair counts (every remainder of the
 * AVX2 kernel's 3 pairs and 16 / 8 columns), x ending at its last element, a sentinel after each
 * output row. Bound: C + 1 roundings of the running sum, (C + 1) u (|b| + sum |w x|). */
static void test_convt2(const lc_vmath_kernels *v) {
  double worst = 0;
  for (int it = 0; it < 300; it++) {
    size_t C = (size_t)tu_rand_int(1, 30), w = (size_t)tu_rand_int(1, 40), nj = (size_t)tu_rand_int(1, 8);
    size_t xs = w + (size_t)tu_rand_int(0, 3), len = (C - 1) * xs + w;
    guard g;
    float *x = guarded(&g, len), wp[8 * 30 * 2], b[8], y[8][84], *rows[8];
    for (size_t i = 0; i < len; i++) x[i] = tu_rand_float(-2, 2);
    for (size_t i = 0; i < nj * C * 2; i++) wp[i] = tu_rand_float(-1, 1);
    for (size_t j = 0; j < nj; j++) {
      b[j] = tu_rand_float(-1, 1), rows[j] = y[j];
      for (size_t i = 0; i < 84; i++) y[j][i] = -7.0f;
    }
    v->convt2_row(rows, x, xs, C, w, wp, b, nj);
    for (size_t j = 0; j < nj; j++) {
      int sentinel = 1;
      for (size_t i = 2 * w; i < 84; i++) sentinel &= y[j][i] == -7.0f;
      TU_CHECK(sentinel, "%s convt2_row C=%zu w=%zu nj=%zu: stray write", g_name, C, w, nj);
      for (size_t i = 0; i < 2 * w; i++) {
        double acc = b[j], mag = fabs(b[j]);
        for (size_t c = 0; c < C; c++) {
          double t = (double)wp[(j * C + c) * 2 + i % 2] * x[c * xs + i / 2];
          acc += t, mag += fabs(t);
        }
        worst = fmax(worst, fabs(y[j][i] - acc) / ((double)(C + 1) * U * mag + 1e-30));
      }
    }
    unguard(&g);
  }
  TU_CHECK(worst <= 1.0, "%s convt2_row: error %.3g x ((C + 1) u sum|terms|)", g_name, worst);
}

/* repeat_row against the plain copy: every k to 17 and 24 (the permute, broadcast and overlapping
 * tails), every length to 40, x ending at its last element, a sentinel after the row. Bitwise. */
static void test_repeat_row(const lc_vmath_kernels *v) {
  for (size_t k = 1; k <= 24; k++) {
    if (k > 17 && k != 24) continue;
    for (size_t n = 0; n <= 40; n++) {
      guard g;
      float *x = guarded(&g, n ? n : 1), y[24 * 40 + 8];
      for (size_t i = 0; i < n; i++) x[i] = tu_rand_float(-4, 4);
      for (size_t i = 0; i < 24 * 40 + 8; i++) y[i] = -7.0f;
      v->repeat_row(y, x, n, k);
      int ok = 1;
      for (size_t i = 0; i < n * k; i++) ok &= memcmp(&y[i], &x[i / k], sizeof(float)) == 0;
      for (size_t i = n * k; i < 24 * 40 + 8; i++) ok &= y[i] == -7.0f;
      TU_CHECK(ok, "%s repeat_row n=%zu k=%zu: wrong or stray write", g_name, n, k);
      unguard(&g);
    }
  }
}

int main(void) {
  tu_seed_from_env(777);
  const lc_vmath_kernels *seen[8];
  size_t nseen = 0;
  for (size_t t = 0; t < lc_kernels_count(); t++) {
    const lc_kernels *k = lc_kernels_at(t);
    int dup = 0;
    for (size_t i = 0; i < nseen; i++) dup |= seen[i] == k->vmath;
    if (!lc_kernels_runs_here(k) || dup || nseen == 8) continue;
    seen[nseen++] = k->vmath;
    g_name = k->name;
    const lc_vmath_kernels *v = g_vm = k->vmath;
    sweep_map(v, 0, v->exp, "exp");
    sweep_map(v, 1, v->sigmoid, "sigmoid");
    sweep_map(v, 2, v->tanh, "tanh");
    sweep_map(v, 3, hsig, "hardsigmoid");
    sweep_map(v, 4, hswish, "hardswish");
    lengths_map(hsig, "hardsigmoid");
    lengths_map(hswish, "hardswish");
    lengths_map(v->exp, "exp");
    lengths_map(v->sigmoid, "sigmoid");
    lengths_map(v->tanh, "tanh");
    test_softmax(v);
    test_sums(v);
    test_pool_rows(v);
    test_convt2(v);
    test_repeat_row(v);
    printf("%s: vector math checked\n", k->name);
  }
  return tu_finish("test_vmath");
}
