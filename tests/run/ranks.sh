#!/usr/bin/env bash
# The same job on 1, 2 and 4 ranks gives bit-identical per-replica values (streams
# depend on (point, replica, seed), never on the rank), and identical estimates; the same
# for a job of many small points, whose units travel in batches.
. "$(dirname "$0")/lib.sh"
for np in 1 2 4; do
  check "run on $np rank(s)" mpi "$np" run "$HERE/small.yaml" -o "$WORK/r$np.h5" --quiet
done
check "1 vs 2 ranks identical" compare "$WORK/r1.h5" "$WORK/r2.h5"
check "1 vs 4 ranks identical" compare "$WORK/r1.h5" "$WORK/r4.h5"
check "no checkpoint left after a complete run" test ! -e "$WORK/r1.h5.ckpt"
# Many small points (about 0.1 ms a replica) in sequential mode: workers get their units
# in batches that span points and rounds, and rank 0 leaves such units to them; the
# results do not depend on it.
cat > "$WORK/tiny.yaml" <<'EOF2'
system:
  n: [2, 3, 5, 8, 13]
  lambda: [0.3, 0.5, 0.7, 0.8, 0.9, 0.95]
  pools:
    - {beta: 1, mu: 1}
policy: [random, jsq(2)]
run:
  replicas: 3
  warmup: 5
  time: 30
  seed: 5
  precision: {metric: mean_sojourn, relative: 0.05, max_replicas: 12}
EOF2
for np in 1 2 4; do
  check "small points on $np rank(s)" mpi "$np" run "$WORK/tiny.yaml" -o "$WORK/t$np.h5" --quiet
done
check "small points: 1 vs 2 ranks identical" compare "$WORK/t1.h5" "$WORK/t2.h5"
check "small points: 1 vs 4 ranks identical" compare "$WORK/t1.h5" "$WORK/t4.h5"
check "mpi_ranks recorded" /usr/bin/python3 -c "import h5py,sys; sys.exit(int(h5py.File('$WORK/r4.h5')['/'].attrs['mpi_ranks'] != 4))"
finish
