/* `lowconv gemv`: times the quantized GEMV on weights that come from DRAM, and measures this
 * machine's DRAM read bandwidth in the same run so the result can be given as a fraction of it. */
#define _DEFAULT_SOURCE /* madvise */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "commands.h"
#include "kernels/registry.h"
#include "quant/quant.h"
#include "util/threadpool.h"
#include "util/timer.h"

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

static void usage(FILE *f) {
  fprintf(f,
          "usage: lowconv gemv --k K --n N [--m M] [--weights q4|q8|f32] [--block 32] [--asym]\n"
          "                    [--mode accurate|int8] [--threads T] [--repeat R] [--isa scalar|avx2|avx512|auto]\n"
          "                    [--json]\n"
          "Times y[M][N] = x[M][K] * W[N][K]^T with block-quantized W. The weights are cycled through\n"
          "copies totalling >= 192 MiB so every call reads them from DRAM; GB/s counts codes + scales\n"
          "+ offsets once per call; bw_fraction divides by a streaming read of 512 MiB on T threads,\n"
          "timed between the GEMV calls (one pass per 4 calls, at least 5) so both see the same load\n"
          "on a shared machine. Medians; best_* are the fastest call and pass.\n");
}

static int parse_size(const char *s, size_t *out) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*s == '-' || *end || v == 0 || v > ((size_t)1 << 40)) return 0;
  *out = (size_t)v;
  return 1;
}

int cmd_gemv(int argc, char **argv) {
  size_t k = 0, n = 0, m = 1, repeat = 20;
  int threads = 1, json = 0, block = 32;
  lc_quant_spec spec = {LC_WEIGHTS_Q4, 32, 0, 0, 0};
  lc_qgemv_opts opts = {LC_QGEMV_ACCURATE, 1, LC_ISA_AUTO, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    size_t t = 0;
    int ok = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--asym")) {
      spec.asym = 1;
    } else if (!v) {
      ok = 0;
    } else if (!strcmp(a, "--k")) {
      ok = parse_size(v, &k), i++;
    } else if (!strcmp(a, "--n")) {
      ok = parse_size(v, &n), i++;
    } else if (!strcmp(a, "--m")) {
      ok = parse_size(v, &m) && m <= 4096, i++;
    } else if (!strcmp(a, "--repeat")) {
      ok = parse_size(v, &repeat) && repeat <= 100000, i++;
    } else if (!strcmp(a, "--threads")) {
      ok = parse_size(v, &t) && t <= 64, threads = (int)t, i++;
    } else if (!strcmp(a, "--block")) {
      char *end;
      long b = strtol(v, &end, 10);
      ok = !*end && b >= 0 && b <= 1 << 20, block = (int)b, i++;
    } else if (!strcmp(a, "--weights")) {
      ok = !strcmp(v, "q4") || !strcmp(v, "q8") || !strcmp(v, "f32");
      spec.format = !strcmp(v, "q4") ? LC_WEIGHTS_Q4 : !strcmp(v, "q8") ? LC_WEIGHTS_Q8 : LC_WEIGHTS_F32, i++;
    } else if (!strcmp(a, "--mode")) {
      ok = !strcmp(v, "accurate") || !strcmp(v, "int8");
      opts.mode = !strcmp(v, "int8") ? LC_QGEMV_INT8 : LC_QGEMV_ACCURATE, i++;
    } else if (!strcmp(a, "--isa")) {
      int isa = lc_isa_from_name(v);
      lc_status ist = LC_OK;
      ok = isa >= 0 && lc_kernels_pick((lc_isa)isa, &ist) != NULL, opts.isa = (lc_isa)isa, i++;
      if (isa >= 0 && !ok) {
        fprintf(stderr, "lowconv gemv: --%s\n", lc_last_error());
        return 2;
      }
    } else {
      ok = 0;
    }
    if (!ok) {
      fprintf(stderr, "lowconv gemv: bad option or value: %s%s%s\n", a, v ? " " : "", v ? v : "");
      usage(stderr);
      return 2;
    }
  }
  if (!k || !n) {
    fprintf(stderr, "lowconv gemv: --k and --n are required\n");
    usage(stderr);
    return 2;
  }
  spec.block = block;
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
