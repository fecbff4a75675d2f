/* The experiment runner: a job's work units (grid point, replica) on MPI ranks, the
 * reduction to confidence intervals, checkpoints and the HDF5 results file
 * (docs/results-format.md). */
#ifndef LBMC_RUNNER_H
#define LBMC_RUNNER_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>

#include "lbmc/error.h"
#include "lbmc/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds (at least; --stall if longer) that rank 0 waits at the end of a run for a rank
 *  presumed frozen to answer (a rank continued after SIGSTOP finishes its unit first)
 *  before it ends the MPI job without it. */
#define LBMC_STALL_END_GRACE 10.0
/** Default of lbmc_run_settings.stall_seconds. */
#define LBMC_STALL_SECONDS 60.0
/** A rank is presumed frozen when it holds a unit and has sent nothing since its last
 *  heartbeat (every 2 s while it simulates) for longer than stall_seconds; before its
 *  first heartbeat of the unit, for longer than the larger of stall_seconds and this many
 *  times the unit's expected time. */
#define LBMC_STALL_FACTOR 10.0

/** Seconds between two progress lines of lbmc run unless --progress gives them. */
#define LBMC_PROGRESS_SECONDS 10.0

typedef struct {
  const char *output;      /* results file; its checkpoint is output + ".ckpt" */
  int resume;              /* continue from the checkpoint */
  int dry_run;             /* print the grid, the units and a cost estimate; run nothing */
  int quiet;               /* no progress on stderr */
  int no_progress;         /* no progress lines (--progress never); other notes stay */
  double progress_seconds; /* at most one progress line per this many seconds
                              (LBMC_PROGRESS_SECONDS unless given) */
  double stall_seconds;    /* a rank silent this long (no result, no heartbeat) is
                              presumed frozen (LBMC_STALL_FACTOR); 0: LBMC_STALL_SECONDS */
  long shard_index;        /* 1..shard_count; 0 = the whole job */
  long shard_count;
  volatile sig_atomic_t *stop; /* set (e.g. by a signal handler) to stop early; may be NULL */
} lbmc_run_settings;

/** Check an output path before anything is computed: not empty, not "-" (HDF5 cannot
 *  write to standard output), its directory exists and is writable, and if it exists it
 *  is a regular file, none of the `ninputs` input paths (the job file, the parts of a
 *  merge), and an HDF5 file or lbmc checkpoint (or empty): lbmc replaces only what it
 *  wrote. Not collective.
 *  Errors: LBMC_ERR_ARG naming the path and what is wrong. */
lbmc_err lbmc_check_output_path(const char *path, const char *const *inputs, int ninputs);

/** Points of shard i of k (1 <= i <= k): the job's points dealt to k shards by
 *  decreasing cost (n x time), each to the shard with the least cost so far (ties:
 *  the lower shard); deterministic. *points (caller frees) lists the grid indices in
 *  increasing order, *count of them. Errors: LBMC_ERR_ARG (bad i/k), LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_shard_points(const lbmc_job *job, long i, long k, long **points, long *count);

/** The shard's label as the results file stores it (attribute `shard`, "I/K"), or ""
 *  for the whole job, into buf (size bytes; 24 hold any); returns buf. Not collective. */
const char *lbmc_run_shard_label(const lbmc_run_settings *set, char *buf, size_t size);

/** Run the job (or its shard) on the ranks of comm: collective. Rank 0 schedules and
 *  also simulates; every rank simulates the units rank 0 hands out. Rank 0 appends
 *  each finished replica to the checkpoint, writes the results file atomically at the
 *  end (or, when stopped, with the finished points only and attribute complete = 0),
 *  and removes the checkpoint after a complete run. Returns the same code on every
 *  rank. Errors: LBMC_ERR_INTERRUPTED (stopped; resume with resume = 1), LBMC_ERR_FILE,
 *  LBMC_ERR_HDF5, LBMC_ERR_MISMATCH (checkpoint of another job), LBMC_ERR_MEMORY,
 *  LBMC_ERR_MPI. */
lbmc_err lbmc_run_job(const lbmc_job *job, const lbmc_run_settings *settings, MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
