/* Error codes, their messages and exit statuses (LBMC_ERROR_LIST, include/lbmc/
 * error.h, defined once), and the raising and tracing of errors: a message to stderr
 * where an error is detected, a traceback with LBMC_TRACE set. */
#include "lbmc/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const lbmc_messages[] = {
#define LBMC_X_MSG(name, status, msg) msg,
    LBMC_ERROR_LIST(LBMC_X_MSG)
#undef LBMC_X_MSG
};

static const int lbmc_statuses[] = {
#define LBMC_X_STATUS(name, status, msg) status,
    LBMC_ERROR_LIST(LBMC_X_STATUS)
#undef LBMC_X_STATUS
};

const char *lbmc_strerror(lbmc_err code)
{
  if ((int)code < 0 || code >= LBMC_ERR_COUNT_) return "unknown error code";
  return lbmc_messages[code];
}

int lbmc_exit_status(lbmc_err code)
{
  if ((int)code < 0 || code >= LBMC_ERR_COUNT_) return 1;
  return lbmc_statuses[code];
}

static int lbmc_trace_on(void)
{
  const char *v = getenv("LBMC_TRACE");
  return v && *v && *v != '0';
}

lbmc_err lbmc_error_raise(const char *file, int line, const char *func, lbmc_err code,
                          const char *fmt, ...)
{
  va_list ap;
  fputs("lbmc: error: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (lbmc_trace_on())
    fprintf(stderr, "  [%s] raised at %s:%d in %s()\n", lbmc_strerror(code), file, line, func);
  return code;
}

lbmc_err lbmc_error_trace(const char *file, int line, const char *func, lbmc_err code)
{
  if (lbmc_trace_on()) fprintf(stderr, "  passed through %s:%d in %s()\n", file, line, func);
  return code;
}
