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

#include <stddef.h>

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

/* Every number lbmc reads as text goes through the functions below: the whole text
 * must be the number (blanks around it allowed; no hexadecimal, nan or inf), and a
 * value that overflows, or a nonzero one that underflows (would be stored as 0 or
 * as a subnormal double with lost digits, e.g. 1e-400), is refused with
 * "<where>: '<text>' is not allowed; <the allowed magnitudes>". */

/** Parse a whole string as a real number; also accepts a fraction "a/b" (e.g. "1/3"),
 *  each part read whole (any length), the quotient checked like a number.
 *  Errors: LBMC_ERR_ARG "<where>: '<text>' is not a number", or out of range. */
lbmc_err lbmc_parse_real(const char *where, const char *text, double *v);
/** The same without a message: 1 if the whole of text is a real number or a fraction
 *  (then *v holds it), 0 if not. */
int lbmc_read_real(const char *text, double *v);
/** Parse a whole string as a (long) integer; integral reals such as 1e6 are accepted.
 *  Errors: LBMC_ERR_ARG "<where>: '<text>' is not an integer", or, for an integer
 *  beyond the range of long, "... is not allowed: it is far too large" (the caller's
 *  range check words the limit of a value in range). */
lbmc_err lbmc_parse_long(const char *where, const char *text, long *v);
/** lbmc_parse_long on the first len characters of text for a value whose limits the
 *  caller knows: an integer beyond the range of long is refused with "<where>: '<text>'
 *  is not allowed; <allowed> is required", e.g. allowed = "an integer from 1 to 10^12
 *  (servers)". */
lbmc_err lbmc_parse_long_allowed(const char *where, const char *text, size_t len,
                                 const char *allowed, long *v);
/** lbmc_parse_long on the first len characters of text (an integer inside a larger
 *  text, e.g. the d of "jsq(d)"); text need not be NUL-terminated after them. */
lbmc_err lbmc_parse_long_n(const char *where, const char *text, size_t len, long *v);
/** Quiet lbmc_parse_long_n, for callers that word their own message: 1 if the first
 *  len characters of text are an integer within the range of long, else 0. */
int lbmc_scan_long(const char *text, size_t len, long *v);
/** Parse a buffer: an integer >= 1 or "inf" (stored as LBMC_BUFFER_INF). */
lbmc_err lbmc_parse_buffer(const char *where, const char *text, long *v);
/** Parse a shard "I/K" (two whole integers, 1 <= I <= K) into *index and *count.
 *  Errors: LBMC_ERR_ARG "<where>: '<text>' is not allowed; write I/K ...". */
lbmc_err lbmc_parse_shard(const char *where, const char *text, long *index, long *count);

/** The word among words[0..n) closest to `word` (Levenshtein distance at most a third
 *  of its length, 1 to 3) if it looks like a typo of it, else NULL: for "did you mean"
 *  hints. */
const char *lbmc_suggest(const char *word, const char *const *words, int n);

#ifdef __cplusplus
}
#endif
#endif
