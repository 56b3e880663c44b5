/* lc_conv_evict_weights (conv.h): a file of its own so that the tuner, which op.c calls, does
 * not call back into op.c. */
#include <stdint.h>

#include "conv/conv.h"
#include "quant/quant.h"

static void flush_range(const void *p, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const char *a = (const char *)((uintptr_t)p & ~(uintptr_t)63), *e = (const char *)p + bytes;
  for (; p && a < e; a += 64) __builtin_ia32_clflush(a);
#else
  (void)p, (void)bytes;
#endif
}

void lc_conv_evict_weights(const lc_conv *c) {
  size_t wp = c->wpack ? (size_t)c->d.groups * c->npanels * c->K * c->pw * sizeof(float) : 0;
  size_t wd = c->wdw ? (size_t)(c->d.out_channels * c->taps) * sizeof(float) : 0;
  flush_range(c->wpack, wp);
  flush_range(c->wdw, wd);
  flush_range(c->wwino, c->wwino_bytes);
  flush_range(c->wwino4, c->wwino4_bytes);
  if (c->qw) {
    flush_range(c->qw->codes, c->qw->n * c->qw->row_bytes);
    flush_range(c->qw->scales, c->qw->n * c->qw->nb * sizeof(float));
    flush_range(c->qw->offsets, c->qw->offsets ? c->qw->n * c->qw->nb * sizeof(float) : 0);
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_mfence();
#endif
}
