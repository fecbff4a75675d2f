/* Checks of single input values (include/lbmc/check.h) and the one reader of numbers
 * written as text (command line, job files, --pools, --service, --shard): every setting
 * goes through these, so a value is judged, and its message worded (key, value, what is
 * allowed; whole text, overflow and underflow), the same way everywhere. */
#include "lbmc/check.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lbmc/types.h"

lbmc_err lbmc_check_positive(const char *where, double v)
{
  if (!isfinite(v) || v <= 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %g is not allowed; a positive finite number is required",
                      where, v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_check_nonnegative(const char *where, double v)
{
  if (!isfinite(v) || v < 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %g is not allowed; a finite number >= 0 is required",
                      where, v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_check_int_range(const char *where, long v, long lo, long hi)
{
  if (v < lo || v > hi)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %ld is not allowed; an integer from %ld to %ld is required", where, v,
                      lo, hi);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_check_open_unit(const char *where, double v)
{
  if (!(v > 0 && v < 1))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %g is not allowed; a number strictly between 0 and 1 is required", where,
                      v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_check_beta(const char *where, double v)
{
  if (!(v > 0 && v <= 1))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %g is not allowed; a pool fraction beta must be > 0 and <= 1", where, v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_check_buffer(const char *where, long v)
{
  if (v != LBMC_BUFFER_INF && v < 1)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %ld is not allowed; a buffer is an integer >= 1 (customers per server, "
                      "the one in service included) or 'inf'",
                      where, v);
  return LBMC_SUCCESS;
}

/* ---- reading numbers: one reader for every number lbmc takes as text ----
 *
 * lbmc_read_span reads the decimal real number that fills the span [s, s + len)
 * (blanks around it allowed): no hexadecimal, nan or inf spellings, no text left
 * over, no overflow and no underflow (a nonzero value that would be stored as 0 or
 * as a subnormal number, i.e. with fewer digits than written). */

typedef enum { LBMC_NUM_OK, LBMC_NUM_SYNTAX, LBMC_NUM_OVERFLOW, LBMC_NUM_UNDERFLOW } lbmc_num;

static int lbmc_only_blanks(const char *s, const char *end)
{
  while (s < end && isspace((unsigned char)*s)) s++;
  return s == end;
}

/* 1 if x is a subnormal or zero result of a nonzero number (underflow). */
static int lbmc_underflows(double x) { return fabs(x) < DBL_MIN; }

static lbmc_num lbmc_read_span(const char *s, size_t len, double *v)
{
  char small[64], *copy = small, *end;
  lbmc_num r = LBMC_NUM_SYNTAX;
  if (len >= sizeof small && !(copy = malloc(len + 1))) return LBMC_NUM_SYNTAX;
  memcpy(copy, s, len);
  copy[len] = '\0';
  if (!strpbrk(copy, "xXnNiI")) {
    errno = 0;
    *v = strtod(copy, &end);
    if (end != copy && lbmc_only_blanks(end, copy + len)) {
      if (!isfinite(*v))
        r = LBMC_NUM_OVERFLOW;
      else if (*v != 0 ? lbmc_underflows(*v) : errno == ERANGE)
        r = LBMC_NUM_UNDERFLOW;
      else
        r = LBMC_NUM_OK;
    }
  }
  if (copy != small) free(copy);
  return r;
}

/* A real number or a fraction "a/b", each part read whole. */
static lbmc_num lbmc_read_number(const char *text, double *v)
{
  const char *slash = strchr(text, '/');
  double a, b;
  lbmc_num r;
  if (!slash) return lbmc_read_span(text, strlen(text), v);
  if ((r = lbmc_read_span(text, (size_t)(slash - text), &a)) != LBMC_NUM_OK) return r;
  if ((r = lbmc_read_span(slash + 1, strlen(slash + 1), &b)) != LBMC_NUM_OK) return r;
  if (b == 0) return LBMC_NUM_SYNTAX;
  *v = a / b;
  if (!isfinite(*v)) return LBMC_NUM_OVERFLOW;
  if (a != 0 && lbmc_underflows(*v)) return LBMC_NUM_UNDERFLOW;
  return LBMC_NUM_OK;
}

/* The message of a number that is out of the range of doubles. */
static lbmc_err lbmc_range_error(const char *where, const char *text, lbmc_num r)
{
  if (r == LBMC_NUM_OVERFLOW)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; a number of magnitude at most %.4g is required "
                      "(this one overflows)",
                      where, text, DBL_MAX);
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: '%s' is not allowed; a number is 0 or of magnitude at least %.4g "
                    "(this one underflows: it would be read as 0 or with lost digits)",
                    where, text, DBL_MIN);
}

int lbmc_read_real(const char *text, double *v)
{
  return text && *text && lbmc_read_number(text, v) == LBMC_NUM_OK;
}

lbmc_err lbmc_parse_real(const char *where, const char *text, double *v)
{
  lbmc_num r;
  if (!text || !*text) return LBMC_ERROR(LBMC_ERR_ARG, "%s: an empty value is not a number", where);
  r = lbmc_read_number(text, v);
  if (r == LBMC_NUM_OK) return LBMC_SUCCESS;
  if (r != LBMC_NUM_SYNTAX) return lbmc_range_error(where, text, r);
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a number (write e.g. 0.5, 2e-3 or 1/3)", where,
                    text);
}

/* An integer filling the span [s, s + len): decimal digits, or an integral real such as
 * 1e6. Out of the range of long: LBMC_NUM_OVERFLOW. */
static lbmc_num lbmc_read_long_span(const char *s, size_t len, long *v)
{
  char small[64], *copy = small, *end;
  double d;
  lbmc_num r = LBMC_NUM_SYNTAX;
  if (len >= sizeof small && !(copy = malloc(len + 1))) return LBMC_NUM_SYNTAX;
  memcpy(copy, s, len);
  copy[len] = '\0';
  errno = 0;
  *v = strtol(copy, &end, 10);
  if (end != copy && lbmc_only_blanks(end, copy + len))
    r = errno == ERANGE ? LBMC_NUM_OVERFLOW : LBMC_NUM_OK;
  else if ((r = lbmc_read_span(copy, len, &d)) == LBMC_NUM_OK) {
    /* 2^63: the first double beyond a 64-bit long */
    if (d != floor(d))
      r = LBMC_NUM_SYNTAX;
    else if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
      r = LBMC_NUM_OVERFLOW;
    else
      *v = (long)d;
  } else if (r == LBMC_NUM_UNDERFLOW) {
    r = LBMC_NUM_SYNTAX; /* 1e-400 is not an integer */
  }
  if (copy != small) free(copy);
  return r;
}

/* An integer that cannot be read: not one (what: "an integer"), or beyond the range of
 * long, worded with what the value allows (`allowed`, e.g. "an integer from 1 to 10^12";
 * NULL: the setting's own check gives its range, so only say it is too large). */
static lbmc_err lbmc_long_error(const char *where, const char *text, size_t len, lbmc_num r,
                                const char *what, const char *allowed)
{
  if (r == LBMC_NUM_OVERFLOW && allowed)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%.*s' is not allowed; %s is required", where, (int)len,
                      text, allowed);
  if (r == LBMC_NUM_OVERFLOW)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%.*s' is not allowed: it is far too large", where,
                      (int)len, text);
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%.*s' is not %s", where, (int)len, text, what);
}

lbmc_err lbmc_parse_long(const char *where, const char *text, long *v)
{
  return lbmc_parse_long_n(where, text ? text : "", text ? strlen(text) : 0, v);
}

lbmc_err lbmc_parse_long_allowed(const char *where, const char *text, size_t len,
                                 const char *allowed, long *v)
{
  lbmc_num r = lbmc_read_long_span(text, len, v);
  return r == LBMC_NUM_OK ? LBMC_SUCCESS
                          : lbmc_long_error(where, text, len, r, "an integer", allowed);
}

lbmc_err lbmc_parse_long_n(const char *where, const char *text, size_t len, long *v)
{
  lbmc_num r = lbmc_read_long_span(text, len, v);
  return r == LBMC_NUM_OK ? LBMC_SUCCESS : lbmc_long_error(where, text, len, r, "an integer", NULL);
}

int lbmc_scan_long(const char *text, size_t len, long *v)
{
  return lbmc_read_long_span(text, len, v) == LBMC_NUM_OK;
}

lbmc_err lbmc_parse_buffer(const char *where, const char *text, long *v)
{
  lbmc_num r;
  if (text && (strcasecmp(text, "inf") == 0 || strcasecmp(text, "infinity") == 0)) {
    *v = LBMC_BUFFER_INF;
    return LBMC_SUCCESS;
  }
  if (!text) text = "";
  r = lbmc_read_long_span(text, strlen(text), v);
  if (r != LBMC_NUM_OK)
    return lbmc_long_error(where, text, strlen(text), r, "a buffer; write an integer >= 1 or 'inf'",
                           "an integer >= 1 (customers per server, the one in service included) "
                           "or 'inf'");
  if (*v < 1) /* -1 is the internal code of 'inf', not a value to write */
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %ld is not allowed; a buffer is an integer >= 1 (customers per server, "
                      "the one in service included) or 'inf'",
                      where, *v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_parse_shard(const char *where, const char *text, long *index, long *count)
{
  const char *slash = text ? strchr(text, '/') : NULL;
  if (slash && lbmc_read_long_span(text, (size_t)(slash - text), index) == LBMC_NUM_OK &&
      lbmc_read_long_span(slash + 1, strlen(slash + 1), count) == LBMC_NUM_OK && *count >= 1 &&
      *index >= 1 && *index <= *count)
    return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; write I/K with 1 <= I <= K, e.g. 2/16",
                    where, text ? text : "");
}

/* Levenshtein distance of two short words (longer words are cut at 63 characters). */
static int lbmc_distance(const char *a, const char *b)
{
  int row[64], la = (int)strnlen(a, 63), lb = (int)strnlen(b, 63);
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb];
}

const char *lbmc_suggest(const char *word, const char *const *words, int n)
{
  const char *best = NULL;
  int best_d = 1000;
  for (int i = 0; i < n; i++) {
    int d = lbmc_distance(word, words[i]), limit = (int)strlen(words[i]) / 3;
    if (limit < 1) limit = 1;
    if (limit > 3) limit = 3;
    if (d <= limit && d < best_d) {
      best = words[i];
      best_d = d;
    }
  }
  return best;
}
