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
# Small points whose first round a worker runs whole are reduced by the worker, and rank 0
# stores the reduction (the final progress line counts them): the same numbers as rank 0
# reducing them, with the pair tables (two pools), and for one-replica points (batch
# means of the one record).
cat > "$WORK/whole.yaml" <<'EOF2'
system:
  n: [4, 6, 8, 10, 12]
  lambda: [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9]
  pools:
    - {beta: 0.5, mu: 1}
    - {beta: 0.5, mu: 2}
policy: [random, jsq(2), lwl(2)]
run:
  replicas: 4
  warmup: 5
  time: 20
  seed: 9
  pairs: true
EOF2
sed 's/replicas: 4/replicas: 1/; s/pairs: true/batches: 10/' "$WORK/whole.yaml" > "$WORK/whole1.yaml"
for j in whole whole1; do
  check "$j: 1 rank" "$LBMC" run "$WORK/$j.yaml" -o "$WORK/${j}_1.h5" --quiet
  check "$j: 2 ranks" sh -c "mpirun --oversubscribe -np 2 '$LBMC' run '$WORK/$j.yaml' -o '$WORK/${j}_2.h5' 2> '$WORK/$j.log'"
  check "$j: points reduced by the worker" grep -Eq "points \([1-9][0-9]* reduced by workers\)" "$WORK/$j.log"
  # a worker that starts late (it sleeps after the set-up's last collective, as one that
  # gets no CPU on a loaded machine) still gets the first units: rank 0 does not run the
  # whole job alone meanwhile
  check "$j: 2 ranks, the worker late" sh -c "mpirun --oversubscribe -np 2 -x LD_PRELOAD='$(preload "${LBMC_LATEWORKER:?}")' '$LBMC' run '$WORK/$j.yaml' -o '$WORK/${j}_late.h5' 2> '$WORK/${j}_late.log'"
  check "$j: the late worker reduced points" grep -Eq "points \([1-9][0-9]* reduced by workers\)" "$WORK/${j}_late.log"
  groups=points,estimates,replicas
  [ "$j" = whole ] && groups=$groups,pairs
  check "$j: 1 vs 2 ranks identical" compare "$WORK/${j}_1.h5" "$WORK/${j}_2.h5" --groups $groups
  check "$j: 1 vs 2 ranks (the worker late) identical" compare "$WORK/${j}_1.h5" "$WORK/${j}_late.h5" --groups $groups
done
check "mpi_ranks recorded" /usr/bin/python3 -c "import h5py,sys; sys.exit(int(h5py.File('$WORK/r4.h5')['/'].attrs['mpi_ranks'] != 4))"
finish
