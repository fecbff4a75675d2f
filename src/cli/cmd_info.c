/* lbmc info: a results file's tidy rows (one per point, metric and entry) as a text
 * table, CSV or JSON, or what a checkpoint holds; lbmc merge: combine parts of one job.
 * The rows are built in info_rows.c, the formats in table.c. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../io/checkpoint.h"
#include "cli.h"
#include "info.h"
#include "lbmc/check.h"
#include "lbmc/job.h"
#include "lbmc/metrics.h"
#include "lbmc/runner.h"

#define LBMC_INFO_DEFAULT_METRICS "p_wait_or_block,mean_sojourn,messages_per_arrival"
#define LBMC_INFO_WIDTH           120

static void lbmc_info_usage(FILE *f)
{
  fputs("usage: lbmc info FILE.h5 [--format table|csv|json] [--metrics M1,M2,...]\n"
        "                         [--where AXIS=VALUE,...] [--width N] [--compare A,B]\n"
        "                         [--limit [refined]] [--transient]\n"
        "                         [--wide METRIC [--rows AXIS] [--columns AXIS]]\n"
        "\n"
        "Print a results file as tidy rows: one per grid point, metric and entry, with the\n"
        "point's grid axes as columns, then mean, half_width, std_err, replicas and status\n"
        "(CSV and JSON add metric, pool, k, level and reason). On a checkpoint (.ckpt), say\n"
        "what it holds and how to finish its run.\n"
        "\n"
        "  --format F       table (default: aligned text, at most --width columns), csv\n"
        "                   (loads in pandas and R as it is) or json\n"
        "  --metrics LIST   metric names as lbmc sim prints them: p_wait, utilization[2],\n"
        "                   tail[2][3], sojourn_quantiles[0.99]; a bare per-pool metric\n"
        "                   means every entry (default: " LBMC_INFO_DEFAULT_METRICS "\n"
        "                   for the table, every metric for csv and json); repeatable\n"
        "  --where LIST     only points whose grid axes have these values, e.g.\n"
        "                   policy=pull,n=1000 (axes by name, pools[2].mu, or column, mu_2;\n"
        "                   values as written in the job or the same number; a repeated\n"
        "                   axis gives alternatives); repeatable\n"
        "  --width N        width of the text table (default 120; 0: no limit): beyond it\n"
        "                   the grid axes are listed per point above the table\n"
        "  --compare A,B    paired comparisons of policies A and B (as in /points/policy,\n"
        "                   e.g. 'pull,jsq(2)'): per scenario (the grid point without\n"
        "                   policy, routers, stale, sampling) and metric entry, A - B and\n"
        "                   A / B with paired intervals (the policies of a scenario share\n"
        "                   their random numbers replica by replica), and the unpaired\n"
        "                   half-width for comparison\n"
        "  --limit          a column with the n -> inf limit of each estimate where one is\n"
        "                   known (and its source in csv and json), from the Python\n"
        "                   package (lbmc_analysis.limits, docs/limits.md); --limit\n"
        "                   refined adds the refined mean field x* + V/n at each point's\n"
        "                   n (limit_refined, and its source or why it is unknown)\n"
        "  --transient      the estimates of a transient run (run.transient; /transient):\n"
        "                   a row per point, time and entry with the pointwise interval\n"
        "                   (lower, upper) and the band simultaneous over the times\n"
        "                   (band_lower, band_upper); --metrics names transient metrics:\n"
        "                   mean_queue, tail, customers, p_wait, p_block, throughput,\n"
        "                   messages_per_arrival (default for the table: customers,\n"
        "                   mean_queue, p_wait, about 40 times; csv and json: all)\n"
        "  --wide METRIC    one metric entry (p_wait, utilization[2]) as a paper's table:\n"
        "                   a row per value of --rows AXIS (default n), a column per value\n"
        "                   of --columns AXIS (default policy), cells estimate [interval]\n"
        "                   marked (n) when not_stationary; CSV and JSON give VALUE.mean,\n"
        "                   .lower, .upper, .status; other axes must have one value (--where)\n"
        "  -h, --help       this help\n",
        f);
}

/* The run's line and the grid's line of the text form. */
static void lbmc_info_header(FILE *f, const lbmc_info *info, long rows)
{
  const lbmc_results *res = info->res;
  long kept = 0;
  char line[4096];
  size_t used;
  for (long i = 0; i < res->P; i++) kept += info->keep[i];
  snprintf(line, sizeof line,
           "%s: lbmc %s (%s, %s), created %s, %ld MPI rank%s, %.1f s wall, seed %ld, %.10g%% "
           "intervals%s%s%s",
           info->path, res->lbmc_version, res->revision, res->build_type, res->created,
           res->mpi_ranks, res->mpi_ranks == 1 ? "" : "s", res->wall_seconds, res->seed,
           100 * res->confidence, res->shard[0] ? ", shard " : "", res->shard,
           res->complete ? ""
                         : ", INCOMPLETE (interrupted: lbmc run ... --resume completes it; a file "
                           "of lbmc sim -o: run it again)");
  fprintf(f, "%s\n", line); /* one line: scripts look for INCOMPLETE in it */
  lbmc_grid_text(info->grid, line, sizeof line);
  used = strlen(line);
  used += (size_t)snprintf(line + used, sizeof line - used, "; %ld in the file", res->P);
  if (kept < res->P && used < sizeof line)
    used += (size_t)snprintf(line + used, sizeof line - used, ", %ld kept by --where", kept);
  if (used < sizeof line) snprintf(line + used, sizeof line - used, "; %ld rows", rows);
  lbmc_print_wrapped(f, "", 2, line, info->width);
}

/* The text form: the header, the grid axes per point above the table when they would
 * make it wider than info->width, the table, and why points are unstable. */
static void lbmc_info_print_text(FILE *f, const lbmc_info *info, lbmc_table *t)
{
  const lbmc_results *res = info->res;
  const int A = info->grid ? info->grid->A : 0;
  lbmc_info_header(f, info, t->nrows);
  if (info->width > 0 && A > 0 && lbmc_table_width(t) > (size_t)info->width) {
    char label[4096], first[32];
    for (int a = 0; a < A; a++) t->col[LBMC_INFO_FIRST_AXIS + a].hidden = 1;
    fprintf(f, "grid axes of each point:\n");
    for (long i = 0; i < res->P; i++) {
      if (!info->keep[i]) continue;
      lbmc_grid_label(info->grid, res->pt[i].index, label, sizeof label);
      snprintf(first, sizeof first, "%7ld  ", res->pt[i].index);
      lbmc_print_wrapped(f, first, 9, label, info->width);
    }
  }
  lbmc_table_print(f, t, LBMC_FORMAT_TABLE);
  if (res->trans) { /* the steady-state rows of a transient run: say where its point is */
    char note[512];
    snprintf(note, sizeof note,
             "a transient run: its estimates at %ld times from %g to %g are in /transient: lbmc "
             "info %s --transient (the rows above average each replica over the whole run)",
             res->trans->T, res->trans->time[0], res->trans->time[res->trans->T - 1], info->path);
    lbmc_print_wrapped(f, "", 0, note, info->width);
  }
  for (long i = 0; i < res->P; i++)
    if (info->keep[i] && res->pt[i].v.status != LBMC_STATUS_OK) {
      char first[64], why[1024];
      snprintf(first, sizeof first, "point %ld %s: ", res->pt[i].index,
               lbmc_status_name(res->pt[i].v.status));
      snprintf(why, sizeof why, "%s", res->pt[i].v.reason);
      if (!isnan(res->pt[i].v.suggested_time))
        snprintf(why + strlen(why), sizeof why - strlen(why), " (run longer: e.g. time %g)",
                 res->pt[i].v.suggested_time);
      lbmc_print_wrapped(f, first, 2, why, info->width);
    }
}

/* The grid as JSON: each axis (name, column, dimension, values as written) and each
 * dimension (name, length). */
static json_t *lbmc_info_json_grid(const lbmc_grid *g)
{
  json_t *grid = json_object(), *axes = json_array(), *dims = json_array();
  char col[64];
  for (int a = 0; g && a < g->A; a++) {
    json_t *axis = json_object(), *values = json_array();
    for (long v = 0; v < g->axis_length[a]; v++)
      json_array_append_new(values, json_string(g->axis_value[g->axis_first[a] + v]));
    json_object_set_new(axis, "name", json_string(g->axis_name[a]));
    json_object_set_new(axis, "column",
                        json_string(lbmc_info_axis_column(g->axis_name[a], col, sizeof col)));
    json_object_set_new(axis, "dim", json_integer(g->axis_dim[a]));
    json_object_set_new(axis, "values", values);
    json_array_append_new(axes, axis);
  }
  for (int d = 0; g && d < g->D; d++) {
    json_t *dim = json_object();
    json_object_set_new(dim, "name", json_string(g->dim_name[d]));
    json_object_set_new(dim, "length", json_integer(g->dim_length[d]));
    json_array_append_new(dims, dim);
  }
  json_object_set_new(grid, "axes", axes);
  json_object_set_new(grid, "dims", dims);
  return grid;
}

/* The JSON form: the file's run, its grid and the rows. */
static void lbmc_info_print_json(FILE *f, const lbmc_info *info, const lbmc_table *t)
{
  const lbmc_results *res = info->res;
  json_t *root = json_object();
  json_object_set_new(root, "file", json_string(info->path));
  json_object_set_new(root, "lbmc_version", json_string(res->lbmc_version));
  json_object_set_new(root, "source_revision", json_string(res->revision));
  json_object_set_new(root, "build_type", json_string(res->build_type));
  json_object_set_new(root, "created", json_string(res->created));
  json_object_set_new(root, "seed", json_integer(res->seed));
  json_object_set_new(root, "confidence", json_real(res->confidence));
  json_object_set_new(root, "mpi_ranks", json_integer(res->mpi_ranks));
  json_object_set_new(root, "wall_seconds", json_real(res->wall_seconds));
  json_object_set_new(root, "complete", json_boolean(res->complete));
  json_object_set_new(root, "shard", json_string(res->shard));
  json_object_set_new(root, "grid", lbmc_info_json_grid(info->grid));
  json_object_set_new(root, "rows", lbmc_table_json(t));
  lbmc_json_print(f, root);
}

/* The paired comparisons: in text with the file's header and a note on the columns. */
static void lbmc_info_print_compare(FILE *f, const lbmc_info *info, const lbmc_table *t)
{
  if (info->format == LBMC_FORMAT_TABLE) lbmc_info_header(f, info, t->nrows);
  lbmc_table_print(f, t, info->format);
  if (info->format == LBMC_FORMAT_TABLE)
    lbmc_print_wrapped(f, "", 0,
                       "difference, ratio: of the pooled estimates of A and B, with paired "
                       "intervals (replica r of A with replica r of B: common random numbers); "
                       "gain: the unpaired (Welch) half-width of the difference over the paired "
                       "one",
                       info->width);
}

/* The transient view: in text with the file's header and a note on the intervals. */
static void lbmc_info_print_transient(FILE *f, const lbmc_info *info, const lbmc_table *t,
                                      long step)
{
  char lv[32], note[512];
  if (info->format == LBMC_FORMAT_JSON) {
    lbmc_info_print_json(f, info, t);
    return;
  }
  if (info->format == LBMC_FORMAT_TABLE) lbmc_info_header(f, info, t->nrows);
  lbmc_table_print(f, t, info->format);
  if (info->format != LBMC_FORMAT_TABLE) return;
  snprintf(note, sizeof note,
           "lower, upper: %s pointwise intervals; band_lower, band_upper: the band simultaneous "
           "over the %ld times (Bonferroni); p_wait, p_block, throughput and "
           "messages_per_arrival over the interval ending at the time%s",
           lbmc_cli_level(info->res->confidence, lv, sizeof lv), info->res->trans->T,
           step > 1 ? "; every time in --format csv or json" : "");
  if (step > 1)
    snprintf(note + strlen(note), sizeof note - strlen(note),
             " (shown: one time in %ld, and the last)", step);
  lbmc_print_wrapped(f, "", 0, note, info->width);
}

/* lbmc info on a checkpoint: who holds it (a live run, or one that was killed) and
 * whether it is damaged. */
static void lbmc_info_checkpoint_state(const char *path, const lbmc_ckpt_summary *sum)
{
  if (sum->live == 1)
    printf("A run is writing it now (%s).\n",
           sum->owner[0] ? sum->owner : "its PID not yet written");
  else if (sum->owner[0])
    printf("Its last run stopped without closing it (%s: killed, or its machine failed).\n",
           sum->owner);
  if (sum->damaged)
    printf("It is DAMAGED: %ld stretch%s of %zu bytes in all (about %ld replica record%s) fail "
           "their checksums.\n--resume skips them and keeps every good record (the replicas lost "
           "are simulated again); the damaged file is then kept aside as %s.damaged.\n",
           sum->damaged, sum->damaged == 1 ? "" : "es", sum->damaged_bytes, sum->damaged_records,
           sum->damaged_records == 1 ? "" : "s", path);
  if (sum->torn_bytes)
    printf("Its last record was cut short (%zu bytes: the run was stopped while writing it); "
           "--resume drops it.\n",
           sum->torn_bytes);
}

/* The wide view: in text with the file's header and the legend under the table. */
static void lbmc_info_print_wide(FILE *f, const lbmc_info *info, const lbmc_table *t,
                                 const char *legend)
{
  if (info->format == LBMC_FORMAT_JSON) {
    lbmc_info_print_json(f, info, t);
    return;
  }
  if (info->format == LBMC_FORMAT_TABLE) lbmc_info_header(f, info, t->nrows);
  lbmc_table_print(f, t, info->format);
  if (info->format == LBMC_FORMAT_TABLE) lbmc_print_wrapped(f, "", 0, legend, info->width);
}

/* The shard ("i/k", or "" for the whole job or when unknown) of the run a checkpoint
 * belongs to: its header says (a checkpoint of an older lbmc does not: then the partial
 * results it stopped with, if any); its resume needs the same --shard. */
static void lbmc_info_checkpoint_shard(const lbmc_ckpt_summary *sum, const char *out, char *shard,
                                       size_t size)
{
  lbmc_results *res = NULL;
  lbmc_error_mode was;
  *shard = '\0';
  if (sum->shard_count >= 0) {
    if (sum->shard_count > 0) snprintf(shard, size, "%ld/%ld", sum->shard_index, sum->shard_count);
    return;
  }
  was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  if (access(out, F_OK) == 0 && lbmc_results_read(out, &res) == LBMC_SUCCESS)
    snprintf(shard, size, "%s", res->shard);
  lbmc_results_destroy(&res);
  lbmc_error_set_mode(was);
  lbmc_error_clear();
}

/* lbmc info on a checkpoint (OUT.h5.ckpt): what it is, what it holds, how to finish
 * its run. */
static lbmc_err lbmc_info_checkpoint(const char *path)
{
  lbmc_ckpt_summary sum;
  char out[4096];
  size_t len = strlen(path);
  snprintf(out, sizeof out, "%.*s",
           (int)(len > 5 && strcmp(path + len - 5, ".ckpt") == 0 ? len - 5 : len), path);
  LBMC_CALL(lbmc_checkpoint_describe(path, &sum));
  printf("%s: the checkpoint of an unfinished lbmc run (results go to %s), not a results file.\n",
         path, out);
  if (!sum.complete_header) {
    printf("It is incomplete: its header was never fully written (the run stopped as it started),\n"
           "so it holds no replicas; lbmc run starts afresh over it (or delete it).\n");
  } else if (sum.damaged_header) {
    lbmc_info_checkpoint_state(path, &sum);
    printf("It is DAMAGED: its header (the job it was made for) fails its checksum, so its\n"
           "replicas cannot be trusted to belong to a job: it cannot be resumed. Move it aside\n"
           "or delete it, and run the job afresh.\n");
  } else if (!sum.job_text) {
    printf("It was written by another version of lbmc (checkpoint format %c): this one cannot\n"
           "resume it; finish the run with the version that wrote it, or rerun without --resume\n"
           "to start afresh (the checkpoint is replaced), or delete it.\n",
           sum.format);
  } else {
    char shard[32];
    lbmc_info_checkpoint_shard(&sum, out, shard, sizeof shard);
    printf("It holds %ld finished replica%s of %ld point%s (seed %ld)%s%s%s.\n", sum.replicas,
           sum.replicas == 1 ? "" : "s", sum.points, sum.points == 1 ? "" : "s", sum.seed,
           shard[0] ? " of shard " : "", shard, shard[0] ? " of its job" : "");
    lbmc_info_checkpoint_state(path, &sum);
    printf("Finish the run with\n"
           "  lbmc run JOB.yaml -o %s --resume%s%s\n"
           "with the job file it was started with (its text is below); the finished replicas are\n"
           "not simulated again. Points finished before the run stopped are in %s if it exists\n"
           "(lbmc info %s).\njob:\n",
           out, shard[0] ? " --shard " : "", shard, out, out);
    for (const char *line = sum.job_text; *line;) {
      size_t n = strcspn(line, "\n");
      printf("  %.*s\n", (int)n, line);
      line += n + (line[n] ? 1 : 0);
    }
  }
  free(sum.job_text);
  return LBMC_SUCCESS;
}

/* The options of lbmc info; --where and --metrics are kept to be read with the file. */
typedef struct {
  const char *where[16], *metrics[16], *compare;
  lbmc_info_wide_spec wide;
  int nwhere, nmetrics, help, limit, transient;
} lbmc_info_args;

enum {
  OPT_FORMAT = 256,
  OPT_WHERE,
  OPT_WIDTH,
  OPT_COMPARE,
  OPT_LIMIT,
  OPT_WIDE,
  OPT_ROWS,
  OPT_COLUMNS,
  OPT_TRANSIENT
};

const struct option lbmc_info_opts[] = {{"metrics", required_argument, 0, 'm'},
                                        {"format", required_argument, 0, OPT_FORMAT},
                                        {"where", required_argument, 0, OPT_WHERE},
                                        {"width", required_argument, 0, OPT_WIDTH},
                                        {"compare", required_argument, 0, OPT_COMPARE},
                                        {"limit", optional_argument, 0, OPT_LIMIT},
                                        {"wide", required_argument, 0, OPT_WIDE},
                                        {"rows", required_argument, 0, OPT_ROWS},
                                        {"columns", required_argument, 0, OPT_COLUMNS},
                                        {"transient", no_argument, 0, OPT_TRANSIENT},
                                        {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};

static lbmc_err lbmc_info_parse(int argc, char **argv, lbmc_info_args *a, lbmc_info *info)
{
  static const char *const formats[] = {"table", "csv", "json"};
  long width;
  int c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":m:h", lbmc_info_opts, NULL)) != -1) {
    switch (c) {
    case 'm':
    case OPT_WHERE:
      if ((c == 'm' ? a->nmetrics : a->nwhere) == 16)
        return LBMC_ERROR(LBMC_ERR_ARG, "%s: given more than 16 times", argv[optind - 1]);
      if (c == 'm')
        a->metrics[a->nmetrics++] = optarg;
      else
        a->where[a->nwhere++] = optarg;
      break;
    case OPT_FORMAT:
      for (info->format = 0; info->format < 3 && strcmp(optarg, formats[info->format]);
           info->format++)
        ;
      if (info->format == 3)
        return LBMC_ERROR(LBMC_ERR_ARG, "--format: '%s' is not allowed; allowed: table, csv, json",
                          optarg);
      break;
    case OPT_WIDTH:
      LBMC_CALL(lbmc_parse_long("--width", optarg, &width));
      LBMC_CALL(lbmc_check_int_range("--width", width, 0, 100000));
      info->width = (int)width;
      break;
    case OPT_COMPARE: a->compare = optarg; break;
    case OPT_LIMIT:
      LBMC_CALL(lbmc_limit_parse_mode("--limit", optarg, argc, argv, &a->limit));
      break;
    case OPT_TRANSIENT: a->transient = 1; break;
    case OPT_WIDE: a->wide.metric = optarg; break;
    case OPT_ROWS: a->wide.rows = optarg; break;
    case OPT_COLUMNS: a->wide.columns = optarg; break;
    case 'h': a->help = 1; return LBMC_SUCCESS;
    case ':':
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: a value is required (see lbmc info --help)",
                        argv[optind - 1]);
    default: return lbmc_cli_unknown_option("info", argv[optind - 1], lbmc_info_opts);
    }
  }
  if ((a->wide.rows || a->wide.columns) && !a->wide.metric)
    return LBMC_ERROR(LBMC_ERR_ARG, "--%s: applies only with --wide METRIC",
                      a->wide.rows ? "rows" : "columns");
  if (a->wide.metric && (a->compare || a->nmetrics))
    return LBMC_ERROR(LBMC_ERR_ARG, "--wide: not allowed together with --%s",
                      a->compare ? "compare" : "metrics");
  if (a->transient && (a->wide.metric || a->compare || a->limit))
    return LBMC_ERROR(LBMC_ERR_ARG, "--transient: not allowed together with --%s",
                      a->wide.metric ? "wide"
                      : a->compare   ? "compare"
                                     : "limit");
  if (optind != argc - 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "lbmc info takes one results file (see lbmc info --help)");
  info->path = argv[optind];
  return LBMC_SUCCESS;
}

/* The file, its grid (from /grid, else from its job text) and the selections. */
static lbmc_err lbmc_info_open(const lbmc_info_args *a, lbmc_info *info)
{
  lbmc_results *res;
  LBMC_CALL(lbmc_results_read(info->path, &info->res));
  res = info->res;
  info->grid = res->grid;
  if (!info->grid && res->job_text && *res->job_text) {
    /* a file written before /grid existed: the grid of its job text, if this lbmc still
     * reads it (a probe: store mode, no message when it does not) */
    lbmc_job *job = NULL;
    const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
    const lbmc_err parsed = lbmc_job_parse_text(res->job_text, info->path, &job);
    lbmc_error_set_mode(was);
    if (parsed == LBMC_SUCCESS && lbmc_grid_from_job(job, &info->own_grid) == LBMC_SUCCESS)
      info->grid = info->own_grid;
    lbmc_job_destroy(&job);
  }
  info->keep = malloc((size_t)res->P + 1);
  if (!info->keep) return LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  memset(info->keep, 1, (size_t)res->P + 1);
  for (int w = 0; w < a->nwhere; w++) LBMC_CALL(lbmc_info_where(info, a->where[w]));
  if (a->transient) return LBMC_SUCCESS; /* --metrics names transient metrics */
  for (int m = 0; m < a->nmetrics; m++) LBMC_CALL(lbmc_info_metrics(info, a->metrics[m]));
  if (!a->nmetrics && info->format == LBMC_FORMAT_TABLE && !a->wide.metric)
    LBMC_CALL(lbmc_info_metrics(info, LBMC_INFO_DEFAULT_METRICS));
  return LBMC_SUCCESS;
}

int lbmc_cmd_info(int argc, char **argv)
{
  lbmc_info_args a;
  lbmc_info info;
  lbmc_table *rows = NULL;
  char legend[1024] = "", spec[1024] = "";
  long step = 1;
  lbmc_err err, limit_err = LBMC_SUCCESS;
  memset(&a, 0, sizeof a);
  memset(&info, 0, sizeof info);
  info.width = LBMC_INFO_WIDTH;
  err = lbmc_info_parse(argc, argv, &a, &info);
  if (err || a.help) {
    if (a.help) lbmc_info_usage(stdout);
    return lbmc_exit_status(err);
  }
  if (lbmc_checkpoint_is(info.path)) return lbmc_exit_status(lbmc_info_checkpoint(info.path));
  err = lbmc_info_open(&a, &info);
  if (!err && a.limit && a.compare)
    err = LBMC_ERROR(LBMC_ERR_ARG, "--limit: not with --compare (the limits are of the points, "
                                   "not of their differences)");
  if (!err && a.limit) {
    /* the rows are shown without the column if the package fails; exit status 1 then */
    info.limit_mode = a.limit;
    limit_err = lbmc_info_limits(&info);
    if (limit_err) {
      free(info.limit);
      free(info.refined);
      info.limit = info.refined = NULL;
    }
  }
  /* the view: the tidy rows, the paired comparisons, or one metric wide */
  for (int m = 0; a.transient && m < a.nmetrics; m++)
    snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s", m ? "," : "", a.metrics[m]);
  if (!err && a.transient)
    err = lbmc_info_transient(&info, a.nmetrics ? spec : NULL, &rows, &step);
  else if (!err)
    err = a.compare       ? lbmc_info_compare(&info, a.compare, &rows)
          : a.wide.metric ? lbmc_info_wide(&info, &a.wide, &rows, legend, sizeof legend)
                          : lbmc_info_rows(&info, &rows);
  if (!err && a.transient)
    lbmc_info_print_transient(stdout, &info, rows, step);
  else if (!err && a.wide.metric)
    lbmc_info_print_wide(stdout, &info, rows, legend);
  else if (!err && a.compare)
    lbmc_info_print_compare(stdout, &info, rows);
  else if (!err && info.format == LBMC_FORMAT_TABLE)
    lbmc_info_print_text(stdout, &info, rows);
  else if (!err && info.format == LBMC_FORMAT_JSON)
    lbmc_info_print_json(stdout, &info, rows);
  else if (!err)
    lbmc_table_print(stdout, rows, LBMC_FORMAT_CSV);
  lbmc_table_destroy(&rows);
  lbmc_grid_destroy(&info.own_grid);
  lbmc_results_destroy(&info.res);
  free(info.keep);
  free(info.limit);
  free(info.limit_source);
  free(info.refined);
  free(info.refined_source);
  free(info.refined_reason);
  json_decref(info.limit_answers);
  json_decref(info.refined_answers);
  return lbmc_exit_status(err ? err : limit_err);
}

int lbmc_cmd_merge(int argc, char **argv)
{
  lbmc_results **parts;
  lbmc_results *merged = NULL;
  int n = argc - 2;
  lbmc_err err = LBMC_SUCCESS;
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs("usage: lbmc merge OUT.h5 PART.h5...\n\n"
          "Combine result files of one job (e.g. the shards of lbmc run --shard I/K) into OUT.h5.\n"
          "All parts must come from the same job text and seed and be complete; shards must all\n"
          "be present, each once. OUT.h5 is written atomically.\n",
          stdout);
    return 0;
  }
  if (n < 1) {
    LBMC_ERROR(LBMC_ERR_ARG, "lbmc merge needs an output file and at least one part (see --help)");
    return 2;
  }
  err = lbmc_check_output_path(argv[1], (const char *const *)(argv + 2), n);
  if (!err) { /* the merge is about as large as its parts */
    double bytes = 0;
    struct stat st;
    for (int p = 0; p < n; p++) bytes += stat(argv[2 + p], &st) == 0 ? (double)st.st_size : 0;
    err = lbmc_results_probe(argv[1], bytes);
  }
  if (err) return lbmc_exit_status(err);
  parts = calloc((size_t)n, sizeof *parts);
  if (!parts) return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory"));
  for (int p = 0; p < n && !err; p++) err = lbmc_results_read(argv[2 + p], &parts[p]);
  if (!err) err = lbmc_results_merge(parts, (const char *const *)(argv + 2), n, &merged);
  if (!err) err = lbmc_results_write(merged, argv[1]);
  if (!err)
    printf("lbmc merge: wrote %s: %ld points from %d parts%s\n", argv[1], merged->P, n,
           merged->complete ? "" : " (the job has more points: this merge is not complete)");
  for (int p = 0; p < n; p++) lbmc_results_destroy(&parts[p]);
  free(parts);
  lbmc_results_destroy(&merged);
  return lbmc_exit_status(err);
}
