"""Harbor's stock pi agent (PyPI ``harbor``, ``harbor.agents.installed.pi``) on pi-host and on pi
1.6.0: the command line Harbor builds (``pi --print --mode json --session-dir ... --model ...``)
is run with each program first on PATH, and Harbor converts each session file to an ATIF
trajectory with its own code and validates it (``harbor/run_harbor_pi.py``, run by Harbor's
Python). Both trajectories must be valid and hold the same steps.

Harbor needs Python >= 3.12; it is installed once into a cached virtual environment of its own
(``$PI_TEST_HARBOR_VENV``, default ``<tmp>/pi-host-test-harbor-venv``), never into the project's.
The test skips in one line when no such Python exists or the install fails (no registry).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.rpc import PI, World, node_pi_env, pi_host_env, requires_pi

pytestmark = requires_pi

HARBOR = "harbor==0.26.0"
RUNNER = Path(__file__).parent / "harbor" / "run_harbor_pi.py"
INSTRUCTION = "Run echo harbor with bash, then say what it printed."


def _python_312() -> str | None:
    candidates = [os.environ.get("PI_TEST_PYTHON312"), shutil.which("python3.13"), shutil.which("python3.12")]
    candidates += sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")), reverse=True
    )
    candidates += sorted(glob.glob("/root/.pyenv/versions/3.1[2-9]*/bin/python3"), reverse=True)
    for python in candidates:
        if not python or not os.path.isfile(python):
            continue
        done = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info >= (3, 12))"], capture_output=True, text=True
        )
        if done.stdout.strip() == "True":
            return python
    return None


def _harbor_python() -> str:
    """The cached environment's interpreter, with Harbor installed (skips when impossible)."""
    venv = Path(
        os.environ.get("PI_TEST_HARBOR_VENV") or Path(tempfile.gettempdir()) / "pi-host-test-harbor-venv"
    )
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import harbor.agents.installed.pi"]
    if python.is_file() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(python)
    base = _python_312()
    if base is None:
        pytest.skip("Harbor needs Python >= 3.12 and none was found (set PI_TEST_PYTHON312)")
    try:
        subprocess.run(
            [base, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, timeout=120
        )
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", HARBOR], check=True, capture_output=True, timeout=900
        )
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"Harbor could not be installed into {venv}: {str(exc)[:200]}")
    return str(python)


def _run(python: str, root: Path, program: str) -> dict[str, Any]:
    world = World.make(root)
    logs = world.root / "logs"
    logs.mkdir()
    replies = [Reply.tool("bash", {"command": "echo harbor"}), Reply("It printed harbor.")]
    with LoopbackServer(replies) as server:
        write_models_json(world.agent, server.url)
        bin_dir = world.root / "bin"
        bin_dir.mkdir()
        if program == "pi":
            node, cli = PI
            (bin_dir / "pi").write_text(f'#!/bin/sh\nexec "{node}" "{cli}" "$@"\n')
            env = node_pi_env(world)
        else:
            (bin_dir / "pi").write_text(f'#!/bin/sh\nexec "{Path(sys.executable).parent / "pi"}" "$@"\n')
            env = pi_host_env(world)
        (bin_dir / "pi").chmod(0o755)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # Harbor imports litellm: no price-list download
        done = subprocess.run(
            [python, str(RUNNER), str(logs), "loop/loop-1", INSTRUCTION],
            cwd=world.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def harbor_runs(tmp_path_factory) -> dict[str, dict[str, Any]]:
    from concurrent.futures import ThreadPoolExecutor

    python = _harbor_python()
    roots = {program: tmp_path_factory.mktemp(program) for program in ("pi", "pi-host")}
    with ThreadPoolExecutor(2) as pool:  # Harbor's import is most of the time: both at once
        futures = {program: pool.submit(_run, python, root, program) for program, root in roots.items()}
        return {program: future.result() for program, future in futures.items()}


def test_harbor_runs_its_command_line_on_both(harbor_runs):
    for program, run in harbor_runs.items():
        assert "pi --print --mode json --session-dir" in run["command"]
        assert run["exit_code"] == 0, f"{program}: {run['output']}"


def test_harbor_converts_a_pi_host_session_as_it_converts_pis(harbor_runs):
    pi, host = harbor_runs["pi"], harbor_runs["pi-host"]
    assert pi["valid"], pi["errors"]
    assert host["valid"], host["errors"]
    assert [s["source"] for s in pi["steps"]] == ["user", "agent", "agent"]
    assert host["steps"] == pi["steps"]
