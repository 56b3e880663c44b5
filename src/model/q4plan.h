/* --weights q4 at load with the quantizer's per-layer policy (docs/quantization.md, "q4 at load").
 *
 * The policy needs onnxruntime and error-compensating rounding, which live in the Python package
 * (python/lowconv/quantizer.py), so the first load of a model runs `python -m lowconv quantize`
 * once and keeps its output in the cache directory:
 *   DIR/q4plan/KEY.plan   blob (tune/blob.h): the files' sizes and FNV-1a hashes, the summary,
 *                         one line per layer (format, block, bytes)
 *   DIR/q4plan/KEY/       the calibrated file (model.onnx + model.onnx.data) it describes
 * KEY hashes the model file's bytes and the options (block, samples); the blob checks the
 * lowconv version. Later loads check the blob and the files' hashes and load the calibrated
 * file (codes mapped as they are): nothing is measured. A corrupt or foreign entry is warned
 * about and made again; when no plan can be made (no Python, no cache directory) the old quick
 * rule (LC_Q4_MIXED) is used with a warning.
 * Environment: LOWCONV_Q4_FAST=1 (quick rule, no plan), LOWCONV_Q4_SAMPLES (calibration samples,
 * default 8), LOWCONV_Q4_TIMEOUT (seconds the quantizer may take, default 0 = no limit),
 * LOWCONV_PYTHON (the interpreter, default python3). */
#ifndef LC_MODEL_Q4PLAN_H
#define LC_MODEL_Q4PLAN_H

#include "model/model.h"

#define LC_Q4PLAN_SAMPLES 8 /* the quantizer's default: fewer saves little (per-layer sensitivities use 4 anyway) */

typedef struct lc_q4plan {
  int used;          /* 1 = the calibrated file was loaded (plan weights: keep the file's, f32 else) */
  int from_cache;    /* 1 = found in the cache: nothing measured */
  int quantized;     /* 1 = the model file is quantized already: loaded as it is */
  char path[4096];   /* the calibrated file when used */
  char summary[512]; /* the plan's summary, or why the quick rule is used */
} lc_q4plan;

/* 1 if the model has DequantizeLinear weights (a quantized file). */
int lc_model_is_quantized(const lc_model *m);

/* Loads path for --weights q4 with the plan policy: the model itself when it is quantized, the
 * calibrated file when a plan exists or can be made (block: the quantizer's block, 0 = 32), else
 * the model (p->used = 0: the caller applies the quick rule). Errors: those of lc_model_load,
 * LC_ERR_INVALID_ARG for a block the quantizer does not take. */
lc_status lc_q4plan_load(const char *path, int block, lc_model **m, lc_q4plan *p);

#endif
