/* Minimal JSON writers for the CLI's machine-readable output. */
#ifndef LC_TOOLS_JSON_H
#define LC_TOOLS_JSON_H

#include <stdio.h>

/* Writes s as a quoted JSON string (null for NULL). */
void json_string(FILE *f, const char *s);
/* Writes x with enough digits to round-trip; non-finite values become null. */
void json_number(FILE *f, double x);

#endif
