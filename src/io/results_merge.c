/* Merging result files of one job (Slurm shards). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbmc/job.h"
#include "results.h"

/* Parts a and b come from one job: the same text, or texts whose parsed settings are the
 * same (lbmc_job_compare: a comment or 4/5 for 0.8 does not count); job_a is a's job,
 * parsed (NULL if its text does not parse). */
static lbmc_err lbmc_merge_same_job(const lbmc_results *a, const lbmc_job *job_a, const char *pa,
                                    const lbmc_results *b, const char *pb)
{
  const char *ta = a->job_text ? a->job_text : "", *tb = b->job_text ? b->job_text : "";
  lbmc_job *job_b = NULL;
  lbmc_job_difference d;
  int differ = 1;
  if (strcmp(ta, tb) == 0) return LBMC_SUCCESS;
  if (job_a) {
    const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE); /* said below */
    if (lbmc_job_parse_text(tb, pb, &job_b) != LBMC_SUCCESS) job_b = NULL;
    lbmc_error_set_mode(was);
  }
  if (job_b) {
    differ = lbmc_job_compare(job_a, job_b, &d);
    lbmc_job_destroy(&job_b);
  } else {
    snprintf(d.key, sizeof d.key, "the job text (it does not parse)");
    snprintf(d.a, sizeof d.a, "-"), snprintf(d.b, sizeof d.b, "-");
  }
  if (!differ) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_MISMATCH,
                    "%s and %s come from different jobs: %s is %s in %s and %s in %s; only parts "
                    "of one job can be merged",
                    pa, pb, d.key, d.a, pa, d.b, pb);
}

static lbmc_err lbmc_merge_check_part(const lbmc_results *a, const lbmc_job *job_a, const char *pa,
                                      const lbmc_results *b, const char *pb)
{
  LBMC_CALL(lbmc_merge_same_job(a, job_a, pa, b, pb));
  if (a->seed != b->seed)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s and %s come from different jobs: their seeds differ (%ld and %ld); only "
                      "parts of one job can be merged",
                      pa, pb, a->seed, b->seed);
  if (a->layout != b->layout)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s and %s have different layouts (%d and %d): they were written by "
                      "different versions of lbmc; rerun the older part",
                      pa, pb, a->layout, b->layout);
  if (a->J != b->J || a->K != b->K || a->confidence != b->confidence || a->pairs != b->pairs)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s and %s differ in pools, tail_k, confidence or pair statistics", pa, pb);
  if (!a->trans != !b->trans ||
      (a->trans && (a->trans->T != b->trans->T ||
                    memcmp(a->trans->time, b->trans->time, sizeof(double) * (size_t)a->trans->T))))
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s and %s differ in their transient times (/transient/time: %ld and %ld "
                      "times)",
                      pa, pb, a->trans ? a->trans->T : 0, b->trans ? b->trans->T : 0);
  if (!b->complete)
    return LBMC_ERROR(
        LBMC_ERR_MISMATCH,
        "%s is incomplete (its run was interrupted): finish it with lbmc run --resume "
        "before merging",
        pb);
  return LBMC_SUCCESS;
}

/* Shards: every part names i/k with the same k, each i exactly once, all k present. */
static lbmc_err lbmc_merge_check_shards(lbmc_results *const *parts, const char *const *paths, int n)
{
  long k0 = 0;
  char *seen = NULL;
  lbmc_err err = LBMC_SUCCESS;
  for (int p = 0; p < n && !err; p++) {
    long i, k;
    if (!parts[p]->shard[0]) {
      if (k0 > 0)
        err = LBMC_ERROR(LBMC_ERR_MISMATCH, "%s is not a shard, the other parts are", paths[p]);
      k0 = -1;
      continue;
    }
    if (sscanf(parts[p]->shard, "%ld/%ld", &i, &k) != 2 || i < 1 || i > k || k0 == -1 ||
        (k0 > 0 && k != k0)) {
      err = LBMC_ERROR(LBMC_ERR_MISMATCH, "%s is shard %s, which does not fit the other parts",
                       paths[p], parts[p]->shard);
      break;
    }
    if (!seen) {
      k0 = k;
      seen = calloc((size_t)k, 1);
      if (!seen) return LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory");
    }
    if (seen[i - 1]++)
      err = LBMC_ERROR(LBMC_ERR_MISMATCH, "shard %ld/%ld is given twice (%s)", i, k, paths[p]);
  }
  for (long i = 0; !err && k0 > 0 && i < k0; i++)
    if (!seen[i])
      err = LBMC_ERROR(LBMC_ERR_MISMATCH, "shard %ld/%ld is missing: all %ld parts are needed",
                       i + 1, k0, k0);
  free(seen);
  return err;
}

/* The grid of merge m (its points in, job_text set) and whether it is complete (every
 * grid point of the job in): the first part's /grid, or for parts written before it
 * existed the grid of their job text. That text is parsed only then, with the error
 * handler in store mode: a job this lbmc no longer reads leaves the merge without a grid
 * and incomplete, and is no error of the merge. */
static lbmc_err lbmc_merge_grid(lbmc_results *m, const lbmc_results *first)
{
  lbmc_job *job = NULL;
  lbmc_error_mode was;
  lbmc_err err;
  if (first->grid) {
    m->complete = lbmc_grid_cells(first->grid) == m->P;
    return lbmc_grid_copy(first->grid, &m->grid);
  }
  was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  err = lbmc_job_parse_text(m->job_text, "(job text of the parts)", &job);
  lbmc_error_set_mode(was);
  if (err) return LBMC_SUCCESS;
  m->complete = lbmc_job_points(job) == m->P;
  err = lbmc_grid_from_job(job, &m->grid);
  lbmc_job_destroy(&job);
  return err;
}

/* The parsed job of the first part when another part's job text differs from it (its
 * settings are then compared), else NULL; parsed with the error handler in store mode: a
 * text this lbmc does not read gives NULL (the texts must then be the same). */
static lbmc_job *lbmc_merge_first_job(lbmc_results *const *parts, int n)
{
  const char *t0 = parts[0]->job_text ? parts[0]->job_text : "";
  lbmc_job *job = NULL;
  for (int p = 1; p < n; p++)
    if (strcmp(t0, parts[p]->job_text ? parts[p]->job_text : "") != 0) {
      lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
      if (lbmc_job_parse_text(t0, "(job text of the parts)", &job) != LBMC_SUCCESS) job = NULL;
      lbmc_error_set_mode(was);
      break;
    }
  return job;
}

lbmc_err lbmc_results_merge(lbmc_results *const *parts, const char *const *paths, int n,
                            lbmc_results **out)
{
  long P = 0, k = 0;
  double wall = 0;
  lbmc_results *m;
  lbmc_job *job;
  lbmc_err err = LBMC_SUCCESS;
  if (n < 1) return LBMC_ERROR(LBMC_ERR_ARG, "merge: at least one part is required");
  job = lbmc_merge_first_job(parts, n);
  for (int p = 0; !err && p < n; p++) {
    err = lbmc_merge_check_part(parts[0], job, paths[0], parts[p], paths[p]);
    P += parts[p]->P;
    wall += parts[p]->wall_seconds;
  }
  lbmc_job_destroy(&job);
  if (err) return err;
  LBMC_CALL(lbmc_merge_check_shards(parts, paths, n));
  LBMC_CALL(lbmc_results_create(P, parts[0]->J, parts[0]->K, parts[0]->pairs, &m));
  m->job_text = strdup(parts[0]->job_text ? parts[0]->job_text : "");
  if (!m->job_text) {
    lbmc_results_destroy(&m);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory for the job text");
  }
  if (parts[0]->trans &&
      lbmc_results_transient_create(m, parts[0]->trans->T, parts[0]->trans->time)) {
    lbmc_results_destroy(&m);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory for /transient");
  }
  m->seed = parts[0]->seed;
  m->confidence = parts[0]->confidence;
  m->mpi_ranks = 1;
  m->wall_seconds = wall;
  /* points in grid order: repeatedly take the smallest index not yet taken */
  {
    long *next = calloc((size_t)n, sizeof *next);
    if (!next) {
      lbmc_results_destroy(&m);
      return LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory");
    }
    for (; k < P; k++) {
      int best = -1;
      for (int p = 0; p < n; p++)
        if (next[p] < parts[p]->P &&
            (best < 0 || parts[p]->pt[next[p]].index < parts[best]->pt[next[best]].index))
          best = p;
      if (k > 0 && parts[best]->pt[next[best]].index == m->pt[k - 1].index) {
        long dup = parts[best]->pt[next[best]].index;
        free(next);
        lbmc_results_destroy(&m);
        return LBMC_ERROR(LBMC_ERR_MISMATCH, "grid point %ld is in more than one part (%s)", dup,
                          paths[best]);
      }
      if (lbmc_results_copy_point(m, k, parts[best], next[best]++)) {
        free(next);
        lbmc_results_destroy(&m);
        return LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory");
      }
    }
    free(next);
  }
  err = lbmc_merge_grid(m, parts[0]);
  if (err) {
    lbmc_results_destroy(&m);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->created, sizeof m->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  *out = m;
  return LBMC_SUCCESS;
}
