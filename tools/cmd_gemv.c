/* `lowconv gemv`: times the quantized GEMV on weights that come from DRAM, and measures this
 * machine's DRAM read bandwidth in the same run so the result can be given as a fraction of it. */
#define _DEFAULT_SOURCE /* madvise */
#include <immintrin.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "commands.h"
#include "opts.h"
#include "quant/quant.h"
#include "util/timer.h"
#include "util/threadpool.h"

int cmd_gemv(int argc, char **argv);

/* Weights are cycled through copies totalling at least this (6x the 32 MiB L3), so no call finds
 * its matrix in cache. */
#define GEMV_COPY_BYTES ((size_t)192 << 20)
#define STREAM_BYTES ((size_t)512 << 20)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct stream_arg {
  const uint8_t *p;
  size_t bytes;
  uint64_t sink;
} stream_arg;

/* Sum of 32-byte words with 4 independent accumulators: the read is all that limits it. */
__attribute__((target("avx2"))) static uint64_t stream_avx2(const uint8_t *p, size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i *)(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256((const __m256i *)(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256((const __m256i *)(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256((const __m256i *)(p + i + 96)));
  }
  __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  return (uint64_t)_mm256_extract_epi64(s, 0) + (uint64_t)_mm256_extract_epi64(s, 3);
}

static void *stream_main(void *v) {
  stream_arg *a = v;
  if (__builtin_cpu_supports("avx2")) {
    a->sink = stream_avx2(a->p, a->bytes);
  } else {
    const uint64_t *q = (const uint64_t *)(const void *)a->p;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= a->bytes / 8; i += 4) s0 += q[i], s1 += q[i + 1], s2 += q[i + 2], s3 += q[i + 3];
    a->sink = s0 + s1 + s2 + s3;
  }
  return NULL;
}

/* One pass reading a 512 MiB buffer split among `threads` threads; returns seconds. */
static double stream_pass(const uint8_t *buf, int threads, uint64_t *sink) {
  size_t per = STREAM_BYTES / (size_t)threads / 128 * 128;
  stream_arg args[64];
  pthread_t tid[64];
  double t0 = lc_now_s();
  for (int i = 0; i < threads; i++) {
    args[i] = (stream_arg){buf + (size_t)i * per, per, 0};
    if (i > 0 && pthread_create(&tid[i], NULL, stream_main, &args[i]) != 0) args[i].bytes = 0;
  }
  stream_main(&args[0]);
  for (int i = 1; i < threads; i++)
    if (args[i].bytes) pthread_join(tid[i], NULL);
  double t = lc_now_s() - t0;
  for (int i = 0; i < threads; i++) *sink += args[i].sink;
  return t;
}

typedef struct gargs {
  int k, n, m, repeat, threads, json, block, asym, weights, mode, isa;
} gargs;

static const char *const modes[] = {"accurate", "int8", NULL};    /* lc_qgemv_mode order */
static const char *const isas[] = {"auto", "scalar", "avx2", "avx512", NULL}; /* lc_isa order */

#define O(f) offsetof(gargs, f)
static const opt_def gemv_opts[] = {
    {"--k", "K", OPT_INT, O(k), 1, 1 << 30, NULL, "input features (columns of W), required"},
    {"--n", "N", OPT_INT, O(n), 1, 1 << 30, NULL, "output features (rows of W), required"},
    {"--m", "M", OPT_INT, O(m), 1, 4096, NULL, "rows of x (batch)"},
    {"--weights", "W", OPT_CHOICE, O(weights), 0, 0, opts_weight_formats, "weight storage"},
    {"--block", "N", OPT_INT, O(block), 0, 1 << 20, NULL, "quantization block along K, 0 = one per row"},
    {"--asym", NULL, OPT_FLAG, O(asym), 0, 0, NULL, "scale and offset per block (default symmetric)"},
    {"--mode", "MODE", OPT_CHOICE, O(mode), 0, 0, modes,
     "accurate: fp32 activations, weights dequantized in registers;\n"
     "int8: activations quantized per block, integer dot products"},
    {"--threads", "T", OPT_INT, O(threads), 1, 64, NULL, "threads (also for the DRAM stream)"},
    {"--repeat", "R", OPT_INT, O(repeat), 1, 100000, NULL, "timed calls"},
    {"--isa", "I", OPT_CHOICE, O(isa), 0, 0, isas, "kernels (avx512 = AVX-512 VNNI)"},
    {"--json", NULL, OPT_FLAG, O(json), 0, 0, NULL, "one JSON object"},
};
#undef O

static const opt_cmd gemv_cmd = {
    "gemv", "--k K --n N [options]",
    "Times y[M][N] = x[M][K] * W[N][K]^T with block-quantized W. The weights are cycled through\n"
    "copies totalling >= 192 MiB so every call reads them from DRAM; GB/s counts codes + scales\n"
    "+ offsets once per call; bw_fraction divides by a streaming read of 512 MiB on T threads,\n"
    "timed between the GEMV calls (one pass per 4 calls, at least 5) so both see the same load\n"
    "on a shared machine. Medians; best_* are the fastest call and pass.\n",
    gemv_opts, (int)(sizeof gemv_opts / sizeof gemv_opts[0]), NULL, 0, NULL};

int cmd_gemv(int argc, char **argv) {
  gargs g = {0, 0, 1, 20, 1, 0, 32, 0, LC_WEIGHTS_Q4, LC_QGEMV_ACCURATE, LC_ISA_AUTO};
  int npos = 0, pr = opts_parse(&gemv_cmd, argc, argv, &g, NULL, &npos);
  if (pr) return pr < 0 ? 0 : pr;
  size_t k = (size_t)g.k, n = (size_t)g.n, m = (size_t)g.m, repeat = (size_t)g.repeat;
  int threads = g.threads, json = g.json, block = g.block;
  lc_quant_spec spec = {(lc_weight_format)g.weights, block, g.asym, 0, 0};
  lc_qgemv_opts opts = {(lc_qgemv_mode)g.mode, 1, (lc_isa)g.isa, NULL};
  if (!k || !n) return opts_usage("gemv", "--k and --n are required");
  /* a forced ISA the CPU lacks would silently run another one */
  static const char *const qisa[] = {"", "scalar", "avx2", "avx512vnni"};
  if (g.isa != LC_ISA_AUTO && strcmp(lc_qgemv_isa_name(&opts), qisa[g.isa])) {
    fprintf(stderr, "lowconv gemv: --isa %s: this CPU runs at most %s\n", isas[g.isa], lc_qgemv_isa_name(&opts));
    return 1;
  }
  opts.threads = threads;
  if (k > SIZE_MAX / sizeof(float) / n || k > SIZE_MAX / sizeof(float) / m) {
    fprintf(stderr, "lowconv gemv: %zu x %zu too large\n", n, k);
    return 2;
  }

  float *w = malloc(n * k * sizeof(float)), *x = malloc(m * k * sizeof(float)), *y = malloc(m * n * sizeof(float));
  if (!w || !x || !y) {
    fprintf(stderr, "lowconv gemv: out of memory\n");
    free(w), free(x), free(y);
    return 1;
  }
  uint64_t st = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n * k; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    w[i] = (float)((int64_t)(st >> 40) - (1 << 23)) / (float)(1 << 23);
  }
  for (size_t i = 0; i < m * k; i++) x[i] = w[i % (n * k)];
  lc_qmatrix first;
  lc_status s = lc_quantize(w, n, k, &spec, &first);
  free(w);
  if (s != LC_OK) {
    fprintf(stderr, "lowconv gemv: %s\n", lc_last_error());
    free(x), free(y);
    return 2;
  }
  size_t wbytes = lc_qmatrix_bytes(&first);
  size_t copies = GEMV_COPY_BYTES / wbytes + 1;
  if (copies > 64) copies = 64;
  lc_qmatrix *mats = calloc(copies, sizeof *mats);
  double *times = calloc(repeat, sizeof *times);
  int rc = 0;
  if (!mats || !times) {
    fprintf(stderr, "lowconv gemv: out of memory\n");
    rc = 1;
    copies = 0;
  } else {
    mats[0] = first;
  }
  for (size_t c = 1; c < copies && rc == 0; c++)
    if (lc_qmatrix_clone(&first, &mats[c]) != LC_OK) {
      fprintf(stderr, "lowconv gemv: %s\n", lc_last_error());
      copies = c;
      rc = 1;
    }
  if (!mats) lc_qmatrix_free(&first);
  lc_pool *pool = threads > 1 ? lc_pool_create(threads) : NULL; /* threads live across calls */
  opts.pool = pool;
  size_t npass = repeat / 4 < 5 ? 5 : repeat / 4, done = 0;
  double *passes = calloc(npass, sizeof *passes);
  uint8_t *buf = rc == 0 ? aligned_alloc((size_t)2 << 20, STREAM_BYTES) : NULL;
  uint64_t sink = 0;
  if (rc == 0 && (!passes || !buf)) {
    fprintf(stderr, "lowconv gemv: out of memory\n");
    rc = 1;
  }
  if (rc == 0) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(buf, STREAM_BYTES, MADV_HUGEPAGE); /* same page size as the weights (quantize.c) */
#endif
    memset(buf, 1, STREAM_BYTES);
    s = lc_qgemv(&mats[0], m, x, k, NULL, y, n, &opts); /* warm-up: page faults, thread start */
    for (size_t r = 0; r < repeat && s == LC_OK; r++) {
      double t0 = lc_now_s();
      s = lc_qgemv(&mats[(r + 1) % copies], m, x, k, NULL, y, n, &opts);
      times[r] = lc_now_s() - t0;
      if (r % 4 == 3 && done < npass) passes[done++] = stream_pass(buf, threads, &sink);
    }
    while (done < npass) passes[done++] = stream_pass(buf, threads, &sink);
    if (s != LC_OK) {
      fprintf(stderr, "lowconv gemv: %s\n", lc_last_error());
      rc = s == LC_ERR_UNSUPPORTED || s == LC_ERR_INVALID_ARG ? 2 : 1;
    }
  }
  free(buf);
  if (sink == 42) fprintf(stderr, " "); /* keeps the sums alive */
  lc_pool_destroy(pool);
  for (size_t c = 0; c < copies; c++) lc_qmatrix_free(&mats[c]);
  if (rc == 0) {
    qsort(times, repeat, sizeof *times, cmp_double);
    qsort(passes, npass, sizeof *passes, cmp_double);
    size_t sbytes = STREAM_BYTES / (size_t)threads / 128 * 128 * (size_t)threads;
    double med = times[repeat / 2], gbps = (double)wbytes / med / 1e9, dram = (double)sbytes / passes[npass / 2] / 1e9;
    double best = (double)wbytes / times[0] / 1e9, dram_best = (double)sbytes / passes[0] / 1e9;
    const char *fmt = spec.format == LC_WEIGHTS_Q4 ? "q4" : spec.format == LC_WEIGHTS_Q8 ? "q8" : "f32";
    const char *mode = opts.mode == LC_QGEMV_INT8 ? "int8" : "accurate";
    if (json)
      printf("{\"m\": %zu, \"n\": %zu, \"k\": %zu, \"format\": \"%s\", \"block\": %d, \"asym\": %d, \"mode\": \"%s\", "
             "\"isa\": \"%s\", \"threads\": %d, \"copies\": %zu, \"weight_bytes\": %zu, \"median_ms\": %.4f, "
             "\"gbps\": %.3f, \"dram_gbps\": %.3f, \"bw_fraction\": %.4f, \"best_ms\": %.4f, \"best_gbps\": %.3f, "
             "\"dram_best_gbps\": %.3f, \"best_fraction\": %.4f}\n",
             m, n, k, fmt, block, spec.asym, mode, lc_qgemv_isa_name(&opts), threads, copies, wbytes, med * 1e3,
             gbps, dram, dram > 0 ? gbps / dram : 0.0, times[0] * 1e3, best, dram_best,
             dram_best > 0 ? best / dram_best : 0.0);
    else
      printf("gemv %s block %d%s %s (%s), m=%zu n=%zu k=%zu, %d thread(s): %.4f ms median of %zu, "
             "%zu weight bytes (%zu copies), %.2f GB/s = %.1f%% of DRAM read %.2f GB/s (best: %.2f of %.2f GB/s, "
             "%.1f%%)\n",
             fmt, block, spec.asym ? " asym" : "", mode, lc_qgemv_isa_name(&opts), m, n, k, threads, med * 1e3,
             repeat, wbytes, copies, gbps, dram > 0 ? 100.0 * gbps / dram : 0.0, dram, best, dram_best,
             dram_best > 0 ? 100.0 * best / dram_best : 0.0);
  }
  free(passes);
  free(mats);
  free(times);
  free(x);
  free(y);
  return rc;
}
