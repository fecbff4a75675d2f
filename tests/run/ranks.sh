#!/usr/bin/env bash
# The same job on 1, 2 and 4 ranks gives bit-identical per-replica values (streams
# depend on (point, replica, seed), never on the rank), and identical estimates.
. "$(dirname "$0")/lib.sh"
for np in 1 2 4; do
  check "run on $np rank(s)" mpi "$np" run "$HERE/small.yaml" -o "$WORK/r$np.h5" --quiet
done
check "1 vs 2 ranks identical" compare "$WORK/r1.h5" "$WORK/r2.h5"
check "1 vs 4 ranks identical" compare "$WORK/r1.h5" "$WORK/r4.h5"
check "no checkpoint left after a complete run" test ! -e "$WORK/r1.h5.ckpt"
check "mpi_ranks recorded" /usr/bin/python3 -c "import h5py,sys; sys.exit(int(h5py.File('$WORK/r4.h5')['/'].attrs['mpi_ranks'] != 4))"
finish
