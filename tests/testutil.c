#include "testutil.h"

#include <math.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include "lowconv.h"

int tu_failures = 0;
int tu_checks = 0;
static uint64_t tu_state = 0x9E3779B97F4A7C15ull;

void tu_seed(uint64_t s) { tu_state = s ? s : 0x9E3779B97F4A7C15ull; }

void tu_seed_from_env(uint64_t default_seed) {
  const char *e = getenv("LC_TEST_SEED");
  tu_seed(e ? strtoull(e, NULL, 0) : default_seed);
}

uint64_t tu_rand_u64(void) {
  tu_state ^= tu_state >> 12;
  tu_state ^= tu_state << 25;
  tu_state ^= tu_state >> 27;
  return tu_state * 0x2545F4914F6CDD1Dull;
}

int tu_rand_int(int lo, int hi) { return lo + (int)(tu_rand_u64() % (uint64_t)(hi - lo + 1)); }

float tu_rand_float(float lo, float hi) {
  return lo + (hi - lo) * (float)((double)(tu_rand_u64() >> 40) / (double)(1ull << 24));
}

void tu_fill(float *x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) x[i] = tu_rand_float(lo, hi);
}

float tu_act_int8_unit(const float *v, size_t len, size_t stride, float *xd) {
  float m = 0.0f;
  int finite = 1;
  for (size_t r = 0; r < len; r++) {
    finite = finite && isfinite(v[r * stride]);
    m = fmaxf(m, fabsf(v[r * stride]));
  }
  float s = m / 127.0f, inv = m > 0.0f && finite ? 127.0f / m : 0.0f;
  for (size_t r = 0; r < len; r++) xd[r * stride] = finite ? (float)(int)rintf(v[r * stride] * inv) * s : NAN;
  return m;
}

void tu_act_int8(const float *x, size_t nu, size_t stride, float *xd, float *amax) {
  for (size_t u = 0; u < nu; u++) {
    float m = tu_act_int8_unit(x + u * 8 * stride, 8, stride, xd + u * 8 * stride);
    if (amax) amax[u] = m;
  }
}

void tu_act_int8_grouped(const float *x, size_t n, size_t groups, size_t cin_g, size_t hw, int nchw, size_t unit,
                         float *xd) {
  size_t C = groups * cin_g, cs = nchw ? hw : 1;
  for (size_t i = 0; i < n * hw; i++)
    for (size_t c0 = 0; c0 < C; c0 += cin_g)
      for (size_t u = 0; u < cin_g; u += unit) {
        size_t img = i / hw, px = i % hw, c = c0 + u, off = nchw ? (img * C + c) * hw + px : i * C + c;
        tu_act_int8_unit(x + off, cin_g - u < unit ? cin_g - u : unit, cs, xd + off);
      }
}

double tu_max_abs_diff(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > m || d != d) m = d;
  }
  return m;
}

int tu_finish(const char *name) {
  int passed = tu_checks - tu_failures;
  printf("%s: %d passed, %d failed\n", name, passed, tu_failures);
  return tu_failures ? 1 : 0;
}

int tu_no_opencl(void) {
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;
  p.cache_dir = "";
  lc_context *ctx;
  if (!lc_context_create(&p, &ctx)) {
    lc_context_destroy(ctx);
    return 0;
  }
  const char *r = getenv("LC_REQUIRE_OPENCL");
  int req = r && atoi(r);
  printf("no OpenCL device: %s%s\n", lc_last_error(), req ? "" : " (skipped)");
  TU_CHECK(!req, "LC_REQUIRE_OPENCL is set but no device opened");
  return 1;
}

static int cap_saved = -1, cap_pipe[2];
char tu_stderr_text[4096];
void tu_stderr_begin(void) {
  fflush(stderr);
  cap_saved = dup(2);
  TU_CHECK(pipe(cap_pipe) == 0, "pipe");
  dup2(cap_pipe[1], 2);
  close(cap_pipe[1]);
}
int tu_stderr_end(void) {
  fflush(stderr);
  dup2(cap_saved, 2); /* closes the pipe's last write end, so read sees EOF */
  close(cap_saved);
  size_t n = 0;
  ssize_t r;
  while (n < sizeof tu_stderr_text - 1 &&
         (r = read(cap_pipe[0], tu_stderr_text + n, sizeof tu_stderr_text - 1 - n)) > 0)
    n += (size_t)r;
  close(cap_pipe[0]);
  tu_stderr_text[n] = '\0';
  int count = 0;
  for (const char *s = tu_stderr_text; (s = strstr(s, "warning:")) != NULL; s++) count++;
  return count;
}
