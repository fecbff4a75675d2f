/* lbmc error codes, the error handler and the checking macros.
 *
 * Every fallible lbmc function returns an lbmc_err. The codes and their messages are
 * defined once, in LBMC_ERROR_LIST. The place where an error is detected raises it
 * with LBMC_ERROR(code, fmt, ...), which hands "<message>" to the error handler and
 * returns the code; callers propagate it with LBMC_CALL(call), which records the file
 * and line (printed as a traceback when the environment variable LBMC_TRACE is set).
 *
 * The handler (in the manner of GSL's gsl_set_error_handler and libCEED's
 * CeedSetErrorHandler) has two modes: LBMC_ERRORS_PRINT, the default, prints
 * "lbmc: error: <message>" to stderr where the error is raised (what the program
 * wants: one message, said once, at the place that knows the details);
 * LBMC_ERRORS_STORE prints nothing and keeps the message for lbmc_error_message (what
 * a library caller, or a probe that expects to fail, wants). In both modes the last
 * error's code and message can be read back.
 */
#ifndef LBMC_ERROR_H
#define LBMC_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(code name, exit status of the command-line program, message) */
#define LBMC_ERROR_LIST(X)                                                                         \
  X(LBMC_SUCCESS, 0, "success")                                                                    \
  X(LBMC_ERR_ARG, 2, "invalid input value")                                                        \
  X(LBMC_ERR_PARSE, 2, "input could not be parsed")                                                \
  X(LBMC_ERR_LIMIT, 2, "input exceeds a limit of the program")                                     \
  X(LBMC_ERR_MEMORY, 1, "out of memory")                                                           \
  X(LBMC_ERR_FILE, 1, "file could not be read or written")                                         \
  X(LBMC_ERR_RNG, 1, "random number generator failure")                                            \
  X(LBMC_ERR_MPI, 1, "MPI failure")                                                                \
  X(LBMC_ERR_HDF5, 1, "HDF5 failure")                                                              \
  X(LBMC_ERR_MISMATCH, 2, "files do not belong together")                                          \
  X(LBMC_ERR_INTERRUPTED, 3, "interrupted (resume with --resume)")                                 \
  X(LBMC_ERR_INTERNAL, 1, "internal error (a bug in lbmc; please report it)")

typedef enum {
#define LBMC_X_ENUM(name, status, msg) name,
  LBMC_ERROR_LIST(LBMC_X_ENUM)
#undef LBMC_X_ENUM
      LBMC_ERR_COUNT_
} lbmc_err;

/** Message of an error code (a static string, never NULL). */
const char *lbmc_strerror(lbmc_err code);

/** Exit status the command-line program uses for an error code: 2 for bad input
 *  (LBMC_ERR_ARG, LBMC_ERR_PARSE, LBMC_ERR_LIMIT), 1 for other failures, 0 for success. */
int lbmc_exit_status(lbmc_err code);

/** What the error handler does with a raised error's message. */
typedef enum {
  LBMC_ERRORS_PRINT, /* print "lbmc: error: <message>" to stderr, and keep it (default) */
  LBMC_ERRORS_STORE  /* keep it only: nothing is printed, tracebacks included */
} lbmc_error_mode;

/** Set the error handler's mode; returns the mode it replaces, so that a probe can
 *  restore it:
 *    lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
 *    err = lbmc_job_parse_text(...);
 *    lbmc_error_set_mode(was);
 *  The mode and the last error are process state, like GSL's error handler, kept per
 *  thread (_Thread_local) so that threads neither share nor race on them: errors are
 *  raised in functions that hold no context object they could be kept in. */
lbmc_error_mode lbmc_error_set_mode(lbmc_error_mode mode);

/** The message of the last error raised on this thread (without the "lbmc: error: "
 *  prefix; cut to 2047 bytes), "" if none was raised since the thread started or since
 *  lbmc_error_clear. The string is the handler's: valid until the next error. */
const char *lbmc_error_message(void);

/** The code of the last error raised on this thread (LBMC_SUCCESS if none). */
lbmc_err lbmc_error_last(void);

/** Forget the last error (lbmc_error_message gives "", lbmc_error_last LBMC_SUCCESS). */
void lbmc_error_clear(void);

/** Raise an error: hand the formatted message to the error handler (print mode: to
 *  stderr as "lbmc: error: <message>", with the location when LBMC_TRACE is set) and
 *  keep it as the last error; returns code. Used through LBMC_ERROR. Not collective. */
lbmc_err lbmc_error_raise(const char *file, int line, const char *func, lbmc_err code,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/** Record that an error passed through file:line (printed only with LBMC_TRACE set, in
 *  print mode); returns code. Used through LBMC_CALL. */
lbmc_err lbmc_error_trace(const char *file, int line, const char *func, lbmc_err code);

#define LBMC_ERROR(code, ...) lbmc_error_raise(__FILE__, __LINE__, __func__, (code), __VA_ARGS__)

#define LBMC_CALL(call)                                                                            \
  do {                                                                                             \
    lbmc_err lbmc_check_err_ = (call);                                                             \
    if (lbmc_check_err_ != LBMC_SUCCESS)                                                           \
      return lbmc_error_trace(__FILE__, __LINE__, __func__, lbmc_check_err_);                      \
  } while (0)

/* Like LBMC_CALL, but jumps to a cleanup label after storing the code in err. */
#define LBMC_CALL_GOTO(err, call, label)                                                           \
  do {                                                                                             \
    (err) = (call);                                                                                \
    if ((err) != LBMC_SUCCESS) {                                                                   \
      lbmc_error_trace(__FILE__, __LINE__, __func__, (err));                                       \
      goto label;                                                                                  \
    }                                                                                              \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
