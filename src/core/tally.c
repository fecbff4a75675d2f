/* The tally (tally.h): the tick accumulator every engine shares, from the counts of a
 * tick to its record (ticks.h). */
#include "tally.h"

#include <stdlib.h>
#include <string.h>

#include "ticks.h"

lbmc_err lbmc_tally_create(lbmc_tally *t, int J, int K, uint64_t max_customers, lbmc_terms terms)
{
  t->J = J;
  t->K = K;
  t->terms = terms;
  t->max_customers = max_customers;
  t->area_q = calloc((size_t)J, sizeof *t->area_q);
  t->area_tail = calloc((size_t)J * (size_t)K, sizeof *t->area_tail);
  if (!t->area_q || !t->area_tail)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for the integrals of %d pools", J);
  lbmc_tally_reset(t, 0);
  return LBMC_SUCCESS;
}

void lbmc_tally_free(lbmc_tally *t)
{
  free(t->area_q);
  free(t->area_tail);
  t->area_q = t->area_tail = NULL;
}

void lbmc_tally_reset(lbmc_tally *t, uint64_t in_system)
{
  memset(&t->c, 0, sizeof t->c);
  t->c0 = t->c;
  t->t0 = 0;
  memset(t->area_q, 0, sizeof *t->area_q * (size_t)t->J);
  memset(t->area_tail, 0, sizeof *t->area_tail * (size_t)t->J * (size_t)t->K);
  t->sum_sojourn = t->sum_wait = 0;
  t->in_system = in_system;
  t->halt = LBMC_HALT_NONE;
}

void lbmc_tally_poll(lbmc_tally *t)
{
  if (t->stop && t->stop(t->stop_ctx)) t->halt = LBMC_HALT_STOP;
}

/* A counter's change over the tick, as a double. */
#define LBMC_TALLY_DIFF(t, field) ((double)((t)->c.field - (t)->c0.field))

/* The scalar sums of the tick into rec (the integrals are complete). */
static void lbmc_tally_scalars(const lbmc_tally *t, double len, double area_n, double *rec)
{
  rec[LBMC_TK_LEN] = len;
  rec[LBMC_TK_ARRIVALS] = LBMC_TALLY_DIFF(t, arrivals);
  rec[LBMC_TK_BLOCKED] = LBMC_TALLY_DIFF(t, blocked);
  rec[LBMC_TK_WAITED] = LBMC_TALLY_DIFF(t, waited);
  rec[LBMC_TK_DEPARTURES] = LBMC_TALLY_DIFF(t, departures);
  rec[LBMC_TK_STARTS] = LBMC_TALLY_DIFF(t, starts);
  rec[LBMC_TK_SUM_SOJOURN] = t->sum_sojourn;
  rec[LBMC_TK_SUM_WAIT] = t->sum_wait;
  rec[LBMC_TK_MESSAGES] = LBMC_TALLY_DIFF(t, messages);
  rec[LBMC_TK_WITHDRAWALS] = LBMC_TALLY_DIFF(t, withdrawals);
  rec[LBMC_TK_AREA_N] = area_n;
  rec[LBMC_TK_N_END] = (double)t->in_system;
  rec[LBMC_TK_CPU] = 0; /* the replica driver's */
  if (t->terms == LBMC_TERMS_AT_DEPARTURE) {
    rec[LBMC_TK_SOJOURNS] = rec[LBMC_TK_DEPARTURES];
    rec[LBMC_TK_WAITS] = rec[LBMC_TK_STARTS];
  } else {
    double admitted = 0;
    for (int j = 0; j < t->J; j++) admitted += LBMC_TALLY_DIFF(t, admitted[j]);
    rec[LBMC_TK_SOJOURNS] = rec[LBMC_TK_WAITS] = admitted;
  }
}

void lbmc_tally_close(lbmc_tally *t, const lbmc_view *v, double t1, double *rec)
{
  const int J = t->J, K = t->K;
  const double len = t1 - t->t0;
  double area_n = 0;
  for (int j = 0; j < J; j++) {
    t->area_q[j] += (double)v->customers(v->ws, j) * len;
    area_n += t->area_q[j];
    for (int k = 1; k <= K; k++)
      t->area_tail[j * K + k - 1] += (double)v->tail(v->ws, j, (uint32_t)k) * len;
  }
  if (rec) {
    lbmc_tally_scalars(t, len, area_n, rec);
    for (int j = 0; j < J; j++) {
      rec[lbmc_tk_admitted(J, K, j)] = LBMC_TALLY_DIFF(t, admitted[j]);
      rec[lbmc_tk_area_q(J, K, j)] = t->area_q[j];
      for (int k = 1; k <= K; k++) rec[lbmc_tk_area_tail(J, K, j, k)] = t->area_tail[j * K + k - 1];
    }
  }
  if (t->observe) t->observe(t->obs_ctx, v, t->t0, t1, rec ? rec + lbmc_tick_width(J, K) : NULL);
  t->c0 = t->c;
  t->t0 = t1;
  t->sum_sojourn = t->sum_wait = 0;
  memset(t->area_q, 0, sizeof *t->area_q * (size_t)J);
  memset(t->area_tail, 0, sizeof *t->area_tail * (size_t)J * (size_t)K);
}

lbmc_err lbmc_tally_finish(lbmc_tally *t, const lbmc_view *v, double t_end, double *rec,
                           const char *engine)
{
  if (t->halt == LBMC_HALT_MEMORY)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s engine: out of memory with %llu customers in the system",
                      engine, (unsigned long long)t->in_system);
  if (t->halt == LBMC_HALT_STOP) return LBMC_ERR_INTERRUPTED;
  lbmc_tally_close(t, v, t->halt == LBMC_HALT_CAP ? v->time(v->ws) : t_end, rec);
  return LBMC_SUCCESS;
}
