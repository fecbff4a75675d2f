/* Sequential mode's driver (schedule.h): which (point, replica, doubling) units to hand
 * out next, costliest points first, when a point's round is complete, and what then. */
#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A point's cost and index, sorted by decreasing cost, ties by increasing index. */
typedef struct {
  double cost;
  long p;
} lbmc_schedule_key;

static int lbmc_schedule_key_cmp(const void *a, const void *b)
{
  const lbmc_schedule_key *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  return (x->p > y->p) - (x->p < y->p);
}

lbmc_err lbmc_schedule_order(const double *cost, long P, long *order)
{
  lbmc_schedule_key *key = malloc(sizeof *key * (size_t)(P ? P : 1));
  if (!key) return LBMC_ERROR(LBMC_ERR_MEMORY, "schedule: out of memory for %ld points", P);
  for (long p = 0; p < P; p++) key[p] = (lbmc_schedule_key){cost[p], p};
  qsort(key, (size_t)P, sizeof *key, lbmc_schedule_key_cmp);
  for (long k = 0; k < P; k++) order[k] = key[k].p;
  free(key);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_schedule_create(long P, const double *cost, long replicas, long Rmax,
                              lbmc_schedule **out)
{
  lbmc_schedule *s = calloc(1, sizeof *s);
  if (!s) return LBMC_ERROR(LBMC_ERR_MEMORY, "schedule: out of memory");
  s->P = P;
  s->Rmax = Rmax;
  s->cost = malloc(sizeof *s->cost * (size_t)(P ? P : 1));
  s->order = malloc(sizeof *s->order * (size_t)(P ? P : 1));
  s->state = calloc((size_t)P * (size_t)Rmax + 1, sizeof *s->state);
  s->target = malloc(sizeof *s->target * (size_t)(P ? P : 1));
  s->done = calloc((size_t)P + 1, sizeof *s->done);
  s->inflight = calloc((size_t)P + 1, sizeof *s->inflight);
  s->doubling = calloc((size_t)P + 1, sizeof *s->doubling);
  s->finished = calloc((size_t)P + 1, sizeof *s->finished);
  if (!s->cost || !s->order || !s->state || !s->target || !s->done || !s->inflight ||
      !s->doubling || !s->finished) {
    lbmc_schedule_destroy(&s);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "schedule: out of memory for %ld points", P);
  }
  for (long p = 0; p < P; p++) {
    s->cost[p] = cost[p];
    s->target[p] = replicas;
    s->cost_planned += cost[p] * (double)replicas;
    s->units_planned += (double)replicas;
  }
  if (lbmc_schedule_order(s->cost, P, s->order)) {
    lbmc_schedule_destroy(&s);
    return LBMC_ERR_MEMORY;
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
  free((*s)->doubling);
  free((*s)->finished);
  free(*s);
  *s = NULL;
}

/* Cost of one replica of point p at its current doubling. */
static double lbmc_schedule_cost(const lbmc_schedule *s, long p)
{
  return ldexp(s->cost[p], s->doubling[p]);
}

int lbmc_schedule_next(lbmc_schedule *s, long *point, long *replica, int *doubling)
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
        *doubling = s->doubling[p];
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
  s->cost_done += lbmc_schedule_cost(s, point);
  s->units_done += 1;
  if (issued) s->cost_live += lbmc_schedule_cost(s, point);
  if (issued) s->units_live += 1;
}

int lbmc_schedule_reissue(lbmc_schedule *s, long point, long replica, int doubling)
{
  int8_t *st = s->state + (size_t)point * (size_t)s->Rmax + replica;
  if (replica < 0 || replica >= s->Rmax || s->finished[point] || s->doubling[point] != doubling ||
      *st != 1)
    return 0;
  *st = 0;
  s->inflight[point]--;
  s->cursor = 0; /* the point has a pending unit again */
  return 1;
}

int lbmc_schedule_is_done(const lbmc_schedule *s, long point, long replica, int doubling)
{
  if (replica < 0 || replica >= s->Rmax || s->doubling[point] != doubling) return 0;
  return s->state[(size_t)point * (size_t)s->Rmax + replica] == 2;
}

long lbmc_schedule_round(const lbmc_schedule *s, long p)
{
  const int8_t *st = s->state + (size_t)p * (size_t)s->Rmax;
  if (s->finished[p] || s->inflight[p] > 0) return 0;
  for (long r = 0; r < s->target[p]; r++)
    if (st[r] != 2) return 0;
  return s->target[p];
}

void lbmc_schedule_more(lbmc_schedule *s, long p, long R)
{
  if (R > s->Rmax) R = s->Rmax;
  s->cost_planned += lbmc_schedule_cost(s, p) * (double)(R - s->target[p]);
  s->units_planned += (double)(R - s->target[p]);
  s->target[p] = R;
  s->cursor = 0; /* the point has pending units again */
}

void lbmc_schedule_longer(lbmc_schedule *s, long p, long R)
{
  memset(s->state + (size_t)p * (size_t)s->Rmax, 0, (size_t)s->Rmax);
  s->done[p] = 0;
  s->doubling[p]++;
  s->target[p] = R < s->Rmax ? R : s->Rmax;
  s->cost_planned += lbmc_schedule_cost(s, p) * (double)s->target[p];
  s->units_planned += (double)s->target[p];
  s->cursor = 0;
}

void lbmc_schedule_finish(lbmc_schedule *s, long p)
{
  if (s->finished[p]) return;
  if (s->done[p] == 0) {
    s->cost_planned -= lbmc_schedule_cost(s, p) * (double)s->target[p];
    s->units_planned -= (double)s->target[p];
  }
  s->finished[p] = 1;
  s->points_finished++;
}

int lbmc_schedule_all_finished(const lbmc_schedule *s) { return s->points_finished == s->P; }

lbmc_err lbmc_schedule_settle(lbmc_schedule *s, long p, long R, lbmc_point *acc,
                              const lbmc_precision *prec, lbmc_next *what, char *why, size_t len)
{
  long next;
  LBMC_CALL(lbmc_point_reduce(acc, R));
  *what = lbmc_point_next(acc, prec, &next, why, len);
  if (*what == LBMC_NEXT_MORE) {
    lbmc_schedule_more(s, p, next);
  } else if (*what == LBMC_NEXT_LONGER) {
    lbmc_point_set_doubling(acc, lbmc_point_doubling(acc) + 1);
    lbmc_schedule_longer(s, p, next);
  } else {
    lbmc_schedule_finish(s, p);
  }
  return LBMC_SUCCESS;
}
