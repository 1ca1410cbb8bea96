"""How long ``pi install ./folder`` takes (docs/packages.md; target: <= 3 s), against plain pip.

    .venv/bin/python bench/packages_local_install.py [--runs 5]

A throw-away environment is made as the e2e tests make theirs (``tests/support/venv.py``: a venv
sharing this checkout's site-packages, so pi-host, pip and hatchling are importable), with the
user's pip cache (warm after the first run; isolated builds fetch their backend from the index
when it is cold). Two plugin projects, each depending on ``pi-host`` as the examples do:

* **hatchling**: its backend is in pi-host's environment here (pi-host skips isolation outright);
* **flit**: ``flit_core`` is not, so pi-host installs it once into its cache's build-tools folder
  (that one-off install is made before timing, as the second install of a day would find it).

Per project, ``--runs`` timed runs of each command (one uncounted warm-up first), medians, and
their ratio to the baseline, plain ``pip install -e`` (pip's default build isolation):

* ``pip install -e``: the baseline;
* ``pip install``: a snapshot, isolated: what ``pi install ./folder`` ran before (and ``--copy``
  runs when isolation cannot be skipped);
* ``pi install ./folder``: by reference, as pi-host runs it now;
* ``pi install --copy ./folder``: a snapshot, isolation skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.venv import make_venv  # noqa: E402

PLUGIN = "from pi_host import hookimpl\n\n\n@hookimpl\ndef register_commands():\n    return []\n"
BACKENDS = {
    "hatchling": ('requires = ["hatchling"]', "hatchling.build"),
    "flit": ('requires = ["flit_core>=3.2,<4"]', "flit_core.buildapi"),
}


def project(root: Path, backend: str) -> Path:
    requires, build = BACKENDS[backend]
    name = f"bench_{backend}"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text(f'"""A bench plugin."""\n__version__ = "0.1.0"\n{PLUGIN}')
    (root / "pyproject.toml").write_text(
        f'[build-system]\n{requires}\nbuild-backend = "{build}"\n\n'
        f'[project]\nname = "{name.replace("_", "-")}"\nversion = "0.1.0"\n'
        'description = "bench"\ndependencies = ["pi-host"]\n\n'
        f'[project.entry-points.pi_host]\n{backend} = "{name}"\n'
    )
    return root


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{proc.stdout}{proc.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="pi-local-install-bench-"))
    venv = make_venv(root / "venv")
    python, pi = str(venv / "bin" / "python"), str(venv / "bin" / "pi")
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(root / "agent"), PI_HOST_CACHE_DIR=str(root / "cache"))
    env.pop("PYTHONPATH", None)
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    print(f"local install, median of {runs} (ratio to plain pip install -e)")
    for backend in BACKENDS:
        folder = str(project(root / backend, backend))
        commands = {
            "pip install -e": [*pip, "-e", folder],
            "pip install (snapshot, what pi install did)": [*pip, folder],
            "pi install ./folder (by reference)": [pi, "install", folder],
            "pi install --copy ./folder": [pi, "install", "--copy", folder],
        }
        figures = {}
        for label, command in commands.items():
            timed(command, env)  # warm-up: caches, and pi-host's build-tools folder
            figures[label] = statistics.median(timed(command, env) for _ in range(runs))
        base = figures["pip install -e"]
        print(f"\n{backend}:")
        for label, value in figures.items():
            print(f"  {label:45s} {value:6.2f} s  x{value / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
