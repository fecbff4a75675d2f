/* Private: the state of a point (include/lbmc/point.h) shared by point.c (collecting
 * replica records, the warm-up, what each replica keeps, the decisions of sequential
 * mode) and point_reduce.c (estimates, quantiles and the verdict). */
#ifndef LBMC_POINT_IMPL_H
#define LBMC_POINT_IMPL_H

#include "../stats/dhist.h"
#include "../stats/estimators.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "point_store.h"
#include "point_verdict.h"
#include "record.h"

/** A transient run's moments over the replicas folded so far, in replica order (so the
 *  result does not depend on the order records arrive in): per time, the mean and the sum
 *  of squared deviations of every kept column (Welford), and the co-moments of the
 *  interval's arrivals with its waited, blocked and messages (for ratio estimators). */
typedef struct {
  long folded;   /* replicas 0 .. folded - 1 are in */
  long n;        /* of them below the runaway cap (the ones pooled) */
  long unstable; /* of them at the cap (left out) */
  double *mean;  /* S x lbmc_point_trans_width */
  double *m2;    /* S x lbmc_point_trans_width */
  double *c;     /* S x 3 */
} lbmc_point_trans_acc;

/* The mean-field start's rule in a reduction (lbmc_point_mf_short): not held; held in place
 * of the relaxation rules (their lag-1 test replaced too); held and decided the point (the
 * relaxation rules withheld ok: the other entries' bounds widen their intervals). */
typedef enum {
  LBMC_MF_RULE_OFF = 0,
  LBMC_MF_RULE_HOLDS = 1,
  LBMC_MF_RULE_DECIDED = 2
} lbmc_mf_rule;

struct lbmc_point_ {
  const lbmc_model *m;
  lbmc_run_options o;
  int J, K;
  size_t W, total;
  long n, N[LBMC_MAX_POOLS];
  long first_round;
  int doubling; /* sequential mode's doublings of the run */
  /* the replicas: rows 0 .. appended - 1 in the store, the ones after in the window */
  lbmc_rep_store *store;  /* rows of lbmc_point_row_bytes, in replica order */
  lbmc_rep_store *qstore; /* their quantile data, a byte stream (rows of 1 byte) */
  lbmc_rep_store *rstore; /* the whole records of the window's replicas waiting for the
                             warm-up's decision (warmup auto), a byte stream (rows of 1
                             byte) in the order they came, each at a multiple of 8 bytes;
                             NULL when none */
  size_t row_bytes;
  long appended;        /* replicas 0 .. appended - 1 are in the store */
  lbmc_point_rep **win; /* win_cap slots: replica i >= appended at i % win_cap (NULL: not
                           in); they span fewer than win_cap replicas */
  long win_cap;
  long win_count;       /* replicas in the window */
  unsigned char *full0; /* replica 0's whole record once in the store, for batch means while
                           it is the only one summarised (always in a one-replica point) */
  size_t full0_size;
  int other_kept;          /* a replica other than 0 summarised */
  double fine_sy, fine_sx; /* the running sums of fine parts of the stored replicas */
  lbmc_point_cursor *cur;  /* reading the store */
  /* the layout of the records (from the first one) and the warm-up */
  int have_layout;
  size_t S, G;
  int qkind;
  double seg_len, t_start, tau;
  int decided;
  size_t d;    /* segments discarded */
  size_t fine; /* fine parts of each replica's measured period */
  int near_cap;
  /* the checks of point_checks.c */
  size_t batch_cap;         /* one replica: most batches its relaxation time allows (0: any) */
  double batch_tau;         /* one replica: the relaxation time its batch intervals are
                               widened for (lbmc_relax_length_factor; NaN: none) */
  double need_measured;     /* measured time per replica the relaxation rules ask (NaN) */
  double need_warmup;       /* warm-up the transient rule asks (NaN) */
  double flow_factor;       /* data that would prove the most loaded pool overloaded, over
                               the data at hand (0: none) */
  int flow_pool;            /* that pool */
  unsigned *moment_flags;   /* total: LBMC_IV_INFINITE / LBMC_IV_HEAVY_TAIL from the model */
  int heavy_all;            /* a service law of infinite variance: every estimator heavy */
  int moment_any;           /* some metric infinite or heavy: N's moments are (the relaxation
                               rules need its variance and skewness) */
  char moment_reason[1024]; /* which metrics are infinite or heavy, and why */
  struct lbmc_mf_expansion_ *mfx; /* the refined mean field of the model (the mean-field
                                     start's rule, lbmc_point_mf_short), or NULL */
  int mfx_tried;                  /* mfx computed (or found not to apply) */
  lbmc_mf_rule mf_short;          /* this reduction: whether the mean-field start's rule
                                     holds in place of the relaxation rules, and decided */
  double *mf_widen;               /* 2 total: the entries the rule widened (flag
                                     LBMC_IV_START_BIAS_WIDENED), their bound on the start
                                     bias and their standard error before widening, in the
                                     metric's units; NaN elsewhere (lbmc_point_start_bias) */
  int target_metric;              /* sequential mode's target entry, which holds the verdict
                                     with the customers under the rule; -1: none */
  long target_entry;
  /* results */
  lbmc_verdict v;
  lbmc_estimates est;
  /* work */
  double *work;
  size_t work_len;
  double *rep_values; /* 2 total: lbmc_point_replica's values and weights of one replica */
  lbmc_dhist *hist;   /* 3: pooled sojourn, pooled wait, one unit */
  /* pair statistics (run.pairs; point_pairs.c) */
  size_t pair_at;          /* offset of their block in a record's W doubles */
  lbmc_pair_estimates *pe; /* NULL without */
  double *pwork;           /* their work space, pwork_len doubles */
  size_t pwork_len;
  lbmc_point_trans_acc *tacc; /* a transient run's moments, or NULL */
};

/** The pair statistics' tables of a point with run.pairs (p->pe, p->pair_at), NaN.
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_pairs_create(lbmc_point *p);
void lbmc_point_pairs_destroy(lbmc_point *p);
/** Every table NaN (a reduction starts, or finds the point unstable). */
void lbmc_point_pairs_clear(lbmc_point *p);
/** The pair metrics and tables from the units (batches: merged as the batch rule merges
 *  the customers per server). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_pairs_reduce(lbmc_point *p, const lbmc_units *u, int batches);

/** Add the segments [from, to) of a record of the point into out (W doubles). */
void lbmc_point_seg_add(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                        double *out);

/** A transient run: what the point keeps of each time of a replica (the observer's
 *  block, then the interval's arrivals, blocked, waited, departures, messages). */
size_t lbmc_point_trans_width(const lbmc_point *p);
/** Keep a transient run's values of a record in r->trans (nothing for a steady-state run).
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_trans_keep(const lbmc_point *p, lbmc_point_rep *r, const lbmc_record *rec);
/** Fold replica r (the one after the folded ones, going into the store: unstable, its
 *  row's flag) into p->tacc, freeing its values (nothing for a steady-state run). Errors:
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_trans_fold(lbmc_point *p, lbmc_point_rep *r, int unstable);
/** Forget the folded moments (a new doubling). */
void lbmc_point_trans_forget(lbmc_point *p);

/** The relaxation rule and the transient rule on replicas 0 .. R - 1 (evidence
 *  relaxation_short, warmup_short; v->relaxation_*, transient_bound; p->batch_cap,
 *  need_*). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_relax_check(lbmc_point *p, long R);
/** Free the mean-field expansion a point's checks computed (lbmc_point_destroy). */
void lbmc_point_mf_forget(lbmc_point *p);

/** Flow balance on replicas 0 .. R - 1: a pool with unlimited buffers whose inflow over
 *  the last half of the measured period is above its capacity (N_j mu_j(L_j)) plus the
 *  runaway threshold, at level 1 - 1e-3 (evidence pool_overloaded; v->overload; else
 *  p->flow_factor, flow_pool). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_flow(lbmc_point *p, long R);

/** From the model: which metric entries are infinite or have estimators of infinite
 *  variance (p->moment_flags, heavy_all, moment_reason). Once, at creation. */
void lbmc_point_moments(lbmc_point *p);
/** Entry k of p->est widened by the mean-field start bias's bound b (>= 0) on each side
 *  (lbmc_point_mf_flags): the estimate stays; the ends move out by b, clamped to the
 *  metric's range ([0, 1] for a proportion or a fraction of time, >= 0 for the rest: every
 *  metric is nonnegative); half_width is the longer side again, and std_err grows with it
 *  (times the new half_width over the old, as the batches' widening scales both): t std_err
 *  + b for a symmetric interval; flag LBMC_IV_START_BIAS_WIDENED. The bound and the standard
 *  error before go to p->mf_widen[k] and [p->total + k] (lbmc_point_start_bias). */
void lbmc_point_mf_widen(lbmc_point *p, size_t k, double b, int proportion);
/** Apply them to the estimates (inf without interval; heavy: interval withheld) and the
 *  verdict's evidence (infinite_mean, heavy_tail), then the mean-field start's flags and
 *  widenings. Errors: as lbmc_point_row_at (replica 0's row). */
lbmc_err lbmc_point_apply_moments(lbmc_point *p);

/** What the relaxation rules need of replicas 0 .. R - 1 over the measured period
 *  [p->d, p->S): the relaxation time, the mean customers in the system nbar, its
 *  standard error se (replicas, or the one replica's merged batches), and the mean
 *  customers at time 0. from_records: read the replicas' full records (the warm-up's
 *  decision, before they are summarised); else what they keep. Uses p->work. Errors:
 *  LBMC_ERR_MEMORY. */
typedef struct {
  lbmc_relax rx;
  double nbar, se, n0;
  double skew; /* skewness of the customers in the system (tick-end samples) */
} lbmc_point_relaxation;

/** The moments of a record's customers at the tick ends of segments [from, to). */
void lbmc_point_record_moments(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                               lbmc_moments *out);
lbmc_err lbmc_point_relax_measure(lbmc_point *p, long R, int from_records,
                                  lbmc_point_relaxation *out);

/** The relaxation time of the customers in the system that the model gives without
 *  reading a run: the exact value where known (independent M/M/1 queues), else the
 *  heavy-traffic floor of the pooled system (docs/model.md, "Relaxation time"); 0 where
 *  the model gives none (finite buffers, speeds that depend on the queue, rho >= 1, a
 *  service law of infinite variance). */
double lbmc_point_tau_model(const lbmc_point *p);

/** The relaxation time the start's transient bound uses with the readings `m`: the exact
 *  value where known; the floor where the reading is resolved and its lower bound does not
 *  prove the system slower, as the relaxation gate, else the reading but at least the
 *  floor; where the model gives none, the reading m->rx.tau. *settled (NULL: not asked)
 *  is 1 when the value rests on no unresolved reading (exact, or a resolved one). */
double lbmc_point_tau_start(const lbmc_point *p, const lbmc_point_relaxation *m, int *settled);

/** The warm-up (time from the start) that brings the transient bound of `m` (measured
 *  time `measured`, relaxation time lbmc_point_tau_start) down to bias_se standard errors:
 *  the smallest w with |n0 - nbar| tau G(w / tau) / measured <= bias_se se
 *  (lbmc_transient_warmup); 0 if none is needed, NaN if it cannot be said. */
double lbmc_point_warmup_needed(const lbmc_point *p, const lbmc_point_relaxation *m,
                                double measured, double bias_se);

#endif
