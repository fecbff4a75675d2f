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


def pytest_configure(config):
    # fakefile's files are unsealed by default, like those of an lbmc before checksums: their
    # UnverifiedWarning is expected (test_integrity.py checks it is given)
    config.addinivalue_line("filterwarnings", "ignore::lbmc_analysis.UnverifiedWarning")


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
