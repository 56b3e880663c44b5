/* General convolution with the reduction split inside a work-group: family "split"
 * (cl_fam_split.c), for small outputs with long reductions (PP-OCR det's 20x20 .. 80x80 layers,
 * the 7x7 and 14x14 stages of a ResNet), where one item per output tile leaves most of the GPU
 * idle and each item runs a long chain of dependent loads.
 *
 * Work-group (P, S, 1): dim 0 runs over P output pixels (flattened oh * ow, so a warp reads
 * neighbouring input columns and the weights are broadcasts), dim 1 over S slices of the
 * reduction; slice l sums rows k = (tap, ic) = l, l + S, ... of CB oc4 blocks. The S partial sums
 * are added in local memory in a fixed tree, so the result does not depend on scheduling.
 * Global size (ceil(oh * ow / P) * P, S, n * groups * ceil(ob / CB)). */

#define LCS_MC 2
#define LCS_MAXWG 256 /* cl_fam_split.c: P * S <= this */

/* q8 / q4: the P pixels of a work-group read the same rows, so the group dequantizes them once
 * into local memory (the reduction's array, free until the sums), LCS_LW / CB rows at a time,
 * where each item used to dequantize its rows itself; -DLCS_STAGE=0 for A/B runs. */
#ifndef LCS_STAGE
#define LCS_STAGE 1
#endif
#if WFMT != 0 && LCS_STAGE
#define LCS_STAGED 1
#else
#define LCS_STAGED 0
#endif
#ifndef LCS_LW
#define LCS_LW (LCS_MC * LCS_MAXWG) /* float4s; tests pass 64 (chunks of 32 rows: S is at most 32) */
#endif
#ifndef LCS_SR
#define LCS_SR 2 /* rows an item stages per round */
#endif
#if LCS_LW > LCS_MC * LCS_MAXWG || LCS_LW < 64
#error "LCS_LW: 64 .. the reduction array's float4s"
#endif

__attribute__((always_inline)) static inline void lcs_split(__global const float *restrict in,
                                                            __global const wtype *restrict w,
                                                            __global const float *restrict sc,
                                                            __global const float *restrict of,
                                                            __global const float *restrict bias,
                                                            __global const float *restrict res,
                                                            __global float *restrict out, const lc_cl_conv_args *pa,
                                                            __local float4 *red, const int CB) {
  const lc_cl_conv_args p = *pa;
  const int px = get_local_id(0), P = get_local_size(0), l = get_local_id(1), S = get_local_size(1);
  const int pix = get_global_id(0), z = get_global_id(2), np = p.oh * p.ow;
  const int nob = (p.ob + CB - 1) / CB;
  const int b0 = (z % nob) * CB, g = (z / nob) % p.groups, n = z / nob / p.groups;
  const int live = pix < np, oy = live ? pix / p.ow : 0, ox = live ? pix % p.ow : 0;
  const int inb = n * p.in_sn + g * p.cin_g * p.in_sc;
  float4 acc[LCS_MC];
  #pragma unroll
  for (int cb = 0; cb < CB; cb++) acc[cb] = (float4)(0.0f);
  /* Row k = tap * cin_g + ic; (tap, ky, kx, ic) kept incrementally (no division in the loop). */
  int ic = l, tap = 0;
  while (ic >= p.cin_g && tap < p.kh * p.kw) ic -= p.cin_g, tap++;
  int ky = tap / p.kw, kx = tap - ky * p.kw;
  const int R = p.kh * p.kw * p.cin_g;
  /* Row (tap, ic)'s input value for this item's pixel: the padding reads a valid address, then 0. */
#define LCS_INPUT(xv)                                                                              \
  const int iy = oy * p.sh - p.pt + ky * p.dh, ix = ox * p.sw - p.pl + kx * p.dw;                  \
  const int ok = iy >= 0 && iy < p.ih && ix >= 0 && ix < p.iw;                                     \
  const float xv##_at = in[ok ? inb + iy * p.in_sh + ix * p.in_sw + ic * p.in_sc : inb];              \
  const float xv = ok ? xv##_at : 0.0f
#if LCS_STAGED
  /* Chunks of cap rows, a multiple of S, so slice l's rows k = l, l + S, ... run on across them. */
  const int cap = LCS_LW / CB / S * S, lid = l * P + px;
  for (int k0 = 0; k0 < R; k0 += cap) {
    const int rows = min(cap, R - k0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous chunk has been read */
    /* LCS_SR of an item's rows x CB blocks a round, every load issued before any is used: a loop
     * of one element at a time waited out a load's latency per element, four in a row on a 7x7
     * shortcut's 256 rows x 2 blocks (H100: 256 -> 512 at 7 px q4 / f32 1.15 -> 1.07, stop 35).
     * Rows past the chunk load its last row again and store nothing. */
    for (int r0 = lid; r0 < rows; r0 += LCS_SR * P * S) {
      float4 qv[LCS_SR][LCS_MC], sv[LCS_SR][LCS_MC], ov[LCS_SR][LCS_MC];
      #pragma unroll
      for (int j = 0; j < LCS_SR; j++) {
        const int r = min(r0 + j * P * S, rows - 1), kt = (k0 + r) / p.cin_g, blk = lc_blk(&p, kt, k0 + r - kt * p.cin_g);
        #pragma unroll
        for (int cb = 0; cb < CB; cb++) {
          const int wb = g * p.ob + min(b0 + cb, p.ob - 1); /* a block past the last is not stored */
          lcd_scales(sc, of, &p, wb, blk, &sv[j][cb], &ov[j][cb]);
          qv[j][cb] = lcd_codes(w, p.K, wb, k0 + r);
        }
      }
      #pragma unroll
      for (int j = 0; j < LCS_SR; j++)
        if (r0 + j * P * S < rows) {
          #pragma unroll
          for (int cb = 0; cb < CB; cb++) red[cb * cap + r0 + j * P * S] = lcd_deq(qv[j][cb], sv[j][cb], ov[j][cb]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = k0 + l; live && k < k0 + rows; k += S) {
      LCS_INPUT(xv);
      #pragma unroll
      for (int cb = 0; cb < CB; cb++) acc[cb] = mad((float4)(xv), red[cb * cap + k - k0], acc[cb]);
      ic += S;
      while (ic >= p.cin_g) {
        ic -= p.cin_g;
        if (++kx == p.kw) kx = 0, ky++;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* the array holds the sums from here on */
#else
#if WFMT != 0
  /* Quantized rows: the block (tap * bpt + ic / bsz) kept incrementally, its scales loaded with
   * every row (cache hits; -DLCS_SCALE_ONCE, an experiment's option, loads them only when the
   * block changes: that branch kept the next rows' loads from being issued early), the codes
   * from one 2- or 4-byte word without conversions (lcg_word_codes), the same weights as lc_w4
   * bit for bit. */
  int icb = ic / p.bsz, icr = ic - icb * p.bsz;
#ifdef LCS_SCALE_ONCE
  int sblk = -1;
#endif
  float4 s[LCS_MC], o[LCS_MC];
#endif
  for (int k = l; live && k < R; k += S) {
    LCS_INPUT(xv);
#if WFMT == 0
    #pragma unroll
    for (int cb = 0; cb < CB; cb++) {
      const int wb = g * p.ob + min(b0 + cb, p.ob - 1); /* a block past the last is not stored */
      acc[cb] = mad((float4)(xv), lc_w4(w, sc, of, &p, wb, k, 0), acc[cb]);
    }
#else
    const int blk = tap * p.bpt + icb;
#ifdef LCS_SCALE_ONCE
    if (blk != sblk) {
      sblk = blk;
#endif
      #pragma unroll
      for (int cb = 0; cb < CB; cb++) lcg_scales(sc, of, (g * p.ob + min(b0 + cb, p.ob - 1)) * p.nblk + blk, &s[cb], &o[cb]);
#ifdef LCS_SCALE_ONCE
    }
#endif
    #pragma unroll
    for (int cb = 0; cb < CB; cb++) {
      const int wb = g * p.ob + min(b0 + cb, p.ob - 1);
      acc[cb] = mad((float4)(xv), lcg_deq(lcg_word_codes(lcg_word(w, wb * p.K + k)), s[cb], o[cb]), acc[cb]);
    }
    icr += S;
    if (icr >= p.bsz) {
      const int d = icr / p.bsz;
      icb += d, icr -= d * p.bsz;
    }
#endif
    ic += S;
    if (ic >= p.cin_g) {
      while (ic >= p.cin_g) {
        ic -= p.cin_g, tap++;
        if (++kx == p.kw) kx = 0, ky++;
      }
#if WFMT != 0
      icb = ic / p.bsz, icr = ic - icb * p.bsz;
#endif
    }
  }
#endif /* LCS_STAGED */
  #pragma unroll
  for (int cb = 0; cb < CB; cb++) red[(cb * S + l) * P + px] = acc[cb];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = S >> 1; s > 0; s >>= 1) { /* S is a power of two */
    if (l < s) {
      #pragma unroll
      for (int cb = 0; cb < CB; cb++) red[(cb * S + l) * P + px] += red[(cb * S + l + s) * P + px];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* Slice l stores lane l % 4 of block l / 4 (S >= 4 * CB): the stores spread over the slices. */
  const int cb = l >> 2, lane = l & 3, oc = (b0 + cb) * 4 + lane;
  if (live && cb < CB && b0 + cb < p.ob && oc < p.cout_g)
    lc_store(out, bias, res, &p, n, g * p.cout_g + oc, oy, ox, lcd_lane(red[cb * S * P + px], lane));
}

/* Local arrays live at kernel scope (OpenCL 1.2). */
#define LCS_KERNEL(NAME, CB)                                   \
  __kernel void NAME(LC_KERNEL_ARGS) {                         \
    __local float4 red[LCS_MC * LCS_MAXWG];                    \
    lcs_split(in, w, sc, of, bias, res, out, &p, red, CB);     \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_split_c4)
LCS_KERNEL(split_c4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_split_c8)
LCS_KERNEL(split_c8, 2)
#endif
