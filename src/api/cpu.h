#ifndef LC_API_CPU_H
#define LC_API_CPU_H
#include "lowconv.h"
/* LC_CPU_* bits of this CPU, usable by this OS. */
unsigned lc_cpu_detect(void);
#endif
