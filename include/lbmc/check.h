/* Checks of single input values, shared by the model, the command line and job files
 * so that a value is judged the same way wherever it comes from.
 *
 * `where` names the value as the user wrote it ("--lambda", "jobs/x.yaml:12: lambda");
 * on failure the message reads "<where>: <value> is not allowed; <what is allowed>"
 * and the function returns LBMC_ERR_ARG (printed once, through LBMC_ERROR).
 * Not collective.
 */
#ifndef LBMC_CHECK_H
#define LBMC_CHECK_H

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** v must be finite and > 0. */
lbmc_err lbmc_check_positive(const char *where, double v);
/** v must be finite and >= 0. */
lbmc_err lbmc_check_nonnegative(const char *where, double v);
/** lo <= v <= hi for an integer. */
lbmc_err lbmc_check_int_range(const char *where, long v, long lo, long hi);
/** 0 < v < 1 (a probability or a confidence level). */
lbmc_err lbmc_check_open_unit(const char *where, double v);
/** A pool fraction beta in (0, 1]. */
lbmc_err lbmc_check_beta(const char *where, double v);
/** A buffer: >= 1, or LBMC_BUFFER_INF. */
lbmc_err lbmc_check_buffer(const char *where, long v);

/** Parse a whole string as a real number; also accepts a fraction "a/b" (e.g. "1/3").
 *  Errors: LBMC_ERR_ARG "<where>: '<text>' is not a number". */
lbmc_err lbmc_parse_real(const char *where, const char *text, double *v);
/** The same without a message: 1 if the whole of text is a real number or a fraction
 *  (then *v holds it), 0 if not. */
int lbmc_read_real(const char *text, double *v);
/** Parse a whole string as a (long) integer. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_parse_long(const char *where, const char *text, long *v);
/** Parse a buffer: an integer >= 1 or "inf" (stored as LBMC_BUFFER_INF). */
lbmc_err lbmc_parse_buffer(const char *where, const char *text, long *v);

/** The word among words[0..n) closest to `word` (Levenshtein distance at most a third
 *  of its length, 1 to 3) if it looks like a typo of it, else NULL: for "did you mean"
 *  hints. */
const char *lbmc_suggest(const char *word, const char *const *words, int n);

#ifdef __cplusplus
}
#endif
#endif
