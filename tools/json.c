#include "json.h"

#include <math.h>

void json_string(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

void json_number(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.9g", x);
  else
    fputs("null", f);
}
