#!/usr/bin/python3
"""Checks of /transient in a results file (tests/run/transient.sh).

usage: transient_check.py json FILE.h5 POINT SIM.json
         /transient of point POINT (its row) equals, bit for bit, the "transient" part of
         `lbmc sim --json` of the same model, seed and replicas: the time axis, the
         replicas pooled, and every part of every metric (the JSON nests time, then
         pools, then levels, as the file's axes after the point axis)
       transient_check.py csv FILE.h5 INFO.csv
         the rows of `lbmc info --transient --format csv` equal the file's values (each
         row's point, time, metric, pool and k located in the file)
       transient_check.py file FILE.h5 POINT SIM.h5
         the same against the file of `lbmc sim --transient -o SIM.h5` (one point)
       transient_check.py layout FILE.h5
         the group's attributes and the datasets' shapes: P x T, then J, then K

Exit 0 if it holds, 1 with the differences listed.
"""
import csv
import json
import sys

import h5py
import numpy as np

PARTS = ("mean", "lower", "upper", "band_lower", "band_upper")


def check_json(path, point, sim_path):
    bad = []
    with open(sim_path, encoding="utf-8") as fh:
        sim = json.load(fh)["transient"]
    with h5py.File(path, "r") as f:
        g = f["transient"]
        row = int(np.flatnonzero(f["points/index"][()] == point)[0])
        time = g["time"][()]
        if time.tobytes() != np.array(sim["time"], dtype=float).tobytes():
            bad.append(f"time {list(time)} vs {sim['time']}")
        if int(g["replicas"][row]) != int(sim["replicas"]):
            bad.append(f"replicas {int(g['replicas'][row])} vs {sim['replicas']}")
        names = [str(m) for m in g.attrs["metrics"]]
        if sorted(names) != sorted(sim["estimates"]):
            bad.append(f"metrics {names} vs {sorted(sim['estimates'])}")
        for m in names:
            for part in PARTS:
                x = g[m][part][row]
                y = np.array(sim["estimates"][m][part], dtype=float)  # null -> NaN
                if x.shape != y.shape:
                    bad.append(f"{m}/{part}: shape {x.shape} vs {y.shape}")
                elif x.tobytes() != y.tobytes():
                    n = int(np.sum(x.view(np.uint64) != y.view(np.uint64)))
                    bad.append(f"{m}/{part}: {n} of {x.size} values differ")
    return bad


def check_file(path, point, sim_path):
    bad = []
    with h5py.File(path, "r") as f, h5py.File(sim_path, "r") as s:
        g, h = f["transient"], s["transient"]
        row = int(np.flatnonzero(f["points/index"][()] == point)[0])
        if g["time"][()].tobytes() != h["time"][()].tobytes():
            bad.append("time differs")
        for name in ("replicas", "unstable_replicas"):
            if h[name].shape != (1,) or h[name][0] != g[name][row]:
                bad.append(f"{name}: {h[name][()]} vs {g[name][row]}")
        for m in g.attrs["metrics"]:
            for part in PARTS:
                x, y = g[m][part][row], h[m][part][()]
                if y.shape != (1,) + x.shape or x.tobytes() != y[0].tobytes():
                    bad.append(f"{m}/{part} differs")
    return bad


def check_csv(path, csv_path):
    bad = []
    with h5py.File(path, "r") as f, open(csv_path, newline="", encoding="utf-8") as fh:
        g = f["transient"]
        index = list(f["points/index"][()])
        time = list(g["time"][()])
        rows = list(csv.DictReader(fh))
        seen = set()
        for r in rows:
            p = index.index(int(r["point"]))
            at = (p, time.index(float(r["time"])))
            if r["pool"]:
                at += (int(r["pool"]) - 1,)
            if r["k"]:
                at += (int(r["k"]) - 1,)
            seen.add((r["metric"],) + at)
            for part in PARTS:
                x = float(g[r["metric"]][part][at])
                y = float(r[part]) if r[part] not in ("", "NaN") else float("nan")
                if not (x == y or (np.isnan(x) and np.isnan(y))):
                    bad.append(f"{r['metric']}{at} {part}: file {x!r}, csv {y!r}")
            if int(r["replicas"]) != int(g["replicas"][p]):
                bad.append(f"point {r['point']}: replicas {r['replicas']} vs {int(g['replicas'][p])}")
        want = sum(g[m]["mean"].size for m in g.attrs["metrics"])
        if len(seen) != want or len(rows) != want:
            bad.append(f"{len(rows)} rows ({len(seen)} distinct), the file has {want} values")
    return bad


def check_layout(path):
    bad = []
    with h5py.File(path, "r") as f:
        g = f["transient"]
        P, J = f["points/beta"].shape
        K = int(f.attrs["tail_k"])
        T = g["time"].shape[0]
        want = {"scalar": (P, T), "pool": (P, T, J), "pool_k": (P, T, J, K)}
        if str(g.attrs["band"]) != "bonferroni":
            bad.append(f"band {g.attrs['band']}")
        for m, shape in zip(g.attrs["metrics"], g.attrs["shapes"]):
            for part in PARTS:
                d = g[m][part]
                if d.shape != want[str(shape)]:
                    bad.append(f"{m}/{part}: shape {d.shape}, want {want[str(shape)]}")
                if d.fletcher32 is not True or d.chunks is None:
                    bad.append(f"{m}/{part}: not chunked with Fletcher32")
                for a in ("units", "description", "sha256"):
                    if a not in d.attrs:
                        bad.append(f"{m}/{part}: no attribute {a}")
        if g["replicas"].shape != (P,) or (g["replicas"][()] < 1).any():
            bad.append(f"replicas {g['replicas'][()]}")
    return bad


def main(argv):
    if argv[1] == "json":
        bad = check_json(argv[2], int(argv[3]), argv[4])
    elif argv[1] == "file":
        bad = check_file(argv[2], int(argv[3]), argv[4])
    elif argv[1] == "csv":
        bad = check_csv(argv[2], argv[3])
    else:
        bad = check_layout(argv[2])
    for line in bad[:20]:
        print(f"{argv[2]}: {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
