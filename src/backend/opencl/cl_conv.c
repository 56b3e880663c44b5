/* Conv on the OpenCL device: the weights repacked once into the layout every kernel family reads
 * (cl_conv_args.h), q8/q4 codes kept as codes; prepare fills the kernel arguments and lets the
 * tuner choose; run enqueues the choice with no host synchronisation. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_program.h"
#include "conv/conv.h"
#include "quant/quant.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/threadpool.h"
#include "util/timer.h"

/* The signed codes of row oc of a block-quantized matrix (quant/quant.h layout) in k order, one
 * pass over its bytes. */
static void code_row(const lc_qmatrix *m, size_t oc, int8_t *row) {
  size_t tap_bytes = (m->bpt - 1) * m->block_bytes + m->tail_bytes, k = 0;
  const uint8_t *r = m->codes + oc * m->row_bytes;
  for (size_t tap = 0; tap < m->taps; tap++)
    for (size_t bb = 0; bb < m->bpt; bb++) {
      const uint8_t *b = r + tap * tap_bytes + bb * m->block_bytes;
      size_t nj = bb + 1 < m->bpt ? m->block : m->tail;
      if (m->format == LC_WEIGHTS_Q8)
        for (size_t j = 0; j < nj; j++) row[k++] = (int8_t)b[j];
      else
        for (size_t j = 0; j < nj; j++) row[k++] = (int8_t)((int)((j & 1) ? b[j / 2] >> 4 : b[j / 2] & 15) - 8);
    }
}

/* Repacking job: oc4 blocks of the device layout from OIHW fp32 or from the codes. */
typedef struct pack_job {
  const lc_qmatrix *m;
  const float *oihw;
  lc_weight_format wfmt;
  size_t ob, K, cout_g, cin, taps, nblk;
  unsigned char *w;
  float *sc, *of;
  size_t base; /* w, sc and of hold blocks base, base + 1, ... */
  const unsigned char *img; /* fp32 blocks packed before the device opened (stage store): copied, not packed */
} pack_job;

/* Writes every byte of its blocks (padding lanes too), so the scratch it fills needs no zeroing. */
static int pack_blocks(void *arg, size_t b0, size_t b1) {
  const pack_job *j = arg;
  const lc_qmatrix *m = j->m;
  size_t K = j->K, cin = j->cin, taps = j->taps, nblk = j->nblk;
  if (j->img) {
    memcpy(j->w + b0 * K * 16, j->img + (j->base + b0) * K * 16, (b1 - b0) * K * 16);
    return 0;
  }
  int8_t *rows = m ? lc_malloc(4 * K) : NULL; /* the 4 lanes' codes; a missing lane's are 0 (u = 8) */
  if (m && !rows) return 1;
  for (size_t r = b0; r < b1; r++) {
    size_t wb = j->base + r, g = wb / j->ob, ocg0 = (wb % j->ob) * 4, oc0 = g * j->cout_g + ocg0;
    size_t lanes = j->cout_g - ocg0 < 4 ? j->cout_g - ocg0 : 4;
    if (!m) {
      /* Row k = t * cin + ic of OIHW [ic][t]; the block written in order, 16 bytes at a time:
       * lane-by-lane scattered stores over a block larger than L1 took 1.5x as long (IResNet's start). */
      float *dst = (float *)j->w + r * K * 4;
      const float *src[4];
      for (size_t lane = 0; lane < 4; lane++) src[lane] = lane < lanes ? j->oihw + (oc0 + lane) * cin * taps : NULL;
      if (lanes == 4)
        for (size_t t = 0; t < taps; t++)
          for (size_t ic = 0, i = t; ic < cin; ic++, i += taps, dst += 4)
            dst[0] = src[0][i], dst[1] = src[1][i], dst[2] = src[2][i], dst[3] = src[3][i];
      else
        for (size_t t = 0; t < taps; t++)
          for (size_t ic = 0, i = t; ic < cin; ic++, i += taps, dst += 4)
            for (size_t lane = 0; lane < 4; lane++) dst[lane] = lane < lanes ? src[lane][i] : 0.0f;
      continue;
    }
    for (size_t lane = 0; lane < 4; lane++) {
      if (lane < lanes) code_row(m, oc0 + lane, rows + lane * K);
      else memset(rows + lane * K, 0, K);
      for (size_t bl = 0; bl < nblk; bl++) {
        size_t i = (r * nblk + bl) * 4 + lane, q = (oc0 + lane) * nblk + bl;
        j->sc[i] = lane < lanes ? m->scales[q] : 0.0f;
        if (j->of) j->of[i] = lane < lanes ? m->offsets[q] : 0.0f;
      }
    }
    if (j->wfmt == LC_WEIGHTS_Q8) {
      int8_t *dst = (int8_t *)j->w + r * K * 4;
      for (size_t k = 0; k < K; k++)
        for (size_t lane = 0; lane < 4; lane++) dst[k * 4 + lane] = rows[lane * K + k];
    } else {
      unsigned char *dst = j->w + r * K * 2;
      for (size_t k = 0; k < K; k++) {
        dst[k * 2] = (unsigned char)((unsigned)(rows[k] + 8) | (unsigned)(rows[K + k] + 8) << 4);
        dst[k * 2 + 1] = (unsigned char)((unsigned)(rows[2 * K + k] + 8) | (unsigned)(rows[3 * K + k] + 8) << 4);
      }
    }
  }
  lc_free(rows);
  return 0;
}

#define PACK_THREADS 16
#define PACK_MIN_PER_THREAD (1u << 16) /* weights (~0.1 ms): below this a thread costs more than it saves */

static lc_status upload(lc_cl_rt *rt, size_t bytes, const void *src, int pinned, cl_mem *out) {
  lc_status s = lc_cl_buffer(rt, bytes, pinned ? NULL : src, out);
  if (!s && pinned && src) s = lc_cl_write(rt, *out, 0, bytes, src);
  return s;
}

typedef struct pack_run {
  pack_job *j;
  size_t n, nt;
  int failed[PACK_THREADS];
} pack_run;

static void pack_task(void *arg, size_t t, int thread) {
  pack_run *r = arg;
  (void)thread;
  r->failed[t] = pack_blocks(r->j, r->n * t / r->nt, r->n * (t + 1) / r->nt);
}

/* Blocks [0, n) of j on the runtime's pack threads: one pool for the model's every conv, since
 * starting threads per conv (or per chunk) cost IResNet-34's warm start milliseconds. */
static lc_status pack_range(lc_cl_rt *rt, pack_job *j, size_t n) {
  pack_run r = {j, n, n / lc_div_up(PACK_MIN_PER_THREAD, j->K * 4), {0}};
  if (r.nt > PACK_THREADS) r.nt = PACK_THREADS;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (r.nt > 1 && !rt->pack_pool && cores > 1) rt->pack_pool = lc_pool_create(cores < PACK_THREADS ? (int)cores : PACK_THREADS);
  int fail = 0;
  if (r.nt > 1 && rt->pack_pool) {
    if (r.nt > (size_t)lc_pool_threads(rt->pack_pool)) r.nt = (size_t)lc_pool_threads(rt->pack_pool);
    lc_pool_run(rt->pack_pool, r.nt, (int)r.nt, pack_task, &r);
    for (size_t t = 0; t < r.nt; t++) fail |= r.failed[t];
  } else {
    fail = pack_blocks(j, 0, n); /* one thread's worth, or no pool */
  }
  return fail ? lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory repacking weights") : LC_OK;
}

/* ---- Weights packed while the device opens (lc_backend_ops.stage_*): the host's share of a
 * conv's create done before the driver's context exists, taken by the create of the same
 * weights (the same fp32 array, geometry and format) instead of packing again. ---- */
typedef struct stage_entry {
  const float *src;
  size_t G, cout_g, cin_g, taps, K, blocks, first; /* first: its first block in the store's numbering */
  int tag;
  unsigned char *img; /* blocks * K * 16 bytes */
} stage_entry;

typedef struct stage_store {
  pthread_mutex_t lock; /* lookups may come from any thread that creates convs on the context */
  stage_entry *e;
  int n, cap, taken;
  size_t bytes, blocks;
  double pack_ms;
} stage_store;

static void stage_free(void *p) {
  stage_store *st = p;
  if (!st) return;
  for (int i = 0; i < st->n; i++) lc_free(st->e[i].img);
  lc_free(st->e);
  pthread_mutex_destroy(&st->lock);
  lc_free(st);
}

int lc_cl_stage_add(lc_context *ctx, const float *src, size_t G, size_t cout_g, size_t cin_g, size_t taps, int tag,
                    size_t limit) {
  size_t K, ob = lc_div_up(cout_g, 4), blocks, bytes;
  if (!src || !G || !cout_g || !cin_g || !taps || !lc_mul_sz(cin_g, taps, &K) || !lc_mul_sz(G, ob, &blocks) ||
      !lc_mul_sz(blocks, K, &bytes) || !lc_mul_sz(bytes, 16, &bytes))
    return 0;
  stage_store *st = ctx->staged;
  if (!st) {
    if (!(st = lc_calloc(1, sizeof *st))) return 0;
    pthread_mutex_init(&st->lock, NULL);
    ctx->staged = st, ctx->staged_free = stage_free;
  }
  if (bytes > limit || st->bytes > limit - bytes) return 0;
  if (st->n == st->cap) {
    int cap = st->cap ? 2 * st->cap : 64;
    stage_entry *e = lc_malloc((size_t)cap * sizeof *e);
    if (!e) return 0;
    if (st->n) memcpy(e, st->e, (size_t)st->n * sizeof *e);
    lc_free(st->e);
    st->e = e, st->cap = cap;
  }
  unsigned char *img = lc_malloc(bytes); /* its pages are touched by the packing threads */
  if (!img) return 0;
  st->e[st->n++] = (stage_entry){src, G, cout_g, cin_g, taps, K, blocks, st->blocks, tag, img};
  st->bytes += bytes, st->blocks += blocks;
  return 1;
}

/* Blocks [lo, hi) of the store's numbering, across entries. */
static int stage_pack_range(void *arg, size_t lo, size_t hi) {
  const stage_store *st = arg;
  int i = 0;
  while (i + 1 < st->n && st->e[i + 1].first <= lo) i++;
  for (size_t b = lo; b < hi; i++) {
    const stage_entry *e = &st->e[i];
    size_t b1 = e->first + e->blocks < hi ? e->first + e->blocks : hi;
    pack_job j = {NULL, e->src, LC_WEIGHTS_F32, lc_div_up(e->cout_g, 4), e->K, e->cout_g, e->cin_g, e->taps, 1,
                  e->img, NULL, NULL, 0, NULL};
    if (pack_blocks(&j, b - e->first, b1 - e->first)) return 1;
    b = b1;
  }
  return 0;
}

lc_status lc_cl_stage_run(lc_context *ctx) {
  stage_store *st = ctx->staged;
  if (!st || !st->n) return LC_OK;
  double t0 = lc_now_ms();
  /* about 1 MB of weights per thread at least; the driver's start holds one core */
  size_t per = lc_div_up((size_t)1 << 20, st->e[0].K * 16);
  int fail = lc_parallel_ranges(st->blocks, per ? per : 1, PACK_THREADS, stage_pack_range, st);
  st->pack_ms = lc_now_ms() - t0;
  if (fail) {
    lc_cl_stage_drop(ctx, -1);
    return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory packing weights early");
  }
  return LC_OK;
}

void lc_cl_stage_drop(lc_context *ctx, int tag) {
  stage_store *st = ctx->staged;
  if (!st) return;
  pthread_mutex_lock(&st->lock);
  int k = 0;
  for (int i = 0; i < st->n; i++) {
    if (tag < 0 || st->e[i].tag == tag) lc_free(st->e[i].img);
    else st->e[k++] = st->e[i];
  }
  st->n = k;
  pthread_mutex_unlock(&st->lock);
}

/* The packed image of these weights when the store holds it (the caller frees it), else NULL.
 * Entries live only while their node has not been created (the runner drops them after), so
 * their source arrays are alive and an address cannot stand for other weights. */
static unsigned char *stage_take(lc_conv *c, const float *src) {
  stage_store *st = c->ctx->staged;
  unsigned char *img = NULL;
  if (!st || !src || c->qw) return NULL;
  pthread_mutex_lock(&st->lock);
  for (int i = 0; i < st->n && !img; i++) {
    const stage_entry *e = &st->e[i];
    if (e->src == src && e->G == (size_t)c->d.groups && e->cout_g == (size_t)c->cout_g &&
        e->cin_g == (size_t)c->cin_g && e->taps == (size_t)c->taps) {
      img = e->img;
      st->e[i] = st->e[--st->n];
      st->taken++;
    }
  }
  pthread_mutex_unlock(&st->lock);
  return img;
}

/* Bytes of pinned scratch a chunked upload uses (two halves); LOWCONV_CL_UPLOAD_CHUNK overrides
 * it so that the tests take the chunked path with small convs. */
static size_t chunk_bytes(void) {
  const char *e = getenv("LOWCONV_CL_UPLOAD_CHUNK");
  long long v = e ? atoll(e) : 0;
  return v >= 64 ? (size_t)v : (size_t)8 << 20; /* 8 MB: its pinning cost 3.6 ms of a warm start, 16 MB 6.5-9 */
}

typedef struct wlayout {
  size_t wpb, spb, opb; /* bytes per oc4 block: codes (or floats), scales, offsets */
} wlayout;

/* Weights go up in pieces from two halves of one pinned scratch: the next piece (of this conv or
 * the next one) is packed while the previous one is copied, and the pinned memory the runtime
 * keeps is the chunk, not the largest conv's weights (IResNet-34's FC: 51 MB). The last copies
 * stay in flight (rt->up_ev) until the half is needed again or lc_cl_uploads_wait. */
static lc_status upload_chunked(lc_cl_rt *rt, pack_job *j, const wlayout *l, size_t blocks, size_t half,
                                lc_cl_conv *cc) {
  size_t per = l->wpb + l->spb + l->opb, bpc = (half - 16) / per, wbytes = blocks * l->wpb;
  lc_status s = lc_cl_buffer(rt, wbytes, NULL, &cc->w);
  if (!s) s = lc_cl_buffer(rt, l->spb ? blocks * l->spb : 4, NULL, &cc->sc);
  if (!s) s = lc_cl_buffer(rt, l->opb ? blocks * l->opb : 4, NULL, &cc->of);
  cl_event *ev = rt->up_ev;
  double tp = 0.0, t0 = lc_now_ms();
  for (size_t b0 = 0; !s && b0 < blocks; b0 += bpc) {
    size_t n = blocks - b0 < bpc ? blocks - b0 : bpc, h = (size_t)rt->up_next, woff = lc_div_up(n * l->wpb, 16) * 16;
    rt->up_next ^= 1;
    unsigned char *base = rt->scratch + h * half;
    if (ev[h]) { /* the copy from this half is done before it is written again */
      cl_int e = rt->cl->WaitForEvents(1, &ev[h]);
      rt->cl->ReleaseEvent(ev[h]);
      ev[h] = NULL;
      if (e != CL_SUCCESS) s = lc_cl_fail(rt, e, "uploading weights");
    }
    double ta = lc_now_ms();
    j->w = base, j->sc = l->spb ? (float *)(base + woff) : NULL;
    j->of = l->opb ? (float *)(base + woff + n * l->spb) : NULL, j->base = b0;
    if (!s) s = pack_range(rt, j, n);
    tp += lc_now_ms() - ta;
    const struct { cl_mem m; size_t off, bytes; const void *src; } part[3] = {
        {cc->w, b0 * l->wpb, n * l->wpb, base}, {cc->sc, b0 * l->spb, n * l->spb, j->sc},
        {cc->of, b0 * l->opb, n * l->opb, j->of}};
    for (int i = 0; i < 3 && !s; i++) {
      if (!part[i].bytes) continue;
      if (ev[h]) rt->cl->ReleaseEvent(ev[h]), ev[h] = NULL; /* in order: the last copy's event suffices */
      cl_int e = rt->cl->EnqueueWriteBuffer(rt->queue, part[i].m, CL_FALSE, part[i].off, part[i].bytes, part[i].src,
                                            0, NULL, &ev[h]);
      if (e != CL_SUCCESS) s = lc_cl_fail(rt, e, "uploading %zu bytes of weights", part[i].bytes);
    }
  }
  if (s) (void)lc_cl_uploads_wait(rt); /* nothing of a failed conv stays in flight */
  rt->pack_ms += tp;
  rt->upload_ms += lc_now_ms() - t0 - tp;
  return s;
}

/* Device weights, scales and offsets from the CPU's representation (c->qw, or OIHW fp32): one
 * pass over each source row, no division per weight, on several threads for large convs. */
static lc_status repack(lc_conv *c, lc_cl_conv *cc, const float *oihw) {
  const lc_qmatrix *m = c->qw;
  size_t G = (size_t)c->d.groups, ob = (size_t)cc->a.ob, K = c->K;
  size_t nblk = m ? m->nb : 1, blocks = G * ob, wbytes, sbytes;
  size_t per = cc->wfmt == LC_WEIGHTS_F32 ? 16 : cc->wfmt == LC_WEIGHTS_Q8 ? 4 : 2;
  wlayout l = {0, 0, 0};
  if (!lc_mul_sz(blocks, K, &wbytes) || !lc_mul_sz(wbytes, per, &wbytes) || !lc_mul_sz(blocks, nblk, &sbytes) ||
      !lc_mul_sz(sbytes, 16, &sbytes) || !lc_mul_sz(K, per, &l.wpb) || !lc_mul_sz(nblk, 16, &l.spb))
    return lc_error(LC_ERR_OVERFLOW, "conv (opencl): weight size overflows");
  if (!m) l.spb = 0;
  l.opb = m && m->asym ? l.spb : 0;
  /* One scratch for every conv of the runtime, grown to the largest: a fresh allocation per conv
   * would page-fault its way through all the model's weight bytes once more. */
  size_t soff = lc_div_up(wbytes, 16) * 16, need; /* the scales' floats aligned after the codes */
  lc_cl_rt *rt = cc->rt;
  if (!lc_add_sz(soff, m ? sbytes : 0, &need) || !lc_add_sz(need, m ? sbytes : 0, &need))
    return lc_error(LC_ERR_OVERFLOW, "conv (opencl): weight size overflows");
  unsigned char *img = cc->wfmt == LC_WEIGHTS_F32 ? stage_take(c, oihw) : NULL;
  pthread_mutex_lock(&rt->lock);
  double t0 = lc_now_ms();
  int pinned;
  pack_job j = {m, oihw, cc->wfmt, ob, K, (size_t)c->cout_g, (size_t)c->cin_g, (size_t)c->taps, nblk, NULL, NULL,
                NULL, 0, img};
  size_t ch = chunk_bytes(), half = ch / 2 / 16 * 16;
  lc_status s;
  rt->staged_used += img != NULL;
  if (half >= l.wpb + 2 * l.spb + 16 && lc_cl_pinned_wanted(!rt->info.is_pocl) && !lc_cl_scratch(rt, ch, &pinned) &&
      pinned) {
    s = upload_chunked(rt, &j, &l, blocks, half, cc);
    if (!s) cc->weight_bytes = wbytes + (m ? sbytes : 0) + (l.opb ? sbytes : 0);
    pthread_mutex_unlock(&rt->lock);
    lc_free(img);
    return s;
  }
  if (img) { /* unpinned: the driver copies from the packed image itself (PoCL's device is the host) */
    double t1 = lc_now_ms();
    s = upload(rt, wbytes, img, 0, &cc->w);
    if (!s) s = upload(rt, 4, NULL, 0, &cc->sc);
    if (!s) s = upload(rt, 4, NULL, 0, &cc->of);
    if (!s) cc->weight_bytes = wbytes;
    rt->upload_ms += lc_now_ms() - t1;
    pthread_mutex_unlock(&rt->lock);
    lc_free(img);
    return s;
  }
  s = lc_cl_uploads_wait(rt); /* the plain path overwrites the scratch at once */
  if (!s) s = lc_cl_scratch(rt, need, &pinned);
  if (s) {
    pthread_mutex_unlock(&rt->lock);
    return s;
  }
  unsigned char *buf = rt->scratch;
  j.w = buf, j.sc = m ? (float *)(buf + soff) : NULL, j.of = m && m->asym ? (float *)(buf + soff + sbytes) : NULL;
  /* Threads: IResNet34's 34 M weights are a start-up cost. */
  if ((s = pack_range(rt, &j, blocks))) goto done;
  double t1 = lc_now_ms();
  rt->pack_ms += t1 - t0;
  if ((s = upload(rt, wbytes, j.w, pinned, &cc->w))) goto done;
  if ((s = upload(rt, j.sc ? sbytes : 4, j.sc, pinned, &cc->sc))) goto done;
  if ((s = upload(rt, j.of ? sbytes : 4, j.of, pinned, &cc->of))) goto done;
  rt->upload_ms += lc_now_ms() - t1;
  cc->weight_bytes = wbytes + (j.sc ? sbytes : 0) + (j.of ? sbytes : 0);
done:
  pthread_mutex_unlock(&rt->lock);
  return s;
}

/* A model's collect pass (rt->collect_pass) needs only the arguments that pick candidates:
 * the block layout lc_conv_quantize would give, no weights on the device. */
static lc_status shape_only(const lc_conv *c, lc_cl_conv *cc, const lc_conv_desc *d) {
  if (d->weight_format == LC_WEIGHTS_F32) return LC_OK;
  lc_quant_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.format = d->weight_format, sp.block = d->block_size, sp.asym = d->asym, sp.kc = (size_t)c->cin_g;
  lc_qmatrix m;
  lc_status s = lc_qmatrix_layout((size_t)d->out_channels, c->K, &sp, &m);
  if (s) return s;
  cc->a.nblk = (int)m.nb;
  if (m.kc == (size_t)c->cin_g) cc->a.bpt = (int)m.bpt, cc->a.bsz = (int)m.block;
  return LC_OK;
}

lc_status lc_cl_conv_create(lc_conv *c, const lc_conv_desc *d) {
  lc_cl_ctx *x = c->ctx->dev;
  lc_cl_conv *cc = lc_calloc(1, sizeof *cc);
  if (!cc) return lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory");
  c->dev = cc;
  cc->rt = x->rt;
  cc->wfmt = d->weight_format;
  cc->asym = d->weight_format != LC_WEIGHTS_F32 && d->asym;
  cc->depthwise = c->depthwise && c->d.groups > 1;
  cc->is1x1 = d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1;
  const char *stage = getenv("LOWCONV_CL_SPLIT_STAGE"); /* =0: q rows unstaged in split (A/B runs) */
  snprintf(cc->options, sizeof cc->options, "-DWFMT=%d -DASYM=%d%s", (int)cc->wfmt, cc->asym,
           cc->wfmt != LC_WEIGHTS_F32 && stage && !strcmp(stage, "0") ? " -DLCS_STAGE=0" : "");
  lc_cl_conv_args *a = &cc->a;
  if (c->K > (size_t)INT_MAX / 16 || d->out_channels > INT_MAX / 4)
    return lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): %zu weights per output channel is too many", c->K);
  a->groups = (int)d->groups, a->cin_g = (int)c->cin_g, a->cout_g = (int)c->cout_g;
  a->kh = (int)d->kernel_h, a->kw = (int)d->kernel_w, a->sh = (int)d->stride_h, a->sw = (int)d->stride_w;
  a->dh = (int)d->dilation_h, a->dw = (int)d->dilation_w;
  a->K = (int)c->K, a->ob = (int)lc_div_up((size_t)c->cout_g, 4);
  a->act = (int)d->activation, a->act_min = d->act_min, a->act_max = d->act_max, a->act_alpha = d->act_alpha;
  a->has_bias = d->bias != NULL;
  a->nblk = 1, a->bpt = 0, a->bsz = 1 << 30, a->ksplit = 1, a->kchunk = a->K;
  lc_status s = LC_OK;
  if (cc->rt->collect_pass) return shape_only(c, cc, d);
  if (d->weight_format != LC_WEIGHTS_F32) {
    if ((s = lc_conv_quantize(c, d))) return s;
    const lc_qmatrix *m = c->qw;
    a->nblk = (int)m->nb;
    if (m->kc == (size_t)c->cin_g) a->bpt = (int)m->bpt, a->bsz = (int)m->block;
  }
  if ((s = repack(c, cc, d->weights))) return s;
  if (c->qw) { /* the device holds the codes now */
    lc_qmatrix_free(c->qw);
    lc_free(c->qw);
    c->qw = NULL;
  }
  size_t bbytes = (size_t)d->out_channels * sizeof(float);
  if ((s = lc_cl_buffer(cc->rt, d->bias ? bbytes : 4, d->bias, &cc->bias))) return s;
  if (d->bias) cc->weight_bytes += bbytes;
  c->weight_bytes = cc->weight_bytes;
  return LC_OK;
}

void lc_cl_conv_free(lc_conv *c) {
  lc_cl_conv *cc = c->dev;
  if (!cc) return;
  lc_cl_release_mem(cc->rt, &cc->w);
  lc_cl_release_mem(cc->rt, &cc->sc);
  lc_cl_release_mem(cc->rt, &cc->of);
  lc_cl_release_mem(cc->rt, &cc->bias);
  lc_cl_release_mem(cc->rt, &cc->ws);
  lc_cl_release_mem(cc->rt, &cc->wu);
  lc_cl_release_mem(cc->rt, &cc->stage_in);
  lc_cl_release_mem(cc->rt, &cc->stage_out);
  lc_free(cc);
  c->dev = NULL;
}

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

lc_status lc_cl_conv_prepare(lc_conv *c, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape) {
  lc_cl_conv *cc = c->dev;
  lc_conv_plan p;
  memset(&p, 0, sizeof p);
  int64_t pads[4];
  lc_status s = lc_conv_resolve_pads(&c->d, in_h, in_w, pads, &p.oh, &p.ow);
  if (s) return s;
  int64_t fin[4] = {batch, c->d.in_channels, in_h, in_w}, fout[4] = {batch, c->d.out_channels, p.oh, p.ow};
  size_t nin, nout;
  if (!lc_mul_n(&nin, 4, fin) || !lc_mul_n(&nout, 4, fout) || nin > INT_MAX || nout > INT_MAX)
    return lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): tensors of 2^31 elements or more are not supported "
                    "(input %lld x %lld x %lld x %lld)", (long long)batch, (long long)c->d.in_channels,
                    (long long)in_h, (long long)in_w);
  if (!fits_int(pads[0]) || !fits_int(pads[1]))
    return lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): pads too large");
  lc_cl_conv_args *a = &cc->a;
  a->n = (int)batch, a->ih = (int)in_h, a->iw = (int)in_w, a->oh = (int)p.oh, a->ow = (int)p.ow;
  a->pt = (int)pads[0], a->pl = (int)pads[1];
  int C = (int)c->d.in_channels, O = (int)c->d.out_channels, H = a->ih, W = a->iw, OH = a->oh, OW = a->ow;
  if (c->d.layout == LC_NCHW) {
    a->in_sn = C * H * W, a->in_sc = H * W, a->in_sh = W, a->in_sw = 1;
    a->out_sn = O * OH * OW, a->out_sc = OH * OW, a->out_sh = OW, a->out_sw = 1;
  } else {
    a->in_sn = H * W * C, a->in_sc = 1, a->in_sh = W * C, a->in_sw = C;
    a->out_sn = OH * OW * O, a->out_sc = 1, a->out_sh = OW * O, a->out_sw = O;
  }
  p.n = batch, p.ih = in_h, p.iw = in_w, p.pt = pads[0], p.pl = pads[1], p.pb = pads[2], p.pr = pads[3];
  p.ihw = (size_t)(in_h * in_w), p.ohw = (size_t)(p.oh * p.ow), p.threads = 1;
  c->prepared = 0;
  lc_conv_device_info *info = &c->dev_info;
  memset(info, 0, sizeof *info);
  double c0 = cc->rt->compile_ms, t0 = lc_now_ms();
  int built0 = 0, built1 = 0; /* background builds may count up meanwhile: read under their lock */
  lc_cl_program_counts(cc->rt, &built0, NULL);
  /* The tuner, the caches and the program list are shared by the context's convs. */
  pthread_mutex_lock(&cc->rt->lock);
  s = lc_cl_tune(c, cc, &cc->cand, info);
  const lc_cl_family *f = lc_cl_families[cc->cand.family];
  /* The chosen kernels are built now (the candidates' programs at once), so the first run pays
   * no compile and compile_ms is complete; nothing is launched. */
  a->has_res = 0;
  if (!s && !cc->rt->collect_pass) s = lc_cl_conv_build(cc, &cc->cand);
  pthread_mutex_unlock(&cc->rt->lock);
  if (s) return s;
  info->compile_ms = cc->rt->compile_ms - c0;
  cc->rt->prep_ms += lc_now_ms() - t0;
  lc_cl_program_counts(cc->rt, &built1, NULL);
  info->programs_built = built1 - built0;
  info->device_bytes = cc->weight_bytes + cc->wu_bytes + cc->ws_bytes;
  c->weight_bytes = cc->weight_bytes + cc->wu_bytes; /* Winograd's fp32 weights count */
  snprintf(info->kernel, sizeof info->kernel, "%s %s", f->name, f->variants[cc->cand.variant]);
  memcpy(info->local_size, cc->cand.lws, sizeof info->local_size);
  p.route = !strcmp(f->name, "dw") ? LC_ROUTE_DEPTHWISE : !strcmp(f->name, "gemv") ? LC_ROUTE_GEMM1X1
            : !strcmp(f->name, "gemm") || !strcmp(f->name, "gemmq")
                ? (cc->is1x1 ? LC_ROUTE_GEMM1X1 : LC_ROUTE_IGEMM)
            : !strcmp(f->name, "wino") ? (!strncmp(f->variants[cc->cand.variant], "f4x4", 4) ? LC_ROUTE_WINOGRAD4
                                                                                        : LC_ROUTE_WINOGRAD)
            : LC_ROUTE_DIRECT;
  c->plan = p;
  c->prepared = 1;
  if (shape) {
    shape->batch = batch, shape->in_h = in_h, shape->in_w = in_w, shape->out_h = p.oh, shape->out_w = p.ow;
    shape->route = p.route;
    shape->workspace_bytes = 0; /* device workspace is the conv's (device_info.device_bytes) */
  }
  return LC_OK;
}

lc_status lc_cl_conv_enqueue(lc_conv *c, cl_mem in, cl_mem out, cl_mem res) {
  lc_cl_conv *cc = c->dev;
  cc->a.has_res = res != NULL;
  const lc_cl_family *f = lc_cl_families[cc->cand.family];
  pthread_mutex_lock(&cc->rt->lock);
  lc_status s = f->enqueue(cc, &cc->cand, in, out, res, NULL, NULL);
  pthread_mutex_unlock(&cc->rt->lock);
  return s;
}

lc_status lc_cl_conv_run_host(lc_conv *c, const float *in, float *out) {
  lc_cl_conv *cc = c->dev;
  size_t ib = (size_t)cc->a.n * (size_t)cc->a.in_sn * sizeof(float);
  size_t ob = (size_t)cc->a.n * (size_t)cc->a.out_sn * sizeof(float);
  lc_status s;
  if (cc->stage_in_bytes < ib) {
    lc_cl_release_mem(cc->rt, &cc->stage_in);
    cc->stage_in_bytes = 0;
    if ((s = lc_cl_buffer(cc->rt, ib, NULL, &cc->stage_in))) return s;
    cc->stage_in_bytes = ib;
  }
  if (cc->stage_out_bytes < ob) {
    lc_cl_release_mem(cc->rt, &cc->stage_out);
    cc->stage_out_bytes = 0;
    if ((s = lc_cl_buffer(cc->rt, ob, NULL, &cc->stage_out))) return s;
    cc->stage_out_bytes = ob;
  }
  if ((s = lc_cl_write(cc->rt, cc->stage_in, 0, ib, in))) return s;
  if ((s = lc_cl_conv_enqueue(c, cc->stage_in, cc->stage_out, NULL))) return s;
  return lc_cl_read(cc->rt, cc->stage_out, 0, ob, out);
}

lc_status lc_cl_conv_collect(lc_cl_conv *cc, const lc_cl_cand *cands, int n) {
  lc_cl_rt *rt = cc->rt;
  /* Enqueues check their workspace before naming kernels: a stand-in of any size, never used. */
  cl_mem ws = cc->ws;
  size_t wsb = cc->ws_bytes;
  if (!cc->ws) cc->ws = cc->bias;
  cc->ws_bytes = (size_t)-1;
  rt->dry = LC_CL_COLLECT;
  lc_status s = LC_OK;
  for (int i = 0; i < n && !s; i++) {
    lc_status e = lc_cl_families[cands[i].family]->enqueue(cc, &cands[i], NULL, NULL, NULL, NULL, NULL);
    if (e == LC_ERR_NO_MEMORY) s = e;
  }
  rt->dry = LC_CL_RUN;
  cc->ws = ws, cc->ws_bytes = wsb;
  if (s) rt->nwant = 0;
  return s;
}

lc_status lc_cl_conv_prebuild(lc_cl_conv *cc, const lc_cl_cand *cands, int n) {
  lc_status s = lc_cl_conv_collect(cc, cands, n);
  return s ? s : lc_cl_build_wanted(cc->rt);
}

lc_status lc_cl_conv_build(lc_cl_conv *cc, const lc_cl_cand *cand) {
  lc_status s = lc_cl_conv_prebuild(cc, cand, 1);
  if (s) return s;
  cc->rt->dry = LC_CL_NOLAUNCH; /* what the parallel build left out is built here, with its log */
  s = lc_cl_families[cand->family]->enqueue(cc, cand, NULL, NULL, NULL, NULL, NULL);
  cc->rt->dry = LC_CL_RUN;
  return s;
}

/* Decodes the device weights back to OIHW fp32 (what the kernels compute with). */
lc_status lc_cl_conv_weights(const lc_conv *c, float *oihw) {
  const lc_cl_conv *cc = c->dev;
  const lc_cl_conv_args *a = &cc->a;
  size_t blocks = (size_t)a->groups * (size_t)a->ob, K = (size_t)a->K, nblk = (size_t)a->nblk;
  size_t per = cc->wfmt == LC_WEIGHTS_F32 ? 16 : cc->wfmt == LC_WEIGHTS_Q8 ? 4 : 2;
  size_t wbytes = blocks * K * per, sbytes = blocks * nblk * 16;
  unsigned char *w = lc_malloc(wbytes);
  float *sc = cc->wfmt != LC_WEIGHTS_F32 ? lc_malloc(sbytes) : NULL, *of = cc->asym ? lc_malloc(sbytes) : NULL;
  lc_status s = LC_OK;
  if (!w || (cc->wfmt != LC_WEIGHTS_F32 && !sc) || (cc->asym && !of)) {
    s = lc_error(LC_ERR_NO_MEMORY, "conv (opencl): out of memory reading the weights back");
    goto done;
  }
  if ((s = lc_cl_read(cc->rt, cc->w, 0, wbytes, w))) goto done;
  if (sc && (s = lc_cl_read(cc->rt, cc->sc, 0, sbytes, sc))) goto done;
  if (of && (s = lc_cl_read(cc->rt, cc->of, 0, sbytes, of))) goto done;
  size_t cin = (size_t)a->cin_g, taps = (size_t)(a->kh * a->kw);
  for (size_t oc = 0, O = (size_t)(a->groups * a->cout_g); oc < O; oc++) {
    size_t g = oc / (size_t)a->cout_g, ocg = oc % (size_t)a->cout_g, wb = g * (size_t)a->ob + ocg / 4, lane = ocg % 4;
    for (size_t k = 0; k < K; k++) {
      size_t t = k / cin, ic = k % cin, i = (wb * K + k) * 4 + lane;
      float v;
      if (cc->wfmt == LC_WEIGHTS_F32) {
        v = ((const float *)w)[i];
      } else {
        int q = cc->wfmt == LC_WEIGHTS_Q8 ? ((const int8_t *)w)[i]
                                          : (int)((lane & 1 ? w[(wb * K + k) * 2 + lane / 2] >> 4
                                                             : w[(wb * K + k) * 2 + lane / 2] & 15)) - 8;
        size_t blk = t * (size_t)a->bpt + ic / (size_t)a->bsz, si = (wb * nblk + blk) * 4 + lane;
        v = of ? fmaf((float)q, sc[si], of[si]) : (float)q * sc[si];
      }
      oihw[(oc * cin + ic) * taps + t] = v;
    }
  }
done:
  lc_free(w);
  lc_free(sc);
  lc_free(of);
  return s;
}

lc_status lc_cl_conv_set_std_args(const lc_cl_conv *c, cl_kernel k, const char *name, cl_mem in, cl_mem out,
                                  cl_mem res) {
  cl_mem r = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t sz[8] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                        sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof c->a};
  const void *v[8] = {&in, &c->w, &c->sc, &c->of, &c->bias, &r, &out, &c->a};
  return lc_cl_set_args(c->rt, k, name, 8, sz, v);
}

/* One program per kernel: NVIDIA compiles a program's every kernel at build (seconds for the GEMM
 * tiles when its JIT cache is cold), and the tuner tries only some of them. PoCL generates code per
 * kernel and local size at the first enqueue anyway, so there one program per file costs less. */
lc_status lc_cl_conv_kernel(const lc_cl_conv *c, const char *program, const char *name, cl_kernel *k) {
  return lc_cl_conv_kernel_of(c, program, name, name, k);
}

lc_status lc_cl_conv_kernel_of(const lc_cl_conv *c, const char *program, const char *want, const char *name,
                               cl_kernel *k) {
  return lc_cl_kernel_of(c->rt, program, c->options, want, name, k);
}

lc_status lc_cl_conv_enqueue_std(const lc_cl_conv *c, const lc_cl_cand *cand, const char *program, const char *name,
                                 int dims, const size_t gws_in[3], cl_mem in, cl_mem out, cl_mem res, cl_event *first,
                                 cl_event *last) {
  cl_kernel k;
  lc_status st = lc_cl_conv_kernel(c, program, name, &k);
  if (st != LC_OK) return st;
  st = lc_cl_conv_set_std_args(c, k, name, in, out, res);
  if (st != LC_OK) return st;
  size_t gws[3], lws[3];
  int have_lws = cand->lws[0] != 0;
  for (int i = 0; i < 3; i++) {
    lws[i] = have_lws && cand->lws[i] ? cand->lws[i] : 1;
    gws[i] = have_lws ? (gws_in[i] + lws[i] - 1) / lws[i] * lws[i] : gws_in[i];
  }
  cl_event ev = NULL;
  st = lc_cl_enqueue(c->rt, k, name, dims, gws, have_lws ? lws : NULL, first || last ? &ev : NULL);
  if (st != LC_OK) return st;
  return lc_cl_conv_hand_events(c, ev, name, first, last);
}

lc_status lc_cl_conv_launch(const lc_cl_conv *c, const char *program, const char *want, const char *name, int nargs,
                            const size_t *sz, const void *const *val, const size_t gws[3], const size_t lws[3],
                            cl_event *ev) {
  cl_kernel k;
  lc_status s = lc_cl_conv_kernel_of(c, program, want, name, &k);
  if (!s) s = lc_cl_set_args(c->rt, k, name, nargs, sz, val);
  if (!s) s = lc_cl_enqueue(c->rt, k, name, 3, gws, lws, ev);
  return s;
}

lc_status lc_cl_conv_end_events(const lc_cl_conv *c, lc_status s, cl_event e0, cl_event e1, cl_event *first,
                                cl_event *last) {
  if (s) {
    if (e0) c->rt->cl->ReleaseEvent(e0);
    if (e1) c->rt->cl->ReleaseEvent(e1);
    return s;
  }
  if (first) *first = e0;
  if (last) *last = e1;
  return LC_OK;
}

int lc_cl_model_pick(const lc_cl_conv *c, int nv, int (*ok)(const lc_cl_conv *, int),
                     double (*model)(const lc_cl_conv *, int)) {
  int best = -1;
  double best_us = 0.0;
  for (int v = 0; v < nv; v++) {
    if (!ok(c, v)) continue;
    double us = model(c, v);
    if (best < 0 || us < best_us) best = v, best_us = us;
  }
  return best;
}

int lc_cl_fast_short(void) {
  const char *e = getenv("LOWCONV_CL_FAST_WIDE");
  return !(e && *e == '1');
}

int lc_cl_model_rank(const lc_cl_conv *c, int v, int nv, int (*ok)(const lc_cl_conv *, int),
                     double (*model)(const lc_cl_conv *, int)) {
  double us = model(c, v);
  int r = 0;
  for (int u = 0; u < nv; u++)
    if (u != v && ok(c, u) && model(c, u) < us) r++;
  return r;
}

lc_status lc_cl_conv_hand_events(const lc_cl_conv *c, cl_event ev, const char *name, cl_event *first,
                                 cl_event *last) {
  if (first && last && ev) {
    cl_int err = c->rt->cl->RetainEvent(ev);
    if (err != CL_SUCCESS) {
      c->rt->cl->ReleaseEvent(ev);
      return lc_cl_fail(c->rt, err, "clRetainEvent (%s)", name);
    }
  }
  if (first) *first = ev;
  if (last) *last = ev;
  return LC_OK;
}
