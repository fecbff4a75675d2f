/* Test-only LD_PRELOAD shim (tests/run/ranks.sh): every rank but rank 0 sleeps
 * LBMC_LATEWORKER_SECONDS (default 4) after the run's MPI_Gather of the ranks' hosts, the
 * last collective before the workers ask for units: a worker that starts late, as one
 * that gets no CPU on a loaded machine. Through MPI's profiling interface (PMPI_Gather). */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
  const char *text = getenv("LBMC_LATEWORKER_SECONDS");
  const double seconds = text ? atof(text) : 4.0;
  int rank = 0;
  const int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  MPI_Comm_rank(comm, &rank);
  if (rank != root && seconds > 0) {
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  return rc;
}
