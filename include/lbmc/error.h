/* lbmc error codes and the checking macros.
 *
 * Every fallible lbmc function returns an lbmc_err. The codes and their messages are
 * defined once, in LBMC_ERROR_LIST. The place where an error is detected raises it
 * with LBMC_ERROR(code, fmt, ...), which prints "lbmc: error: <message>" to stderr and
 * returns the code; callers propagate it with LBMC_CALL(call), which records the file
 * and line (printed as a traceback when the environment variable LBMC_TRACE is set).
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

/** Raise an error: print "lbmc: error: <formatted message>" (and, with LBMC_TRACE set,
 *  the location) to stderr; returns code. Used through LBMC_ERROR. Not collective. */
lbmc_err lbmc_error_raise(const char *file, int line, const char *func, lbmc_err code,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/** Record that an error passed through file:line (printed only with LBMC_TRACE set);
 *  returns code. Used through LBMC_CALL. */
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
