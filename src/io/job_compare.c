/* Whether two jobs define the same runs (lbmc_job_compare, include/lbmc/job.h): every
 * setting compared as its parsed value, so that comments, layout and spellings of one
 * number (0.8, 4/5, 8e-1) do not matter; the grid's axes compared in order. And, in the
 * same terms, a grid that lists one value (or combination) twice (lbmc_job_check_repeats). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"

/* The parsed value v of input row, in a form that equal values share. */
static void lbmc_jc_value(const lbmc_input *row, const lbmc_input_value *v, char *buf, size_t len)
{
  size_t used = 0;
  switch (row->type) {
  case LBMC_IT_INT:
  case LBMC_IT_RUN_INT:
  case LBMC_IT_RUN_COUNT:
  case LBMC_IT_CHOICE:
  case LBMC_IT_ENGINE: snprintf(buf, len, "%ld", v->l); break;
  case LBMC_IT_BUFFER: snprintf(buf, len, v->l == LBMC_BUFFER_INF ? "inf" : "%ld", v->l); break;
  case LBMC_IT_POSITIVE:
  case LBMC_IT_RUN_REAL:
  case LBMC_IT_BETA: snprintf(buf, len, isnan(v->x) ? "rest" : "%.17g", v->x); break;
  case LBMC_IT_WARMUP: snprintf(buf, len, v->l ? "auto" : "%.17g", v->x); break;
  case LBMC_IT_BETAS:
  case LBMC_IT_SPEEDS:
    for (int i = 0; i < v->vec_len && used < len; i++)
      used += (size_t)snprintf(buf + used, len - used, isnan(v->vec[i]) ? "%srest" : "%s%.17g",
                               i ? "," : "", v->vec[i]);
    if (!v->vec_len) snprintf(buf, len, "%s", v->text ? v->text : "");
    break;
  case LBMC_IT_SERVICE: { /* the law as parsed (its canonical text), else as written */
    const char *t = v->svc ? v->svc->text : v->text ? v->text : "";
    size_t n = strlen(t);
    if (n < len) {
      memcpy(buf, t, n + 1);
    } else { /* too long to hold (a phase-type law): its start and a hash of the whole */
      uint64_t h = 1469598103934665603u; /* FNV-1a */
      for (const char *c = t; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211u;
      n = len > 40 ? len - 40 : 0;
      memcpy(buf, t, n);
      snprintf(buf + n, len - n, "...#%016llx", (unsigned long long)h);
    }
    break;
  }
  case LBMC_IT_POLICY: /* the text without blanks: "jsq( 2 )" is "jsq(2)" */
    for (const char *t = v->text ? v->text : ""; *t && used + 1 < len; t++)
      if (*t != ' ' && *t != '\t') buf[used++] = *t;
    buf[used] = '\0';
    break;
  default: snprintf(buf, len, "%s", v->text ? v->text : ""); break;
  }
}

/* The value a job without the setting of row uses, in the form of lbmc_jc_value, into
 * buf; 0 when it has none to compare ("" then). */
static int lbmc_jc_default(int id, const lbmc_input *row, char *buf, size_t len)
{
  lbmc_run_options o;
  lbmc_input_value v;
  const char *at = (const char *)&o + row->opt;
  memset(&v, 0, sizeof v);
  buf[0] = '\0';
  lbmc_run_options_default(&o);
  switch (id) {
  case LBMC_IN_ROUTERS:
  case LBMC_IN_SEED: snprintf(buf, len, "1"); return 1;
  case LBMC_IN_REPLICAS: snprintf(buf, len, "%d", LBMC_JOB_DEFAULT_REPLICAS); return 1;
  case LBMC_IN_POLICY: snprintf(buf, len, "random"); return 1;
  case LBMC_IN_STALE: snprintf(buf, len, "withdraw"); return 1;
  case LBMC_IN_SAMPLING: snprintf(buf, len, "distinct"); return 1;
  case LBMC_IN_POOL_BUFFER:
  case LBMC_IN_BUFFER: snprintf(buf, len, "inf"); return 1;
  case LBMC_IN_POOL_SERVICE:
  case LBMC_IN_SERVICE: snprintf(buf, len, "exponential"); return 1;
  default: break;
  }
  if (!lbmc_input_is_run_option(row)) return 0;
  switch (row->type) {
  case LBMC_IT_RUN_REAL: memcpy(&v.x, at, sizeof v.x); break;
  case LBMC_IT_RUN_INT: memcpy(&v.l, at, sizeof v.l); break;
  case LBMC_IT_RUN_COUNT: {
    long long c;
    memcpy(&c, at, sizeof c);
    v.l = (long)c;
    break;
  }
  case LBMC_IT_CHOICE:
  case LBMC_IT_ENGINE: {
    int c;
    memcpy(&c, at, sizeof c);
    v.l = c;
    break;
  }
  case LBMC_IT_WARMUP:
    v.l = o.warmup_auto;
    v.x = o.warmup;
    break;
  default: return 0;
  }
  lbmc_jc_value(row, &v, buf, len);
  return 1;
}

/* A setting in the form of lbmc_jc_value ("a|b|c" for an axis) into buf, and as written
 * ("[a, b, c]", or "not given") into shown. */
static void lbmc_jc_setting(int id, const lbmc_input *row, const lbmc_job_setting *s, char *buf,
                            size_t len, char *shown, size_t slen)
{
  size_t used = 0, sused = 0;
  char one[512];
  buf[0] = shown[0] = '\0';
  if (!s->given) {
    if (!lbmc_jc_default(id, row, buf, len)) snprintf(buf, len, "(none)");
    snprintf(shown, slen, "not given");
    return;
  }
  if (s->axis >= 0) {
    used += (size_t)snprintf(buf, len, "axis:");
    sused += (size_t)snprintf(shown, slen, "[");
  }
  for (long i = 0; i < s->count; i++) {
    lbmc_jc_value(row, &s->v[i], one, sizeof one);
    if (used < len) used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", one);
    if (sused < slen)
      sused += (size_t)snprintf(shown + sused, slen - sused, "%s%s", i ? ", " : "",
                                s->v[i].text ? s->v[i].text : "");
  }
  if (s->axis >= 0 && sused < slen) snprintf(shown + sused, slen - sused, "]");
}

/* Settings s of a and t of b (input id): equal, or the difference into d. */
static int lbmc_jc_differ(int id, const lbmc_job_setting *s, const lbmc_job_setting *t,
                          lbmc_job_difference *d)
{
  const lbmc_input *row = &lbmc_inputs[id];
  char va[4096], vb[4096];
  switch (row->type) {
  case LBMC_IT_PATH:    /* where the results go: not what they are */
  case LBMC_IT_LINKS:   /* compared as the grid's axes */
  case LBMC_IT_SECTION: /* its keys are compared */
  case LBMC_IT_POOLS:   /* the number of pools is compared, then each pool's keys */
  case LBMC_IT_GROUP:
  case LBMC_IT_TEXTS:
  case LBMC_IT_FLAG: return 0;
  default: break;
  }
  lbmc_jc_setting(id, row, s, va, sizeof va, d->a, sizeof d->a);
  lbmc_jc_setting(id, row, t, vb, sizeof vb, d->b, sizeof d->b);
  if (strcmp(va, vb) == 0) return 0;
  snprintf(d->key, sizeof d->key, "%s", s->key);
  return 1;
}

/* The grid's axes of a job in order, a group's axes joined by '+', into buf. */
static void lbmc_jc_axes(const lbmc_job *job, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int a = 0; a < job->naxes && used < len; a++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s",
                             a == 0                                 ? ""
                             : job->dim_of[a] == job->dim_of[a - 1] ? "+"
                                                                    : ", ",
                             job->axis[a]->name);
  if (!job->naxes) snprintf(buf, len, "(none)");
}

int lbmc_job_compare(const lbmc_job *a, const lbmc_job *b, lbmc_job_difference *d)
{
  memset(d, 0, sizeof *d);
  if (a->J != b->J) {
    snprintf(d->key, sizeof d->key, "system.pools");
    snprintf(d->a, sizeof d->a, "%d pools", a->J);
    snprintf(d->b, sizeof d->b, "%d pools", b->J);
    return 1;
  }
  for (int id = 0; id < LBMC_INPUTS; id++) {
    const int pool = id >= LBMC_IN_POOL_FIRST && id < LBMC_IN_POOL_FIRST + LBMC_POOL_INPUTS;
    if (!lbmc_inputs[id].key) continue;
    if (!pool && lbmc_jc_differ(id, &a->set[id], &b->set[id], d)) return 1;
    for (int j = 0; pool && j < a->J; j++)
      if (lbmc_jc_differ(id, &a->pool_set[j][id - LBMC_IN_POOL_FIRST],
                         &b->pool_set[j][id - LBMC_IN_POOL_FIRST], d))
        return 1;
  }
  { /* the same axes, but in another order or grouping, number the points otherwise */
    char xa[2048], xb[2048];
    lbmc_jc_axes(a, xa, sizeof xa);
    lbmc_jc_axes(b, xb, sizeof xb);
    if (strcmp(xa, xb) != 0) {
      snprintf(d->key, sizeof d->key, "the grid's axes (in order; + joins axes varied together)");
      /* cut to the message's room (the lists are long only for grids of many axes) */
      const int wa = snprintf(d->a, sizeof d->a, "%s", xa);
      const int wb = snprintf(d->b, sizeof d->b, "%s", xb);
      if (wa < 0 || wb < 0) d->a[0] = d->b[0] = '\0';
      return 1;
    }
  }
  return 0;
}

/* ---- repeated grid values ---- */

/* One value of a dimension of the grid: its settings' parsed values, joined. */
typedef struct {
  char *key;
  long index;
} lbmc_jc_tuple;

static int lbmc_jc_tuple_order(const void *a, const void *b)
{
  const lbmc_jc_tuple *x = a, *y = b;
  const int c = strcmp(x->key, y->key);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The first repeated value of the dimension made of axes [a, b) (the axes of one
 * `together` group, or one axis): *i < *j, the two indices; 0 if none; -1 out of memory. */
static int lbmc_jc_repeat(const lbmc_job *job, int a, int b, long *i, long *j)
{
  const long L = job->axis[a]->count;
  lbmc_jc_tuple *t = calloc((size_t)L, sizeof *t);
  int found = 0, bad = !t;
  char one[512];
  for (long v = 0; !bad && v < L; v++) {
    size_t cap = 64, used = 0;
    t[v].index = v;
    if (!(t[v].key = malloc(cap))) {
      bad = 1;
      break;
    }
    t[v].key[0] = '\0';
    for (int x = a; x < b; x++) {
      size_t n;
      lbmc_jc_value(job->axis[x]->row, &job->axis[x]->v[v], one, sizeof one);
      n = strlen(one) + 1; /* and the separator */
      if (used + n + 1 > cap) {
        char *k = realloc(t[v].key, cap = 2 * (used + n + 1));
        if (!k) {
          bad = 1;
          break;
        }
        t[v].key = k;
      }
      used += (size_t)snprintf(t[v].key + used, cap - used, "%s\x1f", one);
    }
  }
  if (!bad) {
    qsort(t, (size_t)L, sizeof *t, lbmc_jc_tuple_order);
    for (long v = 1; v < L; v++) /* the repeat whose second index comes first */
      if (strcmp(t[v - 1].key, t[v].key) == 0 && (!found || t[v].index < *j)) {
        found = 1;
        *i = t[v - 1].index;
        *j = t[v].index;
      }
  }
  for (long v = 0; t && v < L; v++) free(t[v].key);
  free(t);
  return bad ? -1 : found;
}

lbmc_err lbmc_job_check_repeats(const lbmc_job *job)
{
  for (int a = 0, b; a < job->naxes; a = b) {
    const lbmc_job_setting *s = job->axis[a];
    long i = 0, j = 0;
    int r;
    char where[512];
    for (b = a + 1; b < job->naxes && job->dim_of[b] == job->dim_of[a];) b++;
    if ((r = lbmc_jc_repeat(job, a, b, &i, &j)) < 0)
      return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory checking the grid", job->name);
    if (!r) continue;
    if (b == a + 1) {
      char same[300] = "";
      if (strcmp(s->v[i].text, s->v[j].text) != 0)
        snprintf(same, sizeof same, "; '%.120s' and '%.120s' are one value once read", s->v[i].text,
                 s->v[j].text);
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: '%s' is listed twice (values %ld and %ld of the axis%s): the grid "
                        "would run the same points twice; allowed: each value once",
                        lbmc_job_where(job, s, s->v[j].line, where, sizeof where), s->v[j].text,
                        i + 1, j + 1, same);
    }
    {
      char keys[512] = "", tuple[1024] = "";
      size_t ku = 0, tu = 0;
      for (int x = a; x < b; x++) {
        const lbmc_job_setting *t = job->axis[x];
        if (ku < sizeof keys)
          ku += (size_t)snprintf(keys + ku, sizeof keys - ku, "%s%s", x > a ? ", " : "", t->key);
        if (tu < sizeof tuple)
          tu += (size_t)snprintf(tuple + tu, sizeof tuple - tu, "%s%s=%s", x > a ? ", " : "",
                                 t->name, t->v[j].text);
      }
      if (job->built)
        snprintf(where, sizeof where, "%s", keys);
      else
        snprintf(where, sizeof where, "%s:%d: %s", job->name, s->v[j].line, keys);
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s (varied together): values %ld and %ld are the same (%s, listed "
                        "twice): the grid would run the same points twice; allowed: each "
                        "combination once (one setting may repeat a value where another "
                        "of the group differs)",
                        where, i + 1, j + 1, tuple);
    }
  }
  return LBMC_SUCCESS;
}
