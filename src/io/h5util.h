/* Private: small HDF5 helpers (datasets with units and description, attributes,
 * variable-length UTF-8 strings). Each returns 0 on success, -1 on an HDF5 failure.
 * Numeric datasets are written in chunks with HDF5's Fletcher32 checksum. */
#ifndef LBMC_H5UTIL_H
#define LBMC_H5UTIL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"

/** Variable-length UTF-8 string type (close with H5Tclose). */
hid_t lbmc_h5_vlstr(void);

int lbmc_h5_attr_str(hid_t loc, const char *name, const char *value);
/** A 1-D attribute of n strings. */
int lbmc_h5_attr_strs(hid_t loc, const char *name, int n, const char *const *values);
int lbmc_h5_attr_i64(hid_t loc, const char *name, int64_t value);
int lbmc_h5_attr_f64(hid_t loc, const char *name, double value);

/** Dataset of `rank` dims of doubles / int64 / int8 / strings with units and
 *  description attributes. */
int lbmc_h5_write_f64(hid_t loc, const char *name, int rank, const hsize_t *dims,
                      const double *data, const char *units, const char *description);
int lbmc_h5_write_i64(hid_t loc, const char *name, int rank, const hsize_t *dims,
                      const int64_t *data, const char *units, const char *description);
int lbmc_h5_write_i8(hid_t loc, const char *name, int rank, const hsize_t *dims, const int8_t *data,
                     const char *units, const char *description);
int lbmc_h5_write_str(hid_t loc, const char *name, hsize_t n, const char *const *data,
                      const char *units, const char *description);
/** A dataset written in pieces: created as the ones above (type: H5T_IEEE_F64LE,
 *  H5T_STD_I64LE or H5T_STD_I8LE), its blocks written with lbmc_h5_write_block (the
 *  hyperslab start[], count[] of rank values, data of memory type memtype in C order),
 *  then lbmc_h5_end_dataset gives it its units and description and closes it (returns
 *  rc, or -1 if that failed). -1 on failure. */
hid_t lbmc_h5_begin_dataset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims);
int lbmc_h5_write_block(hid_t d, hid_t memtype, int rank, const hsize_t *start,
                        const hsize_t *count, const void *data);
int lbmc_h5_end_dataset(hid_t d, int rc, const char *units, const char *description);
/** The same with `rank` dims (data in C order), e.g. P x J. */
int lbmc_h5_write_strs(hid_t loc, const char *name, int rank, const hsize_t *dims,
                       const char *const *data, const char *units, const char *description);
/** Create group `name` in loc (close with H5Gclose; -1 on failure), its links and
 *  attributes kept in its object header (compact storage, checksummed by HDF5). */
hid_t lbmc_h5_group(hid_t loc, const char *name);
/** The same compact storage for the root group: on a file creation property list.
 *  0, or -1 on failure. */
int lbmc_h5_compact(hid_t fcpl);
/** 1 if loc holds a link (dataset or group) `name`, 0 if not. */
int lbmc_h5_exists(hid_t loc, const char *name);

/** After H5Fcreate or H5Fopen of `path` failed (with HDF5's automatic error printing
 *  off): if HDF5 recorded a system error, LBMC_ERR_FILE with a message naming the file
 *  (and `about` it, in parentheses, unless NULL), what failed (`doing`: "create",
 *  "open") and the system error, and for a file lock
 *  the remedies (HDF5_USE_FILE_LOCKING=FALSE where the file system has no locks, or
 *  closing the program that holds the file); LBMC_SUCCESS if HDF5 recorded none (the
 *  caller words the failure). Reads HDF5's default error stack. */
lbmc_err lbmc_h5_file_error(const char *path, const char *doing, const char *about);

/** The system error HDF5 recorded on its default error stack (after a call failed, before
 *  the next HDF5 call clears it), e.g. "No space left on device", into buf; *lock (if
 *  not NULL) = 1 when the call that failed with it was a file lock. Returns 1 if there
 *  was one, 0 if not (buf ""). */
int lbmc_h5_system_error(char *buf, size_t len, int *lock);

/** Read attributes; *value of lbmc_h5_read_attr_str is malloc'ed. Missing: -1. */
int lbmc_h5_read_attr_str(hid_t loc, const char *name, char **value);
int lbmc_h5_read_attr_i64(hid_t loc, const char *name, int64_t *value);
int lbmc_h5_read_attr_f64(hid_t loc, const char *name, double *value);

/** Read a whole dataset of the given memory type into buf (sized by the caller from
 *  lbmc_h5_dims). */
int lbmc_h5_read(hid_t loc, const char *name, hid_t memtype, void *buf);
/** A dataset read in blocks (the /replicas datasets by the results reader): opened once
 *  by lbmc_h5_reader_open, read by any number of lbmc_h5_reader_block, closed by
 *  lbmc_h5_reader_close. Its chunks stay in its HDF5 chunk cache between two blocks when
 *  they fit in it. */
typedef struct {
  hid_t d;     /* the dataset, -1 when not open */
  hid_t space; /* its file dataspace: the selection of each block */
  int rank;    /* 1 to 4 */
  hsize_t dims[4];
} lbmc_h5_reader;
/** Open dataset `name` of loc (rank 1 to 4) into *r, with a chunk cache of `cache` bytes
 *  (HDF5's default is 1 MiB per open dataset: the results reader holds 37 and more open at
 *  once; a chunk larger than the cache is read, and checksummed, again for each block that
 *  touches it). 0, or -1 (no such dataset, another rank, an HDF5 failure; nothing is left
 *  open, r->d = -1). */
int lbmc_h5_reader_open(hid_t loc, const char *name, size_t cache, lbmc_h5_reader *r);
/** The block start[], count[] (r->rank values) into buf (memory type memtype, C order).
 *  0, or -1 (a block outside the dataset, a read error). */
int lbmc_h5_reader_block(lbmc_h5_reader *r, hid_t memtype, const hsize_t *start,
                         const hsize_t *count, void *buf);
/** Close what r holds (nothing when r->d < 0, e.g. after a failed open); r->d = -1. */
void lbmc_h5_reader_close(lbmc_h5_reader *r);
/** Dimensions of a dataset (rank <= 4); returns the rank or -1. */
int lbmc_h5_dims(hid_t loc, const char *name, hsize_t *dims);
/** Read a 1-D string dataset of n entries into out[i] (each copied into cap bytes). */
int lbmc_h5_read_str(hid_t loc, const char *name, hsize_t n, char *out, size_t cap);
/** Read a string dataset of n entries whole: out[i] a malloc'ed copy (the caller frees
 *  each; on failure none is left). */
int lbmc_h5_read_strs(hid_t loc, const char *name, hsize_t n, char **out);

#endif
