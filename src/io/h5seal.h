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

/** Check the digests of an open file; `path` names it in messages. Reads every value
 *  once; a file without `content_sha256` (written before lbmc had checksums) is read
 *  the same but nothing compared: *sealed = 0. Errors: LBMC_ERR_FILE "PATH is damaged:
 *  /DATASET ..." naming the first damaged object (a Fletcher32 failure, a value that
 *  cannot be read, a value or attribute that does not match its digest, a lost digest),
 *  or the root attributes. */
lbmc_err lbmc_h5_verify(hid_t file, const char *path, int *sealed);

/** lbmc_h5_verify of the file at path in a child process (fork): HDF5 trusts some
 *  structures that carry no checksum (the global heap of variable-length strings) and
 *  can crash on damaged ones; a crash of the child is reported as damage instead of
 *  ending the program. A file the child cannot open is left to the caller's own
 *  H5Fopen (whose error says why). The child calls no MPI function and leaves with
 *  _exit. Errors: those of lbmc_h5_verify (printed by the child), LBMC_ERR_FILE
 *  ("PATH is damaged: the HDF5 library crashed reading it"). */
lbmc_err lbmc_h5_check_file(const char *path, int *sealed);

#endif
