#!/usr/bin/python3
"""Compare two lbmc results files bit for bit.

usage: compare.py [--ignore-job] A.h5 B.h5 [--groups points,estimates,replicas]

Every dataset of the chosen groups must have the same shape, dtype and bytes (so
NaN == NaN and -0.0 != 0.0): per-replica values must be bit-identical across rank
counts, shards and resumed runs. Run-specific data (cpu_seconds, wall time, creation
time, rank count) are not compared; with --ignore-job, neither is the job's text (a run
resumed with a job spelled differently). Exit 0 if equal, 1 with the differences listed.
"""
import sys

import h5py
import numpy as np

SKIP = {"replicas/cpu_seconds"}


def datasets(f, group):
    out = {}
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[f"{group}/{name}"] = obj
    f[group].visititems(visit)
    return out


def main(argv):
    ignore_job = "--ignore-job" in argv
    argv = [a for a in argv if a != "--ignore-job"]
    a_path, b_path = argv[1], argv[2]
    groups = ["points", "estimates", "replicas"]
    if len(argv) > 4 and argv[3] == "--groups":
        groups = argv[4].split(",")
    bad = []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        for attr in ("seed", "confidence", "tail_k") + (() if ignore_job else ("job",)):
            if a.attrs.get(attr) != b.attrs.get(attr):
                bad.append(f"root attribute {attr} differs")
        for g in groups:
            da, db = datasets(a, g), datasets(b, g)
            if set(da) != set(db):
                bad.append(f"{g}: datasets differ: {sorted(set(da) ^ set(db))}")
            for name in sorted(set(da) & set(db)):
                if name in SKIP:
                    continue
                x, y = da[name][()], db[name][()]
                if x.shape != y.shape or x.dtype != y.dtype:
                    bad.append(f"{name}: shape/dtype {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
                elif x.dtype.kind == "O":
                    if list(x.ravel()) != list(y.ravel()):
                        bad.append(f"{name}: strings differ")
                elif x.tobytes() != y.tobytes():
                    n = int(np.sum(x.view(np.uint8) != y.view(np.uint8)))
                    bad.append(f"{name}: {n} bytes differ")
    for line in bad:
        print(f"{a_path} vs {b_path}: {line}")
    if not bad:
        print(f"{a_path} and {b_path}: identical ({', '.join(groups)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
