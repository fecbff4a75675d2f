/* The point module's ground floor (point_verdict.h): the verdict's reason clauses, an
 * estimate entry and the work space, shared by every part of the module. */
#include "point_verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reason longer than its buffer ends with this mark, so that a clause cut mid-word
 * (the heavy-tail one comes last and is long) is seen to be cut. */
static const char lbmc_reason_cut[] = "...";

void lbmc_point_reason(lbmc_verdict *v, const char *fmt, ...)
{
  const size_t size = sizeof v->reason;
  size_t used = strlen(v->reason);
  int len = 1;
  va_list ap;
  if (used + 1 >= size) return; /* full: cut and marked already */
  if (used) used += (size_t)snprintf(v->reason + used, size - used, "; ");
  if (used + 1 < size) {
    va_start(ap, fmt);
    len = vsnprintf(v->reason + used, size - used, fmt, ap);
    va_end(ap);
  }
  if (len < 0 || used + (size_t)len >= size)
    memcpy(v->reason + size - sizeof lbmc_reason_cut, lbmc_reason_cut, sizeof lbmc_reason_cut);
}

void lbmc_point_put(lbmc_estimates *est, size_t k, const lbmc_interval *iv)
{
  est->estimate[k] = iv->estimate;
  est->half_width[k] = iv->half_width;
  est->std_err[k] = iv->std_err;
  est->lower[k] = iv->lower;
  est->upper[k] = iv->upper;
  est->upper_bound[k] = iv->upper_bound;
  est->flags[k] = iv->flags;
}

lbmc_err lbmc_point_work(double **work, size_t *len, size_t n)
{
  if (n <= *len) return LBMC_SUCCESS;
  free(*work);
  *work = malloc(sizeof **work * n);
  *len = *work ? n : 0;
  return *work ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
}
