/* HDF5 files written atomically and durably (h5file.h). */
#include "h5file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "h5seal.h"
#include "h5util.h"

void lbmc_h5_guard_exit(void) { H5dont_atexit(); }

hid_t lbmc_h5_fapl(void)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_LATEST) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

/* File creation properties: B-tree nodes of chunked datasets for 2 x 2 chunks (HDF5's
 * default, 2 x 32, makes every small chunked dataset cost about 4 kB of metadata; most
 * of lbmc's datasets are one chunk); the root's links and attributes compact
 * (lbmc_h5_compact). */
static hid_t lbmc_h5_fcpl(void)
{
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fcpl >= 0 && (H5Pset_istore_k(fcpl, 2) < 0 || lbmc_h5_compact(fcpl))) {
    H5Pclose(fcpl);
    return -1;
  }
  return fcpl;
}

/* The directory of path into dir (len bytes). */
static void lbmc_dir_of(const char *path, char *dir, size_t len)
{
  char copy[4200];
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(dir, len, "%s", dirname(copy)); /* dirname may modify its argument */
}

double lbmc_fs_free_bytes(const char *path)
{
  char dir[4200];
  struct statvfs st;
  lbmc_dir_of(path, dir, sizeof dir);
  if (statvfs(dir, &st) != 0) return -1;
  return (double)st.f_bavail * (double)st.f_frsize;
}

int lbmc_fsync_dir(const char *path)
{
  char dir[4200];
  int fd, rc = 0;
  lbmc_dir_of(path, dir, sizeof dir);
  fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) rc = errno;
  close(fd);
  return rc;
}

/* fsync a file by its name. Returns 0 or the errno value. */
static int lbmc_fsync_file(const char *path)
{
  int fd = open(path, O_RDONLY), rc = 0;
  if (fd < 0) return errno;
  if (fsync(fd) != 0) rc = errno;
  close(fd);
  return rc;
}

/* "1.5 MB" of a number of bytes. */
static const char *lbmc_bytes_text(double bytes, char *buf, size_t len)
{
  static const char *const unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) bytes /= 1000, u++;
  snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", bytes, unit[u]);
  return buf;
}

/* ", the file system of DIR has N bytes free" when the file system of path is full or
 * nearly (less than a megabyte free), else "". */
static const char *lbmc_free_note(const char *path, char *buf, size_t len)
{
  double avail = lbmc_fs_free_bytes(path);
  char dir[4200], amount[32];
  buf[0] = '\0';
  lbmc_dir_of(path, dir, sizeof dir);
  if (avail >= 0 && avail < 1e6)
    snprintf(buf, len, " (the file system of %s has %s free)", dir,
             lbmc_bytes_text(avail, amount, sizeof amount));
  return buf;
}

lbmc_err lbmc_h5_out_create(lbmc_h5_out *out, const char *path)
{
  hid_t fapl = lbmc_h5_fapl(), fcpl = lbmc_h5_fcpl();
  snprintf(out->path, sizeof out->path, "%s", path);
  snprintf(out->tmp, sizeof out->tmp, "%s.tmp.%ld", path, (long)getpid());
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our messages, not HDF5's error stack */
  out->file = fapl < 0 || fcpl < 0 ? -1 : H5Fcreate(out->tmp, H5F_ACC_TRUNC, fcpl, fapl);
  if (out->file < 0) { /* the error stack first: the next HDF5 call clears it */
    lbmc_err err = lbmc_h5_file_error(out->tmp, "create", NULL);
    unlink(out->tmp); /* HDF5 may have created it before failing to lock it */
    if (!err)
      err = LBMC_ERROR(LBMC_ERR_FILE, "cannot create %s (is the directory writable?)", out->tmp);
    if (fapl >= 0) H5Pclose(fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    return err;
  }
  H5Pclose(fapl);
  H5Pclose(fcpl);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_h5_out_commit(lbmc_h5_out *out, int failed, const char *what)
{
  char system[160] = "", note[4300];
  int rc = 0, sealed = !failed && lbmc_h5_seal(out->file) == 0;
  if (!failed && !sealed) lbmc_h5_system_error(system, sizeof system, NULL);
  /* a close that fails (a full disk) leaves the file open inside HDF5: never touch it
   * again (h5file.h) */
  if (H5Fclose(out->file) < 0) {
    failed = 1;
    if (!system[0]) lbmc_h5_system_error(system, sizeof system, NULL);
  }
  out->file = -1;
  failed |= !sealed;
  if (!failed && (rc = lbmc_fsync_file(out->tmp)) != 0) {
    failed = 1;
    snprintf(system, sizeof system, "syncing it to disk: %s", strerror(rc));
  }
  if (!failed && (rc = lbmc_fsync_dir(out->tmp)) != 0) {
    char dir[4200];
    failed = 1;
    lbmc_dir_of(out->tmp, dir, sizeof dir);
    snprintf(system, sizeof system, "syncing its directory %.100s to disk: %s", dir, strerror(rc));
  }
  if (failed) {
    unlink(out->tmp);
    lbmc_free_note(out->tmp, note, sizeof note);
    if (system[0])
      return LBMC_ERROR(LBMC_ERR_FILE, "writing %s to %s failed: %s%s", what, out->tmp, system,
                        note);
    return LBMC_ERROR(LBMC_ERR_HDF5, "writing %s to %s failed%s", what, out->tmp,
                      note[0] ? note : " (HDF5 gave no system error)");
  }
  if (rename(out->tmp, out->path) != 0) {
    rc = errno;
    unlink(out->tmp);
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot rename %s to %s: %s", out->tmp, out->path,
                      strerror(rc));
  }
  if ((rc = lbmc_fsync_dir(out->path)) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "wrote %s, but the directory holding it could not be synced to disk (%s): "
                      "the file may be lost if the machine fails now",
                      out->path, strerror(rc));
  return LBMC_SUCCESS;
}

lbmc_err lbmc_h5_probe(const char *path, double bytes)
{
  char probe[4200], about[4400], dir[4200], need[32], have[32];
  double avail = lbmc_fs_free_bytes(path);
  hid_t fapl, file;
  lbmc_dir_of(path, dir, sizeof dir);
  if (avail >= 0 && (avail == 0 || (bytes > 0 && avail < bytes)))
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "not enough space for %s: the file system of %s has %s free, the file "
                      "needs about %s (No space left on device); free some space or write "
                      "elsewhere (-o)",
                      path, dir, lbmc_bytes_text(avail, have, sizeof have),
                      lbmc_bytes_text(bytes, need, sizeof need));
  snprintf(probe, sizeof probe, "%s.probe.%ld", path, (long)getpid());
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  fapl = lbmc_h5_fapl();
  file = fapl < 0 ? -1 : H5Fcreate(probe, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file < 0 || H5Fclose(file) < 0) { /* the error stack first: the next call clears it */
    lbmc_err err;
    snprintf(about, sizeof about, "a test that HDF5 can write %s, made before computing", path);
    err = lbmc_h5_file_error(probe, "create", about);
    unlink(probe);
    if (fapl >= 0) H5Pclose(fapl);
    return err ? err
               : LBMC_ERROR(LBMC_ERR_FILE, "cannot create %s (is the directory writable?)", probe);
  }
  H5Pclose(fapl);
  unlink(probe);
  return LBMC_SUCCESS;
}
