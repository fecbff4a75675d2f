/* The pair statistics of a point with run.pairs (docs/model.md, "Pair statistics"): from
 * the units of a reduction (the replicas, or the batches of one replica merged as the
 * batch rule merges its customers per server), per pool the metrics pair_tv, pair_corr
 * and their n-scaled copies, and the tables of the joint law and of its deviation from
 * the product of the marginals, within each pool and across two pools (lbmc/point.h).
 * The estimators are src/stats/pairlaw.c's; this file lays the units' sums out for
 * them: the joint integrals from the pairs observer's block (src/observers/pairs.h), the
 * marginals from the tick record's own integrals (src/core/ticks.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "../observers/observers.h"
#include "../observers/pairs.h"
#include "../stats/pairlaw.h"
#include "lbmc/metrics.h"
#include "point_impl.h"

static const struct {
  const char *name, *description;
  int across;
} lbmc_pair_tables[] = {
#define LBMC_X_PT_ROW(id, name, across, desc) {name, desc, across},
    LBMC_PAIR_TABLE_LIST(LBMC_X_PT_ROW)
#undef LBMC_X_PT_ROW
};

const char *lbmc_pair_part_name(int k)
{
  static const char *const names[LBMC_PAIR_PARTS] = {"mean", "lower", "upper", "std_err"};
  return k >= 0 && k < LBMC_PAIR_PARTS ? names[k] : NULL;
}

const char *lbmc_pair_table_name(int t)
{
  return t >= 0 && t < LBMC_PAIR_TABLES ? lbmc_pair_tables[t].name : NULL;
}

const char *lbmc_pair_table_description(int t)
{
  return t >= 0 && t < LBMC_PAIR_TABLES ? lbmc_pair_tables[t].description : NULL;
}

int lbmc_pair_table_across(int t)
{
  return t >= 0 && t < LBMC_PAIR_TABLES && lbmc_pair_tables[t].across;
}

size_t lbmc_pair_table_size(int t, int J, int C)
{
  return (size_t)(lbmc_pair_table_across(t) ? J * J : J) * (size_t)C * (size_t)C;
}

lbmc_err lbmc_point_pairs_create(lbmc_point *p)
{
  const int C = p->K + 1;
  size_t total = 0, at = 0;
  double *block;
  for (int t = 0; t < LBMC_PAIR_TABLES; t++) total += lbmc_pair_table_size(t, p->J, C);
  p->pair_at =
      lbmc_tick_width(p->J, p->K) + lbmc_observers_offset(p->m, &p->o, &lbmc_observer_pairs);
  p->pe = calloc(1, sizeof *p->pe);
  block = malloc(sizeof *block * total * LBMC_PAIR_PARTS);
  if (!p->pe || !block) {
    free(block);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for the pair statistics");
  }
  p->pe->J = p->J;
  p->pe->C = C;
  for (int t = 0; t < LBMC_PAIR_TABLES; t++)
    for (int k = 0; k < LBMC_PAIR_PARTS; k++) {
      p->pe->v[t][k] = block + at;
      at += lbmc_pair_table_size(t, p->J, C);
    }
  lbmc_point_pairs_clear(p);
  return LBMC_SUCCESS;
}

void lbmc_point_pairs_destroy(lbmc_point *p)
{
  if (p->pe) free(p->pe->v[0][0]); /* the one block */
  free(p->pe);
  free(p->pwork);
  p->pe = NULL;
  p->pwork = NULL;
  p->pwork_len = 0;
}

void lbmc_point_pairs_clear(lbmc_point *p)
{
  if (!p->pe) return;
  for (int t = 0; t < LBMC_PAIR_TABLES; t++)
    for (int k = 0; k < LBMC_PAIR_PARTS; k++)
      for (size_t i = 0; i < lbmc_pair_table_size(t, p->J, p->pe->C); i++) p->pe->v[t][k][i] = NAN;
}

/* Work space of n doubles in p->pwork. */
static lbmc_err lbmc_point_pairs_work(lbmc_point *p, size_t n)
{
  if (n <= p->pwork_len) return LBMC_SUCCESS;
  free(p->pwork);
  p->pwork = malloc(sizeof *p->pwork * n);
  p->pwork_len = p->pwork ? n : 0;
  return p->pwork ? LBMC_SUCCESS
                  : LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for the pair statistics");
}

/* The batches of one replica (U rows of W) merged, every column alike, as the batch rule
 * merges its customers per server (lbmc_point_halves_one's series): into out (U x W),
 * *k rows; *flags gets LBMC_IV_CORRELATED when the rule gave up. wy, wx: U each. */
static void lbmc_point_pairs_merge(const lbmc_point *p, const double *rows, size_t U, double *out,
                                   double *wy, double *wx, size_t *k, unsigned *flags)
{
  lbmc_batch_rule rule, fixed;
  lbmc_batch_rule_default(&rule);
  *k = lbmc_batch_merge(rows + LBMC_TK_AREA_N, rows + LBMC_TK_LEN, U, p->W, &rule, wy, wx, flags);
  fixed = rule;
  fixed.max_batches = *k; /* the same halvings, no test */
  fixed.min_batches = SIZE_MAX;
  for (size_t c = 0; c < p->W; c++) {
    unsigned none = 0;
    lbmc_batch_merge(rows + c, rows + LBMC_TK_LEN, U, p->W, &fixed, wy, wx, &none);
    for (size_t i = 0; i < *k; i++) out[i * p->W + c] = wy[i];
  }
}

/* A unit's integrals of the counts of pool j per level (f, C doubles) from its row. */
static void lbmc_point_pairs_counts(const lbmc_point *p, const double *row, int j, double *f)
{
  const int K = p->K;
  double above = row[LBMC_TK_LEN] * (double)p->N[j]; /* >= 0 */
  for (int a = 0; a < K; a++) {
    const double next = row[lbmc_tk_area_tail(p->J, K, j, a + 1)]; /* >= a + 1 */
    f[a] = above - next;
    above = next;
  }
  f[K] = above;
}

/* The data of pools i and j (i == j: pool i's pairs within) from the units, one row at a
 * time in unit order (the replicas' rows read where they are kept, lbmc_units_row): the
 * units' times L, the count integrals F of pool i and H of pool j (U x C; H unset when
 * i == j) and the pair integrals Y (U x C x C). Errors: as lbmc_units_row. */
static lbmc_err lbmc_point_pairs_fill(const lbmc_point *p, const lbmc_units *u, int i, int j,
                                      double *L, double *F, double *H, double *Y)
{
  const int K = p->K;
  const size_t C = (size_t)K + 1, CC = C * C;
  for (size_t k = 0; k < u->U; k++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, k, &row));
    L[k] = row[LBMC_TK_LEN];
    lbmc_point_pairs_counts(p, row, i, F + k * C);
    if (i != j) lbmc_point_pairs_counts(p, row, j, H + k * C);
    for (size_t a = 0; a < C; a++)
      for (size_t b = 0; b < C; b++)
        Y[k * CC + a * C + b] =
            row[p->pair_at + (i == j ? lbmc_pairs_within(K, i, (int)a, (int)b)
                                     : lbmc_pairs_across(p->J, K, i, j, (int)a, (int)b))];
  }
  return LBMC_SUCCESS;
}

/* Interval iv into entry idx of table t. */
static void lbmc_point_pairs_table(lbmc_point *p, int t, size_t idx, const lbmc_interval *iv)
{
  p->pe->v[t][LBMC_PP_MEAN][idx] = iv->estimate;
  p->pe->v[t][LBMC_PP_LOWER][idx] = iv->lower;
  p->pe->v[t][LBMC_PP_UPPER][idx] = iv->upper;
  p->pe->v[t][LBMC_PP_STD_ERR][idx] = iv->std_err;
}

/* Interval iv (flags added) as entry e of metric i, and x n as entry e of metric `scaled`. */
static void lbmc_point_pairs_put(lbmc_point *p, int i, int scaled, size_t e, lbmc_interval iv,
                                 unsigned flags)
{
  const double n = (double)p->n;
  iv.flags |= flags;
  lbmc_point_put(&p->est, lbmc_metric_offset(i, p->J, p->K) + e, &iv);
  iv.estimate *= n, iv.lower *= n, iv.upper *= n, iv.half_width *= n, iv.std_err *= n;
  lbmc_point_put(&p->est, lbmc_metric_offset(scaled, p->J, p->K) + e, &iv);
}

/* The fits of d over all units, and over the halves A and B, in the work space at w. */
typedef struct {
  lbmc_pair_fit all, half[2];
  double *W, *work; /* C x C weights; 2 U doubles */
} lbmc_pair_fits;

static double *lbmc_point_pairs_fits(const lbmc_pair_data *d, double *w, lbmc_pair_fits *f)
{
  const size_t C = d->C, CC = C * C;
  lbmc_pair_fit *all[3] = {&f->all, &f->half[0], &f->half[1]};
  const size_t from[3] = {0, 0, d->U / 2}, to[3] = {d->U, d->U / 2, d->U};
  for (int k = 0; k < 3; k++) {
    all[k]->from = from[k], all[k]->to = to[k];
    all[k]->P = w, all[k]->D = w + CC, all[k]->p = w + 2 * CC, all[k]->q = w + 2 * CC + C;
    w += 2 * CC + 2 * C;
    lbmc_pair_fit_units(d, all[k]);
  }
  f->W = w;
  f->work = w + CC;
  return w + CC + 2 * d->U;
}

/* The metrics and tables of pool j. */
static void lbmc_point_pairs_pool(lbmc_point *p, const lbmc_pair_data *d, lbmc_pair_fits *f, int j,
                                  unsigned flags)
{
  const size_t C = d->C, CC = C * C;
  const double level = p->o.confidence;
  lbmc_interval iv;
  lbmc_pair_tv(d, &f->half[0], &f->half[1], level, f->W, &iv);
  lbmc_point_pairs_put(p, LBMC_M_PAIR_TV, LBMC_M_PAIR_TV_SCALED, (size_t)j, iv, flags);
  for (size_t k = 1; k < C; k++) { /* c[k][k]: the block a, b >= k */
    for (size_t a = 0; a < C; a++)
      for (size_t b = 0; b < C; b++) f->W[a * C + b] = a >= k && b >= k;
    lbmc_pair_linear(d, &f->all, f->W, level, &iv);
    lbmc_point_pairs_put(p, LBMC_M_PAIR_CORR, LBMC_M_PAIR_CORR_SCALED,
                         (size_t)j * (size_t)p->K + (k - 1), iv, flags);
  }
  for (size_t a = 0; a < C; a++)
    for (size_t b = 0; b < C; b++) {
      const size_t idx = (size_t)j * CC + a * C + b;
      lbmc_pair_joint(d, &f->all, a, b, level, f->work, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_JOINT, idx, &iv);
      lbmc_pair_entry(d, &f->all, a, b, level, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_DEVIATION, idx, &iv);
    }
}

/* The tables of pools i < j, entries [i][j][a][b] and [j][i][b][a]. */
static void lbmc_point_pairs_across(lbmc_point *p, const lbmc_pair_data *d, lbmc_pair_fits *f,
                                    int i, int j)
{
  const size_t C = d->C, CC = C * C, J = (size_t)p->J;
  lbmc_interval iv;
  for (size_t a = 0; a < C; a++)
    for (size_t b = 0; b < C; b++) {
      const size_t ij = ((size_t)i * J + (size_t)j) * CC + a * C + b;
      const size_t ji = ((size_t)j * J + (size_t)i) * CC + b * C + a;
      lbmc_pair_joint(d, &f->all, a, b, p->o.confidence, f->work, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_ACROSS, ij, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_ACROSS, ji, &iv);
      lbmc_pair_entry(d, &f->all, a, b, p->o.confidence, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_ACROSS_DEVIATION, ij, &iv);
      lbmc_point_pairs_table(p, LBMC_PT_ACROSS_DEVIATION, ji, &iv);
    }
}

lbmc_err lbmc_point_pairs_reduce(lbmc_point *p, const lbmc_units *u, int batches)
{
  const int J = p->J, K = p->K;
  const size_t C = (size_t)K + 1, CC = C * C, W = p->W;
  size_t U = u->U, need;
  unsigned flags = 0;
  double *w, *L, *Y, *F, *H;
  lbmc_units units = *u; /* the replicas' rows where they are kept, or the merged batches */
  lbmc_pair_data d;
  lbmc_pair_fits f;
  /* merged rows (batches), L, Y, F, H, three fits, weights and U doubles */
  need = (batches ? U * W + 2 * U : 0) + U * (1 + CC + 2 * C) + 3 * (2 * CC + 2 * C) + CC + 2 * U;
  LBMC_CALL(lbmc_point_pairs_work(p, need));
  w = p->pwork;
  if (batches) {
    double *merged = w;
    lbmc_point_pairs_merge(p, u->row, u->U, merged, w + U * W, w + U * W + U, &U, &flags);
    units.row = merged;
    units.U = U;
    w += u->U * W + 2 * u->U;
  }
  L = w, Y = L + U, F = Y + U * CC, H = F + U * C, w = H + U * C;
  d = (lbmc_pair_data){.U = U, .C = C, .L = L, .Y = Y, .F = F, .H = F};
  for (int j = 0; j < J; j++) {
    LBMC_CALL(lbmc_point_pairs_fill(p, &units, j, j, L, F, NULL, Y));
    d.H = F;
    d.N1 = d.N2 = (double)p->N[j];
    d.pairs = (double)p->N[j] * (double)(p->N[j] - 1);
    lbmc_point_pairs_fits(&d, w, &f);
    lbmc_point_pairs_pool(p, &d, &f, j, flags);
  }
  for (int i = 0; i < J; i++)
    for (int j = i + 1; j < J; j++) {
      LBMC_CALL(lbmc_point_pairs_fill(p, &units, i, j, L, F, H, Y));
      d.H = H;
      d.N1 = (double)p->N[i], d.N2 = (double)p->N[j];
      d.pairs = d.N1 * d.N2;
      lbmc_point_pairs_fits(&d, w, &f);
      lbmc_point_pairs_across(p, &d, &f, i, j);
    }
  return LBMC_SUCCESS;
}
