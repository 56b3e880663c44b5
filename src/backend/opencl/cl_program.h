/* Programs of the OpenCL backend: built from the sources embedded at build time (kernels/NAME.cl,
 * generated into cl_sources.c by cmake/embed_cl.cmake), through an on-disk program cache keyed by
 * device fingerprint + source hash + build options + lowconv version (docs/caches.md). */
#ifndef LC_CL_PROGRAM_H
#define LC_CL_PROGRAM_H

#include "backend/opencl/cl_rt.h"

typedef struct lc_cl_source {
  const char *name;            /* file name without .cl ("common", "conv_direct", ...) */
  const char *text;
  size_t len;
} lc_cl_source;
extern const lc_cl_source lc_cl_sources[];
extern const size_t lc_cl_nsources;

/* Resolves the cache directory (NULL = default, "" = none) and creates it; never fails for an
 * unusable directory (that only costs speed: warned once, caching off). */
lc_status lc_cl_programs_init(lc_cl_rt *rt, const char *cache_dir);
void lc_cl_programs_free(lc_cl_rt *rt);
/* The program `name` built with `options`; the build log is in the message when it fails. */
lc_status lc_cl_program(lc_cl_rt *rt, const char *name, const char *options, cl_program *out);
/* 1 if the program is built already (in this runtime). */
int lc_cl_program_known(const lc_cl_rt *rt, const char *name, const char *options);
/* Lists a program to build (rt->want) unless it is built or listed already. */
lc_status lc_cl_want_program(lc_cl_rt *rt, const char *name, const char *options);
/* Builds (or loads from the disk cache) every listed program on worker threads and empties the
 * list. Only running out of memory is an error here: a program that fails to build is left out,
 * and building it where it is used gives its build log. */
lc_status lc_cl_build_wanted(lc_cl_rt *rt);
/* The same on worker threads in the background: lc_cl_program waits for a program still being
 * built there instead of building it again; lc_cl_build_join waits for all of them, adds their
 * wall time to compile_ms and reports running out of memory. */
lc_status lc_cl_build_wanted_async(lc_cl_rt *rt);
lc_status lc_cl_build_join(lc_cl_rt *rt);
/* Wall time of the background batch so far (until its last build, once done; 0 without one). */
double lc_cl_bg_ms(const lc_cl_rt *rt);
/* The collect pass's programs per node: wants listed after lc_cl_collect_tag(rt, t) are node t's
 * (-1: untagged; tags come in increasing order). lc_cl_tag_ready: 1 when none of node t's programs is still building in the
 * background (initializing it then waits for nothing). */
void lc_cl_collect_tag(lc_cl_rt *rt, int tag);
int lc_cl_tag_ready(lc_cl_rt *rt, int tag);
/* Waits until one more background build finishes; 0 (at once) when none is running. */
int lc_cl_build_wait_one(lc_cl_rt *rt);
/* Counters for tests and reports: programs built from source / loaded from the cache. */
void lc_cl_program_counts(const lc_cl_rt *rt, int *built, int *loaded);
/* Prints "lowconv: warning: ..." once per runtime (cache problems). */
void lc_cl_warn_once(lc_cl_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
