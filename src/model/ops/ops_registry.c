/* lc_op_find / lc_op_supported over the per-family tables. */
#include <pthread.h>
#include <string.h>

#include "model/ops/ops_internal.h"

static const lc_op_impl *const families[] = {lcop_conv_ops,  lcop_elementwise_ops, lcop_binary_ops,
                                             lcop_pool_ops,  lcop_shape_ops,       lcop_index_ops,
                                             lcop_matmul_ops, lcop_resize_ops,  lcop_logic_ops,
                                             lcop_gen_ops,   lcop_norm_ops,        lcop_rnn_ops,
                                             lcop_einsum_ops, lcop_convt_ops, lcop_upconcat_ops};
#define N_FAMILIES (sizeof families / sizeof families[0])

const lc_op_impl *lc_op_find(const char *op_type) {
  if (!op_type) return NULL;
  for (size_t f = 0; f < N_FAMILIES; f++)
    for (const lc_op_impl *o = families[f]; o->op_type; o++)
      if (strcmp(o->op_type, op_type) == 0) return o;
  return NULL;
}

static const char *names[192];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void) {
  size_t k = 0;
  for (size_t f = 0; f < N_FAMILIES; f++)
    for (const lc_op_impl *o = families[f]; o->op_type && k + 1 < sizeof names / sizeof names[0]; o++)
      names[k++] = o->op_type;
  names[k] = NULL;
}

const char *const *lc_op_supported(void) {
  pthread_once(&names_once, build_names);
  return names;
}
