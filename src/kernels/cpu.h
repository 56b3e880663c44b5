/* CPU features, detected once per process (the kernel registry reads them). */
#ifndef LC_KERNELS_CPU_H
#define LC_KERNELS_CPU_H
#include "lowconv.h"
/* LC_CPU_* bits of this CPU, usable by this OS. */
unsigned lc_cpu_features(void);
#endif
