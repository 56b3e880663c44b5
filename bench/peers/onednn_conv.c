/* Peer yardstick: one f32 forward-inference convolution through oneDNN's C API (Debian's
 * libdnnl, OpenMP runtime). oneDNN picks its formats (format_tag any); reorders from plain
 * layouts happen once, outside the timed loop, as in benchdnn's performance mode.
 * usage: onednn_conv DESC [--threads T] [--repeat N] [--warmup N] [--warmup-ms MS]   -> one JSON line */
#include <dnnl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Same descriptor meanings as `lowconv conv` (standalone, libc only). */
#include "benchdnn.h"
#include "util/timer.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    dnnl_status_t st_ = (call);                                                            \
    if (st_ != dnnl_success) {                                                             \
      fprintf(stderr, "onednn_conv: %s failed: status %d\n", #call, (int)st_);             \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The OpenMP runtime reads OMP_NUM_THREADS when it loads, so set it and re-run ourselves. */
static void pin_threads(int threads, char **argv) {
  char want[16];
  snprintf(want, sizeof want, "%d", threads);
  const char *cur = getenv("OMP_NUM_THREADS");
  if (cur && !strcmp(cur, want)) return;
  setenv("OMP_NUM_THREADS", want, 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "onednn_conv: could not re-exec to set OMP_NUM_THREADS; set it yourself\n");
}

/* Memory in oneDNN's chosen format `md`, filled from a plain-layout random tensor by a reorder. */
static dnnl_memory_t make_input(dnnl_engine_t eng, dnnl_stream_t s, int nd, const dnnl_dims_t dims,
                                dnnl_format_tag_t plain, const dnnl_memory_desc_t *md, unsigned *seed) {
  dnnl_memory_desc_t umd;
  dnnl_memory_t user, mem;
  CHECK(dnnl_memory_desc_init_by_tag(&umd, nd, dims, dnnl_f32, plain));
  CHECK(dnnl_memory_create(&user, &umd, eng, DNNL_MEMORY_ALLOCATE));
  float *p;
  CHECK(dnnl_memory_get_data_handle(user, (void **)&p));
  size_t n = dnnl_memory_desc_get_size(&umd) / sizeof(float);
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    p[i] = (float)(*seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  CHECK(dnnl_memory_create(&mem, md, eng, DNNL_MEMORY_ALLOCATE));
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  CHECK(dnnl_reorder_primitive_desc_create(&rpd, &umd, eng, md, eng, NULL));
  CHECK(dnnl_primitive_create(&r, rpd));
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, mem}};
  CHECK(dnnl_primitive_execute(r, s, 2, args));
  CHECK(dnnl_stream_wait(s));
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user);
  return mem;
}

int main(int argc, char **argv) {
  const char *desc = NULL;
  int threads = 1, repeat = 0, warmup = 1;
  double warmup_ms = 0.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup-ms") && i + 1 < argc) warmup_ms = atof(argv[++i]);
    else if (argv[i][0] != '-' && !desc) desc = argv[i];
    else {
      fprintf(stderr, "usage: onednn_conv DESC [--threads T] [--repeat N] [--warmup N] [--warmup-ms MS]\n");
      return 2;
    }
  }
  if (!desc || threads < 1 || repeat < 0 || warmup < 0) {
    fprintf(stderr, "usage: onednn_conv DESC [--threads T] [--repeat N] [--warmup N] [--warmup-ms MS]\n");
    return 2;
  }
  bd_conv c;
  char err[256];
  if (bd_parse(desc, &c, err, sizeof err)) {
    fprintf(stderr, "onednn_conv: invalid descriptor '%s': %s\n", desc, err);
    return 2;
  }
  pin_threads(threads, argv);

  dnnl_engine_t eng;
  dnnl_stream_t strm;
  CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

  const int grouped = c.g > 1;
  dnnl_dims_t sd = {c.mb, c.ic, c.ih, c.iw}, dd = {c.mb, c.oc, c.oh, c.ow};
  dnnl_dims_t wd = {c.oc, c.ic, c.kh, c.kw};
  if (grouped) {
    wd[0] = c.g, wd[1] = c.oc / c.g, wd[2] = c.ic / c.g, wd[3] = c.kh, wd[4] = c.kw;
  }
  const int wnd = grouped ? 5 : 4;
  dnnl_dims_t strides = {c.sh, c.sw}, dil = {c.dh, c.dw}, pl = {c.ph, c.pw}, pr = {c.pb, c.pr};
  dnnl_memory_desc_t smd, wmd, dmd;
  CHECK(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&wmd, wnd, wd, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_format_tag_any));
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &smd,
                                                   &wmd, NULL, &dmd, strides, dil, pl, pr));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
  dnnl_primitive_t conv;
  CHECK(dnnl_primitive_create(&conv, pd));
  const char *impl = "?";
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);

  unsigned seed = 12345u;
  dnnl_memory_t src = make_input(eng, strm, 4, sd, dnnl_nchw, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                                 &seed);
  dnnl_memory_t wei = make_input(eng, strm, wnd, wd, grouped ? dnnl_goihw : dnnl_oihw,
                                 dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &seed);
  dnnl_memory_t dst;
  CHECK(dnnl_memory_create(&dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), eng,
                           DNNL_MEMORY_ALLOCATE));
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};

  double tw = lc_now_s(); /* --warmup-ms: as lowconv conv's, runs until MS ms have passed */
  for (int i = 0; i < warmup || (lc_now_s() - tw) * 1e3 < warmup_ms; i++) {
    CHECK(dnnl_primitive_execute(conv, strm, 3, args));
    CHECK(dnnl_stream_wait(strm));
  }
  double t0 = lc_now_s();
  CHECK(dnnl_primitive_execute(conv, strm, 3, args));
  CHECK(dnnl_stream_wait(strm));
  double t1 = lc_now_s() - t0;
  if (repeat <= 0) { /* ~0.3 s, as lowconv conv does */
    double want = ceil(0.3 / (t1 > 1e-7 ? t1 : 1e-7));
    repeat = want > 10000 ? 10000 : (int)want;
    if (repeat < 3 && t1 < 1.0) repeat = 3;
    if (repeat < 1) repeat = 1;
  }
  double *t = malloc(sizeof(double) * (size_t)repeat);
  if (!t) return 1;
  t[0] = t1;
  for (int i = 1; i < repeat; i++) {
    t0 = lc_now_s();
    CHECK(dnnl_primitive_execute(conv, strm, 3, args));
    CHECK(dnnl_stream_wait(strm));
    t[i] = lc_now_s() - t0;
  }
  qsort(t, (size_t)repeat, sizeof(double), cmp_double);
  double med = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
  char canon[256];
  c.name[0] = '\0';
  bd_format(&c, canon, sizeof canon);
  printf("{\"desc\":\"%s\",\"impl\":\"%s\",\"threads\":%d,\"median_ms\":%.6f,\"min_ms\":%.6f}\n", canon, impl,
         threads, med * 1e3, t[0] * 1e3);
  free(t);
  dnnl_memory_destroy(src);
  dnnl_memory_destroy(wei);
  dnnl_memory_destroy(dst);
  dnnl_primitive_destroy(conv);
  dnnl_primitive_desc_destroy(pd);
  dnnl_stream_destroy(strm);
  dnnl_engine_destroy(eng);
  return 0;
}
