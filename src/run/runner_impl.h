/* Private: state of a run shared by the rank-0 loop (runner_root.c), the worker loop
 * (runner_worker.c), their messages (runner_msg.c), the pace and liveness of the workers
 * (runner_pace.c), the set-up and the settling of records (run_setup.c) and the run's
 * entry (runner.c). */
#ifndef LBMC_RUNNER_IMPL_H
#define LBMC_RUNNER_IMPL_H

#include "../io/checkpoint.h"
#include "../io/results.h"
#include "lbmc/point.h"
#include "lbmc/runner.h"
#include "pace.h"
#include "schedule.h"

/* Messages: a worker sends its finished replicas (LBMC_TAG_RESULT, runner_msg.c: for each, its size
 * in bytes as an int64 and the bytes of its replica record, src/sim/record.h, padded to a multiple
 * of 8; after the records of a whole point it reduced, minus the size of the reduced point and its
 * bytes, lbmc_whole_head then lbmc_results_pack_point's, padded) or, without one, a control code
 * (LBMC_TAG_CONTROL, one int); either asks for the next units, which rank 0 sends (LBMC_TAG_WORK: 1
 * to LBMC_BATCH_MAX units, each point, replica, doubling and `whole` as LBMC_UNIT_LONGS longs;
 * point -1 = stop; whole = R > 0 on the last unit of a point's first round whose R replicas are all
 * in the batch: the worker reduces the point). LBMC_TAG_ABORT tells workers to abandon their
 * replicas. */
enum {
  LBMC_TAG_RESULT = 71,
  LBMC_TAG_WORK = 72,
  LBMC_TAG_ABORT = 73,
  LBMC_TAG_CONTROL = 74,
  LBMC_TAG_BEAT = 75 /* a worker's heartbeat (one long: the number of work messages it has
                        received) while it simulates, every LBMC_BEAT_SECONDS of wall time */
};

/* A worker that holds units sends a heartbeat every this many seconds of wall time
 * (at most a quarter of --stall), from the engine's polling of its stop flag: rank 0 then
 * counts a worker's silence from its last heartbeat, so that a rank slowed down (a loaded
 * machine) is not taken for a frozen one (stopped, swapped out, a hung node), which sends
 * none. */
#define LBMC_BEAT_SECONDS 2.0

/* Control codes of LBMC_TAG_CONTROL. */
enum {
  LBMC_CTL_READY = 0,    /* no result (first request, or a replica abandoned): send work */
  LBMC_CTL_SIGNALLED = 1 /* this rank got SIGINT/SIGTERM/SIGUSR1: stop the run */
};

/* Units handed out in one message at most, and the expected wall time of a batch (a
 * batch closes once its units are expected to take this long): small units travel
 * together, so that a worker does not wait for rank 0 between every two of them; a batch
 * of long units is one unit. */
#define LBMC_BATCH_UNITS   16
#define LBMC_BATCH_SECONDS 0.05
/* A batch that has the first replicas of a point's first round goes on past
 * LBMC_BATCH_UNITS, up to this many units, to hold the whole round (the worker then
 * reduces the point, and rank 0 only stores it). */
#define LBMC_BATCH_MAX  32
#define LBMC_UNIT_LONGS 4

/* The head of a point reduced by a worker in a result message. */
typedef struct {
  int64_t point;    /* grid index */
  int64_t replicas; /* of its first round, all in the message before it */
  char why[256];    /* sequential mode's line about the point ("" for none) */
} lbmc_whole_head;

/* Rank 0's view of a worker: the units it holds and since when, where it runs. */
typedef struct {
  long unit[LBMC_BATCH_MAX][LBMC_UNIT_LONGS];  /* local point, replica, doubling, whole of
                                                  each unit it holds */
  int nunits;                                  /* 0: holds nothing */
  long sent[LBMC_UNIT_LONGS * LBMC_BATCH_MAX]; /* the last work message to it, */
  MPI_Request sreq;                            /* sent without waiting (MPI_REQUEST_NULL: none) */
  int lost;        /* presumed frozen: silent too long, its unit re-issued */
  int asked;       /* its last message asks for work, not answered yet (parked) */
  int released;    /* told to stop */
  double t_issued; /* MPI_Wtime when the unit was sent */
  double t_heard;  /* MPI_Wtime of its last message (the start of the run before) */
  double t_beat;   /* MPI_Wtime of its last heartbeat during the units it holds (0: none) */
  long batches;    /* work messages sent to it (heartbeats of an earlier one are stale) */
  long pid;        /* process id on its host */
  char host[64];   /* MPI_Get_processor_name, cut */
} lbmc_worker;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const lbmc_job *job;
  const lbmc_run_settings *set;
  long P;       /* points of this run (the shard) */
  long *grid;   /* P: grid index of each local point, increasing */
  double *cost; /* P: cost of one replica, n x simulated time */
  long Rmax, first_round;
  size_t total;
  const void *msg; /* this rank's last replica record (owned by rep), msg_size bytes */
  size_t msg_size;
  unsigned char *out; /* a worker's result message (its batch's records), out_size bytes */
  size_t out_size, out_cap;
  long batches;         /* a worker: work messages received */
  double beat_every;    /* a worker: seconds between heartbeats */
  double beat_last;     /* a worker: MPI_Wtime of its last heartbeat or work message */
  long beat_msg;        /* a worker: the heartbeat in flight, */
  MPI_Request beat_req; /* sent without waiting (MPI_REQUEST_NULL: none) */

  /* worker side: the model and workspace of the last point simulated */
  long cached;
  lbmc_model *model;
  lbmc_run_options opts;
  lbmc_replica *rep;
  lbmc_results *wres;  /* a whole point's reduction as lbmc_results_store leaves it */
  unsigned char *wbuf; /* its bytes (lbmc_results_pack_point), wbuf_cap bytes */
  size_t wbuf_cap;
  long reduced; /* points reduced by this rank for rank 0 (worker) or received
                   reduced (rank 0) */

  /* rank 0 */
  lbmc_results *res;
  lbmc_schedule *sched;
  lbmc_checkpoint *ck;
  lbmc_point **acc;       /* P: the replicas of unfinished points (NULL until the first) */
  lbmc_model **acc_model; /* P: their models */
  unsigned char *rmsg;    /* receive buffer, rmsg_cap bytes (8-byte aligned) */
  size_t rmsg_cap;
  int *waiting; /* ranks waiting for work */
  int nwaiting, released, stopping;
  double t0, t_progress;
  long units_run;
  lbmc_worker *workers; /* size: rank 0's view of every rank (index 0 unused) */
  int nlost;            /* workers presumed frozen */
  lbmc_pace_fit pace;   /* the wall seconds of the batches finished, all ranks, against their
                           units and cost (n x time x 2^doubling): pace.h */
  double own_t0;        /* rank 0: when its current own unit started */
  double t_synced;      /* rank 0: MPI_Wtime of the checkpoint's last fsync */
} lbmc_runner;

/** Set up: points of the shard, costs, buffers; on rank 0 the results, the schedule
 *  and the checkpoint (replayed with settings->resume). Not collective. */
lbmc_err lbmc_runner_setup(lbmc_runner *run);
/** Free everything. */
void lbmc_runner_teardown(lbmc_runner *run);
/** Rank 0: print the grid, the work units and a cost estimate. */
void lbmc_runner_dry_run(const lbmc_runner *run);
/** The flags that resume this run: "--resume", with " --shard I/K" for a shard (a resume
 *  without it would run the whole job into the shard's file); into buf, which it returns. */
const char *lbmc_runner_resume_flags(const lbmc_run_settings *set, char *buf, size_t size);
/** Rank 0: the local index of grid point `grid_index`, or -1 if this run (shard) does
 *  not have it. */
long lbmc_runner_local(const lbmc_runner *run, long grid_index);
/** Rank 0: add a finished replica record (size bytes) to its point, and settle the point
 *  when its round is complete (reduction, the decision of sequential mode, storing a
 *  finished point). A live record (live = 1) also goes to the checkpoint; a replayed one
 *  (0) comes from it. Errors: LBMC_ERR_FILE, LBMC_ERR_MEMORY, LBMC_ERR_INTERNAL (not a
 *  record of this run; LBMC_ERR_MISMATCH when replayed). */
lbmc_err lbmc_runner_record(lbmc_runner *run, const void *record, size_t size, int live);
/** Rank 0: a point a worker reduced (size bytes at `whole`: lbmc_whole_head, then the
 *  packed reduction) whose records are among the `count` records rec[] of the same
 *  message: stored as finished, its records to the checkpoint, when the point is still
 *  as the worker found it (no record of it in, first round, doubling 0); else nothing is
 *  done (*taken = 0) and its records settle it as any others. Errors: LBMC_ERR_FILE,
 *  LBMC_ERR_MEMORY, LBMC_ERR_INTERNAL (malformed). */
lbmc_err lbmc_runner_record_whole(lbmc_runner *run, const void *whole, size_t size,
                                  const void *const *rec, const size_t *rec_size, int count,
                                  int *taken);
/** Rank 0: write the results file (complete or not) and close the checkpoint
 *  (removing it after a complete run). */
lbmc_err lbmc_runner_finish(lbmc_runner *run, int complete);
/** Simulate (local point, replica, doubling) into run->msg (run->msg_size bytes); returns
 *  LBMC_ERR_INTERRUPTED when the monitor stopped it (runner_unit.c). */
lbmc_err lbmc_runner_simulate(lbmc_runner *run, long point, long replica, int doubling,
                              int (*monitor)(void *), void *ctx);

/* ---- the loops (runner_root.c, runner_worker.c; lbmc_run_job in runner.c) ---- */

/** Rank 0: hand out the units, settle the results, simulate its own units, until every
 *  point is finished or the run stops; then release the workers. */
lbmc_err lbmc_runner_root(lbmc_runner *run);
/** A worker: ask for units, simulate them and send their records, until released. */
lbmc_err lbmc_runner_worker(lbmc_runner *run);
/** Complete *req (status into *st, or MPI_STATUS_IGNORE) without holding a core
 *  (runner_msg.c). */
void lbmc_wait_nap(MPI_Request *req, MPI_Status *st);

/* ---- a result message's entries (runner_msg.c; framed as the tags' comment says) ---- */

/** One entry of a result message. */
typedef struct {
  const unsigned char *data; /* its bytes (inside the message) */
  size_t bytes;              /* without the padding */
  int reduced; /* 1: a point reduced whole (lbmc_whole_head, then the packed reduction);
                  0: a replica record */
} lbmc_msg_entry;

/** The entry of msg[size] at offset *at (0: the first) into *e, *at moved past it.
 *  Returns 1, or 0 at the end of the message, or -1 when the bytes at *at are not an
 *  entry (a size of 0, or more bytes than the message has left). */
int lbmc_msg_next(const unsigned char *msg, size_t size, size_t *at, lbmc_msg_entry *e);
/** Append an entry, the bytes of a (na) then b (nb, may be 0), to the message *msg of
 *  *size bytes (capacity *cap, grown by realloc). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_msg_append(unsigned char **msg, size_t *size, size_t *cap, int reduced, const void *a,
                         size_t na, const void *b, size_t nb);

/* ---- pace, liveness and progress (runner_pace.c; rank 0) ---- */

/** Wall time of a unit of local point p at the engine's nominal speed, seconds. */
double lbmc_unit_nominal(const lbmc_runner *run, long p, int doubling);
/* --stall in seconds: lbmc_run_settings.stall_seconds, its default LBMC_STALL_SECONDS
 * when 0 (include/lbmc/runner.h). */
double lbmc_runner_stall(const lbmc_run_settings *set);
/** Rank 0 finished its own unit of `seconds` wall time: the pace. */
void lbmc_runner_pace(lbmc_runner *run, long p, int doubling, double seconds);
/** A message from worker src (a result when result = 1): alive, holds nothing now. */
void lbmc_runner_heard(lbmc_runner *run, int src, int result);
/** The n units unit[LBMC_UNIT_LONGS n] were sent to worker dst. */
void lbmc_runner_issued(lbmc_runner *run, int dst, const long *unit, int n);
/** Presume frozen the workers silent too long (a warning; their units re-issued). */
void lbmc_runner_watch(lbmc_runner *run);
/** The progress line, at most every --progress seconds unless force. */
void lbmc_runner_progress(lbmc_runner *run, int force);

#endif
