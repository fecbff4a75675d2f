/* Test-only LD_PRELOAD shim (tests/run/integrity.sh): H5Aread crashes (SIGSEGV), as the
 * HDF5 library can on a damaged file, to check that readers of results files read them
 * first in a process of their own and report the crash as damage instead of dying. */
#include <hdf5.h>
#include <signal.h>

herr_t H5Aread(hid_t attr, hid_t type, void *buf)
{
  (void)attr, (void)type, (void)buf;
  raise(SIGSEGV);
  return -1;
}
