"""Running the real ``pi`` as a user would: a child process with arguments, a working directory,
an environment, standard input and, for the built-in ``faux`` model, a script.

    out = run_pi("-p", "--model", "faux/faux-1", "hi", script=[text("hello")])
    assert out.returncode == 0 and out.stdout == "hello\\n"

The child inherits this process's environment, which the root conftest points at a temporary
home, agent dir and working directory (and a cache shared by the run, warm after the first
start); ``env`` adds or overrides variables and ``drop`` removes the ones it names.
Only tests under ``tests/e2e/`` may start ``pi`` (see ``tests/README.md``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
"""The test environment's ``bin`` folder, holding the ``pi`` and ``pi-host`` console scripts."""
PI = [sys.executable, "-m", "pi_host"]
"""``python -m pi_host``: the same program as the ``pi`` script, without its wrapper."""
PI_SCRIPT = [str(BIN / "pi")]
"""The installed console script, as a user types it."""


def pi_env(
    script: Sequence[Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
    drop: Iterable[str] | Callable[[str], bool] = (),
) -> dict[str, str]:
    """This process's environment, less ``drop``, plus ``PI_FAUX_SCRIPT`` for ``script`` and
    ``env``. ``drop`` is a list of names or a predicate on a name."""
    unwanted = drop if callable(drop) else set(drop).__contains__
    environment = {name: value for name, value in os.environ.items() if not unwanted(name)}
    if script is not None:
        environment["PI_FAUX_SCRIPT"] = json.dumps(list(script))
    environment.update(env or {})
    return environment


def run_pi(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str | bytes | None = "",
    script: Sequence[Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
    drop: Iterable[str] | Callable[[str], bool] = (),
    timeout: float = 60,
    command: Sequence[str] = PI,
    text: bool = True,
) -> subprocess.CompletedProcess:
    """Run ``pi <args>`` to its end and return what it printed and its exit code.

    ``stdin`` is written to its standard input (``None`` leaves it attached to ours, for the
    tests about a terminal or no input); ``command`` picks the program (``PI_SCRIPT`` for the
    console script, or another environment's ``pi``)."""
    data: Any = stdin
    if text and isinstance(stdin, bytes):
        data = stdin.decode()
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=pi_env(script, env, drop),
        input=data,
        capture_output=True,
        text=text,
        timeout=timeout,
    )


def start_pi(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    script: Sequence[Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
    drop: Iterable[str] | Callable[[str], bool] = (),
    command: Sequence[str] = PI,
    stdin: int | None = subprocess.PIPE,
    text: bool = True,
    **popen: Any,
) -> subprocess.Popen:
    """Start ``pi <args>`` and return the running process (pipes on all three streams unless
    ``stdin`` or ``popen`` say otherwise); the caller waits for it or kills it."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(
        [*command, *args], cwd=cwd, env=pi_env(script, env, drop), stdin=stdin, text=text, **popen
    )


def write(path: str | os.PathLike[str], source: str) -> Path:
    """Write ``source`` (dedented, leading blank lines dropped) to ``path``, making its folder."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(source).lstrip())
    return target


def write_plugin(directory: str | os.PathLike[str], name: str, source: str) -> str:
    """A plugin file ``<directory>/<name>.py`` holding ``source``, as the string ``-e`` takes."""
    return str(write(Path(directory) / f"{name}.py", source))


def fake_distribution(
    site: str | os.PathLike[str],
    dist: str,
    entry_points: Mapping[str, str],
    modules: Mapping[str, str],
    group: str = "pi_host",
) -> Path:
    """An installed distribution as ``importlib.metadata`` sees one: ``<dist>-1.0.dist-info`` with
    METADATA and entry_points.txt, and its modules, in ``site`` (put ``site`` on PYTHONPATH)."""
    site = Path(site)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = [f"[{group}]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, source in modules.items():
        write(site / f"{name}.py", source)
    return site
