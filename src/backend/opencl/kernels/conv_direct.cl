/* General convolution (any stride, pad, dilation, groups, batch). A work item computes a tile of
 * output channels x rows x columns: c4 or c8 (1 or 2 oc4 weight blocks of one group) x h1/h2/h4
 * x w1/w2/w4, looping over the taps and the input channels of its group; the accumulators stay in
 * registers (float4 per output pixel and oc4 block, the 4 lanes being 4 output channels).
 *
 * Global size (ceil(ow / W), ceil(oh / H), n * groups * ceil(ob / (C / 4))), dims 0 and 1 rounded
 * up to the local size (lx, ly, 1); items past the output return. Dim 0 runs along the output
 * columns, so in NCHW (in_sw == 1) neighbouring items read neighbouring input addresses and
 * write neighbouring outputs; every item of a work-group has the same oc blocks, so the weight
 * loads are broadcasts. Positions in the padding read a valid address and are zeroed by a select.
 *
 * conv_c4h1w1 is the baseline every other candidate is verified against: written plainly with
 * lc_w4 / lc_blk for each row. The other variants share lcd_direct, which dequantizes each weight
 * once per work-group (q8 / q4, staged in local memory; f32 weights are read as they are). */

/* The epilogue (lc_store) inlined once per pixel and oc4 block, the 4 lanes in a loop: NVIDIA's
 * build time grows by about 20 ms per inlined copy (H200: c4h1w1 / c4h1w2 / c8h2w1 with 4 / 8 /
 * 16 copies, 142 / 235 / 369 ms). -DLCD_EPI_UNROLLED (an experiment's option,
 * LOWCONV_CL_EXTRA_OPTIONS) inlines it per element as before. */
#ifdef LCD_EPI_UNROLLED
#define LCD_EPI_UNROLL _Pragma("unroll")
#else
#define LCD_EPI_UNROLL _Pragma("unroll 1")
#endif

#if LC_ALL_KERNELS || defined(LC_WANT_conv_c4h1w1)
__kernel void conv_c4h1w1(LC_KERNEL_ARGS) {
  int ox = get_global_id(0), oy = get_global_id(1), z = get_global_id(2);
  if (ox >= p.ow || oy >= p.oh) return;
  int b = z % p.ob, g = (z / p.ob) % p.groups, n = z / p.ob / p.groups;
  int wb = g * p.ob + b;
  float4 acc = (float4)(0.0f);
  for (int ky = 0; ky < p.kh; ky++) {
    int iy = oy * p.sh - p.pt + ky * p.dh;
    if (iy < 0 || iy >= p.ih) continue;
    for (int kx = 0; kx < p.kw; kx++) {
      int ix = ox * p.sw - p.pl + kx * p.dw;
      if (ix < 0 || ix >= p.iw) continue;
      int tap = ky * p.kw + kx;
      int base = n * p.in_sn + g * p.cin_g * p.in_sc + iy * p.in_sh + ix * p.in_sw;
      for (int ic = 0; ic < p.cin_g; ic++) {
#if WFMT == 0
        int blk = 0;
#else
        int blk = lc_blk(&p, tap, ic);
#endif
        float4 wv = lc_w4(w, sc, of, &p, wb, tap * p.cin_g + ic, blk);
        acc = mad((float4)(in[base + ic * p.in_sc]), wv, acc);
      }
    }
  }
  LCD_EPI_UNROLL
  for (int lane = 0; lane < 4; lane++) {
    int oc = b * 4 + lane;
    if (oc < p.cout_g) lc_store(out, bias, res, &p, n, g * p.cout_g + oc, oy, ox, lcd_lane(acc, lane));
  }
}
#endif

#define LCD_MC 2
#define LCD_MH 4
#define LCD_MW 4

/* q8 / q4: every item of a work-group has the same oc blocks (local size z is 1), so the group
 * dequantizes its weights once into local memory, a chunk of taps x input channels at a time,
 * where each item used to dequantize every weight itself (about 4 instructions per lane against
 * HT x WT FMAs). -DLCD_STAGE=0 (LOWCONV_CL_EXTRA_OPTIONS) restores that for A/B runs. */
#ifndef LCD_STAGE
#define LCD_STAGE 1
#endif
#if WFMT != 0 && LCD_STAGE
#define LCD_STAGED 1
#ifndef LCD_LW
#define LCD_LW LC_CL_DIRECT_STAGE_F4 /* tests pass a few, to split every chunk */
#endif
#define LCD_LOCAL , __local float4 *restrict lw
#define LCD_LOCAL_DECL __local float4 lw[LCD_LW];
#define LCD_LOCAL_ARG , lw
#else
#define LCD_STAGED 0
#define LCD_LOCAL
#define LCD_LOCAL_DECL
#define LCD_LOCAL_ARG
#endif

/* CB oc4 blocks x HT rows x WT columns per item. Forced inline so that CB, HT, WT are constants
 * where the tile arrays are indexed: the unrolled loops then keep them in registers. */
__attribute__((always_inline)) static inline void lcd_direct(__global const float *restrict in, __global const wtype *restrict w,
                       __global const float *restrict sc, __global const float *restrict of,
                       __global const float *restrict bias, __global const float *restrict res,
                       __global float *restrict out, const lc_cl_conv_args *pa, const int CB, const int HT,
                       const int WT LCD_LOCAL) {
  const lc_cl_conv_args p = *pa;
  int ox0 = (int)get_global_id(0) * WT, oy0 = (int)get_global_id(1) * HT, z = get_global_id(2);
  /* Items past the output still stage weights (they meet the barriers), then compute nothing. */
  const int live = ox0 < p.ow && oy0 < p.oh;
  if (!LCD_STAGED && !live) return;
  int nob = (p.ob + CB - 1) / CB;
  int b0 = (z % nob) * CB, g = (z / nob) % p.groups, n = z / nob / p.groups;
  /* A second block past the group's last reads the last one again and is not stored. */
#define LCD_WB(cb) (g * p.ob + min(b0 + (cb), p.ob - 1))
  float4 acc[LCD_MC][LCD_MH][LCD_MW] = {{{(float4)(0.0f)}}};
  const int inb = n * p.in_sn + g * p.cin_g * p.in_sc;
  const int taps = p.kh * p.kw;
#if LCD_STAGED
  /* Chunks of whole taps while a tap's channels fit, else of cap channels of one tap. */
  const int cap = LCD_LW / CB, icn = min(p.cin_g, cap), tn = max(1, cap / p.cin_g);
  const int lid = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
  const int lsz = (int)(get_local_size(0) * get_local_size(1));
#else
  const int icn = p.cin_g, tn = taps, bs = lcd_blk_rows(&p);
#endif
  for (int t0 = 0; t0 < taps; t0 += tn) {
    const int t1 = min(t0 + tn, taps);
    for (int c0 = 0; c0 < p.cin_g; c0 += icn) {
      const int c1 = min(c0 + icn, p.cin_g);
#if LCD_STAGED
      const int nc = c1 - c0, rows = (t1 - t0) * nc;
      barrier(CLK_LOCAL_MEM_FENCE); /* the previous chunk has been read */
      for (int e = lid; e < CB * rows; e += lsz) {
        const int cb = e / rows, r = e - cb * rows, tap = t0 + r / nc, ic = c0 + r % nc;
        float4 s, o;
        lcd_scales(sc, of, &p, LCD_WB(cb), lc_blk(&p, tap, ic), &s, &o);
        lw[cb * cap + r] = lcd_deq(lcd_codes(w, p.K, LCD_WB(cb), tap * p.cin_g + ic), s, o);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!live) continue;
#endif
      int ky = t0 / p.kw, kx = t0 - ky * p.kw; /* then kept incrementally: no division per tap */
      for (int tap = t0; tap < t1; tap++, kx = kx + 1 == p.kw ? 0 : kx + 1, ky += kx == 0) {
        int off[LCD_MH][LCD_MW], ok[LCD_MH][LCD_MW];
        #pragma unroll
        for (int h = 0; h < HT; h++)
          #pragma unroll
          for (int x = 0; x < WT; x++) {
            int iy = (oy0 + h) * p.sh - p.pt + ky * p.dh, ix = (ox0 + x) * p.sw - p.pl + kx * p.dw;
            ok[h][x] = iy >= 0 && iy < p.ih && ix >= 0 && ix < p.iw;
            off[h][x] = ok[h][x] ? inb + iy * p.in_sh + ix * p.in_sw : inb;
          }
        float4 wv[LCD_MC];
#define LCD_FMA(ic)                                                                      \
  do {                                                                                   \
    const int co = (ic) * p.in_sc;                                                       \
    _Pragma("unroll") for (int h = 0; h < HT; h++)                                       \
      _Pragma("unroll") for (int x = 0; x < WT; x++) {                                   \
        float xv = in[off[h][x] + co];                                                   \
        xv = ok[h][x] ? xv : 0.0f;                                                       \
        _Pragma("unroll") for (int cb = 0; cb < CB; cb++) acc[cb][h][x] = mad((float4)(xv), wv[cb], acc[cb][h][x]); \
      }                                                                                  \
  } while (0)
#if LCD_STAGED
        const int lb = (tap - t0) * nc - c0;
        for (int ic = c0; ic < c1; ic++) {
          #pragma unroll
          for (int cb = 0; cb < CB; cb++) wv[cb] = lw[cb * cap + lb + ic];
          LCD_FMA(ic);
        }
#else
        const int kb = tap * p.cin_g;
        for (int ic0 = c0; ic0 < c1; ic0 += bs) {
#if WFMT == 0
          int blk = 0;
#else
          int blk = lc_blk(&p, tap, ic0);
#endif
          float4 s[LCD_MC], o[LCD_MC];
          #pragma unroll
          for (int cb = 0; cb < CB; cb++) lcd_scales(sc, of, &p, LCD_WB(cb), blk, &s[cb], &o[cb]);
          const int ic1 = min(ic0 + bs, c1);
          for (int ic = ic0; ic < ic1; ic++) {
            #pragma unroll
            for (int cb = 0; cb < CB; cb++) wv[cb] = lcd_deq(lcd_codes(w, p.K, LCD_WB(cb), kb + ic), s[cb], o[cb]);
            LCD_FMA(ic);
          }
        }
#endif
      }
    }
  }
  if (!live) return;
  LCD_EPI_UNROLL /* the lanes in a loop: CB * HT * WT copies, lcd_lane a select (no stack) */
  for (int lane = 0; lane < 4; lane++)
    #pragma unroll
    for (int cb = 0; cb < CB; cb++)
      #pragma unroll
      for (int h = 0; h < HT; h++)
        #pragma unroll
        for (int x = 0; x < WT; x++) {
          const int oc = (b0 + cb) * 4 + lane;
          if (b0 + cb < p.ob && oc < p.cout_g && oy0 + h < p.oh && ox0 + x < p.ow)
            lc_store(out, bias, res, &p, n, g * p.cout_g + oc, oy0 + h, ox0 + x, lcd_lane(acc[cb][h][x], lane));
        }
}

#define LCD_DIRECT(NAME, CB, HT, WT)                                                          \
  __kernel void NAME(LC_KERNEL_ARGS) {                                                        \
    LCD_LOCAL_DECL                                                                            \
    lcd_direct(in, w, sc, of, bias, res, out, &p, CB, HT, WT LCD_LOCAL_ARG);                  \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_conv_c4h1w2)
LCD_DIRECT(conv_c4h1w2, 1, 1, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_conv_c4h4w1)
LCD_DIRECT(conv_c4h4w1, 1, 4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_conv_c8h2w1)
LCD_DIRECT(conv_c8h2w1, 2, 2, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_conv_c8h4w1)
LCD_DIRECT(conv_c8h4w1, 2, 4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_conv_c4h1w4)
LCD_DIRECT(conv_c4h1w4, 1, 1, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_conv_c8h1w4)
LCD_DIRECT(conv_c8h1w4, 2, 1, 4)
#endif
