#ifndef LC_ERROR_H
#define LC_ERROR_H

#include "lowconv.h"

/* Records a printf-style message for lc_last_error() and returns s. */
lc_status lc_error(lc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lc_clear_error(void);

#endif
