/* The /grid group of a results file (docs/results-format.md, "/grid"): the job's grid
 * axes as the job names them ("n", "lambda", "pools[2].beta", "run.time"), their values
 * as written, and the dimension of each axis (the axes a job links with `together`
 * share one), so that readers (lbmc info, lbmc_analysis.load) know the grid without
 * parsing the job text. /points/index numbers the cells of the product of the
 * dimensions, the first slowest. A run takes it from its job; reading, copying and
 * merging carry it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "lbmc/job.h"
#include "results.h"

/* ---- creation ---- */

static lbmc_err lbmc_grid_alloc(int A, int D, long V, lbmc_grid **out)
{
  lbmc_grid *g = calloc(1, sizeof *g);
  if (g) {
    g->A = A;
    g->D = D;
    g->V = V;
    g->axis_name = calloc((size_t)A + 1, sizeof *g->axis_name);
    g->axis_length = calloc((size_t)A + 1, sizeof *g->axis_length);
    g->axis_dim = calloc((size_t)A + 1, sizeof *g->axis_dim);
    g->axis_first = calloc((size_t)A + 1, sizeof *g->axis_first);
    g->axis_value = calloc((size_t)V + 1, sizeof *g->axis_value);
    g->dim_name = calloc((size_t)D + 1, sizeof *g->dim_name);
    g->dim_length = calloc((size_t)D + 1, sizeof *g->dim_length);
  }
  *out = g;
  if (g && g->axis_name && g->axis_length && g->axis_dim && g->axis_first && g->axis_value &&
      g->dim_name && g->dim_length)
    return LBMC_SUCCESS;
  lbmc_grid_destroy(out);
  return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for the grid");
}

void lbmc_grid_destroy(lbmc_grid **grid)
{
  lbmc_grid *g = grid ? *grid : NULL;
  if (!g) return;
  for (int a = 0; g->axis_name && a < g->A; a++) free(g->axis_name[a]);
  for (long v = 0; g->axis_value && v < g->V; v++) free(g->axis_value[v]);
  for (int d = 0; g->dim_name && d < g->D; d++) free(g->dim_name[d]);
  free(g->axis_name);
  free(g->axis_length);
  free(g->axis_dim);
  free(g->axis_first);
  free(g->axis_value);
  free(g->dim_name);
  free(g->dim_length);
  free(g);
  *grid = NULL;
}

/* First values and dimension lengths from the axes; checks what a file could get wrong:
 * dimensions numbered 0..D-1 in order, the axes of a dimension equally long. */
static int lbmc_grid_index(lbmc_grid *g)
{
  long first = 0;
  for (int a = 0; a < g->A; a++) {
    const long d = g->axis_dim[a];
    if (d < 0 || d >= g->D || (a > 0 && d != g->axis_dim[a - 1] && d != g->axis_dim[a - 1] + 1) ||
        (a == 0 && d != 0) || g->axis_length[a] < 1)
      return -1;
    if (a > 0 && d == g->axis_dim[a - 1] && g->axis_length[a] != g->dim_length[d]) return -1;
    g->dim_length[d] = g->axis_length[a];
    g->axis_first[a] = first;
    first += g->axis_length[a];
  }
  return first == g->V && (g->A == 0 ? g->D == 0 : g->axis_dim[g->A - 1] == g->D - 1) ? 0 : -1;
}

/* strdup that counts failures. */
static char *lbmc_grid_dup(const char *s, int *failed)
{
  char *copy = strdup(s ? s : "");
  *failed |= !copy;
  return copy;
}

lbmc_err lbmc_grid_from_job(const lbmc_job *job, lbmc_grid **out)
{
  const int A = lbmc_job_axes(job), D = lbmc_job_dims(job);
  long V = 0, v = 0;
  int failed = 0;
  lbmc_grid *g;
  for (int a = 0; a < A; a++) V += lbmc_job_axis_length(job, a);
  LBMC_CALL(lbmc_grid_alloc(A, D, V, &g));
  for (int a = 0; a < A; a++) {
    g->axis_name[a] = lbmc_grid_dup(lbmc_job_axis_name(job, a), &failed);
    g->axis_length[a] = lbmc_job_axis_length(job, a);
    g->axis_dim[a] = lbmc_job_axis_dim(job, a);
    for (long i = 0; i < g->axis_length[a]; i++)
      g->axis_value[v++] = lbmc_grid_dup(lbmc_job_axis_value(job, a, i), &failed);
  }
  for (int d = 0; d < D; d++) g->dim_name[d] = lbmc_grid_dup(lbmc_job_dim_name(job, d), &failed);
  if (failed || lbmc_grid_index(g)) {
    lbmc_grid_destroy(&g);
    return LBMC_ERROR(failed ? LBMC_ERR_MEMORY : LBMC_ERR_INTERNAL,
                      "results: cannot describe the job's grid");
  }
  *out = g;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_grid_copy(const lbmc_grid *src, lbmc_grid **out)
{
  lbmc_grid *g;
  int failed = 0;
  *out = NULL;
  if (!src) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_grid_alloc(src->A, src->D, src->V, &g));
  for (int a = 0; a < src->A; a++) g->axis_name[a] = lbmc_grid_dup(src->axis_name[a], &failed);
  for (long v = 0; v < src->V; v++) g->axis_value[v] = lbmc_grid_dup(src->axis_value[v], &failed);
  for (int d = 0; d < src->D; d++) g->dim_name[d] = lbmc_grid_dup(src->dim_name[d], &failed);
  memcpy(g->axis_length, src->axis_length, sizeof *g->axis_length * (size_t)src->A);
  memcpy(g->axis_dim, src->axis_dim, sizeof *g->axis_dim * (size_t)src->A);
  if (failed || lbmc_grid_index(g)) {
    lbmc_grid_destroy(&g);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for the grid");
  }
  *out = g;
  return LBMC_SUCCESS;
}

/* ---- cells ---- */

long lbmc_grid_cells(const lbmc_grid *g)
{
  long cells = 1;
  for (int d = 0; d < g->D; d++) cells *= g->dim_length[d];
  return cells;
}

long lbmc_grid_position(const lbmc_grid *g, int a, long index)
{
  long stride = 1;
  for (int d = g->D - 1; d > g->axis_dim[a]; d--) stride *= g->dim_length[d];
  return (index / stride) % g->axis_length[a];
}

const char *lbmc_grid_value(const lbmc_grid *g, int a, long index)
{
  if (a < 0 || a >= g->A || index < 0) return NULL;
  return g->axis_value[g->axis_first[a] + lbmc_grid_position(g, a, index)];
}

void lbmc_grid_label(const lbmc_grid *g, long index, char *buf, size_t len)
{
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int a = 0; g && a < g->A && used < len; a++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? " " : "", g->axis_name[a],
                             lbmc_grid_value(g, a, index));
}

void lbmc_grid_text(const lbmc_grid *g, char *buf, size_t len)
{
  size_t used = (size_t)snprintf(buf, len, "grid:");
  if (!g) {
    snprintf(buf + used, len - used, " unknown (the file has no /grid and no readable job)");
    return;
  }
  for (int d = 0, a = 0; d < g->D && used < len; d++) {
    const int first = a;
    while (a < g->A && g->axis_dim[a] == d) a++;
    used += (size_t)snprintf(buf + used, len - used, "%s", d ? " x" : "");
    for (int b = first; b < a && used < len; b++)
      used += (size_t)snprintf(buf + used, len - used, "%s%s", b == first ? " " : " + ",
                               g->axis_name[b]);
    if (used < len && a - first > 1)
      used += (size_t)snprintf(buf + used, len - used, " (%ld values, varied together%s%s)",
                               g->dim_length[d], *g->dim_name[d] ? " as " : "", g->dim_name[d]);
    else if (used < len)
      used += (size_t)snprintf(buf + used, len - used, " (%ld)", g->dim_length[d]);
  }
  if (used < len)
    snprintf(buf + used, len - used, "%s%ld point%s", g->D ? " = " : " no axes, ",
             lbmc_grid_cells(g), lbmc_grid_cells(g) == 1 ? "" : "s");
}

/* ---- the file ---- */

int lbmc_grid_write(hid_t file, const lbmc_grid *g)
{
  hsize_t A, V, D;
  int64_t *ints;
  hid_t grp;
  int rc;
  if (!g) return 0;
  A = (hsize_t)g->A, V = (hsize_t)g->V, D = (hsize_t)g->D;
  ints = malloc(sizeof *ints * (A + 1));
  grp = lbmc_h5_group(file, "grid");
  rc =
      !ints || grp < 0 ||
      lbmc_h5_attr_str(grp, "description",
                       "the job's grid: axes (settings given as lists) in grid order, their values "
                       "as written, and their dimensions (linked axes share one); /points/index "
                       "numbers the cells of the product of the dimensions, the first slowest") ||
      lbmc_h5_write_str(grp, "axis_name", A, (const char *const *)g->axis_name, "",
                        "name of each axis as in the job file (n, lambda, pools[2].beta, run.time, "
                        "...), slowest first");
  for (hsize_t a = 0; a < A && ints; a++) ints[a] = g->axis_length[a];
  if (!rc)
    rc = lbmc_h5_write_i64(grp, "axis_length", 1, &A, ints, "1", "number of values of each axis");
  if (!rc)
    rc = lbmc_h5_write_str(grp, "axis_value", V, (const char *const *)g->axis_value, "",
                           "the values of the axes as written in the job, one axis after another");
  for (hsize_t a = 0; a < A && ints; a++) ints[a] = g->axis_dim[a];
  if (!rc)
    rc = lbmc_h5_write_i64(grp, "axis_dim", 1, &A, ints, "1",
                           "dimension (0-based, slowest first) of each axis; axes varied together "
                           "(the job's together) share one");
  if (!rc)
    rc = lbmc_h5_write_str(grp, "dim_name", D, (const char *const *)g->dim_name, "",
                           "name of each dimension: the name the job gives a group of linked axes, "
                           "else the axis name of a single axis, else empty (an unnamed group)");
  free(ints);
  if (grp >= 0) H5Gclose(grp);
  return rc ? -1 : 0;
}

/* A 1-D dataset of n strings into out[0..n) (malloc'ed); -1 if its length is not n. */
static int lbmc_grid_read_strs(hid_t grp, const char *name, hsize_t n, char **out)
{
  hsize_t dims[4];
  hid_t t;
  char **buf;
  int rc;
  if (lbmc_h5_dims(grp, name, dims) != 1 || dims[0] != n) return -1;
  t = lbmc_h5_vlstr();
  buf = calloc(n + 1, sizeof *buf);
  rc = buf ? lbmc_h5_read(grp, name, t, buf) : -1;
  for (hsize_t i = 0; i < n && buf; i++) {
    if (!rc) rc = !(out[i] = strdup(buf[i] ? buf[i] : ""));
    H5free_memory(buf[i]);
  }
  H5Tclose(t);
  free(buf);
  return rc ? -1 : 0;
}

/* A 1-D int64 dataset of n entries into out (long). */
static int lbmc_grid_read_longs(hid_t grp, const char *name, hsize_t n, long *out)
{
  hsize_t dims[4];
  int64_t *buf;
  int rc;
  if (lbmc_h5_dims(grp, name, dims) != 1 || dims[0] != n) return -1;
  buf = malloc(sizeof *buf * (n + 1));
  rc = buf ? lbmc_h5_read(grp, name, H5T_NATIVE_INT64, buf) : -1;
  for (hsize_t i = 0; !rc && i < n; i++) out[i] = (long)buf[i];
  free(buf);
  return rc;
}

int lbmc_grid_read(hid_t file, lbmc_grid **out)
{
  hsize_t A[4], V[4], D[4];
  hid_t grp;
  lbmc_grid *g = NULL;
  int rc;
  *out = NULL;
  if (!lbmc_h5_exists(file, "grid")) return 0; /* written before /grid existed */
  grp = H5Gopen2(file, "grid", H5P_DEFAULT);
  rc = grp < 0 || lbmc_h5_dims(grp, "axis_name", A) != 1 ||
       lbmc_h5_dims(grp, "axis_value", V) != 1 || lbmc_h5_dims(grp, "dim_name", D) != 1 ||
       lbmc_grid_alloc((int)A[0], (int)D[0], (long)V[0], &g) != LBMC_SUCCESS;
  if (!rc)
    rc = lbmc_grid_read_strs(grp, "axis_name", A[0], g->axis_name) ||
         lbmc_grid_read_strs(grp, "axis_value", V[0], g->axis_value) ||
         lbmc_grid_read_strs(grp, "dim_name", D[0], g->dim_name) ||
         lbmc_grid_read_longs(grp, "axis_length", A[0], g->axis_length) ||
         lbmc_grid_read_longs(grp, "axis_dim", A[0], g->axis_dim) || lbmc_grid_index(g);
  if (grp >= 0) H5Gclose(grp);
  if (rc) lbmc_grid_destroy(&g);
  *out = g;
  return rc ? -1 : 0;
}
