/* Output of parallel runs: only rank 0 of a communicator prints. Every message of
 * `lbmc run` (progress, tables, warnings) goes through lbmc_log. */
#ifndef LBMC_LOG_H
#define LBMC_LOG_H

#include <mpi.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** printf to `f` on rank 0 of comm (MPI_COMM_NULL: always print); other ranks do
 *  nothing. Not collective. */
void lbmc_log(MPI_Comm comm, FILE *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
