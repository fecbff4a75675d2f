/* The schedule of a run (schedule.h): which (point, replica) units to hand out next,
 * costliest points first, and when a point is settled (its replicas, or its
 * precision target in sequential mode). */
#include "schedule.h"

#include <math.h>
#include <stdlib.h>

#include "lbmc/metrics.h"

lbmc_err lbmc_schedule_create(long P, const double *cost, long replicas, long Rmax,
                              const lbmc_precision *precision, lbmc_schedule **out)
{
  lbmc_schedule *s = calloc(1, sizeof *s);
  if (!s) return LBMC_ERROR(LBMC_ERR_MEMORY, "schedule: out of memory");
  s->P = P;
  s->Rmax = Rmax;
  s->replicas = replicas;
  s->precision = *precision;
  s->cost = malloc(sizeof *s->cost * (size_t)P);
  s->order = malloc(sizeof *s->order * (size_t)P);
  s->state = calloc((size_t)P * (size_t)Rmax, sizeof *s->state);
  s->target = malloc(sizeof *s->target * (size_t)P);
  s->done = calloc((size_t)P, sizeof *s->done);
  s->inflight = calloc((size_t)P, sizeof *s->inflight);
  s->finished = calloc((size_t)P, sizeof *s->finished);
  if (!s->cost || !s->order || !s->state || !s->target || !s->done || !s->inflight ||
      !s->finished) {
    lbmc_schedule_destroy(&s);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "schedule: out of memory for %ld points", P);
  }
  for (long p = 0; p < P; p++) {
    s->cost[p] = cost[p];
    s->target[p] = replicas;
    s->cost_planned += cost[p] * (double)replicas;
  }
  /* insertion sort by decreasing cost, stable: ties keep the lower index first */
  for (long p = 0; p < P; p++) {
    long k = p;
    while (k > 0 && s->cost[s->order[k - 1]] < cost[p]) {
      s->order[k] = s->order[k - 1];
      k--;
    }
    s->order[k] = p;
  }
  *out = s;
  return LBMC_SUCCESS;
}

void lbmc_schedule_destroy(lbmc_schedule **s)
{
  if (!s || !*s) return;
  free((*s)->cost);
  free((*s)->order);
  free((*s)->state);
  free((*s)->target);
  free((*s)->done);
  free((*s)->inflight);
  free((*s)->finished);
  free(*s);
  *s = NULL;
}

void lbmc_schedule_skip(lbmc_schedule *s, long point)
{
  s->cost_planned -= s->cost[point] * (double)s->target[point];
  s->target[point] = 0;
}

int lbmc_schedule_next(lbmc_schedule *s, long *point, long *replica)
{
  for (long k = s->cursor; k < s->P; k++) {
    long p = s->order[k];
    int8_t *st = s->state + (size_t)p * (size_t)s->Rmax;
    if (s->finished[p]) {
      if (k == s->cursor) s->cursor++;
      continue;
    }
    for (long r = 0; r < s->target[p]; r++)
      if (st[r] == 0) {
        st[r] = 1;
        s->inflight[p]++;
        *point = p;
        *replica = r;
        return 1;
      }
  }
  return 0;
}

void lbmc_schedule_done(lbmc_schedule *s, long point, long replica, int issued)
{
  int8_t *st = s->state + (size_t)point * (size_t)s->Rmax + replica;
  if (*st == 2) return;
  if (issued && *st == 1) s->inflight[point]--;
  *st = 2;
  s->done[point]++;
  s->cost_done += s->cost[point];
  if (issued) s->cost_live += s->cost[point];
}

/* Relative half-width of the precision metric at point p (NaN if undefined). */
static double lbmc_schedule_rel_hw(const lbmc_schedule *s, const lbmc_results *res, long p)
{
  size_t i = (size_t)p * res->total + lbmc_metric_offset(s->precision.metric, res->J, res->K) +
             (size_t)s->precision.index;
  double m = res->mean[i], hw = res->half_width[i];
  return (m != 0 && isfinite(hw)) ? hw / fabs(m) : NAN;
}

int lbmc_schedule_settle(lbmc_schedule *s, lbmc_results *res, long p, const double *batch_values)
{
  const int8_t *st = s->state + (size_t)p * (size_t)s->Rmax;
  long R = s->target[p], more;
  double rel;
  if (s->finished[p] || s->inflight[p] > 0) return 0;
  for (long r = 0; r < R; r++)
    if (st[r] != 2) return 0;
  res->pt[p].replicas = R;
  lbmc_results_reduce(res, p, batch_values);
  if (res->pt[p].status != LBMC_STATUS_UNSTABLE && s->precision.enabled) {
    rel = lbmc_schedule_rel_hw(s, res, p);
    if (!(rel <= s->precision.relative)) {
      if (R >= s->Rmax) {
        res->pt[p].status = LBMC_STATUS_PRECISION_NOT_MET;
      } else {
        double want =
            isfinite(rel)
                ? ceil((double)R * (rel / s->precision.relative) * (rel / s->precision.relative))
                : 2.0 * (double)R;
        more = want > (double)s->Rmax ? s->Rmax : (long)want;
        if (more < R + 1) more = R + 1;
        s->cost_planned += s->cost[p] * (double)(more - R);
        s->target[p] = more;
        s->cursor = 0; /* the point has pending units again */
        return 0;
      }
    }
  }
  s->finished[p] = 1;
  s->points_finished++;
  res->pt[p].done = 1;
  return 1;
}

int lbmc_schedule_all_finished(const lbmc_schedule *s) { return s->points_finished == s->P; }
