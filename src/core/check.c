/* Checks and parsing of single input values (include/lbmc/check.h): every setting of
 * the command line and of job files goes through these, so a value is judged, and its
 * message worded (key, value, what is allowed), the same way everywhere. */
#include "lbmc/check.h"

#include <ctype.h>
#include <errno.h>
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

static int lbmc_blank_tail(const char *end)
{
  while (*end && isspace((unsigned char)*end)) end++;
  return *end == '\0';
}

/* Quiet parse of a decimal real (no hexadecimal, nan or inf spellings); a value too
 * small to represent exactly (underflow) is accepted, an overflow is not. */
static int lbmc_strtod_whole(const char *text, double *v)
{
  char *end;
  if (strpbrk(text, "xXnNiI")) return 0;
  errno = 0;
  *v = strtod(text, &end);
  if (errno == ERANGE && isfinite(*v)) errno = 0;
  return end != text && errno == 0 && lbmc_blank_tail(end);
}

int lbmc_read_real(const char *text, double *v)
{
  const char *slash = text ? strchr(text, '/') : NULL;
  if (!text || !*text) return 0;
  if (slash) {
    char num[64];
    double a, b;
    size_t len = (size_t)(slash - text);
    if (len >= sizeof num) len = sizeof num - 1;
    memcpy(num, text, len);
    num[len] = '\0';
    if (lbmc_strtod_whole(num, &a) && lbmc_strtod_whole(slash + 1, &b) && b != 0) {
      *v = a / b;
      return 1;
    }
    return 0;
  }
  return lbmc_strtod_whole(text, v);
}

lbmc_err lbmc_parse_real(const char *where, const char *text, double *v)
{
  if (!text || !*text) return LBMC_ERROR(LBMC_ERR_ARG, "%s: an empty value is not a number", where);
  if (lbmc_read_real(text, v)) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a number (write e.g. 0.5, 2e-3 or 1/3)", where,
                    text);
}

/* Quiet integer parse: also accepts integral reals such as 1e6. */
static int lbmc_strtol_whole(const char *text, long *v)
{
  char *end;
  double d;
  if (!text || !*text) return 0;
  errno = 0;
  *v = strtol(text, &end, 10);
  if (end != text && errno == 0 && lbmc_blank_tail(end)) return 1;
  if (lbmc_strtod_whole(text, &d) && d == floor(d) && fabs(d) < 9.0e18) {
    *v = (long)d;
    return 1;
  }
  return 0;
}

lbmc_err lbmc_parse_long(const char *where, const char *text, long *v)
{
  if (!lbmc_strtol_whole(text, v))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not an integer", where, text ? text : "");
  return LBMC_SUCCESS;
}

lbmc_err lbmc_parse_buffer(const char *where, const char *text, long *v)
{
  if (text && (strcasecmp(text, "inf") == 0 || strcasecmp(text, "infinity") == 0)) {
    *v = LBMC_BUFFER_INF;
    return LBMC_SUCCESS;
  }
  if (!lbmc_strtol_whole(text, v))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a buffer; write an integer >= 1 or 'inf'",
                      where, text ? text : "");
  if (*v < 1) /* -1 is the internal code of 'inf', not a value to write */
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %ld is not allowed; a buffer is an integer >= 1 (customers per server, "
                      "the one in service included) or 'inf'",
                      where, *v);
  return LBMC_SUCCESS;
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
