/* The point module's ground floor (point_verdict.h): the verdict's reason clauses, an
 * estimate entry and the work space, shared by every part of the module. */
#include "point_verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lbmc_point_reason(lbmc_verdict *v, const char *fmt, ...)
{
  size_t used = strlen(v->reason);
  va_list ap;
  if (used + 2 >= sizeof v->reason) return;
  if (used) used += (size_t)snprintf(v->reason + used, sizeof v->reason - used, "; ");
  va_start(ap, fmt);
  vsnprintf(v->reason + used, sizeof v->reason - used, fmt, ap);
  va_end(ap);
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
