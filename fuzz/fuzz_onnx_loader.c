/* libFuzzer target: the ONNX loader on arbitrary bytes, then the graph passes that only read
 * the model (topological order, shape inference) when it loads. Must never crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/onnx_pb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lc_onnx_model *m = NULL;
  if (lc_onnx_load_buffer(data, size, &m) == LC_OK) lc_onnx_free(m);
  lc_model *g = NULL;
  if (lc_model_load_buffer(data, size, &g) == LC_OK) {
    lc_model_options o;
    lc_model_options_init(&o);
    o.max_memory_bytes = 16u << 20; /* hostile shapes: refused, not folded slowly */
    o.dry_run = 1;
    (void)lc_model_plan(g, &o);
    lc_model_free(g);
  }
  return 0;
}
