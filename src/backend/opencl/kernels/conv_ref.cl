/* The baseline every tuned candidate is checked against: one work item per output element, the
 * plain loops, nothing clever. Global size: [ow, oh, n * groups * cout_g]. */
#if LC_ALL_KERNELS || defined(LC_WANT_conv_ref)
__kernel void conv_ref(LC_KERNEL_ARGS) {
  int ox = get_global_id(0), oy = get_global_id(1), z = get_global_id(2);
  if (ox >= p.ow || oy >= p.oh || z >= p.n * p.groups * p.cout_g) return;
  int o = z % (p.groups * p.cout_g), n = z / (p.groups * p.cout_g);
  int g = o / p.cout_g, ocg = o % p.cout_g, wb = g * p.ob + ocg / 4, lane = ocg % 4;
  float acc = 0.0f;
  const int M4 = 4 * p.groups * p.cout_g, C = p.groups * p.cin_g; /* the input affine (cl_conv_args.h) */
  for (int ky = 0; ky < p.kh; ky++) {
    int iy = oy * p.sh - p.pt + ky * p.dh;
    if (iy < 0 || iy >= p.ih) continue;
    for (int kx = 0; kx < p.kw; kx++) {
      int ix = ox * p.sw - p.pl + kx * p.dw;
      if (ix < 0 || ix >= p.iw) continue;
      int tap = ky * p.kw + kx;
      __global const float *x = in + n * p.in_sn + g * p.cin_g * p.in_sc + iy * p.in_sh + ix * p.in_sw;
      for (int ic = 0; ic < p.cin_g; ic++)
        acc = mad(p.in_aff ? fma(x[ic * p.in_sc], bias[M4 + g * p.cin_g + ic], bias[M4 + C + g * p.cin_g + ic])
                           : x[ic * p.in_sc], lc_w1(w, sc, of, &p, wb, lane, tap * p.cin_g + ic, lc_blk(&p, tap, ic)), acc);
    }
  }
  lc_store(out, bias, res, &p, n, o, oy, ox, acc);
}
#endif
