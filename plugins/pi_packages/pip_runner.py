"""Running pip in the environment pi-host runs in, and what it installed.

``sys.executable -m pip`` installs next to pi-host whether that is a virtual environment, a
pipx venv (which shares one pip through a ``.pth`` file) or a plain interpreter. An environment
without pip (``uv tool install``) is served by ``uv pip --python sys.executable`` when ``uv``
is on PATH.

What an install brought is read from pip's ``--report`` (the distributions it installed, with
``requested`` marking the ones asked for) and checked against the distributions on disk before
and after; with uv, from that before/after difference alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from pi_packages.pip_errors import failure_cause

GROUP = "pi_host"
HOST = "pi-host"


def normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class PipMissing(Exception):
    pass


def pip_command() -> tuple[list[str], bool]:
    """The command prefix that runs pip here, and whether it is real pip (``--report`` works)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"], True
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip"], False
    raise PipMissing(
        "neither pip nor uv is available to this Python "
        f"({sys.executable}); install pip into it or put uv on PATH"
    )


@dataclass
class Dist:
    name: str
    version: str
    location: str
    stamp: int
    entry_points: list[str] = field(default_factory=list)


def installed() -> dict[str, Dist]:
    """Every distribution importlib can see, by normalised name (the first on sys.path wins)."""
    from importlib.metadata import distributions

    found: dict[str, Dist] = {}
    for dist in distributions():
        try:
            name = dist.metadata["Name"] or ""
            path = str(getattr(dist, "_path", "") or "")
            stamp = os.stat(path).st_mtime_ns if path else 0
            eps = [f"{ep.name} = {ep.value}" for ep in dist.entry_points if ep.group == GROUP]
            version = dist.version or ""
        except Exception:
            continue
        if name and normalise(name) not in found:
            found[normalise(name)] = Dist(name, version, path, stamp, eps)
    return found


@dataclass
class PipResult:
    ok: bool
    output: str
    requested: list[tuple[str, str]] = field(default_factory=list)
    """(name, version) of the distributions pip installed because they were asked for."""
    others: list[tuple[str, str]] = field(default_factory=list)
    """(name, version) of the other distributions it installed (dependencies)."""

    def error_line(self) -> str:
        """Why pip failed, in one line (see :mod:`pi_packages.pip_errors`)."""
        return failure_cause(self.output)

    def warnings(self) -> list[str]:
        return [
            line.strip()
            for line in self.output.splitlines()
            if line.startswith("WARNING:") and "as the 'root' user" not in line
        ]


def run_pip(args: list[str], *, verbose: bool = False, build_tools: str | None = None) -> PipResult:
    """``pip <args>``; with ``install``, what it installed (``args[0]`` is the pip command).
    ``build_tools``: a folder only the build hooks may import from (see :mod:`.build_tools`)."""
    prefix, real_pip = pip_command()
    extra: list[str] = []
    if real_pip:
        extra = ["--disable-pip-version-check", "--no-input"]
    elif args and args[0] == "uninstall":
        args = [a for a in args if a != "-y"]
    if not real_pip:
        extra = ["--python", sys.executable]
    report = None
    before: dict[str, Dist] = {}
    if args and args[0] == "install":
        before = installed()
        if real_pip:
            handle, report = tempfile.mkstemp(prefix="pi-pip-report-", suffix=".json")
            os.close(handle)
            extra += ["--report", report]
    command = prefix + args[:1] + extra + args[1:]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if build_tools and real_pip:
        from pi_packages.build_tools import BOOT

        command[: len(prefix)] = [sys.executable, "-c", BOOT]
        env["PI_HOST_BUILD_TOOLS"] = build_tools
        env["PYTHONPATH"] = os.pathsep.join(p for p in (build_tools, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.run(
            command,
            stdout=None if verbose else subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        output = proc.stdout or ""
        result = PipResult(proc.returncode == 0, output)
        if result.ok and args and args[0] == "install":
            _what_was_installed(result, before, report)
    finally:
        if report:
            try:
                os.unlink(report)
            except OSError:
                pass
    return result


def _what_was_installed(result: PipResult, before: dict[str, Dist], report: str | None) -> None:
    after = installed()
    changed = [
        d
        for key, d in after.items()
        if key not in before or (before[key].version, before[key].stamp) != (d.version, d.stamp)
    ]
    requested: set[str] = set()
    try:
        with open(report or "", encoding="utf-8") as handle:
            data: dict[str, Any] = json.load(handle)
        for item in data.get("install") or ():
            meta = item.get("metadata") or {}
            if item.get("requested") and meta.get("name"):
                requested.add(normalise(meta["name"]))
    except (OSError, ValueError, AttributeError):
        # uv: the new distributions that provide pi_host entry points were the ones asked for
        requested = {normalise(d.name) for d in changed if d.entry_points} or {
            normalise(d.name) for d in changed
        }
    for dist in changed:
        target = result.requested if normalise(dist.name) in requested else result.others
        target.append((dist.name, dist.version))
