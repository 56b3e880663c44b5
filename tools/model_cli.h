/* Shared by `lowconv info | run | bench` (cmd_model.c) and their model plumbing (model_io.c). */
#ifndef LC_TOOLS_MODEL_CLI_H
#define LC_TOOLS_MODEL_CLI_H

#include "model/model.h"
#include "opts.h"

typedef struct margs {
  const char *model, *out_dir, *device;
  opt_list shape, input;
  int json, per_layer, no_io, repeat, threads, weights, block, no_fusion, q4_policy, tune, layout;
  size_t budget, max_memory;
} margs;

/* margs.q4_policy: the choices of --q4-policy */
enum { MARGS_Q4_PLAN = 0, MARGS_Q4_MIXED = 1, MARGS_Q4_ALL = 2 };

/* --input files read before planning: their shapes fix symbolic dims (--shape wins). */
typedef struct minputs {
  lc_tensor t[OPT_LIST_MAX];
  int index[OPT_LIST_MAX]; /* graph input */
  int n;
} minputs;

/* Prints "lowconv CMD: WHAT: <last error or the status name>"; returns 1. */
int model_fail(const char *cmd, const char *what, lc_status s);
/* Loads the model (--weights q4 with the plan policy: the calibrated file, model/q4plan.h; says
 * on stderr which plan), reads the --input files and fixes the input shapes. *symbolic = inputs whose
 * dims (past the batch) are still symbolic. Returns 0, 1 (file) or 2 (usage). */
int model_open(const char *cmd, const margs *a, lc_model **m, minputs *in, int *symbolic);
/* Plans with the command-line options. 0 or 1. */
int model_plan(const char *cmd, const margs *a, lc_model *m);
/* Copies the --input tensors in; others are refused (require, 2) or filled with a fixed pattern. */
int model_bind(const char *cmd, lc_model *m, const minputs *in, int require);
void minputs_free(minputs *in);
/* One DIR/NAME.npy per output, written to temporary names and renamed once all are written, so a
 * failure leaves no partial file. 0 or 1. */
int model_write_outputs(const char *cmd, const lc_model *m, const char *dir, int print);
/* "1x3xHxW": symbolic dims by name (inputs), ? if unknown. */
void model_dims_text(const lc_model *m, int input, const lc_tensor *t, char *buf, size_t len);

#endif
