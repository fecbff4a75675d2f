/* A point's replicas (include/lbmc/point.h): collecting their records in any order,
 * the point's one warm-up (MSER on the replica-averaged series of its first round),
 * what each replica keeps once the warm-up is known, and what sequential mode does
 * next. The estimates and the verdict are in point_reduce.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "lbmc/metrics.h"
#include "lbmc/sim.h"
#include "point_impl.h"

static const char *const lbmc_ev_names[] = {
#define LBMC_X_EV_NAME(id, bit, name, meaning) name,
    LBMC_EVIDENCE_LIST(LBMC_X_EV_NAME)
#undef LBMC_X_EV_NAME
};

#define LBMC_EV_COUNT ((int)(sizeof lbmc_ev_names / sizeof *lbmc_ev_names))

static const char *lbmc_ev_name(int b)
{
  return b >= 0 && b < LBMC_EV_COUNT ? lbmc_ev_names[b] : NULL;
}

/* Names of the bits set in `bits` among the first `count` (name(b) names bit b),
 * comma-separated, into buf. */
static const char *lbmc_bit_names(unsigned bits, const char *(*name)(int), int count, char *buf,
                                  size_t len)
{
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int b = 0; b < count && used < len; b++)
    if (bits & (1u << b))
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", name(b));
  return buf;
}

const char *lbmc_evidence_names(unsigned evidence, char *buf, size_t len)
{
  return lbmc_bit_names(evidence, lbmc_ev_name, LBMC_EV_COUNT, buf, len);
}

unsigned lbmc_evidence_bits(const char *names)
{
  unsigned bits = 0;
  for (const char *at = names; at && *at;) {
    const size_t len = strcspn(at, ",");
    for (int b = 0; b < LBMC_EV_COUNT; b++)
      if (strlen(lbmc_ev_names[b]) == len && strncmp(at, lbmc_ev_names[b], len) == 0)
        bits |= 1u << b;
    at += len + (at[len] == ',');
  }
  return bits;
}

/* The LBMC_ESTIMATE_ARRAYS double arrays of an estimate block, in their allocation order. */
static void lbmc_estimates_parts(lbmc_estimates *e, double **part[LBMC_ESTIMATE_ARRAYS])
{
  part[0] = &e->estimate, part[1] = &e->half_width, part[2] = &e->std_err;
  part[3] = &e->lower, part[4] = &e->upper, part[5] = &e->upper_bound;
}

lbmc_err lbmc_estimates_alloc(lbmc_estimates *e, size_t total)
{
  double **part[LBMC_ESTIMATE_ARRAYS];
  memset(e, 0, sizeof *e);
  e->estimate = malloc(sizeof(double) * (LBMC_ESTIMATE_ARRAYS * total + 1));
  e->flags = calloc(total + 1, sizeof *e->flags);
  if (!e->estimate || !e->flags) {
    lbmc_estimates_free(e);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "estimates: out of memory for %zu entries", total);
  }
  e->total = total;
  lbmc_estimates_parts(e, part);
  for (int k = 1; k < LBMC_ESTIMATE_ARRAYS; k++) *part[k] = *part[k - 1] + total;
  for (size_t i = 0; i < LBMC_ESTIMATE_ARRAYS * total; i++) e->estimate[i] = NAN;
  return LBMC_SUCCESS;
}

void lbmc_estimates_free(lbmc_estimates *e)
{
  free(e->estimate); /* the LBMC_ESTIMATE_ARRAYS double arrays: one allocation */
  free(e->flags);
  memset(e, 0, sizeof *e);
}

void lbmc_estimates_copy(lbmc_estimates *dst, size_t to, const lbmc_estimates *src, size_t from,
                         size_t n)
{
  double **a[6], **b[6];
  lbmc_estimates_parts(dst, a);
  lbmc_estimates_parts((lbmc_estimates *)src, b);
  for (int k = 0; k < 6; k++) memcpy(*a[k] + to, *b[k] + from, sizeof(double) * n);
  memcpy(dst->flags + to, src->flags + from, sizeof *dst->flags * n);
}

int lbmc_interval_flags(void)
{
  int n = 0;
  while (*lbmc_iv_flag_name(1u << n)) n++;
  return n;
}

const char *lbmc_interval_flag_name(int b)
{
  return b >= 0 && b < lbmc_interval_flags() ? lbmc_iv_flag_name(1u << b) : NULL;
}

const char *lbmc_interval_flag_meaning(int b)
{
  return b >= 0 && b < lbmc_interval_flags() ? lbmc_iv_flag_meaning(1u << b) : NULL;
}

const char *lbmc_interval_flag_names(unsigned flags, char *buf, size_t len)
{
  return lbmc_bit_names(flags, lbmc_interval_flag_name, lbmc_interval_flags(), buf, len);
}

lbmc_err lbmc_point_create(const lbmc_model *m, const lbmc_run_options *o, long first_round,
                           lbmc_point **out)
{
  lbmc_point *p = calloc(1, sizeof *p);
  lbmc_err err;
  if (!p) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
  p->m = m;
  p->o = *o;
  p->J = lbmc_model_pools(m);
  p->K = (int)o->tail_k;
  p->W = lbmc_run_segment_width(m, o);
  p->total = lbmc_metric_run_total(p->J, p->K, o->pairs);
  p->n = lbmc_model_n(m);
  for (int j = 0; j < p->J; j++) p->N[j] = lbmc_model_pool_servers(m, j);
  p->first_round = first_round < 1 ? 1 : first_round;
  p->hist = malloc(sizeof *p->hist * 3);
  p->moment_flags = calloc(p->total, sizeof *p->moment_flags);
  p->rep_values = malloc(sizeof *p->rep_values * 2 * p->total);
  p->mf_widen = malloc(sizeof *p->mf_widen * 2 * p->total);
  p->target_metric = -1;
  err = p->hist && p->moment_flags && p->rep_values && p->mf_widen
            ? lbmc_estimates_alloc(&p->est, p->total)
            : LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
  if (!err) err = lbmc_point_store_create(p);
  if (err) {
    lbmc_point_destroy(&p);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  p->v.status = LBMC_STATUS_OK;
  if (o->pairs) {
    err = lbmc_point_pairs_create(p);
    if (err) {
      lbmc_point_destroy(&p);
      return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    }
  }
  lbmc_point_moments(p);
  *out = p;
  return LBMC_SUCCESS;
}

void lbmc_point_destroy(lbmc_point **p)
{
  if (!p || !*p) return;
  lbmc_point_store_destroy(*p);
  lbmc_estimates_free(&(*p)->est);
  free((*p)->moment_flags);
  free((*p)->rep_values);
  free((*p)->mf_widen);
  free((*p)->work);
  free((*p)->hist);
  lbmc_point_pairs_destroy(*p);
  lbmc_point_trans_forget(*p);
  lbmc_point_mf_forget(*p);
  free(*p);
  *p = NULL;
}

int lbmc_point_doubling(const lbmc_point *p) { return p->doubling; }

void lbmc_point_set_doubling(lbmc_point *p, int doubling)
{
  lbmc_point_store_forget(p);
  lbmc_point_trans_forget(p);
  p->doubling = doubling;
  p->have_layout = 0; /* the segments of a longer run are longer */
  p->decided = 0;
  p->d = 0;
  p->near_cap = 0;
}

void lbmc_point_seg_add(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                        double *out)
{
  for (size_t s = from; s < to; s++)
    for (size_t w = 0; w < p->W; w++) out[w] += rec->seg[s * p->W + w];
}

/* The segments [from, to) of a record summed into out (W doubles). */
static void lbmc_point_sum(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                           double *out)
{
  memset(out, 0, sizeof *out * p->W);
  lbmc_point_seg_add(p, rec, from, to, out);
}

_Static_assert(LBMC_FINE_PARTS <= LBMC_RELAX_UNIT_PARTS,
               "a replica's fine parts are summarised for the relaxation rule");

/* The fine parts of the measured period [d, S): LBMC_FINE_PARTS, or one per segment. */
static void lbmc_point_set_fine(lbmc_point *p)
{
  p->fine = p->S - p->d < LBMC_FINE_PARTS ? p->S - p->d : LBMC_FINE_PARTS;
}

/* The start's bias the automatic warm-up leaves, in standard errors of the mean customers:
 * a fifth of what the verdict's start check accepts (LBMC_RELAX_BIAS_SE). A quarter of a
 * standard error was meant to cost 0.4% of coverage, but the misses of skewed replica
 * means cluster on the low side, where an empty start's bias pushes: JSQ(2) on 2 servers
 * at rho 0.95, 10 replicas of 80 tau, 600 runs, 570 of them without warm-up (bound about
 * 0.14 se): the estimates averaged 0.048 per server below the truth (the bound: 0.069),
 * and the ok runs covered 92.2%, 93.6% once shifted by the bound. Getting to a twentieth
 * costs a few relaxation times at most (G falls e-fold per 2 tau): a few per cent of a run
 * the relaxation rule accepts. */
#define LBMC_WARMUP_BIAS_SE 0.05

/* The warm-up raised until the transient the start may leave (lbmc_transient_bound with
 * lbmc_point_tau_start: the model's relaxation time where it gives one, else the first
 * round's reading over its measured period) is bias_se standard errors, at most to half the
 * run (the verdict then says so): from MSER's truncation where the model gives no relaxation
 * time (MSER alone truncates too little near saturation, where the transient from an empty
 * start is no larger than the noise; to the verdict's LBMC_RELAX_BIAS_SE there, the bound
 * resting on the run's own noisy reading), from 0 to LBMC_WARMUP_BIAS_SE where it does. */
static lbmc_err lbmc_point_warmup_floor(lbmc_point *p, long R, double bias_se, int *said)
{
  const size_t cap = p->S / 2;
  *said = 0;
  for (int pass = 0; pass < 3; pass++) {
    lbmc_point_relaxation m;
    double w;
    size_t d;
    LBMC_CALL(lbmc_point_relax_measure(p, R, 1, &m));
    w = lbmc_point_warmup_needed(p, &m, (double)(p->S - p->d) * p->seg_len, bias_se);
    if (pass == 0) {
      int settled;
      (void)lbmc_point_tau_start(p, &m, &settled);
      *said = settled && !isnan(w);
    }
    if (!(w > (double)p->d * p->seg_len)) break;
    d = (size_t)ceil(w / p->seg_len);
    if (d > cap) d = cap;
    if (d <= p->d) break;
    p->d = d;
    lbmc_point_set_fine(p);
  }
  return LBMC_SUCCESS;
}

/* The warm-up of the point (in segments); 0 with a fixed warm-up. Where the model gives a
 * relaxation time (lbmc_point_tau_model) and the start is known (empty, or the mean-field
 * point), the transient bound alone: the smallest warm-up whose transient is at most
 * LBMC_WARMUP_BIAS_SE standard errors. MSER chooses its truncation on the same data the
 * interval is computed from, and near saturation it cuts where the early queue happened to
 * be high (JSQ on 2 servers at rho 0.95, 10 replicas of 160 tau: the runs it truncated
 * covered 88.2%, 7 of their 9 misses below the truth; docs/model.md "Warm-up"). Elsewhere MSER
 * over the series of customers per server, averaged over replicas 0 .. R - 1 (the first
 * round, or the replicas an interrupted first round finished) that stayed below the cap
 * (White and Robinson 2010 apply MSER to the replication means), raised to the transient
 * bound with the run's own relaxation time; MSER too where the bound cannot be said: the
 * floor's reading not resolved (the run is too short to tell whether the servers pool as
 * the floor assumes: a large system under jsq(2) relaxes far more slowly than M/M/1 of
 * its total speed), or no spread between the replicas (a standard error of 0). */
static lbmc_err lbmc_point_decide(lbmc_point *p, long R)
{
  lbmc_record rec;
  double *area, *len;
  int said;
  p->d = 0;
  p->near_cap = 0;
  p->decided = 1;
  lbmc_point_set_fine(p);
  if (!p->o.warmup_auto || p->S < 2) return LBMC_SUCCESS;
  if (p->o.init != LBMC_INIT_TAIL && lbmc_point_tau_model(p) > 0) {
    LBMC_CALL(lbmc_point_warmup_floor(p, R, LBMC_WARMUP_BIAS_SE, &said));
    if (said) return LBMC_SUCCESS;
    p->d = 0; /* the relaxation time not resolved, or no standard error: MSER */
    lbmc_point_set_fine(p);
  }
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, 2 * p->S));
  area = p->work;
  len = p->work + p->S;
  memset(p->work, 0, sizeof *p->work * 2 * p->S);
  for (long i = 0; i < R; i++) {
    LBMC_CALL(lbmc_point_full(p, i, &rec));
    if (rec.h.status == LBMC_STATUS_UNSTABLE) continue; /* the point is unstable anyway */
    for (size_t s = 0; s < p->S; s++) {
      area[s] += rec.seg[s * p->W + LBMC_TK_AREA_N];
      len[s] += rec.seg[s * p->W + LBMC_TK_LEN] * (double)p->n;
    }
  }
  for (size_t s = 0; s < p->S; s++) area[s] = len[s] > 0 ? area[s] / len[s] : 0;
  p->d = lbmc_mser(area, p->S, 1, 0, &p->near_cap);
  lbmc_point_set_fine(p);
  return lbmc_point_warmup_floor(p, R, LBMC_RELAX_BIAS_SE, &said);
}

/* Segment where part k of `parts` equal parts of the measured period [d, S) starts
 * (k = parts: S). */
static size_t lbmc_point_part(const lbmc_point *p, size_t k, size_t parts)
{
  return p->d + (p->S - p->d) * k / parts;
}

/* The replica's own growth: (Nbar of the last quarter - Nbar of the third) / its arrivals
 * in the last quarter, from its parts. */
static double lbmc_point_rep_growth(const lbmc_point_row *r)
{
  const int third = 2 * LBMC_PARTS_PER_QUARTER, last = 3 * LBMC_PARTS_PER_QUARTER;
  double n3 = 0, l3 = 0, n4 = 0, l4 = 0, a4 = 0;
  for (int k = third; k < last; k++)
    n3 += r->parts[k][LBMC_PART_AREA], l3 += r->parts[k][LBMC_PART_LEN];
  for (int k = last; k < LBMC_PARTS; k++) {
    n4 += r->parts[k][LBMC_PART_AREA], l4 += r->parts[k][LBMC_PART_LEN];
    a4 += r->parts[k][LBMC_PART_ARRIVALS];
  }
  return l3 > 0 && l4 > 0 && a4 > 0 ? (n4 / l4 - n3 / l3) / a4 : NAN;
}

/* The replica's retained histograms (groups wholly after the warm-up), merged into
 * p->hist[0] (sojourn) and p->hist[1] (wait); returns the groups used. */
static lbmc_err lbmc_point_rep_hists(lbmc_point *p, const lbmc_record *rec, size_t *used)
{
  *used = 0;
  lbmc_dhist_init(&p->hist[0], p->tau);
  lbmc_dhist_init(&p->hist[1], p->tau);
  for (size_t g = 0; g < p->G; g++) {
    if ((size_t)rec->group_start[g] < p->d) continue;
    for (int k = 0; k < 2; k++) {
      LBMC_CALL(lbmc_record_hist(rec, g, k, &p->hist[2]));
      LBMC_CALL(lbmc_dhist_merge(&p->hist[k], &p->hist[2]));
    }
    (*used)++;
  }
  return LBMC_SUCCESS;
}

/* The replica's own quantiles of the merged histograms p->hist[0..1] into its values. */
static void lbmc_point_rep_quantiles(const lbmc_point *p, double *values)
{
  double *qs = values + lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, p->J, p->K);
  double *qw = values + lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, p->J, p->K);
  for (int l = 0; l < LBMC_QUANTILES; l++) {
    if (lbmc_dhist_quantile(&p->hist[0], lbmc_quantile_level(l), &qs[l])) qs[l] = NAN;
    if (lbmc_dhist_quantile(&p->hist[1], lbmc_quantile_level(l), &qw[l])) qw[l] = NAN;
  }
}

/* The replica's retained mixture (groups wholly after the warm-up, added in order) as a
 * new mixture *out (NULL when no group is retained). */
static lbmc_err lbmc_point_rep_mixture(const lbmc_point *p, const lbmc_record *rec,
                                       lbmc_mixture **out)
{
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  for (size_t g = 0; g < p->G && !err; g++) {
    lbmc_mixture *mx = NULL;
    if ((size_t)rec->group_start[g] < p->d) continue;
    err = lbmc_record_mixture(rec, g, &mx);
    if (!err && !*out)
      *out = mx, mx = NULL;
    else if (!err)
      err = lbmc_mixture_add(*out, mx);
    lbmc_mixture_destroy(&mx);
  }
  if (err) lbmc_mixture_destroy(out);
  return err;
}

/* The replica's quantiles (into its values) and its packed retained mixture, from its
 * record. */
static lbmc_err lbmc_point_rep_mixtures(lbmc_point *p, lbmc_point_rep *r, const lbmc_record *rec,
                                        double *values)
{
  double *qs = values + lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, p->J, p->K);
  double *qw = values + lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, p->J, p->K);
  lbmc_mixture *mx;
  int oom = 0;
  LBMC_CALL(lbmc_point_rep_mixture(p, rec, &mx));
  for (int l = 0; l < LBMC_QUANTILES; l++) {
    qs[l] = mx ? lbmc_mixture_quantile(mx, LBMC_MIX_SOJOURN, lbmc_quantile_level(l)) : NAN;
    qw[l] = mx ? lbmc_mixture_quantile(mx, LBMC_MIX_WAIT, lbmc_quantile_level(l)) : NAN;
  }
  if (mx) {
    r->qsize = lbmc_mixture_packed_size(mx);
    r->qdata = malloc(r->qsize);
    if (r->qdata) lbmc_mixture_pack(mx, r->qdata, r->qsize);
    oom = !r->qdata;
  }
  lbmc_mixture_destroy(&mx);
  return oom ? LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory") : LBMC_SUCCESS;
}

/* Pack p->hist[0..1] into the replica's qdata. */
static lbmc_err lbmc_point_rep_pack(lbmc_point *p, lbmc_point_rep *r)
{
  size_t a = lbmc_dhist_pack(&p->hist[0], NULL, 0), b = lbmc_dhist_pack(&p->hist[1], NULL, 0);
  r->qdata = malloc(a + b);
  if (!r->qdata) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
  r->qsize = a + b;
  lbmc_dhist_pack(&p->hist[0], r->qdata, a);
  lbmc_dhist_pack(&p->hist[1], r->qdata + a, b);
  return LBMC_SUCCESS;
}

/* The replica's parts (LBMC_PARTS equal parts of its measured period [d, S)) from its
 * record, and its p->fine fine parts (r->fine, 2 p->fine doubles: areas, then times). */
static void lbmc_point_rep_parts(const lbmc_point *p, lbmc_point_rep *r, const lbmc_record *rec)
{
  double *fine_area = r->fine, *fine_len = r->fine + p->fine;
  double(*parts)[LBMC_PART_FIELDS] = r->row->parts, *adm = lbmc_point_row_adm(p, r->row);
  for (int k = 0; k < LBMC_PARTS; k++)
    for (size_t s = lbmc_point_part(p, (size_t)k, LBMC_PARTS);
         s < lbmc_point_part(p, (size_t)k + 1, LBMC_PARTS); s++) {
      const double *seg = rec->seg + s * p->W;
      parts[k][LBMC_PART_LEN] += seg[LBMC_TK_LEN];
      parts[k][LBMC_PART_AREA] += seg[LBMC_TK_AREA_N];
      parts[k][LBMC_PART_ARRIVALS] += seg[LBMC_TK_ARRIVALS];
      for (int j = 0; j < p->J; j++)
        adm[j * LBMC_PARTS + k] += seg[lbmc_tk_admitted(p->J, p->K, j)];
    }
  for (size_t k = 0; k < p->fine; k++) {
    fine_area[k] = fine_len[k] = 0;
    for (size_t s = lbmc_point_part(p, k, p->fine); s < lbmc_point_part(p, k + 1, p->fine); s++) {
      fine_area[k] += rec->seg[s * p->W + LBMC_TK_AREA_N];
      fine_len[k] += rec->seg[s * p->W + LBMC_TK_LEN];
    }
  }
  lbmc_relax_unit_of(fine_area, fine_len, p->fine, &r->row->relax);
}

/* Replica r is summarised: its whole record goes, but replica 0's stays for batch means
 * as long as it is the only one summarised (always in a one-replica point), so that the
 * replicas finished when a run is interrupted after the first one still reduce. */
static void lbmc_point_drop_full(lbmc_point *p, lbmc_point_rep *r)
{
  lbmc_point_rep *r0;
  if (r->i != 0) {
    free(r->full);
    r->full = NULL;
    r->full_in = 0; /* its bytes stay in the record store until the store goes */
    p->other_kept = 1;
  }
  if (p->first_round == 1 || !p->other_kept) return;
  free(p->full0);
  p->full0 = NULL;
  p->full0_size = 0;
  if ((r0 = lbmc_point_win(p, 0)) && r0->kept) {
    free(r0->full);
    r0->full = NULL;
  }
}

/* A replica's own sojourn and wait quantiles between its values (their metric entries)
 * and q (2 LBMC_QUANTILES doubles): into q (back = 0), or back into the values. */
static void lbmc_point_quantiles_copy(const lbmc_point *p, double *q, double *values, int back)
{
  const size_t at[2] = {lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, p->J, p->K),
                        lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, p->J, p->K)};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < LBMC_QUANTILES; l++)
      if (back)
        values[at[k] + (size_t)l] = q[k * LBMC_QUANTILES + l];
      else
        q[k * LBMC_QUANTILES + l] = values[at[k] + (size_t)l];
}

/* What replica r keeps once the warm-up is known: its row (sums over the measured period,
 * parts, admissions, moments, relaxation summary, own quantiles), its fine parts and its
 * retained histograms; then the replicas in order go into the store. */
static lbmc_err lbmc_point_summarise(lbmc_point *p, lbmc_point_rep *r)
{
  lbmc_point_row *row;
  lbmc_record rec;
  size_t used;
  double *sums, *values, *weights;
  if (r->i == 0) LBMC_CALL(lbmc_point_full_hold(p, r)); /* kept for batch means */
  LBMC_CALL(lbmc_point_full(p, r->i, &rec));
  r->row = calloc(1, p->row_bytes);
  r->fine = malloc(sizeof *r->fine * (2 * p->fine + 1));
  if (!r->row || !r->fine) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
  row = r->row;
  sums = lbmc_point_row_sums(row);
  values = p->rep_values; /* made again from the sums when asked (lbmc_point_replica) */
  weights = values + p->total;
  row->unstable = rec.h.status == LBMC_STATUS_UNSTABLE;
  row->t_stop = rec.h.t_stop;
  row->cap = rec.h.cap;
  lbmc_point_sum(p, &rec, p->d, p->S, sums);
  row->events = (int64_t)(sums[LBMC_TK_ARRIVALS] + sums[LBMC_TK_DEPARTURES]);
  row->cpu_seconds = sums[LBMC_TK_CPU];
  row->n_start = rec.h.n_start;
  lbmc_point_record_moments(p, &rec, p->d, p->S, &row->mom);
  lbmc_point_rep_parts(p, r, &rec);
  LBMC_CALL(lbmc_point_trans_keep(p, r, &rec));
  row->growth = lbmc_point_rep_growth(row);
  lbmc_metrics_from_sums(sums, p->J, p->K, p->N, p->n, values, weights);
  for (size_t k = lbmc_metric_total(p->J, p->K); k < p->total; k++)
    values[k] = weights[k] = NAN; /* the pair statistics: from several units only */
  if (p->qkind == LBMC_QK_HIST) {
    LBMC_CALL(lbmc_point_rep_hists(p, &rec, &used));
    lbmc_point_rep_quantiles(p, values);
    LBMC_CALL(lbmc_point_rep_pack(p, r));
  } else if (p->qkind == LBMC_QK_MIX) {
    LBMC_CALL(lbmc_point_rep_mixtures(p, r, &rec, values));
  }
  lbmc_point_quantiles_copy(p, sums + p->W, values, 0);
  r->kept = 1;
  lbmc_point_drop_full(p, r);
  return lbmc_point_store_flush(p);
}

/* The layout of the point's records, from the first one; later ones must match it. */
static lbmc_err lbmc_point_layout(lbmc_point *p, const lbmc_record *rec)
{
  if (rec->h.W != (int64_t)p->W)
    return LBMC_ERROR(LBMC_ERR_ARG, "point: a replica record of %lld doubles per segment, not %zu",
                      (long long)rec->h.W, p->W);
  if (!p->have_layout) {
    p->have_layout = 1;
    p->S = (size_t)rec->h.S;
    p->G = (size_t)rec->h.G;
    p->qkind = (int)rec->h.qkind;
    p->seg_len = rec->h.seg_len;
    p->t_start = rec->h.t_start;
    p->tau = rec->h.tau > 0 ? rec->h.tau : 1;
    return LBMC_SUCCESS;
  }
  if ((size_t)rec->h.S != p->S || (size_t)rec->h.G != p->G || rec->h.qkind != p->qkind ||
      rec->h.seg_len != p->seg_len)
    return LBMC_ERROR(LBMC_ERR_ARG, "point: replica %lld's record does not fit the point's others",
                      (long long)rec->h.replica);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_add(lbmc_point *p, const void *record, size_t size, int *used)
{
  lbmc_record rec;
  lbmc_point_rep *r;
  long i;
  *used = 0;
  if (lbmc_record_view(record, size, &rec) != 0 || rec.h.replica < 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "point: not a valid replica record");
  if (rec.h.doubling != p->doubling) return LBMC_SUCCESS; /* a doubling the point has left */
  LBMC_CALL(lbmc_point_layout(p, &rec));
  i = (long)rec.h.replica;
  *used = 1;
  if (i < p->appended) return LBMC_SUCCESS; /* a record again (the same bytes): its row stands */
  LBMC_CALL(lbmc_point_win_slot(p, i, &r));
  lbmc_point_rep_clear(r);
  if (!p->decided && !p->o.warmup_auto) LBMC_CALL(lbmc_point_decide(p, 0)); /* fixed: now */
  LBMC_CALL(lbmc_point_full_keep(p, r, record, size)); /* the record store until decided */
  if (p->decided) return lbmc_point_summarise(p, r);
  if (p->win_count < p->first_round) return LBMC_SUCCESS;
  for (long k = 0; k < p->first_round; k++)
    if (!lbmc_point_win(p, k)) return LBMC_SUCCESS;
  return lbmc_point_decide_early(p, p->first_round); /* one warm-up for the point */
}

lbmc_err lbmc_point_decide_early(lbmc_point *p, long R)
{
  long end;
  if (p->decided) return LBMC_SUCCESS;
  for (long k = 0; k < R; k++)
    if (!lbmc_point_win(p, k))
      return LBMC_ERROR(LBMC_ERR_ARG, "point: replica %ld is not in; the warm-up needs 0 .. %ld", k,
                        R - 1);
  LBMC_CALL(lbmc_point_decide(p, R));
  end = lbmc_point_win_end(p);
  for (long k = 0; k < end; k++) {
    lbmc_point_rep *r = lbmc_point_win(p, k);
    if (r && !r->kept) LBMC_CALL(lbmc_point_summarise(p, r));
  }
  lbmc_point_full_release(p); /* every record in it summarised */
  return LBMC_SUCCESS;
}

int lbmc_point_ready(const lbmc_point *p, long R)
{
  if (R > 0 && !p->decided) return 0;
  if (R > p->appended) return 0;     /* replicas 0 .. R - 1 summarised: in the store */
  return R != 1 || p->full0 != NULL; /* one replica: its batches, from its record */
}

const lbmc_verdict *lbmc_point_verdict(const lbmc_point *p) { return &p->v; }
const lbmc_estimates *lbmc_point_estimates(const lbmc_point *p) { return &p->est; }

void lbmc_point_set_target(lbmc_point *p, const lbmc_precision *prec)
{
  const int on = prec && prec->enabled && prec->metric >= 0 && prec->index >= 0;
  p->target_metric = on ? prec->metric : -1;
  p->target_entry = on ? prec->index : 0;
}

const double *lbmc_point_start_bias(const lbmc_point *p) { return p->mf_widen; }
const lbmc_pair_estimates *lbmc_point_pairs(const lbmc_point *p) { return p->pe; }

lbmc_err lbmc_point_replica(const lbmc_point *p, long i, lbmc_point_replica_info *info)
{
  double *values = p->rep_values, *weights = p->rep_values + p->total;
  const lbmc_point_row *r;
  const double *sums;
  const lbmc_point_rep *w = i >= p->appended ? lbmc_point_win(p, i) : NULL;
  memset(info, 0, sizeof *info);
  if (i < 0 || (i >= p->appended && !(w && w->kept))) return LBMC_SUCCESS; /* not summarised */
  LBMC_CALL(lbmc_point_row_at(p, i, &r));
  sums = lbmc_point_row_sums(r);
  info->present = 1;
  info->unstable = (int)r->unstable;
  info->events = r->events;
  info->cpu_seconds = r->cpu_seconds;
  info->growth = r->growth;
  info->sums = sums;
  /* the same arithmetic as when the replica was summarised: the same bits */
  lbmc_metrics_from_sums(sums, p->J, p->K, p->N, p->n, values, weights);
  for (size_t k = lbmc_metric_total(p->J, p->K); k < p->total; k++)
    values[k] = weights[k] = NAN; /* the pair statistics: from several units only */
  lbmc_point_quantiles_copy(p, (double *)sums + p->W, values, 1);
  info->values = values;
  info->weights = weights;
  return LBMC_SUCCESS;
}

/* ---- sequential mode ---- */

/* Relative half-width of the precision metric, max(est - lower, upper - est) / |est|. */
static double lbmc_point_rel(const lbmc_point *p, const lbmc_precision *prec)
{
  size_t k = lbmc_metric_offset(prec->metric, p->J, p->K) + (size_t)prec->index;
  double est = p->est.estimate[k], hw = p->est.half_width[k];
  return est != 0 && isfinite(hw) ? hw / fabs(est) : NAN;
}

lbmc_next lbmc_point_next(lbmc_point *p, const lbmc_precision *prec, long *next, char *why,
                          size_t len)
{
  lbmc_verdict *v = &p->v;
  const double max_time =
      prec && prec->max_time > 0 ? prec->max_time : LBMC_MAX_TIME_FACTOR * p->o.time;
  double rel, want;
  long R = v->replicas, Rmax = prec ? prec->max_replicas : R;
  *next = R;
  if (len) why[0] = '\0';
  if (!prec || !prec->enabled || v->status == LBMC_STATUS_UNSTABLE) return LBMC_NEXT_DONE;
  if (v->status == LBMC_STATUS_NOT_STATIONARY && isnan(v->suggested_time)) {
    snprintf(why, len, "not stationary, and no run length would help (%s)",
             (v->evidence & LBMC_EV_HEAVY_TAIL) ? "heavy tail" : "see the reason");
    return LBMC_NEXT_DONE;
  }
  if (v->status == LBMC_STATUS_NOT_STATIONARY) {
    if (2 * v->time > max_time * (1 + 1e-12)) {
      snprintf(why, len, "not stationary at the longest run allowed (time %g, max_time %g)",
               v->time, max_time);
      return LBMC_NEXT_DONE;
    }
    *next = p->first_round;
    snprintf(why, len, "not stationary: running longer, time %g -> %g", v->time, 2 * v->time);
    return LBMC_NEXT_LONGER;
  }
  rel = lbmc_point_rel(p, prec);
  if (rel <= prec->relative) return LBMC_NEXT_DONE;
  if (R >= Rmax) {
    const unsigned flags =
        p->est.flags[lbmc_metric_offset(prec->metric, p->J, p->K) + (size_t)prec->index];
    v->status = LBMC_STATUS_PRECISION_NOT_MET;
    if (isfinite(rel))
      snprintf(v->reason, sizeof v->reason,
               "relative half-width %.3g above the target %g after %ld replicas (max_replicas)",
               rel, prec->relative, R);
    else
      snprintf(v->reason, sizeof v->reason,
               "no relative half-width of the target metric after %ld replicas (max_replicas): %s",
               R, flags ? lbmc_iv_flag_meaning(flags) : "its estimate is 0");
    return LBMC_NEXT_DONE;
  }
  want = isfinite(rel) ? ceil((double)R * (rel / prec->relative) * (rel / prec->relative))
                       : 2.0 * (double)R;
  *next = want > (double)Rmax ? Rmax : (long)want;
  if (*next < R + 1) *next = R + 1;
  snprintf(why, len, "relative half-width %.3g above %g: %ld -> %ld replicas", rel, prec->relative,
           R, *next);
  return LBMC_NEXT_MORE;
}
