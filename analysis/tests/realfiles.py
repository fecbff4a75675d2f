"""Results files written by the REAL ``lbmc run`` for the tests (fixture ``real`` in conftest.py).

The program is ``$LBMC`` (ctest sets it to the built lbmc) or, outside ctest,
``build/src/lbmc`` of this source tree; without either the tests that use it are
skipped with a message saying what to set. Each job is small (about a second).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))

# Job 1: the PULL paper's heterogeneous example, small: JSQ(2) and random run away (past
# max_customers: proven unstable). A warm-up of 40 (3 relaxation times at n = 60) makes the
# start's transient negligible for the PULL point at n = 60 (warmup_short at 20).
HETEROGENEOUS = """
system:
  n: [10, 60]
  lambda: 1
  pools:
    - {beta: 0.5, mu: 2}
    - {beta: 0.5, mu: 1/3}
policy: [pull, jsq(2), random]
run:
  replicas: 3
  warmup: 40
  time: 400
  batches: 10
  seed: 5
  tail_k: 4
  max_customers: 1000
"""

# Job 2: buffers, routers and stale variants; lambda 1.2 with an unlimited buffer is
# rho >= 1 (never simulated: 0 replicas), with buffer 2 it blocks and is stable.
BUFFERS_ROUTERS = """
system:
  n: 20
  lambda: [0.6, 1.2]
  routers: [1, 3]
  pools:
    - {beta: 1, mu: 1, buffer: [2, inf]}
policy: pull
stale: [withdraw, keep]
run:
  replicas: 2
  warmup: 10
  time: 200
  batches: 5
  seed: 3
  tail_k: 3
"""

# Job 3: sequential mode: points end with different numbers of replicas (padding).
SEQUENTIAL = """
system:
  n: [4, 40]
  lambda: 0.7
  pools:
    - {beta: 0.3, mu: 1.5}
    - {beta: rest, mu: 0.8}
policy: [random, jsq(2)]
sampling: with_replacement
run:
  replicas: 2
  warmup: 40
  time: 100
  batches: 10
  seed: 11
  tail_k: 3
  precision: {metric: p_wait, relative: 0.06, max_replicas: 12}
"""

# Job 4: one server (n = 1): every policy is the same M/M/1 queue, so the exact difference of
# any two policies is 0 (mean sojourn 1/(1 - lambda)); paired comparisons must cover it.
SINGLE_SERVER = """
system:
  n: 1
  lambda: [0.5, 0.8]
  pools:
    - {beta: 1, mu: 1}
policy: [random, jsq(1), pull]
run:
  replicas: 8
  warmup: 200
  time: 4000
  batches: 10
  seed: 12
  tail_k: 3
"""

# Job 5: linked axes (together): the two pools' buffers vary together, 2 x 3 x 2 = 12 points.
LINKED = """
system:
  n: [10, 30]
  lambda: 0.9
  pools:
    - {beta: 0.5, mu: 1.5, buffer: [1, 2, 4]}
    - {beta: rest, mu: 0.5, buffer: [2, 3, 6]}
policy: [jsq(2), random]
together: [["pools[1].buffer", "pools[2].buffer"]]
run: {replicas: 2, warmup: 10, time: 100, batches: 5, seed: 7, tail_k: 3}
"""

# Job 6: one buffer for every pool (system.buffer), linked with lambda in a named dimension.
SHARED_BUFFER = """
system:
  n: 8
  lambda: [0.5, 0.9]
  buffer: [1, 3]
  pools:
    - {beta: 0.5, mu: 1}
    - {beta: 0.5, mu: 2}
policy: random
together: {load: [lambda, buffer]}
run: {replicas: 2, warmup: 10, time: 100, batches: 5, seed: 8, tail_k: 3}
"""

JOBS = {"heterogeneous": HETEROGENEOUS, "buffers_routers": BUFFERS_ROUTERS, "sequential": SEQUENTIAL,
        "single_server": SINGLE_SERVER, "linked": LINKED, "shared_buffer": SHARED_BUFFER}
def _lbmc():
    exe = os.environ.get("LBMC")
    if exe:
        if not os.access(exe, os.X_OK):
            pytest.fail(f"LBMC={exe} is not an executable program")
        return exe
    for cand in (os.path.join(SOURCE, "build", "src", "lbmc"), shutil.which("lbmc")):
        if cand and os.access(cand, os.X_OK):
            return cand
    pytest.skip("no lbmc program: build it (cmake --build build) or set LBMC=/path/to/lbmc")


def _run(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited with {proc.returncode}:\n{proc.stderr}")
    return proc


def write_all(tmp_path_factory):
    """name -> path of a results file written by `lbmc run` on that job."""
    exe = _lbmc()
    work = tmp_path_factory.mktemp("real")
    out = {}
    for name, text in JOBS.items():
        job = work / f"{name}.yaml"
        job.write_text(textwrap.dedent(text).lstrip())
        path = work / f"{name}.h5"
        _run([exe, "run", str(job), "-o", str(path), "--quiet"])
        out[name] = str(path)
    mpirun = shutil.which("mpirun")
    if mpirun:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        path = work / "heterogeneous-2ranks.h5"
        _run([mpirun, "--oversubscribe", "-np", "2", exe, "run", str(work / "heterogeneous.yaml"), "-o", str(path),
              "--quiet"], env=env)
        out["heterogeneous-2ranks"] = str(path)
    return out
