/* What a plan may take: the memory cap (docs/onnx.md, "Memory cap") and the opset range per domain.
 * A model file of a few hundred bytes can ask for terabytes (Resize scales, Pad, Expand, Tile,
 * ConstantOfShape), so every size is charged against the cap when it becomes known, before it is
 * allocated, and a refusal names the node and the bytes. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "model/graph.h"
#include "util/error.h"

size_t lc_model_default_memory_cap(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (size_t)LC_MODEL_MEMORY_FALLBACK;
  uint64_t total = (uint64_t)pages * (uint64_t)page / LC_MODEL_MEMORY_DIVISOR;
  return total > SIZE_MAX ? SIZE_MAX : (size_t)total;
}

size_t lc_model_memory_used(const lc_model *m) {
  const lc_model_stats *s = &m->st;
  size_t a[4] = {s->folded_bytes, s->peak_activation_bytes, s->scratch_bytes, s->packed_weight_bytes}, t = 0;
  for (int i = 0; i < 4; i++) t = a[i] > SIZE_MAX - t ? SIZE_MAX : t + a[i];
  return t;
}

lc_status lc_model_charge(lc_model *m, const lc_gnode *g, const char *what, size_t bytes, size_t *field) {
  size_t cap = m->st.memory_cap, used = lc_model_memory_used(m);
  if (bytes > cap || used > cap - bytes) {
    const char *name = g ? g->n.name : "", *op = g ? g->n.op_type : "";
    return lc_error(LC_ERR_BUDGET,
                    "model: node '%s' (%s): %s of %zu bytes would take the plan to %zu + %zu bytes, over the memory "
                    "cap of %zu bytes (max_memory_bytes, lowconv --max-memory)",
                    name, op, what, bytes, used, bytes, cap);
  }
  if (field) *field += bytes;
  return LC_OK;
}

/* ------------------------------------------------------------------ opsets */

/* Versions of the default domain whose operators src/model/ops implements as specified: opset 6's
 * broadcast / axis rules are mapped onto numpy's (lc_graph_opset6); 1-5 differ in attributes we do
 * not read (consumed_inputs, Reshape's shape) and newer ones are unknown. */
static const struct {
  const char *domain;
  int64_t lo, hi;
} opsets[] = {
    {"", LC_OPSET_MIN, LC_OPSET_MAX},
    {"ai.onnx", LC_OPSET_MIN, LC_OPSET_MAX},
};

lc_status lc_model_check_opsets(const lc_onnx_model *o) {
  for (const lc_onnx_opset *e = o->opsets; e; e = e->next)
    for (size_t k = 0; k < sizeof opsets / sizeof opsets[0]; k++) {
      if (strcmp(e->domain, opsets[k].domain)) continue;
      if (e->version < opsets[k].lo || e->version > opsets[k].hi)
        return lc_error(LC_ERR_UNSUPPORTED, "model: opset %lld of domain '%s' is not supported (supported: %lld to %lld)",
                        (long long)e->version, e->domain[0] ? e->domain : "ai.onnx", (long long)opsets[k].lo,
                        (long long)opsets[k].hi);
    }
  /* Other domains are refused only where a node uses one (no operator of ours lives there). */
  return LC_OK;
}
