"""The package installs into a temporary venv (Debian's Python, system site packages) and imports.

`pip install --no-deps --no-build-isolation` needs no network: the dependencies are Debian's
(seen through --system-site-packages) and the build backend is Debian's python3-setuptools.
The source folder is copied first, so the in-tree build leaves nothing in the repository.
"""

import os
import shutil
import subprocess
import sys
import venv

import pytest

ANALYSIS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


def test_pip_install_into_venv(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        pytest.skip("no pip: install Debian's python3-pip (scripts/debian-packages.txt lists it)")
    src = tmp_path / "analysis"
    shutil.copytree(ANALYSIS, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "notebooks"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    # Debian's pip installing into the venv's interpreter: what `venv/bin/pip install` does, without
    # ensurepip copying a pip into every test venv
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-build-isolation", str(src)],
         env=env, cwd=tmp_path)
    out = _run([py, "-c", "import lbmc_analysis as la, sys; print(la.__file__); print(la.__version__); "
                "print(callable(la.load), callable(la.compare), callable(la.parse_metric))"], env=env, cwd=tmp_path)
    path, version, ok = out.stdout.split("\n")[:3]
    assert path.startswith(str(env_dir)), f"imported {path}, not the installed copy"
    assert version and ok == "True True True"
    p = _run([str(env_dir / "bin" / "lbmc-analysis"), "--help"], env=env, cwd=tmp_path)
    assert "plot" in p.stdout and "compare" in p.stdout
    _run([py, "-m", "lbmc_analysis", "plot", "--help"], env=env, cwd=tmp_path)
