/* Small HDF5 helpers (h5util.h): datasets with units and description attributes,
 * attributes, variable-length UTF-8 strings, whole-dataset reads. */
#include "h5util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a walk of HDF5's error stack found: the system error text, and whether the call
 * that failed with it was a file lock. */
typedef struct {
  char system[160];
  int lock;
} lbmc_h5_cause;

/* HDF5 writes a system error as "..., errno = 37, error message = 'No locks available'";
 * a lock that failed as "unable to lock file, errno = ...". The first system error on
 * the stack is the one that made the call fail (a full disk while creating a file is
 * not a lock failure, even when an entry above it mentions locks). */
static herr_t lbmc_h5_cause_visit(unsigned n, const H5E_error2_t *e, void *data)
{
  lbmc_h5_cause *cause = data;
  const char *desc = e->desc ? e->desc : "", *msg = strstr(desc, "error message = '");
  (void)n;
  if (msg && !cause->system[0]) {
    const size_t len = (size_t)(msg - desc);
    cause->lock = strstr(desc, "lock") && (size_t)(strstr(desc, "lock") - desc) < len;
    msg += strlen("error message = '");
    snprintf(cause->system, sizeof cause->system, "%.*s", (int)strcspn(msg, "'"), msg);
  }
  return 0;
}

int lbmc_h5_system_error(char *buf, size_t len, int *lock)
{
  lbmc_h5_cause cause = {"", 0};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, lbmc_h5_cause_visit, &cause);
  if (len) snprintf(buf, len, "%s", cause.system);
  if (lock) *lock = cause.lock;
  return cause.system[0] != '\0';
}

lbmc_err lbmc_h5_file_error(const char *path, const char *doing, const char *about)
{
  char system[160], context[4200] = "";
  int lock;
  if (!lbmc_h5_system_error(system, sizeof system, &lock)) return LBMC_SUCCESS;
  if (about) snprintf(context, sizeof context, " (%s)", about);
  if (!lock) return LBMC_ERROR(LBMC_ERR_FILE, "cannot %s %s%s: %s", doing, path, context, system);
  return LBMC_ERROR(LBMC_ERR_FILE,
                    "cannot %s %s%s: HDF5 could not lock it: %s; if the file system has no file "
                    "locks (NFS without lockd, some Lustre mounts), run with "
                    "HDF5_USE_FILE_LOCKING=FALSE in the environment; if another program holds "
                    "the file open, close it",
                    doing, path, context, system);
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

/* Links and attributes stay in their object's header (compact storage) up to these
 * counts, where HDF5's own checksum covers them (file format 1.10, h5file.c):
 * in dense storage (a fractal heap, past 8 by default) a damaged entry can crash HDF5
 * 1.10 when the group is listed, instead of failing its checksum. */
#define LBMC_H5_MAX_COMPACT 1024
#define LBMC_H5_MIN_DENSE   1000

hid_t lbmc_h5_group(hid_t loc, const char *name)
{
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
  if (gcpl >= 0 && H5Pset_link_phase_change(gcpl, LBMC_H5_MAX_COMPACT, LBMC_H5_MIN_DENSE) >= 0 &&
      H5Pset_attr_phase_change(gcpl, LBMC_H5_MAX_COMPACT, LBMC_H5_MIN_DENSE) >= 0)
    g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  if (gcpl >= 0) H5Pclose(gcpl);
  return g;
}

int lbmc_h5_compact(hid_t fcpl)
{
  return H5Pset_link_phase_change(fcpl, LBMC_H5_MAX_COMPACT, LBMC_H5_MIN_DENSE) < 0 ||
                 H5Pset_attr_phase_change(fcpl, LBMC_H5_MAX_COMPACT, LBMC_H5_MIN_DENSE) < 0
             ? -1
             : 0;
}

/* Dataset creation properties: numbers in chunks of at most about 1 MiB, each with
 * HDF5's Fletcher32 checksum (checked by HDF5 on every read); HDF5 allows no filter on
 * variable-length strings, nor chunks on an empty dataset: those stay contiguous (their
 * `sha256` attribute covers them, h5seal.h). */
static hid_t lbmc_h5_dcpl(hid_t filetype, int rank, const hsize_t *dims)
{
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[H5S_MAX_RANK], elems = 1;
  const hsize_t target = (1u << 20) / 8; /* elements of about 1 MiB */
  int empty = 0;
  if (dcpl >= 0 && H5Pset_attr_phase_change(dcpl, LBMC_H5_MAX_COMPACT, LBMC_H5_MIN_DENSE) < 0) {
    H5Pclose(dcpl);
    return -1;
  }
  if (dcpl < 0 || H5Tis_variable_str(filetype) > 0 || rank < 1 || rank > H5S_MAX_RANK) return dcpl;
  for (int i = 0; i < rank; i++) empty |= dims[i] == 0;
  if (empty) return dcpl;
  for (int i = rank - 1; i >= 0; i--) { /* whole trailing dimensions, then a slice */
    hsize_t room = target / elems;
    chunk[i] = dims[i] <= room ? dims[i] : room ? room : 1;
    elems *= chunk[i];
  }
  if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_fletcher32(dcpl) < 0) {
    H5Pclose(dcpl);
    return -1;
  }
  return dcpl;
}

static int lbmc_h5_write(hid_t loc, const char *name, hid_t filetype, hid_t memtype, int rank,
                         const hsize_t *dims, const void *data, const char *units,
                         const char *description)
{
  /* the dataset of the blocks' writers (lbmc_h5_begin_dataset ... lbmc_h5_end_dataset),
   * written whole at once */
  const hid_t d = lbmc_h5_begin_dataset(loc, name, filetype, rank, dims);
  hsize_t count = 1;
  for (int i = 0; i < rank; i++) count *= dims[i];
  return lbmc_h5_end_dataset(
      d,
      d >= 0 && (count == 0 || H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0) ? 0
                                                                                               : -1,
      units, description);
}

/* Bytes of the chunk cache of a dataset written in pieces: its chunks (about 1 MiB,
 * lbmc_h5_dcpl) stay in memory while the blocks fill them. */
#define LBMC_H5_BLOCK_CACHE ((size_t)4 << 20)

hid_t lbmc_h5_begin_dataset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims)
{
  hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = lbmc_h5_dcpl(type, rank, dims),
        dapl = H5Pcreate(H5P_DATASET_ACCESS), d = -1;
  if (space >= 0 && dcpl >= 0 && dapl >= 0 &&
      H5Pset_chunk_cache(dapl, 521, LBMC_H5_BLOCK_CACHE, 1.0) >= 0)
    d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, dapl);
  if (dapl >= 0) H5Pclose(dapl);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return d;
}

int lbmc_h5_write_block(hid_t d, hid_t memtype, int rank, const hsize_t *start,
                        const hsize_t *count, const void *data)
{
  hid_t file = H5Dget_space(d), mem = H5Screate_simple(rank, count, NULL);
  int rc = file < 0 || mem < 0 ||
           H5Sselect_hyperslab(file, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
           H5Dwrite(d, memtype, mem, file, H5P_DEFAULT, data) < 0;
  if (mem >= 0) H5Sclose(mem);
  if (file >= 0) H5Sclose(file);
  return rc ? -1 : 0;
}

int lbmc_h5_end_dataset(hid_t d, int rc, const char *units, const char *description)
{
  if (d < 0) return -1;
  if (rc == 0) rc = lbmc_h5_attr_str(d, "units", units);
  if (rc == 0) rc = lbmc_h5_attr_str(d, "description", description);
  return H5Dclose(d) < 0 ? -1 : rc;
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

int lbmc_h5_reader_open(hid_t loc, const char *name, size_t cache, lbmc_h5_reader *r)
{
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  r->d = r->space = -1;
  r->rank = 0;
  if (dapl >= 0 && H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, cache, 1.0) >= 0 &&
      H5Lexists(loc, name, H5P_DEFAULT) > 0)
    r->d = H5Dopen2(loc, name, dapl);
  if (dapl >= 0) H5Pclose(dapl);
  if (r->d < 0) {
    r->d = -1;
    return -1;
  }
  r->space = H5Dget_space(r->d);
  r->rank = r->space < 0 ? -1 : H5Sget_simple_extent_ndims(r->space);
  if (r->rank < 1 || r->rank > 4 || H5Sget_simple_extent_dims(r->space, r->dims, NULL) < 0) {
    lbmc_h5_reader_close(r);
    return -1;
  }
  return 0;
}

int lbmc_h5_reader_block(lbmc_h5_reader *r, hid_t memtype, const hsize_t *start,
                         const hsize_t *count, void *buf)
{
  const hid_t mem = r->d < 0 ? -1 : H5Screate_simple(r->rank, count, NULL);
  const int rc =
      mem >= 0 && H5Sselect_hyperslab(r->space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
              H5Sselect_valid(r->space) > 0 &&
              H5Dread(r->d, memtype, mem, r->space, H5P_DEFAULT, buf) >= 0
          ? 0
          : -1;
  if (mem >= 0) H5Sclose(mem);
  return rc;
}

void lbmc_h5_reader_close(lbmc_h5_reader *r)
{
  if (r->space >= 0) H5Sclose(r->space);
  if (r->d >= 0) H5Dclose(r->d);
  r->d = r->space = -1;
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
