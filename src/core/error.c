/* Error codes, their messages and exit statuses (LBMC_ERROR_LIST, include/lbmc/
 * error.h, defined once), and the error handler: a raised error's message printed to
 * stderr where it is detected (print mode) or only kept (store mode), the last error
 * kept for lbmc_error_message, a traceback with LBMC_TRACE set (print mode). */
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

/* The error handler's state: process state like GSL's handler, one per thread (see
 * lbmc_error_set_mode in lbmc/error.h). Zero-initialised: print mode, no error. */
static _Thread_local struct {
  lbmc_error_mode mode;
  lbmc_err code;
  char message[2048];
} lbmc_handler;

lbmc_error_mode lbmc_error_set_mode(lbmc_error_mode mode)
{
  const lbmc_error_mode was = lbmc_handler.mode;
  lbmc_handler.mode = mode;
  return was;
}

const char *lbmc_error_message(void) { return lbmc_handler.message; }

lbmc_err lbmc_error_last(void) { return lbmc_handler.code; }

void lbmc_error_clear(void)
{
  lbmc_handler.code = LBMC_SUCCESS;
  lbmc_handler.message[0] = '\0';
}

/* 1 if tracebacks are printed: LBMC_TRACE set (not "0") and the handler in print mode. */
static int lbmc_trace_on(void)
{
  const char *v = getenv("LBMC_TRACE");
  return lbmc_handler.mode == LBMC_ERRORS_PRINT && v && *v && *v != '0';
}

lbmc_err lbmc_error_raise(const char *file, int line, const char *func, lbmc_err code,
                          const char *fmt, ...)
{
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  vsnprintf(lbmc_handler.message, sizeof lbmc_handler.message, fmt, ap);
  lbmc_handler.code = code;
  if (lbmc_handler.mode == LBMC_ERRORS_PRINT) { /* whole, however long */
    fputs("lbmc: error: ", stderr);
    vfprintf(stderr, fmt, again);
    fputc('\n', stderr);
  }
  va_end(again);
  va_end(ap);
  if (lbmc_trace_on())
    fprintf(stderr, "  [%s] raised at %s:%d in %s()\n", lbmc_strerror(code), file, line, func);
  return code;
}

lbmc_err lbmc_error_trace(const char *file, int line, const char *func, lbmc_err code)
{
  if (lbmc_trace_on()) fprintf(stderr, "  passed through %s:%d in %s()\n", file, line, func);
  return code;
}
