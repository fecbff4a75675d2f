/* Small HDF5 helpers (h5util.h): datasets with units and description attributes,
 * attributes, variable-length UTF-8 strings, whole-dataset reads. */
#include "h5util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a walk of HDF5's error stack found: the system error text, and whether any
 * entry was about file locking. */
typedef struct {
  char system[160];
  int lock;
} lbmc_h5_cause;

/* HDF5 writes a system error as "..., errno = 37, error message = 'No locks available'". */
static herr_t lbmc_h5_cause_visit(unsigned n, const H5E_error2_t *e, void *data)
{
  lbmc_h5_cause *cause = data;
  const char *desc = e->desc ? e->desc : "", *msg = strstr(desc, "error message = '");
  (void)n;
  if (strstr(desc, "lock")) cause->lock = 1;
  if (msg && !cause->system[0]) {
    msg += strlen("error message = '");
    snprintf(cause->system, sizeof cause->system, "%.*s", (int)strcspn(msg, "'"), msg);
  }
  return 0;
}

lbmc_err lbmc_h5_file_error(const char *path, const char *doing, const char *about)
{
  lbmc_h5_cause cause = {"", 0};
  char context[4200] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, lbmc_h5_cause_visit, &cause);
  if (!cause.system[0]) return LBMC_SUCCESS;
  if (about) snprintf(context, sizeof context, " (%s)", about);
  if (!cause.lock)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot %s %s%s: %s", doing, path, context, cause.system);
  return LBMC_ERROR(LBMC_ERR_FILE,
                    "cannot %s %s%s: HDF5 could not lock it: %s; if the file system has no file "
                    "locks (NFS without lockd, some Lustre mounts), run with "
                    "HDF5_USE_FILE_LOCKING=FALSE in the environment; if another program holds "
                    "the file open, close it",
                    doing, path, context, cause.system);
}

hid_t lbmc_h5_vlstr(void)
{
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* An attribute of n values (n < 0: a scalar). */
static int lbmc_h5_attr_n(hid_t loc, const char *name, hid_t type, int n, const void *value)
{
  hsize_t len = n < 0 ? 1 : (hsize_t)n;
  hid_t space = n < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &len, NULL), a;
  int rc = -1;
  a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    rc = H5Awrite(a, type, value) < 0 ? -1 : 0;
    H5Aclose(a);
  }
  H5Sclose(space);
  return rc;
}

static int lbmc_h5_attr(hid_t loc, const char *name, hid_t type, const void *value)
{
  return lbmc_h5_attr_n(loc, name, type, -1, value);
}

int lbmc_h5_attr_str(hid_t loc, const char *name, const char *value)
{
  hid_t t = lbmc_h5_vlstr();
  int rc = lbmc_h5_attr(loc, name, t, &value);
  H5Tclose(t);
  return rc;
}

int lbmc_h5_attr_strs(hid_t loc, const char *name, int n, const char *const *values)
{
  hid_t t = lbmc_h5_vlstr();
  int rc = lbmc_h5_attr_n(loc, name, t, n, values);
  H5Tclose(t);
  return rc;
}

int lbmc_h5_attr_i64(hid_t loc, const char *name, int64_t value)
{
  return lbmc_h5_attr(loc, name, H5T_NATIVE_INT64, &value);
}

int lbmc_h5_attr_f64(hid_t loc, const char *name, double value)
{
  return lbmc_h5_attr(loc, name, H5T_NATIVE_DOUBLE, &value);
}

static int lbmc_h5_write(hid_t loc, const char *name, hid_t filetype, hid_t memtype, int rank,
                         const hsize_t *dims, const void *data, const char *units,
                         const char *description)
{
  hid_t space = H5Screate_simple(rank, dims, NULL), d;
  int rc = -1;
  d = H5Dcreate2(loc, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0) {
    hsize_t count = 1;
    for (int i = 0; i < rank; i++) count *= dims[i];
    rc = (count == 0 || H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0) ? 0 : -1;
    if (rc == 0) rc = lbmc_h5_attr_str(d, "units", units);
    if (rc == 0) rc = lbmc_h5_attr_str(d, "description", description);
    H5Dclose(d);
  }
  H5Sclose(space);
  return rc;
}

int lbmc_h5_write_f64(hid_t loc, const char *name, int rank, const hsize_t *dims,
                      const double *data, const char *units, const char *description)
{
  return lbmc_h5_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rank, dims, data, units,
                       description);
}

int lbmc_h5_write_i64(hid_t loc, const char *name, int rank, const hsize_t *dims,
                      const int64_t *data, const char *units, const char *description)
{
  return lbmc_h5_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, rank, dims, data, units,
                       description);
}

int lbmc_h5_write_i8(hid_t loc, const char *name, int rank, const hsize_t *dims, const int8_t *data,
                     const char *units, const char *description)
{
  return lbmc_h5_write(loc, name, H5T_STD_I8LE, H5T_NATIVE_INT8, rank, dims, data, units,
                       description);
}

int lbmc_h5_write_str(hid_t loc, const char *name, hsize_t n, const char *const *data,
                      const char *units, const char *description)
{
  return lbmc_h5_write_strs(loc, name, 1, &n, data, units, description);
}

int lbmc_h5_write_strs(hid_t loc, const char *name, int rank, const hsize_t *dims,
                       const char *const *data, const char *units, const char *description)
{
  hid_t t = lbmc_h5_vlstr();
  int rc = lbmc_h5_write(loc, name, t, t, rank, dims, data, units, description);
  H5Tclose(t);
  return rc;
}

int lbmc_h5_exists(hid_t loc, const char *name) { return H5Lexists(loc, name, H5P_DEFAULT) > 0; }

static int lbmc_h5_read_attr(hid_t loc, const char *name, hid_t memtype, void *value)
{
  hid_t a;
  int rc;
  if (H5Aexists(loc, name) <= 0) return -1;
  a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return -1;
  rc = H5Aread(a, memtype, value) < 0 ? -1 : 0;
  H5Aclose(a);
  return rc;
}

int lbmc_h5_read_attr_str(hid_t loc, const char *name, char **value)
{
  hid_t t = lbmc_h5_vlstr();
  char *s = NULL;
  int rc = lbmc_h5_read_attr(loc, name, t, &s);
  H5Tclose(t);
  *value = NULL;
  if (rc == 0 && s) {
    *value = strdup(s);
    H5free_memory(s);
  }
  return rc == 0 && *value ? 0 : -1;
}

int lbmc_h5_read_attr_i64(hid_t loc, const char *name, int64_t *value)
{
  return lbmc_h5_read_attr(loc, name, H5T_NATIVE_INT64, value);
}

int lbmc_h5_read_attr_f64(hid_t loc, const char *name, double *value)
{
  return lbmc_h5_read_attr(loc, name, H5T_NATIVE_DOUBLE, value);
}

int lbmc_h5_read(hid_t loc, const char *name, hid_t memtype, void *buf)
{
  hid_t d;
  int rc;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
  d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return -1;
  rc = H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
  H5Dclose(d);
  return rc;
}

int lbmc_h5_dims(hid_t loc, const char *name, hsize_t *dims)
{
  hid_t d, s;
  int rank;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
  d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return -1;
  s = H5Dget_space(d);
  rank = H5Sget_simple_extent_ndims(s);
  if (rank > 4 || H5Sget_simple_extent_dims(s, dims, NULL) < 0) rank = -1;
  H5Sclose(s);
  H5Dclose(d);
  return rank;
}

int lbmc_h5_read_strs(hid_t loc, const char *name, hsize_t n, char **out)
{
  hid_t t = lbmc_h5_vlstr();
  char **buf = calloc(n ? n : 1, sizeof *buf);
  int rc = buf ? lbmc_h5_read(loc, name, t, buf) : -1;
  for (hsize_t i = 0; i < n; i++) {
    out[i] = rc == 0 ? strdup(buf[i] ? buf[i] : "") : NULL;
    if (!out[i]) rc = -1;
    if (buf) H5free_memory(buf[i]);
  }
  for (hsize_t i = 0; rc && i < n; i++) {
    free(out[i]);
    out[i] = NULL;
  }
  H5Tclose(t);
  free(buf);
  return rc;
}

int lbmc_h5_read_str(hid_t loc, const char *name, hsize_t n, char *out, size_t cap)
{
  hid_t t = lbmc_h5_vlstr();
  char **buf = calloc(n ? n : 1, sizeof *buf);
  int rc = buf ? lbmc_h5_read(loc, name, t, buf) : -1;
  for (hsize_t i = 0; rc == 0 && i < n; i++) {
    snprintf(out + i * cap, cap, "%s", buf[i] ? buf[i] : "");
    H5free_memory(buf[i]);
  }
  H5Tclose(t);
  free(buf);
  return rc;
}
