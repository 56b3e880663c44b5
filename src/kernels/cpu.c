/* CPU feature detection: cpuid for the instruction sets, xgetbv for OS support of the registers
 * (an AVX-512 CPU under an OS that doesn't save zmm state must not use them). */
#include "kernels/cpu.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long lc_xgetbv0(void) {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}

static unsigned lc_cpu_detect(void) {
  unsigned a, b, c, d, f = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, avx = (c >> 28) & 1;
  if (!osxsave || !avx) return 0;
  unsigned long long xcr0 = lc_xgetbv0();
  int ymm_ok = (xcr0 & 0x6) == 0x6;
  int zmm_ok = ymm_ok && (xcr0 & 0xE0) == 0xE0;
  if (!ymm_ok || __get_cpuid_max(0, NULL) < 7) return 0;
  __cpuid_count(7, 0, a, b, c, d);
  int avx2 = (b >> 5) & 1;
  int avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
  int avx512vnni = (c >> 11) & 1;
  if (avx2 && fma) f |= LC_CPU_AVX2_FMA;
  if (zmm_ok && avx512f && avx512dq && avx512bw && avx512vl && (f & LC_CPU_AVX2_FMA)) {
    f |= LC_CPU_AVX512F;
    if (avx512vnni) f |= LC_CPU_AVX512VNNI;
  }
  __cpuid_count(7, 1, a, b, c, d);
  if ((a >> 4) & 1 && (f & LC_CPU_AVX2_FMA)) f |= LC_CPU_AVXVNNI;
  return f;
}
#else
static unsigned lc_cpu_detect(void) { return 0; }
#endif

/* cpuid traps to the hypervisor on a VM: ask once. */
static pthread_once_t lc_cpu_once = PTHREAD_ONCE_INIT;
static unsigned lc_cpu_bits;
static void lc_cpu_init(void) { lc_cpu_bits = lc_cpu_detect(); }

unsigned lc_cpu_features(void) {
  pthread_once(&lc_cpu_once, lc_cpu_init);
  return lc_cpu_bits;
}
