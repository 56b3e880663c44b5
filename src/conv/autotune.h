/* The CPU autotuner: for an AUTO conv, times the routes that can run it (x tile sizes x weight-panel
 * splits x thread counts, by level) at prepare and keeps the fastest in the tuning cache
 * (tune/tune_cache.h), keyed by shape and format in a file per CPU model + ISA. A warm prepare reads
 * the choice and times nothing. Every candidate of one route gives the same bits (the tiles, splits
 * and threads never change a sum's order), so tuning changes an output only by changing the route. */
#ifndef LC_CONV_AUTOTUNE_H
#define LC_CONV_AUTOTUNE_H

#include <stddef.h>

#include "conv/conv.h"

typedef struct lc_cpu_tuner lc_cpu_tuner;

/* Where a conv's plan came from (lc_conv.tune_src). */
enum { LC_TSRC_HEURISTIC = 0, LC_TSRC_CACHE, LC_TSRC_TUNED, LC_TSRC_OVER_BUDGET };

/* Opens the tuner of a context whose params ask for cpu_tune (else leaves ctx->tuner NULL). A cache
 * that can't be opened costs only speed: a warning, and tunings are kept in memory. */
lc_status lc_cpu_tuner_open(lc_context *ctx, const lc_context_params *p);
void lc_cpu_tuner_close(lc_context *ctx);

/* The plan of an AUTO conv from the cache or from timing its candidates (c->plan is used and
 * restored while timing). Falls back to the selector (saying so once) when the cached choice
 * doesn't fit the budget. Sets c->dev_info (route label, from_cache, candidates, tune_ms). */
lc_status lc_cpu_tune_plan(lc_conv *c, lc_conv_plan *p);

/* The NHWC / NCHW time ratio of a plain fp32 conv of shape d at batch n and input ih x iw on ctx,
 * each layout on its own plan (tuned routes included): from the cache ("layout ..." records), else
 * timed now, the two interleaved. Returns LC_TSRC_CACHE or LC_TSRC_TUNED with *ratio set, or
 * LC_TSRC_HEURISTIC when ctx has no tuner or a layout can't run the shape (the model runner's
 * layout rule then stands; model/layout.c). */
int lc_cpu_tune_layout(lc_context *ctx, const lc_conv_desc *d, int64_t n, int64_t ih, int64_t iw, double *ratio);
/* Its cache key. (Both in tune_layout.c.) */
void lc_cpu_tune_layout_key(const lc_context *ctx, const lc_conv_desc *d, int64_t n, int64_t ih, int64_t iw, char *buf,
                            size_t size);

/* The tuner's cache for other timing modules: the level (LC_TUNE_NONE without a tuner); a
 * record's value copied into val (1) or none (0); a record put and the file saved; one warning
 * for an unusable record. */
int lc_cpu_tuner_level(const lc_context *ctx);
/* The median of v[0 .. n) (n >= 1), sorting v in place. */
double lc_cpu_tune_median(double *v, int n);
int lc_cpu_tuner_get(lc_context *ctx, const char *key, char *val, size_t n);
void lc_cpu_tuner_put(lc_context *ctx, const char *key, const char *val);
void lc_cpu_tuner_bad_record(lc_context *ctx, const char *val);

/* The cache key of this conv and plan geometry (tests write records with it). */
void lc_cpu_tune_key(const lc_conv *c, const lc_conv_plan *p, char *buf, size_t n);
/* The tuner's fingerprint (CPU model, ISA table, features): names the cache file. */
const char *lc_cpu_tuner_fingerprint(const lc_context *ctx);

#endif
