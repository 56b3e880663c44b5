#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

/* Per-thread so concurrent operators don't overwrite each other's message. */
static _Thread_local char lc_err_msg[512];

lc_status lc_error(lc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lc_err_msg, sizeof lc_err_msg, fmt, ap);
  va_end(ap);
  return s;
}

void lc_clear_error(void) { lc_err_msg[0] = '\0'; }

const char *lc_last_error(void) { return lc_err_msg; }

const char *lc_status_name(lc_status s) {
  switch (s) {
    case LC_OK: return "ok";
    case LC_ERR_INVALID_ARG: return "invalid argument";
    case LC_ERR_OVERFLOW: return "size overflow";
    case LC_ERR_UNSUPPORTED: return "unsupported";
    case LC_ERR_BUDGET: return "workspace budget exceeded";
    case LC_ERR_NO_MEMORY: return "out of memory";
    case LC_ERR_STATE: return "bad call order";
    case LC_ERR_IO: return "I/O or format error";
    case LC_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}
