/* A 4 x 4 block of floats transposed in SSE registers (baseline x86-64): d[c * ds + r] =
 * s[r * ss + c] for r, c < 4. Shared by the NCHW <-> NHWC conversions (model/ops/ops_layout.c)
 * and the stem's NHWC rows (conv/route_stem.c); LC_HAVE_TR4 is 0 elsewhere, and they loop. */
#ifndef LC_UTIL_TRANSPOSE4_H
#define LC_UTIL_TRANSPOSE4_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define LC_HAVE_TR4 1

static inline void lc_tr4(const float *s, size_t ss, float *d, size_t ds) {
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + ss), r2 = _mm_loadu_ps(s + 2 * ss), r3 = _mm_loadu_ps(s + 3 * ss);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + ds, r1);
  _mm_storeu_ps(d + 2 * ds, r2);
  _mm_storeu_ps(d + 3 * ds, r3);
}
#else
#define LC_HAVE_TR4 0
#endif

#endif
