/* Private: HDF5 files written atomically and durably, read with their checksums checked.
 *
 * A file is built as PATH.tmp.PID in the directory of PATH, sealed with its checksums
 * (h5seal.h), closed, fsync'ed (the file and its directory), renamed over PATH, and the
 * directory fsync'ed again: a reader sees the old file or the whole new one, and after
 * a crash of the machine the new one is on disk once the rename was reported. A failure
 * names the system error (ENOSPC "No space left on device", EDQUOT, EIO: HDF5 records it
 * on its error stack) and removes the temporary. HDF5 keeps a file whose close failed
 * open, and its own exit handler would then crash flushing it: the program calls
 * H5dont_atexit() first thing (src/cli/main.c). Nothing here is collective. */
#ifndef LBMC_H5FILE_H
#define LBMC_H5FILE_H

#include <hdf5.h>

#include "lbmc/error.h"

/** Tell HDF5 not to close its files at exit (H5dont_atexit): a file whose close failed
 *  (a full disk) stays open inside HDF5, and HDF5's exit handler would crash on it.
 *  Call it first thing in main, before any other HDF5 call; every file lbmc opens it
 *  closes itself. */
void lbmc_h5_guard_exit(void);

/** A file being written: the open file, its temporary name and its final name. */
typedef struct {
  hid_t file;
  char path[4096], tmp[4200];
} lbmc_h5_out;

/** File access properties of every file lbmc writes: the file format of HDF5 1.10 and
 *  later, whose object headers (attributes, links, dataset layouts) and chunk indexes
 *  carry checksums (the 1.8 format's chunk B-trees have none: a damaged one made HDF5
 *  allocate gigabytes). Close with H5Pclose; -1 on failure. */
hid_t lbmc_h5_fapl(void);

/** Create the temporary of `path` (PATH.tmp.PID). Errors: LBMC_ERR_FILE naming the
 *  system error (a file lock: the remedies, lbmc_h5_file_error). */
lbmc_err lbmc_h5_out_create(lbmc_h5_out *out, const char *path);

/** Finish: with failed = 0 seal, close, fsync, rename over the final name and fsync
 *  the directory; with failed != 0 (the caller's writes failed) close and remove the
 *  temporary. `what` names the contents in messages ("the results"). On any failure
 *  the temporary is removed and the message names the file and the system error
 *  (with the free space when the file system is full). Errors: LBMC_ERR_FILE,
 *  LBMC_ERR_HDF5 (a failure HDF5 gives no system error for). */
lbmc_err lbmc_h5_out_commit(lbmc_h5_out *out, int failed, const char *what);

/** Bytes free for an unprivileged user on the file system of the directory of `path`,
 *  or -1 if unknown. */
double lbmc_fs_free_bytes(const char *path);

/** Before computing: a file of `bytes` (an estimate; 0: unknown) can be written next to
 *  `path`: the file system has that much free space, and HDF5 can create (and lock) a
 *  file there (PATH.probe.PID, removed again). Lack of space and lack of locks get
 *  their own messages. Errors: LBMC_ERR_FILE. */
lbmc_err lbmc_h5_probe(const char *path, double bytes);

/** fsync the directory that holds `path` (after creating, renaming or removing a file
 *  in it). Returns 0 or an errno value (file systems that cannot sync a directory,
 *  EINVAL, count as 0). */
int lbmc_fsync_dir(const char *path);

#endif
