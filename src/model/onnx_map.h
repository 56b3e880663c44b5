/* Private to the loader: onnx_pb.c decodes, onnx_map.c owns the memory behind the tensors. */
#ifndef LC_MODEL_ONNX_MAP_H
#define LC_MODEL_ONNX_MAP_H

#include "model/onnx_pb.h"

/* Maps a model file (a regular file; FIFOs and devices are refused without blocking) into a new
 * model; *dir gets the real path of its directory, in the model's arena. */
lc_status lc_onnx_map_file(const char *path, lc_onnx_model **out, const char **dir);
/* Points t->data at n = t->nbytes bytes of external data: location loc relative to dir (NULL for
 * a model loaded from memory: refused), from offset; length -1 = not given. */
lc_status lc_onnx_map_external(lc_onnx_model *m, const char *dir, lc_tensor *t, const char *loc, int64_t offset,
                               int64_t length);
/* A copy of n misaligned bytes at src: in the arena when small, else filled on first
 * lc_onnx_ensure. NULL on allocation failure. */
void *lc_onnx_copy_bytes(lc_onnx_model *m, const void *src, size_t n);

#endif
