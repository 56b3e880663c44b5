/* Parser for oneDNN benchdnn's convolution problem descriptor ("mb1ic256ih80oc256kh9ph4").
 * Standalone (libc only) so the peer programs and tests can share the same meanings. */
#ifndef LC_TOOLS_BENCHDNN_H
#define LC_TOOLS_BENCHDNN_H

#include <stddef.h>
#include <stdint.h>

/* A 2-D convolution as benchdnn describes it. Dilations are in benchdnn's convention
 * (0 = dense); pad_b/pad_r are the bottom/right pads the parser resolved. */
typedef struct bd_conv {
  int64_t g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, pb, pr, dh, dw;
  int has_groups;
  char name[128];
} bd_conv;

/* Default minibatch. benchdnn uses 2; lowconv targets single-image inference. */
#define BD_DEFAULT_MB 1

/* Parses `str` into *out. Returns 0 on success, -1 on error with a message in err. */
int bd_parse(const char *str, bd_conv *out, char *err, size_t errlen);

/* Canonical short form, e.g. "g32mb1ic32ih112oc32oh112kh3ph1" (omits defaults like benchdnn). */
void bd_format(const bd_conv *c, char *buf, size_t len);

/* 2 * mb * oc * oh * ow * ic/g * kh * kw, as a double (no overflow). */
double bd_flops(const bd_conv *c);

#endif
