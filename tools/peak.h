/* FMA peak of this machine for a kernel table, the denominator of "% of peak". */
#ifndef LC_TOOLS_PEAK_H
#define LC_TOOLS_PEAK_H

#include <stddef.h>

/* GFLOP/s of one core for isa ("scalar", "avx2", "avx512"): env LOWCONV_PEAK_GFLOPS (per core) if
 * set, else the value cached for this CPU model and ISA, else measured now (a ~0.1 s FMA loop) and
 * cached in $XDG_CACHE_HOME/lowconv/peak (~/.cache/lowconv/peak). *source says which.
 * Returns 0, or -1 with a message in err (bad LOWCONV_PEAK_GFLOPS). */
int peak_gflops_per_core(const char *isa, double *gflops, const char **source, char *err, size_t errlen);

#endif
