"""Installing an ``extension_examples/`` package the way a user would.

Two ways: ``pip_install_example`` (pip ``--target`` into a private directory, for in-process
tests) and ``pi_install_example`` (the real ``pi install`` of a throw-away virtual environment
made by ``make_venv``; run that environment's ``pi`` with ``venv_pi``).

An environment from ``make_venv`` is ``python -m venv --without-pip`` plus a ``.pth`` file that
adds the shared test environment's site-packages (pi-host, its dependencies, pip and hatchling)
the way pipx shares pip: pip then installs into the throw-away environment only, offline
(``--no-index``, ``--no-build-isolation``), and nothing is written to the shared environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES

SHARED_SITE = sysconfig.get_paths()["purelib"]
OFFLINE = ["--no-index", "--no-build-isolation"]


def pip_install_example(name: str, target: Path) -> Path:
    """``pip install ./extension_examples/<name>`` into ``target`` (offline: no deps, no build
    isolation); put ``target`` on ``sys.path`` or ``PYTHONPATH`` to use it."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
        + ["--target", str(target), str(EXAMPLES / name)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def make_venv(where: Path) -> Path:
    """A fresh environment whose ``bin/pi`` runs pi-host from the shared site-packages."""
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(where)],
            check=True,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot create a virtual environment here: {exc}")
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "_pi_host_shared.pth").write_text(f"import site; site.addsitedir({SHARED_SITE!r})\n")
    pi = where / "bin" / "pi"
    pi.write_text(f"#!{python}\nimport sys\nfrom pi_host.cli import main\nsys.exit(main())\n")
    pi.chmod(0o755)
    return where


def venv_pi(
    venv: Path, *args: str, cwd: Path | None = None, input: str | None = None, **env: str
) -> subprocess.CompletedProcess:
    """Run ``<venv>/bin/pi`` (``PYTHONPATH`` dropped, so only what is installed there loads)."""
    environment = dict(os.environ, PIP_CACHE_DIR=str(venv / "pip-cache"), **env)
    environment.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(venv / "bin" / "pi"), *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        input=input,
        timeout=120,
    )


def pi_install_example(name: str, venv: Path, **env: str) -> subprocess.CompletedProcess:
    """``pi install --copy ./extension_examples/<name>`` with the environment's own ``pi``
    (offline); fails the test with pi's output when the install does not succeed. A copy, as a
    user gets the example from an index, and so that its site-packages can be imported in process
    (an install by reference is a ``.pth`` file: ``e2e/venvs/test_editable_install.py``)."""
    out = venv_pi(venv, "install", "--copy", *OFFLINE, str(EXAMPLES / name), **env)
    assert out.returncode == 0, out.stdout + out.stderr
    return out
