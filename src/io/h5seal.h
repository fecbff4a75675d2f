/* Private: content checksums of HDF5 files lbmc writes (docs/results-format.md,
 * "Checksums"). Every group and dataset below the root carries the attribute `sha256`:
 * the SHA-256 of a canonical form of its attributes and values; the root carries
 * `content_sha256`: of its own attributes and every object's path and digest. Numeric
 * datasets also carry HDF5's Fletcher32 filter (h5util.c), which HDF5 checks on every
 * read. Nothing here is collective. */
#ifndef LBMC_H5SEAL_H
#define LBMC_H5SEAL_H

#include <hdf5.h>

#include "lbmc/error.h"

/** Compute and write the digests of every object of an open file (written in full):
 *  the last step before closing it. 0, or -1 on an HDF5 failure. */
int lbmc_h5_seal(hid_t file);

/** Check the digests of an open file; `path` names it in messages. A file without
 *  `content_sha256` (written before lbmc had checksums) is not checked: *sealed = 0.
 *  Reads every value once. Errors: LBMC_ERR_FILE "PATH is damaged: /DATASET ..."
 *  naming the first damaged object (a Fletcher32 failure, a value or attribute that
 *  does not match its digest, a lost digest), or the root attributes. */
lbmc_err lbmc_h5_verify(hid_t file, const char *path, int *sealed);

#endif
