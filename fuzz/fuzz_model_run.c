/* libFuzzer target: the whole model path on arbitrary bytes: load, plan under a small memory cap
 * (folding, fusion, memory plan, operator init), then run on zero inputs. Must never crash, hang,
 * leak or allocate past the cap by more than the conv weights a tiny file can hold. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP ((size_t)16 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lc_model *m = NULL;
  if (lc_model_load_buffer(data, size, &m) != LC_OK) return 0;
  lc_model_options o;
  lc_model_options_init(&o);
  o.max_memory_bytes = CAP;
  o.workspace_budget = CAP;
  if (lc_model_plan(m, &o) == LC_OK) {
    int ok = 1;
    for (int i = 0; ok && i < lc_model_n_inputs(m); i++) {
      lc_tensor t = *lc_model_input(m, i);
      void *z = lc_calloc(1, t.nbytes ? t.nbytes : 1);
      if (!z) break;
      t.data = z;
      ok = lc_model_set_input(m, t.name, &t) == LC_OK;
      lc_free(z);
    }
    if (ok) (void)lc_model_run(m);
  }
  lc_model_free(m);
  return 0;
}
