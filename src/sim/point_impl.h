/* Private: the state of a point (include/lbmc/point.h) shared by point.c (collecting
 * replica records, the warm-up, what each replica keeps, the decisions of sequential
 * mode) and point_reduce.c (estimates, quantiles and the verdict). */
#ifndef LBMC_POINT_IMPL_H
#define LBMC_POINT_IMPL_H

#include "../stats/dhist.h"
#include "lbmc/point.h"
#include "record.h"

/** Equal parts of a replica's measured period kept for the tests of the verdict: halves
 *  and quarters are unions of them, and their lag-1 correlation says whether the replicas
 *  are short against the relaxation time. */
#define LBMC_PARTS 8
/** Quarters of the measured period (the drift test's units and a replica's own growth),
 *  each LBMC_PARTS_PER_QUARTER consecutive parts. */
#define LBMC_QUARTERS          4
#define LBMC_PARTS_PER_QUARTER (LBMC_PARTS / LBMC_QUARTERS)
/** Fields of a part: its time, integral of customers in the system, arrivals. */
enum { LBMC_PART_LEN, LBMC_PART_AREA, LBMC_PART_ARRIVALS, LBMC_PART_FIELDS };

/* ---- the tests of the verdict (docs/model.md, "Verdicts"; constants named once; the
 * levels and limits that results files describe are in lbmc/point.h) ---- */

/** A not-stationary point is suggested a run this many times longer. */
#define LBMC_SUGGEST_FACTOR 4
/** A point with no customers is suggested a run with about this many arrivals. */
#define LBMC_SUGGEST_ARRIVALS 100

/** What a point keeps of one replica. */
typedef struct {
  int present;         /* its record is in */
  unsigned char *full; /* the whole record, until summarised (replica 0 of a one-replica
                          point keeps it: its batches and quantile groups) */
  size_t full_size;
  lbmc_point_replica_info kept; /* once summarised (kept.present): what lbmc_point_replica
                                   gives; its sums, values and weights live in `block` */
  double *block;                /* W + 2 total: sums, values, weights */
  double t_stop;                /* when it hit the customer cap (kept.unstable) */
  int64_t cap;                  /* the cap */
  double parts[LBMC_PARTS][LBMC_PART_FIELDS];
  unsigned char *qdata; /* its retained sojourn and wait histograms, or its mixture,
                           packed (qsize 0: none retained) */
  size_t qsize;
} lbmc_point_rep;

struct lbmc_point_ {
  const lbmc_model *m;
  lbmc_run_options o;
  int J, K;
  size_t W, total;
  long n, N[LBMC_MAX_POOLS];
  long first_round;
  int doubling; /* sequential mode's doublings of the run */
  long nrep;    /* slots allocated in rep */
  lbmc_point_rep *rep;
  /* the layout of the records (from the first one) and the warm-up */
  int have_layout;
  size_t S, G;
  int qkind;
  double seg_len, t_start, tau;
  int decided;
  size_t d; /* segments discarded */
  int near_cap;
  /* results */
  lbmc_verdict v;
  lbmc_estimates est;
  /* work */
  double *work;
  size_t work_len;
  lbmc_dhist *hist; /* 3: pooled sojourn, pooled wait, one unit */
};

/** Add the segments [from, to) of a record of the point into out (W doubles). */
void lbmc_point_seg_add(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                        double *out);

/** Work space of at least n doubles in p->work. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_work(lbmc_point *p, size_t n);

#endif
