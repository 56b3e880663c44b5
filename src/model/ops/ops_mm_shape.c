/* Gemm's and MatMul's output geometry, shared by the CPU ops and the device ops (its own file so the
 * device layer does not depend on the CPU ops' use of the context). */
#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"

lc_status lcop_gemm_dims(const lc_node *n, const lc_tensor *const *in, int64_t *M, int64_t *N, int64_t *K) {
  const lc_tensor *A = in[0], *B = in[1];
  if (A->ndim != 2 || B->ndim != 2) return lcop_fail(n, LC_ERR_INVALID_ARG, "A and B must be 2-D");
  int ta = (int)lc_attr_int(n, "transA", 0), tb = (int)lc_attr_int(n, "transB", 0);
  *M = A->dims[ta ? 1 : 0];
  *K = A->dims[ta ? 0 : 1];
  *N = B->dims[tb ? 0 : 1];
  if (B->dims[tb ? 1 : 0] != *K)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "inner dims differ (%lld vs %lld)", (long long)*K,
                     (long long)B->dims[tb ? 1 : 0]);
  return LC_OK;
}

lc_status lcop_mm_shape(const lc_node *n, const lc_tensor *A, const lc_tensor *B, mm_shape *p, int *ond,
                             int64_t *odims) {
  if (A->ndim < 1 || B->ndim < 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "inputs must have rank >= 1");
  int ra = A->ndim, rb = B->ndim;
  p->M = ra >= 2 ? A->dims[ra - 2] : 1;
  p->K = A->dims[ra - 1];
  p->N = rb >= 2 ? B->dims[rb - 1] : 1;
  int64_t kb = rb >= 2 ? B->dims[rb - 2] : B->dims[0];
  if (kb != p->K) return lcop_fail(n, LC_ERR_INVALID_ARG, "inner dims differ (%lld vs %lld)", (long long)p->K, (long long)kb);
  int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
  p->nb = ba > bb ? ba : bb;
  int64_t st_a = p->M * p->K, st_b = p->K * p->N;
  for (int i = p->nb - 1; i >= 0; i--) {
    int ia = i - (p->nb - ba), ib = i - (p->nb - bb);
    int64_t da = ia >= 0 ? A->dims[ia] : 1, db = ib >= 0 ? B->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "batch dims do not broadcast");
    p->bd[i] = da == 1 ? db : da;
    p->sa[i] = da == 1 ? 0 : st_a;
    p->sb[i] = db == 1 ? 0 : st_b;
    st_a *= da;
    st_b *= db;
  }
  *ond = 0;
  for (int i = 0; i < p->nb; i++) odims[(*ond)++] = p->bd[i];
  if (ra >= 2) odims[(*ond)++] = p->M;
  if (rb >= 2) odims[(*ond)++] = p->N;
  return LC_OK;
}
