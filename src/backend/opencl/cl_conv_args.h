/* Arguments of every conv kernel, shared by the host (C11) and the device (OpenCL C 1.2): all
 * members are 32-bit, so the struct has the same layout on both sides and is passed by value.
 *
 * Tensors (device buffers of float, element strides below, so NCHW and NHWC both work):
 *   input  x[n][c][y][x] at in[n*in_sn + c*in_sc + y*in_sh + x*in_sw], c = g*cin_g + ic
 *   output y[n][o][y][x] at out[n*out_sn + o*out_sc + y*out_sh + x*out_sw], o = g*cout_g + oc
 *   residual (has_res) has the output's shape and strides; with res_up = f > 1 (the model
 *   runner's fused nearest Resize, fuse_device.c; NCHW-packed output only) it is the packed NCHW
 *   [n][M][oh/f][ow/f] tensor, read at (y/f, x/f) as the upsampling would have copied it.
 * Weights, one layout for every kernel family: output channels of a group in blocks of 4 ("oc4"),
 *   ob = ceil(cout_g / 4) blocks per group; row k = (ky*kw + kx)*cin_g + ic (K = cin_g*kh*kw):
 *   f32: float  w[((g*ob + b)*K + k)*4 + lane]          oc = b*4 + lane; lanes past cout_g are 0
 *   q8:  char   w[((g*ob + b)*K + k)*4 + lane]          signed code
 *   q4:  uchar  w[((g*ob + b)*K + k)*2 + lane/2]        nibble u = code + 8; even lane LOW nibble
 *   scale/offset (q8, q4): float s[((g*ob + b)*nblk + blk)*4 + lane], weight = code*scale + offset
 *   blk(k) = (k / cin_g) * bpt + (k % cin_g) / bsz   (one block per row: bpt = 0, bsz = 2^30)
 * Epilogue: v = acc + bias[o] (has_bias) + residual (has_res); then, with epi bit 1, the
 *   per-channel affine v * bias[2M + o] + bias[3M + o] (M = groups * cout_g); then the activation
 *   (lc_activation values: 0 none, 1 relu, 2 clip to [act_min, act_max], 3 leaky relu act_alpha,
 *   4 hard swish; LC_CL_ACT_HARD_SIGMOID: clamp(v * act_alpha + act_beta, 0, 1), set by the model
 *   runner for a HardSigmoid after the conv, not an lc_activation); then, with epi bit 0, PRelu: v < 0 ? v * bias[M + o] : v. epi != 0 needs
 *   has_bias and a bias buffer of 4M floats (the model runner's fused PRelu and BN after an add).
 * Input affine (in_aff, families gemm, gemmq, wino and ref only): every input value inside the image is
 *   read as x * bias[4M + c] + bias[4M + C + c] (C = groups * cin_g), padding stays 0: a
 *   BatchNormalization before the conv whose input is also read elsewhere (pre-activation blocks). */
#ifndef LC_CL_CONV_ARGS_H
#define LC_CL_CONV_ARGS_H

#ifndef __OPENCL_VERSION__
#include <stdint.h>
typedef int32_t lc_cl_int;
typedef float lc_cl_float;
#else
typedef int lc_cl_int;
typedef float lc_cl_float;
#endif

#define LC_CL_ACT_HARD_SIGMOID 5
/* float4s of dequantized weights a direct q8/q4 tile's work-group stages in local memory
 * (conv_direct.cl; cl_fam_direct.c offers those tiles only where the device has them) */
#define LC_CL_DIRECT_STAGE_F4 512

typedef struct lc_cl_conv_args {
  lc_cl_int n, groups, cin_g, cout_g;
  lc_cl_int ih, iw, oh, ow;
  lc_cl_int kh, kw, sh, sw;
  lc_cl_int dh, dw, pt, pl;
  lc_cl_int K, ob, nblk, bpt;
  lc_cl_int bsz, ksplit, kchunk, in_aff; /* ksplit: K split in this many chunks of kchunk (split-K GEMM) */
  lc_cl_int in_sn, in_sc, in_sh, in_sw;
  lc_cl_int out_sn, out_sc, out_sh, out_sw;
  lc_cl_int act, has_bias, has_res, epi;
  lc_cl_float act_min, act_max, act_alpha, act_beta;
  /* wsoff: byte offset of gemmq's input records in the workspace; in_off: float offset of the
   * input (families gemm and wide only: the Winograd GEMMs read V from the workspace, after M or
   * after family wide's partial sums); wq_cin: the 3x3 conv's cin_g when family wino's GEMM makes
   * U from q8/q4 codes (conv_gemm.cl LCG_WQ) */
  lc_cl_int wsoff, in_off, res_up, wq_cin;
} lc_cl_conv_args;

#endif
