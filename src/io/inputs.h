/* Private: every input setting of lbmc, defined once in LBMC_INPUT_LIST, in the manner
 * of ROSS's option tables: its job-file key, its `lbmc sim` flag, how a value is read
 * and checked, its default and its help. The job-file reader (src/io/job_parse.c),
 * lbmc sim's flags, checks and --help (src/cli/cmd_sim.c) and the hints for misplaced
 * keys are loops over this table, so a new setting is one row (and, where it reaches
 * the model, the line that hands it over). The formats: docs/job-files.md.
 *
 * Values are judged by the one set of checks (include/lbmc/check.h; run options by
 * lbmc_run_options_check), so a value is worded the same wherever it comes from.
 * Nothing here is collective. */
#ifndef LBMC_INPUTS_H
#define LBMC_INPUTS_H

#include <stddef.h>

#include "lbmc/error.h"
#include "lbmc/model.h"
#include "lbmc/point.h"
#include "lbmc/rng.h"
#include "lbmc/service.h"
#include "lbmc/sim.h"

/** How a value is read and checked. */
typedef enum {
  LBMC_IT_GROUP,     /* not a setting: a heading of lbmc sim --help */
  LBMC_IT_SECTION,   /* a job-file mapping of further keys (system, run, run.precision) */
  LBMC_IT_POOLS,     /* system.pools: a list of pool mappings */
  LBMC_IT_INT,       /* an integer in [lo, hi] */
  LBMC_IT_POSITIVE,  /* a finite real > 0 */
  LBMC_IT_BETA,      /* a pool fraction in (0, 1], or 'rest' (x = NaN) */
  LBMC_IT_BUFFER,    /* an integer >= 1 or 'inf' */
  LBMC_IT_POLICY,    /* a routing policy (the model's parser); l = 1 for jiq */
  LBMC_IT_OPTION,    /* a model option: one of `choices`, kept as text (stale, sampling) */
  LBMC_IT_CHOICE,    /* one of `choices`; its index is the int run option at `opt` */
  LBMC_IT_ENGINE,    /* auto or an engine of the registry (lbmc/engines.h); its kind is the
                        int run option at `opt` */
  LBMC_IT_RUN_REAL,  /* a run option, double at `opt` (checked by lbmc_run_options_check) */
  LBMC_IT_RUN_INT,   /* a run option, long at `opt` */
  LBMC_IT_RUN_COUNT, /* a run option, long long at `opt` */
  LBMC_IT_WARMUP,    /* the run option warmup: a time, or 'auto' (l = 1) */
  LBMC_IT_INIT,      /* the run option init: empty, meanfield or tail:F1,F2,... (applied
                        from the text: lbmc_run_options_parse_init) */
  LBMC_IT_TRANSIENT, /* the run option transient: T0:T1:DT (lbmc_run_options_parse_transient) */
  LBMC_IT_BETAS,     /* a vector of pool fractions, entries as system.pools[j].beta */
  LBMC_IT_SPEEDS,    /* a list of speeds, entries as system.pools[j].mu */
  LBMC_IT_SERVICE,   /* a service distribution: text, or a mapping in job files */
  LBMC_IT_TEXT,      /* text kept as written */
  LBMC_IT_PATH,      /* a non-empty file path */
  LBMC_IT_TEXTS,     /* text, repeatable at most hi times */
  LBMC_IT_LINKS,     /* together: groups of settings varied together (job_links.c) */
  LBMC_IT_FLAG,      /* a command-line flag without a value */
  LBMC_IT_RUN_SWITCH /* a run option, int at `opt`: on by lbmc sim's flag without a value,
                        or true/false in job files */
} lbmc_input_type;

/** One value of an input. */
typedef struct {
  char *text;        /* as written (quotes removed); a vector as "[a, b]"; owned by job files */
  int line;          /* 1-based line in a job file; 0 on the command line */
  double x;          /* real inputs; NaN for beta 'rest' */
  long l;            /* integer inputs (n, routers, buffer, ...); 1 for warmup 'auto' and policy
                        jiq; the index of a choice */
  double *vec;       /* system.beta vectors: J entries (NaN = 'rest'); mu_k speed lists;
                        NULL otherwise */
  int vec_len;       /* entries of vec */
  lbmc_service *svc; /* service inputs: the distribution; NULL otherwise */
} lbmc_input_value;

/** One input. Unset fields are 0/NULL. */
typedef struct {
  const char *key;      /* job-file key ("system.n", "system.pools[j].mu", "run.tail_k");
                           NULL: lbmc sim only */
  const char *flag;     /* lbmc sim flag without "--" ("tail-k"); NULL: job files only */
  const char *arg;      /* the value's name in lbmc sim --help ("N") */
  lbmc_input_type type; /* how a value is read and checked */
  int axis;             /* in a job file, a list of values forms a grid axis (the rows
                           written AXIS(...) in LBMC_INPUT_LIST) */
  int routing;          /* an axis that changes only how customers are routed: the
                           points along it share a scenario (lbmc_job_axis_routing) */
  long lo, hi;          /* LBMC_IT_INT: the range; LBMC_IT_TEXTS: most repetitions */
  size_t opt;           /* LBMC_IT_RUN_*, WARMUP, CHOICE: offset in lbmc_run_options */
  const char *choices;  /* LBMC_IT_OPTION, CHOICE: the allowed words, ", "-separated */
  const char *def;      /* default in --help; NULL: a run option's from
                           lbmc_run_options_default, or none */
  const char *help;     /* lbmc sim --help; '\n' starts a continuation line */
  const char *what;     /* what one value must be; NULL: "an integer from lo to hi" */
  const char *need;     /* job files: a required key, what it is; NULL if optional */
  const char *sim_need; /* lbmc sim: a required flag, the message; NULL if optional */
  int policies;         /* read only by some policies (the policy types' uses_<key>):
                           --help names them from the registry */
} lbmc_input;

/** Defaults of the inputs that are not run options. */
#define LBMC_DEFAULT_SEED             1
#define LBMC_SIM_DEFAULT_REPLICAS     1   /* lbmc sim */
#define LBMC_JOB_DEFAULT_REPLICAS     10  /* job files */
#define LBMC_SIM_DEFAULT_MAX_REPLICAS 100 /* lbmc sim --precision */
#define LBMC_IN_TEXT_(x)              #x
#define LBMC_IN_TEXT(x)               LBMC_IN_TEXT_(x)

#define LBMC_IN_SERVICE_WHAT                                                                       \
  "a service distribution, as text such as lognormal:scv=4 or as a mapping such as "               \
  "{dist: lognormal, scv: 4}"

/* The inputs of one pool (system.pools[j]), in the order of the job-file section. */
#define LBMC_POOL_INPUT_LIST(X, AXIS)                                                              \
  AXIS(POOL_BETA, .key = "system.pools[j].beta", .type = LBMC_IT_BETA,                             \
       .what = "a pool fraction in (0, 1] or 'rest'")                                              \
  AXIS(POOL_MU, .key = "system.pools[j].mu", .type = LBMC_IT_POSITIVE,                             \
       .what = "a positive finite number such as 2 or 1/3 (speed)")                                \
  AXIS(POOL_BUFFER, .key = "system.pools[j].buffer", .type = LBMC_IT_BUFFER,                       \
       .what = "an integer >= 1 or 'inf' (buffer)")                                                \
  AXIS(POOL_MU_K, .key = "system.pools[j].mu_k", .type = LBMC_IT_SPEEDS,                           \
       .what = "a list of speeds [mu(1), ..., mu(L)] by customers at the server (1 to 64 numbers " \
               "> 0)")                                                                             \
  AXIS(POOL_SERVICE, .key = "system.pools[j].service", .type = LBMC_IT_SERVICE,                    \
       .what = LBMC_IN_SERVICE_WHAT)

/* X(ID, fields...) or AXIS(ID, fields...): the inputs in the order of the job-file
 * sections ("allowed: ..." lists), of lbmc sim --help and of its range checks. AXIS
 * marks an input that a list of values in a job file makes a grid axis: the table gets
 * its .axis = 1, and LBMC_MAX_AXES counts them. The rows of one pool stay together, in
 * LBMC_POOL_INPUT_LIST. */
#define LBMC_INPUT_LIST(X, AXIS)                                                                   \
  X(GROUP_SYSTEM, .type = LBMC_IT_GROUP, .help = "system")                                         \
  X(SYSTEM, .key = "system", .type = LBMC_IT_SECTION,                                              \
    .need = "the servers, arrivals and pools: n, lambda, pools")                                   \
  AXIS(N, .key = "system.n", .flag = "n", .arg = "N", .type = LBMC_IT_INT, .lo = 1,                \
       .hi = LBMC_MAX_N,                                                                           \
       .help = "number of servers (integer >= 1, 1e9 allowed; above\n"                             \
               "2147483647 the occupancy engine only)",                                            \
       .what = "an integer from 1 to 10^12 (servers)",                                             \
       .need = "the number of servers: an integer >= 1, or a list of them",                        \
       .sim_need = "the number of servers is required")                                            \
  AXIS(LAMBDA, .key = "system.lambda", .flag = "lambda", .arg = "L", .type = LBMC_IT_POSITIVE,     \
       .help = "arrival rate per server (> 0); total rate L*N",                                    \
       .what = "a positive finite number (arrival rate per server)",                               \
       .need = "the arrival rate per server: a number > 0, or a list",                             \
       .sim_need = "the arrival rate per server is required")                                      \
  X(POOLS_TEXT, .flag = "pools", .arg = "LIST", .type = LBMC_IT_TEXT, .def = "1:1:inf",            \
    .help = "pools beta:mu:buffer, comma-separated; beta = fraction of\n"                          \
            "servers (sum 1), mu = speed (> 0; 1/3 allowed), buffer =\n"                           \
            "customers per server incl. the one in service (>= 1 or inf);\n"                       \
            "the default is one pool of speed 1 with unlimited buffers")                           \
  AXIS(ROUTERS, .key = "system.routers", .routing = 1, .flag = "routers", .arg = "R",              \
       .type = LBMC_IT_INT, .lo = 1, .hi = LBMC_MAX_ROUTERS, .def = "1", .help = "routers",        \
       .what = "an integer from 1 to 1048576 (routers)")                                           \
  X(POOLS, .key = "system.pools", .type = LBMC_IT_POOLS,                                           \
    .need = "a list of pools, each a mapping {beta, mu, buffer}")                                  \
  AXIS(BETA, .key = "system.beta", .type = LBMC_IT_BETAS,                                          \
       .what = "a vector of pool fractions [beta_1, ..., beta_J]")                                 \
  AXIS(SERVICE, .key = "system.service", .type = LBMC_IT_SERVICE, .what = LBMC_IN_SERVICE_WHAT)    \
  AXIS(BUFFER, .key = "system.buffer", .type = LBMC_IT_BUFFER,                                     \
       .what = "an integer >= 1 or 'inf' (buffer of every pool)")                                  \
  LBMC_POOL_INPUT_LIST(X, AXIS)                                                                    \
  X(SERVICE_TEXT, .flag = "service", .arg = "SPEC", .type = LBMC_IT_TEXT,                          \
    .help = "service requirement distribution (mean 1; the time at a server\n"                     \
            "of pool j is requirement / mu_j) for every pool, or one per\n"                        \
            "pool separated by ';' (as many as --pools lists):\n"                                  \
            "  exponential (default), deterministic, erlang:k=K,\n"                                \
            "  hyperexponential:scv=C (C >= 1, balanced means),\n"                                 \
            "  hyperexponential:p=P,r1=A,r2=B (P/A + (1-P)/B = 1),\n"                              \
            "  lognormal:scv=C, weibull:shape=K (K >= 0.1),\n"                                     \
            "  lomax:shape=A (A > 1; Pareto II),\n"                                                \
            "  ph:alpha=[A1,...,Am],T=[[T11,...,T1m],...] (phase type, m <= 16,\n"                 \
            "  rates per unit of requirement, mean 1), coxian:scv=C (C >= 0.5),\n"                 \
            "  coxian:r=[R1,...,Rm],p=[P1,...,P(m-1)] (phases in series: rates and\n"              \
            "  continuation probabilities)")                                                       \
  X(MU_K_TEXT, .flag = "mu-k", .arg = "J=R1,...,RL", .type = LBMC_IT_TEXTS, .hi = LBMC_MAX_POOLS,  \
    .help = "queue-length-dependent speeds of pool J (1-based): a server\n"                        \
            "holding q customers works at speed R_min(q,L); replaces the\n"                        \
            "pool's mu from --pools; repeat for other pools (L <= 64)")                            \
  AXIS(POLICY, .key = "policy", .routing = 1, .flag = "policy", .arg = "P",                        \
       .type = LBMC_IT_POLICY, .def = "random", .help = "routing policy",                          \
       .what = "a policy such as pull, jsq(2) or random",                                          \
       .need = "a routing policy such as pull, or a list of them")                                 \
  AXIS(STALE, .key = "stale", .routing = 1, .flag = "stale", .arg = "S", .type = LBMC_IT_OPTION,   \
       .choices = "withdraw, keep", .def = "withdraw", .help = "withdraw or keep", .policies = 1,  \
       .what = "withdraw or keep")                                                                 \
  AXIS(SAMPLING, .key = "sampling", .routing = 1, .flag = "sampling", .arg = "S",                  \
       .type = LBMC_IT_OPTION, .choices = "distinct, with_replacement", .def = "distinct",         \
       .help = "distinct or with_replacement", .policies = 1,                                      \
       .what = "distinct or with_replacement")                                                     \
  X(GROUP_RUN, .type = LBMC_IT_GROUP, .help = "run")                                               \
  X(RUN, .key = "run", .type = LBMC_IT_SECTION)                                                    \
  X(REPLICAS, .key = "run.replicas", .flag = "replicas", .arg = "R", .type = LBMC_IT_INT, .lo = 1, \
    .hi = 1000000,                                                                                 \
    .def = LBMC_IN_TEXT(LBMC_SIM_DEFAULT_REPLICAS) "; job files: " LBMC_IN_TEXT(                   \
        LBMC_JOB_DEFAULT_REPLICAS),                                                                \
    .help = "independent replicas")                                                                \
  AXIS(WARMUP, .key = "run.warmup", .flag = "warmup", .arg = "W", .type = LBMC_IT_WARMUP,          \
       .opt = offsetof(lbmc_run_options, warmup),                                                  \
       .help = "warm-up time discarded, or auto (MSER-5 within --time)",                           \
       .what = "a number >= 0 or 'auto' (warm-up time)")                                           \
  AXIS(TIME, .key = "run.time", .flag = "time", .arg = "T", .type = LBMC_IT_RUN_REAL,              \
       .opt = offsetof(lbmc_run_options, time), .help = "measured time per replica",               \
       .what = "a positive finite number (measured time)")                                         \
  X(BATCHES, .key = "run.batches", .flag = "batches", .arg = "B", .type = LBMC_IT_RUN_INT,         \
    .opt = offsetof(lbmc_run_options, batches), .help = "batch means per replica",                 \
    .what = "an integer from 2 to 100000")                                                         \
  X(CONFIDENCE, .key = "run.confidence", .flag = "confidence", .arg = "C",                         \
    .type = LBMC_IT_RUN_REAL, .opt = offsetof(lbmc_run_options, confidence),                       \
    .help = "interval level", .what = "a level between 0 and 1")                                   \
  X(SEED, .key = "run.seed", .flag = "seed", .arg = "S", .type = LBMC_IT_INT, .lo = 0,             \
    .hi = LBMC_SEED_MAX, .def = LBMC_IN_TEXT(LBMC_DEFAULT_SEED), .help = "seed 0..2147483647")     \
  X(TAIL_K, .key = "run.tail_k", .flag = "tail-k", .arg = "K", .type = LBMC_IT_RUN_INT,            \
    .opt = offsetof(lbmc_run_options, tail_k), .help = "tail levels k = 1..K",                     \
    .what = "an integer from 1 to 100000")                                                         \
  X(PAIRS, .key = "run.pairs", .flag = "pairs", .type = LBMC_IT_RUN_SWITCH,                        \
    .opt = offsetof(lbmc_run_options, pairs), .def = "off",                                        \
    .help = "pair statistics: the joint law of two servers' queue\n"                               \
            "lengths (HDF5 /pairs), pair_tv and pair_corr (docs/model.md)",                        \
    .what = "true or false (pair statistics)")                                                     \
  X(MAX_CUSTOMERS, .key = "run.max_customers", .flag = "max-customers", .arg = "M",                \
    .type = LBMC_IT_RUN_COUNT, .opt = offsetof(lbmc_run_options, max_customers),                   \
    .def = "0: 1000 n + 1e5, at most 2^26 per-server",                                             \
    .help = "runaway cap on customers in the system",                                              \
    .what = "an integer from 0 (the default cap) to 2^62")                                         \
  X(ENGINE, .key = "run.engine", .flag = "engine", .arg = "E", .type = LBMC_IT_ENGINE,             \
    .opt = offsetof(lbmc_run_options, engine), .def = "auto",                                      \
    .help = "auto (the first of these engines that applies) or one\n"                              \
            "engine (docs/model.md, Engines)",                                                     \
    .what = "auto or an engine's name")                                                            \
  X(INIT, .key = "run.init", .flag = "init", .arg = "I", .type = LBMC_IT_INIT, .def = "empty",     \
    .help = "empty; meanfield: start each replica near the mean-field\n"                           \
            "fixed point (every engine; removes most of the warm-up);\n"                           \
            "tail:F1,F2,...[;F1,...]: per pool the fractions of servers\n"                         \
            "holding >= k customers (occupancy engine)",                                           \
    .what = "empty, meanfield or tail:F1,F2,...")                                                  \
  X(TRANSIENT, .key = "run.transient", .flag = "transient", .arg = "T0:T1:DT",                     \
    .type = LBMC_IT_TRANSIENT,                                                                     \
    .help = "a transient run: replicas from the --init start observed at\n"                        \
            "T0, T0 + DT, ..., T1 (pointwise intervals and a Bonferroni band)",                    \
    .what = "T0:T1:DT such as 0:40:0.5")                                                           \
  X(PRECISION, .key = "run.precision", .type = LBMC_IT_SECTION)                                    \
  X(METRIC, .key = "run.precision.metric", .type = LBMC_IT_TEXT,                                   \
    .what = "a metric name such as p_wait",                                                        \
    .need = "the metric whose interval is targeted, e.g. p_wait")                                  \
  X(RELATIVE, .key = "run.precision.relative", .type = LBMC_IT_POSITIVE,                           \
    .what = "a positive number such as 0.05", .need = "the target relative half-width, e.g. 0.05") \
  X(PRECISION_TEXT, .flag = "precision", .arg = "M:REL", .type = LBMC_IT_TEXT,                     \
    .help = "sequential mode: replicas are added until metric M's relative\n"                      \
            "half-width is at most REL (e.g. p_wait:0.05, tail[2][3]:0.1,\n"                       \
            "sojourn_quantiles[0.99]:0.05); a run not yet stationary is\n"                         \
            "doubled instead (up to --max-time)")                                                  \
  X(MAX_REPLICAS, .key = "run.precision.max_replicas", .flag = "max-replicas", .arg = "R",         \
    .type = LBMC_IT_INT, .lo = 1, .hi = (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES,                     \
    .def = LBMC_IN_TEXT(LBMC_SIM_DEFAULT_MAX_REPLICAS),                                            \
    .help = "with --precision: the most replicas", .need = "the most replicas a point may get")    \
  X(MAX_TIME, .key = "run.precision.max_time", .flag = "max-time", .arg = "T",                     \
    .type = LBMC_IT_POSITIVE, .def = LBMC_IN_TEXT(LBMC_MAX_TIME_FACTOR) " x --time",               \
    .help = "with --precision: the longest --time a run may be doubled to",                        \
    .what = "a positive number: the longest time setting a point not yet stationary may get "      \
            "(default " LBMC_IN_TEXT(LBMC_MAX_TIME_FACTOR) " x run.time)")                         \
  X(GROUP_OUTPUT, .type = LBMC_IT_GROUP, .help = "output")                                         \
  X(OUTPUT, .key = "output", .flag = "output", .arg = "FILE", .type = LBMC_IT_PATH,                \
    .help = "-o FILE: also write the point as a results file (HDF5, as\n"                          \
            "lbmc run's; a transient run's /transient with it)",                                   \
    .what = "a file path such as results/x.h5")                                                    \
  X(TOGETHER, .key = "together", .type = LBMC_IT_LINKS,                                            \
    .what = "a list of groups of settings varied together, e.g. [[n, lambda]]")                    \
  X(PROGRESS, .flag = "progress", .arg = "WHEN", .type = LBMC_IT_OPTION,                           \
    .choices = "auto, always, never", .def = "auto",                                               \
    .help = "progress and ETA on stderr: auto (a live line on a terminal;\n"                       \
            "otherwise a line every 5 s once a run is long), always\n"                             \
            "(those lines from the start), never, or a number: always,\n"                          \
            "with that many seconds between two lines")                                            \
  X(JSON, .flag = "json", .type = LBMC_IT_FLAG,                                                    \
    .help = "one JSON object instead of the table (NaN written as null)")                          \
  X(LIMIT, .flag = "limit", .arg = "[refined]", .type = LBMC_IT_FLAG,                              \
    .help = "the n -> inf limit of each estimate where one is known, from\n"                       \
            "the Python package (lbmc_analysis.limits, docs/limits.md):\n"                         \
            "a column, or \"limit\" in each estimate of --json; with\n"                            \
            "refined also the refined mean field x* + V/n at this n\n"                             \
            "(\"limit_refined\"; with --transient the ODE and x(t) + V(t)/n)")                     \
  X(HELP, .flag = "help", .type = LBMC_IT_FLAG, .help = "this help")

typedef enum {
#define LBMC_X_INPUT_ENUM(id, ...) LBMC_IN_##id,
  LBMC_INPUT_LIST(LBMC_X_INPUT_ENUM, LBMC_X_INPUT_ENUM)
#undef LBMC_X_INPUT_ENUM
      LBMC_INPUTS
} lbmc_input_id;

/* Counting rows of the lists: + 1 for each row written with the macro COUNT. */
#define LBMC_X_INPUT_COUNT(id, ...) +1
#define LBMC_X_INPUT_SKIP(id, ...)

enum {
  /** The rows of one pool: LBMC_IN_POOL_FIRST + 0 .. LBMC_POOL_INPUTS - 1. */
  LBMC_POOL_INPUTS = 0 LBMC_POOL_INPUT_LIST(LBMC_X_INPUT_COUNT, LBMC_X_INPUT_COUNT),
  /** The inputs that may be grid axes, and those of them that are a pool's. */
  LBMC_AXIS_INPUTS = 0 LBMC_INPUT_LIST(LBMC_X_INPUT_SKIP, LBMC_X_INPUT_COUNT),
  LBMC_POOL_AXIS_INPUTS = 0 LBMC_POOL_INPUT_LIST(LBMC_X_INPUT_SKIP, LBMC_X_INPUT_COUNT)
};
#define LBMC_IN_POOL_FIRST LBMC_IN_POOL_BETA

/** Most grid axes of a job: every axis input once, a pool's once per pool. */
#define LBMC_MAX_AXES                                                                              \
  (LBMC_AXIS_INPUTS - LBMC_POOL_AXIS_INPUTS + LBMC_POOL_AXIS_INPUTS * LBMC_MAX_POOLS)

/** 1 if input `id` is one of a pool's (its settings are per pool). */
#define LBMC_INPUT_IS_POOL(id)                                                                     \
  ((id) >= LBMC_IN_POOL_FIRST && (id) < LBMC_IN_POOL_FIRST + LBMC_POOL_INPUTS)

/** The table, indexed by lbmc_input_id. */
extern const lbmc_input lbmc_inputs[LBMC_INPUTS];

/** 1 if the row's values go to lbmc_run_options (at row->opt). */
int lbmc_input_is_run_option(const lbmc_input *row);
/** 1 if the row's lbmc sim flag takes a value (not LBMC_IT_FLAG or LBMC_IT_RUN_SWITCH). */
int lbmc_input_takes_value(const lbmc_input *row);

/** Convert one value of `row` from text into v (v->x or v->l; text is not copied);
 *  `where` names the value in messages ("--n", "jobs/x.yaml:7: system.n"). The checks
 *  of the type itself are made here (a buffer, a policy, one of the choices, a
 *  non-empty path); ranges by lbmc_input_check. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_input_parse(const lbmc_input *row, const char *where, const char *text,
                          lbmc_input_value *v);

/** The range check of a parsed value (LBMC_IT_INT, POSITIVE, BETA; nothing for other
 *  types: run options are judged together by lbmc_run_options_check). Errors:
 *  LBMC_ERR_ARG "<where>: <value> is not allowed; <what is allowed>". */
lbmc_err lbmc_input_check(const lbmc_input *row, const char *where, const lbmc_input_value *v);

/** Write a run option's value into o (nothing for rows that are not run options). */
void lbmc_input_apply(const lbmc_input *row, const lbmc_input_value *v, lbmc_run_options *o);

/** "(default X)" of a row for --help into buf (len bytes); "" if it has none. */
const char *lbmc_input_default(const lbmc_input *row, char *buf, size_t len);

#endif
