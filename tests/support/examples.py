"""Running ``pi`` with an ``extension_examples/`` plugin loaded by ``-e`` (``example_module``, for
``tests.support.pi.run_pi``), or with the example installed by the real ``pi install`` into a
throw-away environment."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.interactive import PROMPT_READY
from tests.support.loopback import write_models_json
from tests.support.paths import EXAMPLES
from tests.support.terminal import Terminal
from tests.support.venv import make_venv, pi_install_example, venv_pi


def example_module(package: str, module: str) -> str:
    """The package directory of an example, for ``-e`` (loaded without installing it)."""
    return str(EXAMPLES / package / module)


# --- an example installed by the real `pi install` --------------------------------------------


@dataclass
class Installed:
    """A throw-away environment with one example installed by its own ``pi install``.

    ``env`` is the install's temporary home, agent dir and caches (its package manifest is
    there, so ``pi list`` needs it); runs in a test get that test's own temporary ones."""

    venv: Path
    env: dict[str, str]
    package: str
    output: str = ""
    """What ``pi install`` printed."""

    @property
    def pi(self) -> Path:
        return self.venv / "bin" / "pi"

    @property
    def site_packages(self) -> Path:
        [site] = (self.venv / "lib").glob("python*/site-packages")
        return site


_INSTALLED: dict[str, Installed] = {}


def install_example(tmp_path_factory, package: str) -> Installed:
    """``pi install ./extension_examples/<package>`` into a fresh environment (for a
    module-scoped fixture: nothing here touches the real home or agent dir). Done once per test
    process and package: the tests only run what is installed, they never change it."""
    if package in _INSTALLED:
        return _INSTALLED[package]
    base = tmp_path_factory.mktemp(f"{package}-install")
    env = {
        "HOME": str(base / "home"),
        "PI_CODING_AGENT_DIR": str(base / "agent"),
        "PI_HOST_CACHE_DIR": str(base / "cache"),
        "XDG_CACHE_HOME": str(base / "xdg-cache"),
    }
    for directory in env.values():
        os.makedirs(directory)
    venv = make_venv(base / "venv")
    out = pi_install_example(package, venv, **env)
    installed = Installed(venv, env, package, out.stdout)
    version = re.search(r'^version = "([^"]+)"', (EXAMPLES / package / "pyproject.toml").read_text(), re.M)
    assert version is not None
    assert out.stdout.splitlines()[0].startswith(f"Installed {package} {version.group(1)} (provides: ")
    _INSTALLED[package] = installed
    return installed


def installed_row(installed: Installed, plugin: str) -> dict:
    """Check ``pi list`` names the package and its entry point, and return the plugin's
    ``pi plugins --json`` row (which must say it is installed, from that package)."""
    module = plugin_module(installed.package)
    listed = venv_pi(installed.venv, "list", **installed.env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert any(re.fullmatch(rf"{re.escape(installed.package)} \S+  \[user\]", line) for line in lines), lines
    assert f"    pi_host: {plugin} = {module}" in lines, lines
    out = venv_pi(installed.venv, "plugins", "--json", **installed.env)
    assert out.returncode == 0, out.stderr
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    row = rows[plugin]
    assert (row["source"], row["origin"], row["error"]) == ("installed", installed.package, None)
    return row


def plugin_module(package: str) -> str:
    return package.replace("-", "_")


def terminal_env(world: dict) -> dict[str, str]:
    """The ``world`` fixture's terminal environment without ``PYTHONPATH``: only what is
    installed in the environment loads."""
    return {key: value for key, value in world["env"].items() if key != "PYTHONPATH"}


def installed_terminal(installed: Installed, world: dict, server, *args: str, width=100, height=30):
    """The installed ``pi`` in a real terminal (tmux) on the loopback model, at the prompt."""
    write_models_json(world["agent"], server.url)
    argv = [str(installed.pi), "--model", "loop/loop-1", *args]
    term = Terminal(argv, env=terminal_env(world), cwd=world["work"], width=width, height=height)
    try:
        term.wait_for(PROMPT_READY, timeout=20)
    except BaseException:
        term.close()
        raise
    return term


def session_entries(agent: Path) -> list[dict]:
    """The entries of the one session file under ``agent`` (its header first)."""
    [path] = (agent / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def branch(entries: list[dict], leaf_id: str) -> list[dict]:
    """The entries from the root to ``leaf_id``, following ``parentId``."""
    by_id = {e["id"]: e for e in entries if "id" in e and e.get("type") != "session"}
    path, cursor = [], by_id.get(leaf_id)
    while cursor is not None:
        path.append(cursor)
        cursor = by_id.get(cursor.get("parentId"))
    return path[::-1]


def tool_results(entries: list[dict]) -> list[dict]:
    """The ``toolResult`` messages of a session's entries, in order."""
    return [
        e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]


def result_text(message: dict) -> str:
    return "".join(part.get("text", "") for part in message["content"])
