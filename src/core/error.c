/* Error codes, their messages and exit statuses (LBMC_ERROR_LIST, include/lbmc/
 * error.h, defined once), and the error handler: a raised error's message printed to
 * stderr where it is detected (print mode) or only kept (store mode), the last error
 * kept for lbmc_error_message, a traceback with LBMC_TRACE set (print mode). */
#include "lbmc/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A message into out (LBMC_MESSAGE_MAX + 512 bytes) with every quoted value ('...': a
 * quote not after a letter or digit, so the apostrophe of "job's" opens none) longer than
 * LBMC_QUOTE_MAX characters cut to its start and its length, and the rest of a message
 * beyond LBMC_MESSAGE_MAX cut but its end: a value of 100 kB from a job file is named,
 * not echoed. */
#define LBMC_QUOTE_MAX   160
#define LBMC_MESSAGE_MAX 4000
static void lbmc_error_cut(const char *msg, char out[LBMC_MESSAGE_MAX + 512])
{
  const size_t size = LBMC_MESSAGE_MAX + 512;
  size_t used = 0;
  const char *p = msg;
  while (*p && used < LBMC_MESSAGE_MAX) {
    const int opens = *p == '\'' && (p == msg || !isalnum((unsigned char)p[-1]));
    const char *close = opens ? strchr(p + 1, '\'') : NULL;
    if (close && (size_t)(close - p - 1) > LBMC_QUOTE_MAX) {
      used += (size_t)snprintf(out + used, size - used, "'%.100s...' (%zu characters, cut)", p + 1,
                               (size_t)(close - p - 1));
      p = close + 1;
    } else {
      out[used++] = *p++;
    }
  }
  out[used] = '\0';
  if (*p) {
    const size_t rest = strlen(p);
    snprintf(out + used, size - used, " [... %zu characters cut ...] %s", rest,
             rest > 200 ? p + rest - 200 : p);
  }
}

lbmc_err lbmc_error_raise(const char *file, int line, const char *func, lbmc_err code,
                          const char *fmt, ...)
{
  va_list ap, again;
  char small[1024], *msg = small, cut[LBMC_MESSAGE_MAX + 512];
  int n;
  va_start(ap, fmt);
  va_copy(again, ap);
  n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
    vsnprintf(msg, (size_t)n + 1, fmt, again);
  if (!msg) msg = small; /* out of memory: the start of it */
  va_end(again);
  va_end(ap);
  lbmc_error_cut(msg, cut);
  if (msg != small) free(msg);
  snprintf(lbmc_handler.message, sizeof lbmc_handler.message, "%s", cut);
  lbmc_handler.code = code;
  if (lbmc_handler.mode == LBMC_ERRORS_PRINT) fprintf(stderr, "lbmc: error: %s\n", cut);
  if (lbmc_trace_on())
    fprintf(stderr, "  [%s] raised at %s:%d in %s()\n", lbmc_strerror(code), file, line, func);
  return code;
}

lbmc_err lbmc_error_trace(const char *file, int line, const char *func, lbmc_err code)
{
  if (lbmc_trace_on()) fprintf(stderr, "  passed through %s:%d in %s()\n", file, line, func);
  return code;
}
