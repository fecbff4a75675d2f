/* lbmc run: a job file's grid under MPI, HDF5 results. */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/checkpoint.h"
#include "../io/results.h"
#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/job.h"
#include "lbmc/log.h"
#include "lbmc/runner.h"

static void lbmc_run_usage(FILE *f)
{
  fputs("usage: [mpirun -np N] lbmc run JOB.yaml [-o OUT.h5] [--resume] [--dry-run] [--quiet]\n"
        "                               [--shard I/K] [--progress WHEN] [--stall SECONDS]\n"
        "\n"
        "Run every grid point of a job file (docs/job-files.md) on the MPI ranks and write\n"
        "the results (docs/results-format.md). Work units (point, replica) are handed out\n"
        "costliest first; rank 0 also simulates. Random streams depend only on (point,\n"
        "replica, seed), so results are the same on any number of ranks.\n"
        "\n"
        "  -o, --output OUT.h5   results file, as given (default: the job's `output`, as\n"
        "                        given, else JOB.h5)\n"
        "  --resume              continue an interrupted run from OUT.h5.ckpt\n"
        "  --dry-run             print the grid, the work units and a cost estimate\n"
        "  --quiet               no progress lines on stderr\n"
        "  --shard I/K           run only shard I of K (1 <= I <= K) of the points;\n"
        "                        combine the parts with lbmc merge\n"
        "  --progress WHEN       progress lines on stderr: auto or always (a line every\n"
        "                        10 s), never (none; unlike --quiet, notes and warnings\n"
        "                        stay), or a number: the seconds between two lines\n"
        "  --stall SECONDS       a rank that holds a work unit and has sent nothing, not\n"
        "                        even its heartbeat (every 2 s while it simulates),\n"
        "                        for longer than this is presumed frozen: rank 0 warns\n"
        "                        (rank, host, pid) and gives its unit to another rank\n"
        "                        (default 60)\n"
        "  -h, --help            this help\n"
        "\n"
        "A run locks OUT.h5.ckpt: a second run (or --resume) of an output a live run\n"
        "is writing is refused. --resume of a complete output does nothing (exit 0).\n"
        "\n"
        "SIGINT, SIGTERM or SIGUSR1 stop the run: finished points are written to OUT.h5\n"
        "(attribute complete = 0), finished replicas stay in OUT.h5.ckpt, and the exit\n"
        "status is 3; run again with --resume to finish. Under mpirun, send SIGUSR1 to\n"
        "mpirun (it forwards it to every rank): SIGINT/SIGTERM make mpirun itself stop\n"
        "the ranks and return its own status (the checkpoint is kept all the same).\n"
        "Exit status 2: bad input; 1: other failures.\n",
        f);
}

typedef struct {
  const char *job_path;
  char output[4096];
  lbmc_run_settings set;
  int help;
} lbmc_run_args;

enum { OPT_RESUME = 256, OPT_DRY, OPT_QUIET, OPT_SHARD, OPT_PROGRESS, OPT_STALL };

const struct option lbmc_run_opts[] = {{"output", required_argument, 0, 'o'},
                                       {"resume", no_argument, 0, OPT_RESUME},
                                       {"dry-run", no_argument, 0, OPT_DRY},
                                       {"quiet", no_argument, 0, OPT_QUIET},
                                       {"shard", required_argument, 0, OPT_SHARD},
                                       {"progress", required_argument, 0, OPT_PROGRESS},
                                       {"stall", required_argument, 0, OPT_STALL},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};

static lbmc_err lbmc_run_parse(int argc, char **argv, lbmc_run_args *a)
{
  int c;
  a->set.progress_seconds = LBMC_PROGRESS_SECONDS;
  a->set.stall_seconds = LBMC_STALL_SECONDS;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":o:h", lbmc_run_opts, NULL)) != -1) {
    switch (c) {
    case 'o':
      if (!*optarg)
        return LBMC_ERROR(LBMC_ERR_ARG, "--output: an empty path is not allowed; name an .h5 file");
      snprintf(a->output, sizeof a->output, "%s", optarg);
      break;
    case OPT_RESUME: a->set.resume = 1; break;
    case OPT_DRY: a->set.dry_run = 1; break;
    case OPT_QUIET: a->set.quiet = 1; break;
    case OPT_SHARD:
      LBMC_CALL(lbmc_parse_shard("--shard", optarg, &a->set.shard_index, &a->set.shard_count));
      break;
    case OPT_PROGRESS: { /* one vocabulary with lbmc sim's --progress */
      int mode;
      double seconds;
      LBMC_CALL(lbmc_cli_parse_progress("--progress", optarg, &mode, &seconds));
      a->set.no_progress = mode == LBMC_SIM_PROGRESS_NEVER;
      a->set.progress_seconds = isnan(seconds) ? LBMC_PROGRESS_SECONDS : seconds;
      break;
    }
    case OPT_STALL:
      LBMC_CALL(lbmc_parse_real("--stall", optarg, &a->set.stall_seconds));
      LBMC_CALL(lbmc_check_positive("--stall", a->set.stall_seconds));
      break;
    case 'h': a->help = 1; return LBMC_SUCCESS;
    case ':':
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: a value is required (see lbmc run --help)",
                        argv[optind - 1]);
    default: return lbmc_cli_unknown_option("run", argv[optind - 1], lbmc_run_opts);
    }
  }
  if (optind != argc - 1)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "lbmc run takes exactly one job file (got %d arguments; see --help)",
                      argc - optind);
  a->job_path = argv[optind];
  return LBMC_SUCCESS;
}

/* Rank 0 parses the file; the others parse the text it broadcasts. */
static lbmc_err lbmc_run_load_job(const char *path, MPI_Comm comm, lbmc_job **job)
{
  int rank, code = 0;
  long len = 0;
  char *text = NULL;
  lbmc_err err = LBMC_SUCCESS;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    err = lbmc_job_parse_file(path, job);
    code = (int)err;
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  if (code) return (lbmc_err)code;
  if (rank == 0) len = (long)strlen(lbmc_job_text(*job));
  MPI_Bcast(&len, 1, MPI_LONG, 0, comm);
  text = rank == 0 ? (char *)lbmc_job_text(*job) : malloc((size_t)len + 1);
  if (!text) return LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory for the job text");
  MPI_Bcast(text, (int)len + 1, MPI_CHAR, 0, comm);
  if (rank != 0) {
    err = lbmc_job_parse_text(text, path, job);
    free(text);
  }
  return err;
}

/* Output: -o as given; else the job's output as given (a shard's part gets
 * ".shard-I-of-K" before the name's extension, or at its end without one); else the job
 * file's name without .yaml/.yml, with .h5 (and a shard's ".shard-I-of-K" before it).
 * Nothing is appended to a name the user gave: lbmc_check_output_path judges it. */
static void lbmc_run_output(lbmc_run_args *a, const lbmc_job *job)
{
  const char *base, *given = lbmc_job_output(job);
  char stem[4096], ext[4096] = ".h5";
  size_t len;
  if (a->output[0]) return;
  if (given) {
    const char *slash = strrchr(given, '/'), *dot = strrchr(slash ? slash + 1 : given, '.');
    if (a->set.shard_count <= 0) {
      snprintf(a->output, sizeof a->output, "%s", given);
      return;
    }
    /* "res.hdf5" -> "res.shard-1-of-2.hdf5"; "res" -> "res.shard-1-of-2"; ".h5" has no stem */
    if (!dot || dot == (slash ? slash + 1 : given)) dot = given + strlen(given);
    snprintf(stem, sizeof stem, "%.*s", (int)(dot - given), given);
    snprintf(ext, sizeof ext, "%s", dot);
  } else {
    base = strrchr(a->job_path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : a->job_path);
    len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".yaml") == 0)
      stem[len - 5] = '\0';
    else if (len > 4 && strcmp(stem + len - 4, ".yml") == 0)
      stem[len - 4] = '\0';
  }
  if (a->set.shard_count > 0)
    snprintf(a->output, sizeof a->output, "%s.shard-%ld-of-%ld%s", stem, a->set.shard_index,
             a->set.shard_count, ext);
  else
    snprintf(a->output, sizeof a->output, "%s%s", stem, ext);
}

/* An estimate of the results file's size: the points of the run (a shard about its
 * share), the first round of replicas. */
static double lbmc_run_output_bytes(const lbmc_run_args *a, const lbmc_job *job)
{
  lbmc_run_options o;
  long P = lbmc_job_points(job);
  if (a->set.shard_count > 0) P = (P + a->set.shard_count - 1) / a->set.shard_count;
  lbmc_job_point_options(job, 0, &o);
  return lbmc_results_bytes(P, lbmc_job_replicas(job), lbmc_job_pools(job), (int)o.tail_k) +
         /* /transient: five parts of (J (K + 1) + 5) doubles per point and time */
         40.0 * (double)P * (double)lbmc_transient_times(&o) *
             ((double)lbmc_job_pools(job) * (double)(o.tail_k + 1) + 5);
}

/* --resume with a checkpoint: it records its run's shard (a checkpoint of an older
 * lbmc does not: then the partial results the stopped run wrote, if any, say it), and a
 * resume with another --shard, or none, would finish another set of points into that
 * file (without --shard: the whole job, under the shard's name), so it is refused,
 * naming the shard to give. Nothing to compare (an old checkpoint without readable
 * results) says nothing here. */
static lbmc_err lbmc_run_resume_shard(const lbmc_run_args *a, const char *ckpt)
{
  lbmc_results *res = NULL;
  char mine[32] = "", theirs[32] = "";
  long index, count;
  if (lbmc_checkpoint_shard(ckpt, &index, &count)) {
    if (count > 0) snprintf(theirs, sizeof theirs, "%ld/%ld", index, count);
  } else {
    const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
    const lbmc_err err = lbmc_results_read(a->output, &res);
    lbmc_error_set_mode(was);
    if (err) {
      lbmc_error_clear();
      return LBMC_SUCCESS;
    }
    snprintf(theirs, sizeof theirs, "%s", res->shard);
    lbmc_results_destroy(&res);
  }
  lbmc_run_shard_label(&a->set, mine, sizeof mine);
  if (strcmp(theirs, mine) == 0) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_MISMATCH,
                    "--shard: %s and its checkpoint %s belong to %s%s of %s, and this run is "
                    "%s%s; allowed: the same shard: resume with %s%s",
                    a->output, ckpt, theirs[0] ? "shard " : "the whole job", theirs, a->job_path,
                    mine[0] ? "shard " : "the whole job", mine,
                    theirs[0] ? "--resume --shard " : "--resume without --shard", theirs);
}

/* --resume without a checkpoint: if the output exists and holds the complete results of
 * this job (or shard) -- read with its checksums checked -- there is nothing to do
 * (*complete = 1, said on stderr); results of another job are refused, naming the
 * setting that differs; partial results without their checkpoint are computed afresh. */
static lbmc_err lbmc_run_resume_complete(const lbmc_run_args *a, const lbmc_job *job,
                                         const char *ckpt, int *complete)
{
  lbmc_results *res = NULL;
  lbmc_job *theirs = NULL;
  lbmc_job_difference d;
  char shard[64] = "";
  int differ = 0;
  *complete = 0;
  if (access(ckpt, F_OK) == 0) return lbmc_run_resume_shard(a, ckpt);
  if (access(a->output, F_OK) != 0) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_results_read(a->output, &res));
  lbmc_run_shard_label(&a->set, shard, sizeof shard);
  if (strcmp(res->job_text ? res->job_text : "", lbmc_job_text(job)) != 0) {
    if (lbmc_job_parse_text(res->job_text ? res->job_text : "", a->output, &theirs) == 0) {
      differ = lbmc_job_compare(theirs, job, &d);
      lbmc_job_destroy(&theirs);
    } else {
      differ = 1;
      snprintf(d.key, sizeof d.key, "the job text");
      snprintf(d.a, sizeof d.a, "one that does not parse");
      snprintf(d.b, sizeof d.b, "another");
    }
  }
  if (!differ && strcmp(res->shard, shard) != 0) {
    differ = 1;
    snprintf(d.key, sizeof d.key, "the shard");
    snprintf(d.a, sizeof d.a, "%s", res->shard[0] ? res->shard : "the whole job");
    snprintf(d.b, sizeof d.b, "%s", shard[0] ? shard : "the whole job");
  }
  *complete = !differ && res->complete;
  lbmc_results_destroy(&res);
  if (differ)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s holds the results of another run: %s is %s there and %s here (%s); "
                      "there is nothing to resume: rerun without --resume to replace them, or "
                      "choose another output (-o)",
                      a->output, d.key, d.a, d.b, a->job_path);
  if (*complete)
    fprintf(stderr, "lbmc run: %s holds the complete results of this %s already: nothing to do\n",
            a->output, shard[0] ? "shard" : "job");
  else
    fprintf(stderr,
            "lbmc run: note: %s holds partial results, but its checkpoint %s is gone: running "
            "the %s afresh\n",
            a->output, ckpt, shard[0] ? "shard" : "job");
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_run_main(int argc, char **argv, MPI_Comm comm, int *help)
{
  lbmc_run_args a;
  lbmc_job *job = NULL;
  lbmc_err err;
  int rank;
  int code = 0;
  memset(&a, 0, sizeof a);
  MPI_Comm_rank(comm, &rank);
  /* rank 0 parses the arguments first and reports; the others then parse the same
   * (valid) arguments silently */
  if (rank == 0) code = (int)lbmc_run_parse(argc, argv, &a);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  if (code) return (lbmc_err)code;
  if (rank != 0) lbmc_run_parse(argc, argv, &a);
  *help = a.help;
  if (a.help) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_run_load_job(a.job_path, comm, &job));
  lbmc_run_output(&a, job);
  if (!a.set.dry_run) { /* before computing anything: where the results and checkpoint go */
    char ckpt[4200];
    const char *inputs[2] = {a.job_path, NULL};
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", a.output);
    inputs[1] = a.output;
    code = 0;
    if (rank == 0) {
      int complete = 0;
      lbmc_err e = lbmc_check_output_path(a.output, inputs, 1);
      if (!e) e = lbmc_check_output_path(ckpt, inputs, 2);
      if (!e && a.set.resume) e = lbmc_run_resume_complete(&a, job, ckpt, &complete);
      if (!e && !complete) e = lbmc_results_probe(a.output, lbmc_run_output_bytes(&a, job));
      code = e ? (int)e : complete ? -1 : 0;
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
    if (code) { /* -1: the output is complete already */
      lbmc_job_destroy(&job);
      return code < 0 ? LBMC_SUCCESS : (lbmc_err)code;
    }
  }
  a.set.output = a.output;
  a.set.stop = lbmc_cli_catch_stop_signals(1); /* already caught: the flag */
  err = lbmc_run_job(job, &a.set, comm);
  if (!err && !a.set.dry_run && !a.set.quiet)
    lbmc_log(comm, stderr, "lbmc run: wrote %s\n", a.output);
  lbmc_job_destroy(&job);
  return err;
}

int lbmc_cmd_run(int argc, char **argv)
{
  int help = 0, rank, size, status;
  lbmc_err err;
  /* before MPI_Init: a signal during start-up stops the run instead of killing it */
  lbmc_cli_catch_stop_signals(1);
  /* srun without PMI: Open MPI 4 would abort in MPI_Init, Open MPI 5 start singletons */
  if ((err = lbmc_cli_check_launch(-1)) != LBMC_SUCCESS) return lbmc_exit_status(err);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  err = lbmc_cli_check_launch(size);
  if (!err) err = lbmc_run_main(argc, argv, MPI_COMM_WORLD, &help);
  if (help && rank == 0) lbmc_run_usage(stdout);
  status = lbmc_exit_status(err);
  MPI_Finalize();
  return status;
}
