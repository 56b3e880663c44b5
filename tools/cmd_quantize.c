/* `lowconv quantize`: the accuracy-aware quantizer lives in the Python package (python/lowconv/
 * quantizer.py: it evaluates the model many times with onnxruntime and numpy), so this command
 * runs it with the same arguments: $LOWCONV_PYTHON, else python3, `-m lowconv quantize ...`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

int cmd_quantize(int argc, char **argv) {
  const char *py = getenv("LOWCONV_PYTHON");
  if (!py || !py[0]) py = "python3";
  if (argc > 4096) {
    fprintf(stderr, "lowconv quantize: too many arguments\n");
    return 2;
  }
  char **av = calloc((size_t)argc + 4, sizeof *av);
  if (!av) {
    fprintf(stderr, "lowconv quantize: out of memory\n");
    return 1;
  }
  av[0] = (char *)py;
  av[1] = "-m";
  av[2] = "lowconv";
  av[3] = "quantize";
  for (int i = 1; i < argc; i++) av[3 + i] = argv[i];
  fflush(NULL);
  execvp(py, av);
  fprintf(stderr, "lowconv quantize: cannot run %s (%s); it needs Python with the lowconv package "
          "(pip install . from the source tree; set LOWCONV_PYTHON to pick the interpreter)\n", py, strerror(errno));
  free(av);
  return 2;
}
