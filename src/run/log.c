/* lbmc_log: output of parallel runs, printed by rank 0 of a communicator only
 * (include/lbmc/log.h). In liblbmc, not lbmc_sim: it is the one logging call that
 * needs MPI. */
#include "lbmc/log.h"

#include <stdarg.h>

void lbmc_log(MPI_Comm comm, FILE *f, const char *fmt, ...)
{
  int rank = 0;
  va_list ap;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fflush(f);
}
