/* `lowconv` CLI: dispatches to one subcommand per name. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lowconv.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *about;
} command;

/* One line per subcommand; `lowconv NAME --help` gives its details. */
static const command commands[] = {
    {"conv", cmd_conv, "time (and check) one convolution or a built-in layer suite"},
    {"gemv", cmd_gemv, "time a block-quantized GEMV (int8/int4 weights) against DRAM bandwidth"},
    {"info", cmd_info, "describe an ONNX model: inputs, outputs, ops, conv routes, memory"},
    {"run", cmd_run, "run an ONNX model on .npy inputs, write one .npy per output"},
    {"bench", cmd_bench, "time an ONNX model end to end (--per-layer for a per-node table)"},
    {"tune", cmd_tune, "time the CPU routes of a model's convs or of descriptors into the tuning cache"},
    {"devices", cmd_devices, "list the CPU and OpenCL devices, with fingerprints and measured limits"},
    {"quantize", cmd_quantize, "choose q4/q8/f32 per layer to a target accuracy, save standard ONNX (Python)"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: lowconv COMMAND [options]   (lowconv COMMAND --help for details)\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].about);
  fprintf(f, "\nlowconv %d.%d.%d\n", LOWCONV_VERSION_MAJOR, LOWCONV_VERSION_MINOR, LOWCONV_VERSION_PATCH);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("lowconv %d.%d.%d\n", LOWCONV_VERSION_MAJOR, LOWCONV_VERSION_MINOR, LOWCONV_VERSION_PATCH);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "lowconv: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
