#!/usr/bin/env bash
# lbmc_sim's link interface: the libraries CMake hands to whatever links it (LINKS, a
# file generated at configure time) name no MPI, HDF5, YAML or JSON library, and no
# object of the archive (ARCHIVE) needs a symbol of theirs.
# Usage: check_links.sh LINKS ARCHIVE
set -u
links=$1 archive=$2 fails=0
echo "lbmc_sim links: $(tr '\n' ' ' <"$links")"
if grep -Eiq 'mpi|hdf5|yaml|jansson|json' "$links"; then
  echo "FAIL: lbmc_sim's link interface names an I/O library"
  fails=1
fi
undef=$(nm -u "$archive" | grep -E ' U (P?MPI_|ompi_|H5|yaml_|json_)' | sort -u)
if [ -n "$undef" ]; then
  echo "FAIL: lbmc_sim needs symbols of MPI/HDF5/YAML/JSON:"
  echo "$undef" | head -20
  fails=1
fi
[ "$fails" -eq 0 ] && echo "ok: lbmc_sim stands on SPRNG, GSL and libm alone"
exit "$fails"
