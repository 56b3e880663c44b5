#ifndef LC_TOOLS_CONV_DEVICE_H
#define LC_TOOLS_CONV_DEVICE_H

#include <stddef.h>

#include "lowconv.h"

typedef struct conv_device_result {
  double device_ms, min_ms;   /* per run, from profiling events: median and min */
  double wall_ms;             /* per run of back-to-back runs (cycling over the copies), host clock */
  double peak_gflops;         /* the device's measured fp32 FMA rate (0 if unknown) */
  lc_conv_device_info info;   /* kernel, local size, compile and tune time */
} conv_device_result;

/* Times a prepared conv of a device context on `in`; leaves the output in `out`. The wall time's
 * back-to-back runs cycle over conv and the nx copies in extra (the same conv, its own weights). */
lc_status conv_device_time(lc_context *ctx, lc_conv *conv, lc_conv *const *extra, int nx, const float *in, size_t n_in,
                           float *out, size_t n_out, int warmup, int repeat, conv_device_result *r);

#endif
