/* Built-in layer lists for `lowconv conv --suite NAME`: each distinct conv shape of a network once,
 * as a benchdnn descriptor, with how often it occurs there. */
#ifndef LC_TOOLS_SUITES_H
#define LC_TOOLS_SUITES_H

typedef struct suite_layer {
  const char *desc;
  int count;
} suite_layer;

typedef struct suite {
  const char *name;
  const char *about;
  const suite_layer *layers;
  int n;
} suite;

/* NULL if unknown. */
const suite *suite_find(const char *name);
/* i-th suite, NULL past the end. */
const suite *suite_at(int i);

#endif
