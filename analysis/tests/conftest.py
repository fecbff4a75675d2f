"""pytest setup: make ``lbmc_analysis`` (in analysis/) and ``fakefile`` importable, Agg backend."""

import os
import sys

import matplotlib

matplotlib.use("Agg")

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.dirname(HERE)
for p in (ANALYSIS, HERE):
    if p not in sys.path:
        sys.path.insert(0, p)

import pytest  # noqa: E402

import fakefile  # noqa: E402


@pytest.fixture
def fake(tmp_path):
    """The default fake results file (mixed grid, NaN padding, an unstable point)."""
    return fakefile.write_results(tmp_path / "fake.h5")


@pytest.fixture
def fake_extended(tmp_path):
    """Fake file with the later quantile datasets and unknown datasets (forward compatibility)."""
    return fakefile.write_results(tmp_path / "fake_ext.h5", quantile_levels=[0.5, 0.9, 0.99], extras=True,
                                  long_job=True)


@pytest.fixture(scope="session")
def real(tmp_path_factory):
    """name -> path of a results file written by the real `lbmc run` (see realfiles.py)."""
    import realfiles

    return realfiles.write_all(tmp_path_factory)


# ---- the `slow` marker: tests that take more than a few seconds (exact chains at n = 40 and
# beyond, long grids). Skipped by default; run them with `--run-slow`, or select them with
# `-m slow` (e.g. `/usr/bin/python3 -m pytest analysis/tests -m slow`).


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="also run the tests marked slow")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: slower checks (seconds to minutes), skipped unless --run-slow or -m slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
