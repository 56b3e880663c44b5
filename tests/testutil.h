/* Shared test helpers: deterministic RNG, checks that count failures, tolerance helpers. */
#ifndef LC_TESTUTIL_H
#define LC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern int tu_failures;
extern int tu_checks;

/* xorshift64*: deterministic across runs; seed from LC_TEST_SEED env var if set. */
uint64_t tu_rand_u64(void);
void tu_seed(uint64_t s);
void tu_seed_from_env(uint64_t default_seed);
int tu_rand_int(int lo, int hi);             /* inclusive */
float tu_rand_float(float lo, float hi);
void tu_fill(float *x, size_t n, float lo, float hi);

#define TU_CHECK(cond, ...)                                                        \
  do {                                                                             \
    tu_checks++;                                                                   \
    if (!(cond)) {                                                                 \
      tu_failures++;                                                               \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                                \
      fprintf(stderr, "\n");                                                       \
    }                                                                              \
  } while (0)

/* The OpenCL tests' common start: 1 if no OpenCL context opens (printed with the reason; a
 * failure when LC_REQUIRE_OPENCL=1, as in CI where PoCL is installed), else 0. */
int tu_no_opencl(void);

/* stderr goes to a pipe between tu_stderr_begin and tu_stderr_end, which returns the number of
 * "warning:" lines and leaves the text in tu_stderr_text (what one call writes fits a pipe). */
extern char tu_stderr_text[4096];
void tu_stderr_begin(void);
int tu_stderr_end(void);

/* The OpenCL gemvq family's view of its input: the nu units of 8 values x[(8u + r) * stride]
 * quantized to int8 (q = rint(x * (127 / amax)), value q * (amax / 127), NaN for a unit with a
 * non-finite value), written to the same places of xd; amax[u] gets each unit's max |x| (may be
 * NULL). xd's other elements are left as they are. */
void tu_act_int8(const float *x, size_t nu, size_t stride, float *xd, float *amax);
/* One unit of len values (stride apart) quantized as tu_act_int8 does; returns its max |x|. */
float tu_act_int8_unit(const float *v, size_t len, size_t stride, float *xd);
/* x (n images of groups * cin_g channels of hw pixels, NCHW or NHWC) as family gemmq rounds it:
 * units of `unit` channels of one group at one pixel (a group's last unit shorter). */
void tu_act_int8_grouped(const float *x, size_t n, size_t groups, size_t cin_g, size_t hw, int nchw, size_t unit,
                         float *xd);

/* Prints "N passed, N failed" and returns the process exit code. */
int tu_finish(const char *name);

/* Max |a-b| / (scale) over n values, where scale is given by the caller. */
double tu_max_abs_diff(const float *a, const float *b, size_t n);

#endif
