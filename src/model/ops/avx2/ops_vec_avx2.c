/* The loops of ops_vec.h built with AVX2 (eight floats a step); chosen at run time. */
#include "model/ops/ops_vec.h"

void lcop_exp_sub_avx2(float *y, const float *x, float m, size_t n);
double lcop_sum_d_avx2(const float *x, size_t n);
void lcop_sigmoid_avx2(float *y, const float *x, size_t n);
void lcop_softmax_row_avx2(const float *x, float *y, size_t len, int lg);

void lcop_exp_sub_avx2(float *y, const float *x, float m, size_t n) { vec_exp_sub(y, x, m, n); }
double lcop_sum_d_avx2(const float *x, size_t n) { return vec_sum_d(x, n); }
void lcop_sigmoid_avx2(float *y, const float *x, size_t n) { vec_sigmoid(y, x, n); }
void lcop_softmax_row_avx2(const float *x, float *y, size_t len, int lg) { vec_softmax_row(x, y, len, lg); }
