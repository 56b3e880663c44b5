/* Implicit-GEMM convolution (family "gemm"). Per group g: C[cout_g][n*oh*ow] = A[cout_g][K] * B[K][n*oh*ow],
 * A the packed weights (oc4 blocks, dequantized while staged), B the input gathered on the fly
 * (row k = (ky*kw + kx)*cin_g + ic, zero at padding taps). The batch is folded into the columns so
 * that small late-layer maps still fill the tiles. Per K tile of TK rows the work-group stages a
 * TM x TK slice of A and a TK x TN slice of B in local memory; each work item then accumulates an
 * RM x RN register tile from float4 reads. The next tile's global loads are issued into registers
 * before the current tile is computed, so their latency hides behind the FMAs.
 * With p.ksplit > 1 (split-K, a uniform branch: one kernel per tile serves both, so a cold start
 * builds one program, not two) a work-group writes the partial sums of one K chunk to the
 * workspace; gemm_reduce (in every tile's program) adds them and applies the epilogue. 1x1 convs
 * with stride 1, no pad and NCHW-contiguous planes take a path where B rows are the input planes
 * themselves (no index math, no bounds tests); the choice is one uniform branch per K tile, so one
 * kernel per tile serves both (half the kernels to compile). */

/* Local row strides. A: +4 floats so that the 8 work items storing one float4 each to 8 successive
 * rows hit distinct banks. B: rows staged by fewer than 32 work items are shifted by that count
 * so that a warp's stores to several rows do not collide. */
#define LC_LDA(TM) ((TM) + 4)
#define LC_LDB(TN, TPR) ((TN) + ((TPR) < 32 ? (TPR) : 0))

/* Columns per work item of the B staging and float4s per work item of the A staging are at most 8
 * and 2 for every tile below; the private arrays are sized for that and indexed only by unrolled
 * loops, so they live in registers. */
#define LC_MAXC 8
#define LC_MAXA 4

/* LCG_WQ = m (2 or 4): the X = (m + 2)^2 GEMMs of family wino's F(m x m, 3x3) with q8/q4 weights
 * (cl_fam_wino.c). Group z is transformed value xi = z = a * (m + 2) + b; row c of oc4 block b0 of
 * its A is U = sum over taps of G[a][ky] G[b][kx] * (the tap's code * its block's scale + offset),
 * made from the 3x3 codes as the tile is staged, so the codes stay the only copy of the weights on
 * the device. Taps with a zero coefficient (rows 0 and m + 1 of G use one) are not loaded: a
 * uniform branch, as xi is one per work-group. Tap t of channel c is row t * wq_cin + c of
 * K = 9 * wq_cin; scale block t * bpt + c / bsz. */
#ifdef LCG_WQ
#define LCG_WQA (LCG_WQ + 2)
#if LCG_WQ == 2
__constant float lcg_wq_g[4][3] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
#else
__constant float lcg_wq_g[6][3] = {{0.25f, 0.0f, 0.0f},
                                   {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                   {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                   {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                   {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                   {0.0f, 0.0f, 1.0f}};
#endif
#define LCG_QROW 0
#else
#define LCG_QROW (WFMT != 0) /* q rows read as they are stored (not made from a 3x3's codes) */
#endif

/* The k loop of the register tile: LC_KK_UNROLL_N (an experiment's build option) unrolls it N
 * times instead of fully (code size, hence the driver's compile time, against speed). */
#if defined(LC_KK_UNROLL_N) && !defined(POCL_DEVICE_ADDRESS_BITS)
#define LC_PRAGMA(x) _Pragma(#x)
#define LC_UNROLL_BY(n) LC_PRAGMA(unroll n)
#define LC_KK_UNROLL LC_UNROLL_BY(LC_KK_UNROLL_N)
#else
#define LC_KK_UNROLL LC_UNROLL
#endif

/* The local-memory epilogue for tiles of at most LC_EPI_LOCAL_MAX outputs (an experiment's build
 * option moves the bound). On the H200 (03:18 run) it built the batch-1 suite's programs in 1.65
 * instead of 2.69 s and ran its layers 0.97x, but the 128-wide tiles of batch 32 1.2-1.5x slower. */
#ifndef LC_EPI_LOCAL_MAX
#define LC_EPI_LOCAL_MAX 4096
#endif
#define LC_EPI_LOCAL(TM, TN) ((TM) * (TN) <= LC_EPI_LOCAL_MAX)
#define LC_EPI_CS(TM, TN, RM) __local float4 Cs[LC_EPI_LOCAL(TM, TN) ? 4 * (TM) / (RM) * (TN) / 4 : 1]

#ifdef LCG_WQ
/* Row c of oc4 block wb of U[xi] from the taps' code words raw (LCG_WQ above); zeros if !ok. The
 * scales are read here, not with the codes: loaded a K tile ahead with them (scale x coefficient
 * in 9 float4s per row) ran 0.93-1.21x the best tile's time per layer on an H100, up to 1.35x
 * with the 32x32 tile (docs/opencl.md). */
inline float4 lcg_wq_row(__global const float *restrict sc, __global const float *restrict of, const lc_cl_conv_args *p,
                         const uint *raw, int wb, int c, int a, int b, int ok) {
  float4 u = (float4)(0.0f);
  if (!ok) return u;
  const int si = wb * p->nblk + c / p->bsz;
LC_UNROLL
  for (int t9 = 0; t9 < 9; t9++) {
    const float cf = lcg_wq_g[a][t9 / 3] * lcg_wq_g[b][t9 % 3];
    if (cf != 0.0f) {
      float4 s, o;
      lcg_scales(sc, of, si + t9 * p->bpt, &s, &o);
      u = mad((float4)(cf), lcg_deq(lcg_word_codes(raw[t9]), s, o), u);
    }
  }
  return u;
}
#endif

/* Always inlined with constant tile parameters, so every loop over them unrolls. */
static inline __attribute__((always_inline)) void
lc_gemm_tile(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
             __global const float *restrict of, __global const float *restrict bias, __global const float *restrict res,
             __global float *restrict out, __global float *restrict ws, const lc_cl_conv_args *p, __local float4 *As,
             __local float4 *Bs4, __local float4 *Cs4, const int TM, const int TN, const int TK, const int RM,
             const int RN) {
  const int T = (TM / RM) * (TN / RN);
  const int TPR = T / TK, CPT = TN / TPR; /* B staging: work items per row, columns per work item */
  const int NA = TM * TK / 4, APT = (NA + T - 1) / T;
  const int LDA4 = LC_LDA(TM) / 4, LDB = LC_LDB(TN, TPR), LDB4 = LDB / 4;
  __local float *Bs = (__local float *)Bs4;

  const int lid = get_local_id(0);
  const int P = p->oh * p->ow, N = p->n * P, M = p->cout_g;
  const int n0 = get_group_id(0) * TN, mb0 = get_group_id(1) * (TM / 4);
  const int z = get_group_id(2), SPLIT = p->ksplit > 1;
  const int g = z / p->ksplit, s = z - g * p->ksplit; /* ksplit 1, kchunk K: the whole K */
  const int kbeg = s * p->kchunk;
  const int kend = min(p->K, kbeg + p->kchunk);
  const int cin_g = p->cin_g;
  const bool one = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 &&
                   p->oh == p->ih && p->ow == p->iw && p->in_sw == 1 && p->in_sh == p->iw;

  /* B staging: this work item's row within the tile and its columns (output pixels). Invalid
   * columns get cy far out of range so every bounds test fails. */
  const int br = lid / TPR, bc = lid - br * TPR;
  int coff[LC_MAXC], cy[LC_MAXC], cx[LC_MAXC];
LC_UNROLL
  for (int j = 0; j < CPT; j++) {
    int n = n0 + bc + j * TPR;
    coff[j] = 0;
    cy[j] = -(1 << 29);
    cx[j] = 0;
    if (n < N) {
      int img = n / P, q = n - img * P;
      int base = p->in_off + img * p->in_sn + g * cin_g * p->in_sc;
      if (one) {
        coff[j] = base + q;
        cy[j] = 0;
      } else {
        int oy = q / p->ow, ox = q - oy * p->ow;
        cy[j] = oy * p->sh - p->pt;
        cx[j] = ox * p->sw - p->pl;
        coff[j] = base + cy[j] * p->in_sh + cx[j] * p->in_sw;
      }
    }
  }
  /* The row's (ic, kx, ky), advanced by TK per tile without divisions. */
  int bk = kbeg + br, bic, bkx, bky;
  {
    int tap = bk / cin_g;
    bic = bk - tap * cin_g;
    bky = tap / p->kw;
    bkx = tap - bky * p->kw;
  }

  /* A staging: float4 f of the tile is row f % TK of oc4 block f / TK, so that successive work
   * items read successive rows of one block. T is a multiple of TK, so all of a work item's
   * float4s are one row ak (of blocks ab0 + i*TPR): its k and quantization block are found once. */
  const int akk = lid % TK, ab0 = lid / TK;
  int ak = kbeg + akk, awb[LC_MAXA];
#ifdef LCG_WQ
  const int wqa = g / LCG_WQA, wqb = g - wqa * LCG_WQA, g0 = 0; /* every xi reads the same 3x3 codes */
#else
  const int g0 = g;
#endif
LC_UNROLL
  for (int i = 0; i < APT; i++) {
    int b = mb0 + ab0 + i * TPR;
    awb[i] = (lid + i * T < NA && b < p->ob) ? (g0 * p->ob + b) : -1; /* oc4 block, -1: stage zeros */
  }
#if LCG_QROW
  /* qfast: every K tile lies in one quantization block (TK divides cin_g and the block size, or
   * one block spans the row), so the tile's block qblk is advanced without divisions, uniformly;
   * qic, qin: the tile's first row within its tap and its block. Otherwise the row's (aic, atap)
   * give the block with one division per tile. */
  const bool qfast = p->bpt == 0 || (cin_g % TK == 0 && p->bsz % TK == 0);
  int atap = ak / cin_g, aic = ak - atap * cin_g;
  int qic = kbeg % cin_g, qin = qic % p->bsz, qblk = (kbeg / cin_g) * p->bpt + qic / p->bsz;
#endif

  float bv[LC_MAXC];
#if WFMT == 0
  float4 av[LC_MAXA];
#else
  /* Quantized rows stay raw code words until they are staged: dequantizing them where they are
   * loaded would wait for the load there, before this tile's FMAs, instead of behind them. */
  uint araw[LC_MAXA];
  int aok = 0; /* bit i: araw[i] holds a row (else zeros are staged) */
#endif
#ifdef LCG_WQ
  uint wqraw[LC_MAXA][9]; /* the staged row's 3x3 codes (words of the taps with a coefficient) */
#endif
#if LCG_QROW
  /* The scales (and offsets) of the rows staged: reloaded only when the tile's block changes
   * (every bsz / TK tiles), not per tile: per row they are 4-8x the codes' bytes. */
  float4 qs[LC_MAXA], qo[LC_MAXA];
  int qcur = -1;
#endif
  float4 acc[8][2];
LC_UNROLL
  for (int i = 0; i < RM; i++)
LC_UNROLL
    for (int j = 0; j < RN / 4; j++) acc[i][j] = (float4)(0.0f);

  const int tx = lid % (TN / RN), ty = lid / (TN / RN);
  const int ntiles = (kend - kbeg + TK - 1) / TK;

  for (int t = 0; t <= ntiles; t++) {
    if (t > 0) {
      /* Stage the tile loaded in the previous iteration, then load the next one. */
      barrier(CLK_LOCAL_MEM_FENCE);
LC_UNROLL
      for (int j = 0; j < CPT; j++) Bs[br * LDB + bc + j * TPR] = bv[j];
LC_UNROLL
      for (int i = 0; i < APT; i++)
        if (lid + i * T < NA)
#if WFMT == 0
          As[akk * LDA4 + ab0 + i * TPR] = av[i];
#elif defined(LCG_WQ)
          As[akk * LDA4 + ab0 + i * TPR] = lcg_wq_row(sc, of, p, wqraw[i], awb[i], ak - TK, wqa, wqb, aok >> i & 1);
#else
          As[akk * LDA4 + ab0 + i * TPR] = (aok >> i & 1) ? lcg_deq(lcg_word_codes(araw[i]), qs[i], qo[i]) : (float4)(0.0f);
#endif
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t < ntiles) {
      bool rv = bk < kend;
      float xs = 1.0f, xt = 0.0f; /* the input affine of this row's channel (cl_conv_args.h) */
      if (p->in_aff && rv) {
        int ch = g * cin_g + (one ? bk : bic), M4 = 4 * p->groups * M;
        xs = bias[M4 + ch], xt = bias[M4 + p->groups * cin_g + ch];
      }
      if (one) {
        int roff = bk * p->in_sc;
LC_UNROLL
        for (int j = 0; j < CPT; j++) bv[j] = (rv && cy[j] == 0) ? fma(in[coff[j] + roff], xs, xt) : 0.0f;
      } else {
        int dy = bky * p->dh, dx = bkx * p->dw;
        int roff = bic * p->in_sc + dy * p->in_sh + dx * p->in_sw;
LC_UNROLL
        for (int j = 0; j < CPT; j++) {
          int iy = cy[j] + dy, ix = cx[j] + dx;
          bool ok = rv && (uint)iy < (uint)p->ih && (uint)ix < (uint)p->iw;
          bv[j] = ok ? fma(in[coff[j] + roff], xs, xt) : 0.0f;
        }
      }
      bk += TK;
      bic += TK;
      while (bic >= cin_g) {
        bic -= cin_g;
        if (++bkx == p->kw) {
          bkx = 0;
          bky++;
        }
      }
#if !LCG_QROW
      const int ablk = 0;
#else
      const int ablk = qfast ? qblk : atap * p->bpt + aic / p->bsz;
#endif
#if LCG_QROW
      if (ablk != qcur) {
        qcur = ablk;
LC_UNROLL
        for (int i = 0; i < APT; i++) lcg_scales(sc, of, awb[i] >= 0 ? awb[i] * p->nblk + ablk : 0, &qs[i], &qo[i]);
      }
#endif
LC_UNROLL
      for (int i = 0; i < APT; i++) {
#if WFMT == 0
        av[i] = (float4)(0.0f);
        if (awb[i] >= 0 && ak < kend) av[i] = lcg_codes(w, awb[i] * p->K + ak);
#elif defined(LCG_WQ)
        const bool ok = awb[i] >= 0 && ak < kend && ak < p->wq_cin;
LC_UNROLL
        for (int t9 = 0; t9 < 9; t9++)
          wqraw[i][t9] = ok && lcg_wq_g[wqa][t9 / 3] != 0.0f && lcg_wq_g[wqb][t9 % 3] != 0.0f
                             ? lcg_word(w, awb[i] * 9 * p->wq_cin + t9 * p->wq_cin + ak)
                             : 0u;
        aok = ok ? aok | 1 << i : aok & ~(1 << i);
#else
        const bool ok = awb[i] >= 0 && ak < kend;
        araw[i] = ok ? lcg_word(w, awb[i] * p->K + ak) : 0u;
        aok = ok ? aok | 1 << i : aok & ~(1 << i);
#endif
      }
      ak += TK;
#if LCG_QROW
      if (qfast) {
        if (p->bpt > 0) { /* else one block spans the row */
          qic += TK;
          qin += TK;
          if (qic == cin_g) { /* a tap's last block ends with the tap */
            qic = qin = 0;
            qblk++;
          } else if (qin == p->bsz) {
            qin = 0;
            qblk++;
          }
        }
      } else {
        aic += TK;
        while (aic >= cin_g) {
          aic -= cin_g;
          atap++;
        }
      }
#endif
    }
    if (t > 0) {
LC_KK_UNROLL
      for (int kk = 0; kk < TK; kk++) {
        float4 a[2], b[2];
LC_UNROLL
        for (int i = 0; i < RM / 4; i++) a[i] = As[kk * LDA4 + i * (TM / RM) + ty];
LC_UNROLL
        for (int j = 0; j < RN / 4; j++) b[j] = Bs4[kk * LDB4 + j * (TN / RN) + tx];
LC_UNROLL
        for (int i = 0; i < RM / 4; i++) {
LC_UNROLL
          for (int j = 0; j < RN / 4; j++) {
            acc[i * 4 + 0][j] = mad((float4)(a[i].x), b[j], acc[i * 4 + 0][j]);
            acc[i * 4 + 1][j] = mad((float4)(a[i].y), b[j], acc[i * 4 + 1][j]);
            acc[i * 4 + 2][j] = mad((float4)(a[i].z), b[j], acc[i * 4 + 2][j]);
            acc[i * 4 + 3][j] = mad((float4)(a[i].w), b[j], acc[i * 4 + 3][j]);
          }
        }
      }
    }
  }

  if (LC_EPI_LOCAL(TM, TN)) {
    /* The tile leaves through local memory in RM / 4 passes of 4 * TM / RM rows (pass i: the rows
     * of acc[i * 4 + u]), stored by one rolled loop: the epilogue is inlined once per pass instead
     * of once per register (a third of a tile's build time), and successive items store successive
     * columns. T is a multiple of TN in every tile, so an item keeps one column throughout. */
    const int CR = 4 * TM / RM, c = lid % TN, n = n0 + c;
    __local float *Cs = (__local float *)Cs4;
    int img = 0, y = 0, x = 0;
    if (n < N) {
      img = n / P;
      const int q = n - img * P;
      y = q / p->ow, x = q - y * p->ow;
    }
LC_UNROLL
    for (int i = 0; i < RM / 4; i++) {
      barrier(CLK_LOCAL_MEM_FENCE);
LC_UNROLL
      for (int u = 0; u < 4; u++)
LC_UNROLL
        for (int j = 0; j < RN / 4; j++) Cs4[((ty * 4 + u) * TN + j * (4 * TN / RN) + tx * 4) / 4] = acc[i * 4 + u][j];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (n < N) {
#pragma unroll 1
        for (int r = lid / TN; r < CR; r += T / TN) {
          const int m = mb0 * 4 + i * CR + r;
          if (m >= M) break;
          if (SPLIT)
            ws[((g * p->ksplit + s) * M + m) * N + n] = Cs[r * TN + c];
          else
            lc_store(out, bias, res, p, img, g * M + m, y, x, Cs[r * TN + c]);
        }
      }
    }
    return;
  }
  /* Row m = mb0*4 + i*(4*TM/RM) + ty*4 + u, column n = n0 + j*(4*TN/RN) + tx*4 + v. */
LC_UNROLL
  for (int j = 0; j < RN / 4; j++) {
LC_UNROLL
    for (int v = 0; v < 4; v++) {
      int n = n0 + j * (4 * TN / RN) + tx * 4 + v;
      if (n >= N) continue;
      int img = n / P, q = n - img * P;
      int y = q / p->ow, x = q - y * p->ow;
LC_UNROLL
      for (int i = 0; i < RM / 4; i++) {
LC_UNROLL
        for (int u = 0; u < 4; u++) {
          int m = mb0 * 4 + i * (4 * TM / RM) + ty * 4 + u;
          float4 a4 = acc[i * 4 + u][j];
          float r = v == 0 ? a4.x : v == 1 ? a4.y : v == 2 ? a4.z : a4.w;
          if (m < M) {
            if (SPLIT)
              ws[((g * p->ksplit + s) * M + m) * N + n] = r;
            else
              lc_store(out, bias, res, p, img, g * M + m, y, x, r);
          }
        }
      }
    }
  }
}


#define LC_GEMM_KERNEL(NAME, TM, TN, TK, RM, RN)                                                        \
  __kernel __attribute__((reqd_work_group_size((TM / RM) * (TN / RN), 1, 1))) void NAME(                     \
      LC_KERNEL_ARGS, __global float *restrict ws) {                                                         \
    __local float4 As[TK * LC_LDA(TM) / 4];                                                                  \
    __local float4 Bs[TK * LC_LDB(TN, (TM / RM) * (TN / RN) / TK) / 4];                                      \
    LC_EPI_CS(TM, TN, RM);                                                                                   \
    lc_gemm_tile(in, w, sc, of, bias, res, out, ws, &p, As, Bs, Cs, TM, TN, TK, RM, RN);                     \
  }

/* Tiles (cl_fam_gemm.c holds the same table): name, TM, TN, TK, RM, RN. */
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_128x128)
LC_GEMM_KERNEL(gemm_128x128, 128, 128, 8, 8, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_128x128k16)
LC_GEMM_KERNEL(gemm_128x128k16, 128, 128, 16, 8, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_128x64)
LC_GEMM_KERNEL(gemm_128x64, 128, 64, 8, 8, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_64x128)
LC_GEMM_KERNEL(gemm_64x128, 64, 128, 8, 8, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_64x64)
LC_GEMM_KERNEL(gemm_64x64, 64, 64, 16, 8, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_32x32)
LC_GEMM_KERNEL(gemm_32x32, 32, 32, 16, 4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemm_32x128)
LC_GEMM_KERNEL(gemm_32x128, 32, 128, 8, 4, 8)
#endif


/* Split-K epilogue (common.cl), built into every program of this file (small next to a tile), so
 * split-K costs no build of its own. */
__kernel void gemm_reduce(LC_KERNEL_ARGS, __global const float *restrict ws) {
  lc_ksplit_reduce(out, bias, res, &p, ws);
  (void)in;
  (void)w;
  (void)sc;
  (void)of;
}
