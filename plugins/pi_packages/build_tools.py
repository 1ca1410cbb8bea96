"""Building a local project without pip's build isolation, so a local install is quick.

With build isolation, pip makes a fresh environment for every build: it runs pip twice more in
subprocesses to install the build backend (hatchling, setuptools...) and what the backend asks
for, before it builds. That is most of a local install's time, repeated identically each time.
So for a local folder whose ``pyproject.toml`` names its build backend, pi-host works out the
build requirements once and passes ``--no-build-isolation``:

- when pi-host's own environment already satisfies them, nothing more is needed;
- otherwise they are installed once into a folder of pi-host's cache (``<cache>/build-tools/<key>``,
  keyed by the requirement set and the Python version) that only the build hooks see: it is put on
  ``PYTHONPATH`` for pip's hook subprocesses, and pip itself starts through :data:`BOOT`, which
  drops it from its own ``sys.path`` so that pip never counts those packages as installed.

When the project's dependencies (static, in ``[project]``) are all satisfied here already, pip
is also given ``--no-deps``: resolving them again against every installed distribution finds
nothing to do and costs about as much as the build.

Anything unexpected (no ``pyproject.toml``, no ``[build-system]``, a requirement that cannot be
read, the tools cannot be installed) returns None: pip then builds in isolation as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass

# Starts pip with the build tools folder removed from its own path (its children keep it).
BOOT = (
    "import os, runpy, sys\n"
    "tools = os.environ.get('PI_HOST_BUILD_TOOLS')\n"
    "sys.path[:] = [p for p in sys.path if p != tools]\n"
    "runpy.run_module('pip', run_name='__main__', alter_sys=True)\n"
)

# Asks a backend for its extra requirements (PEP 517/660), in the project's folder.
_REQUIRES = """\
import importlib, json, os, sys
backend, paths, hook = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path[:0] = [os.path.abspath(p) for p in paths]
module, _, attr = backend.partition(":")
obj = importlib.import_module(module)
for part in attr.split(".") if attr else ():
    obj = getattr(obj, part)
get = getattr(obj, hook, None)
print(json.dumps(list(get({}) if get else [])))
"""

# pip options that say where packages come from: the tools install must use them too.
INDEX_OPTIONS = {"--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host"}
INDEX_FLAGS = {"--no-index", "--pre"}


@dataclass
class BuildPlan:
    """How to run pip for one local build: ``--no-build-isolation``, and ``tools`` (a folder the
    build hooks need on their path) or None when pi-host's environment has everything;
    ``no_deps``: every dependency is installed already."""

    tools: str | None
    no_deps: bool = False

    def pip_options(self) -> list[str]:
        return ["--no-build-isolation", *(["--no-deps"] if self.no_deps else [])]


def _requirement_met(text: str) -> bool:
    """Whether pi-host's environment has a distribution satisfying requirement ``text``."""
    from importlib.metadata import PackageNotFoundError, version

    from pip._vendor.packaging.requirements import Requirement  # pip is there: real pip only

    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate():
        return True
    if req.extras or req.url:
        return False  # extras pull more in: let the tools folder have them
    try:
        return req.specifier.contains(version(req.name), prereleases=True)
    except PackageNotFoundError:
        return False


def _index_options(pip_extra: list[str]) -> list[str]:
    kept, it = [], iter(pip_extra)
    for arg in it:
        name = arg.split("=", 1)[0]
        if name in INDEX_FLAGS or (name in INDEX_OPTIONS and "=" in arg):
            kept.append(arg)
        elif name in INDEX_OPTIONS:
            kept += [arg, next(it, "")]
    return kept


def _cache_root() -> str:
    from pi_host.config.paths import cache_dir

    return os.path.join(cache_dir(), "build-tools")


def _tools_folder(requirements: list[str], pip_extra: list[str]) -> str | None:
    """A folder holding ``requirements`` (installed once, then reused); None when pip failed."""
    key = json.dumps([sys.version, sys.platform, sorted(set(requirements))])
    folder = os.path.join(_cache_root(), hashlib.sha256(key.encode()).hexdigest()[:16])
    if os.path.isdir(folder):
        return folder
    os.makedirs(_cache_root(), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".new-", dir=_cache_root())
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"]
    command += ["--target", staging, *_index_options(pip_extra), "--", *requirements]
    proc = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        return None
    try:
        os.replace(staging, folder)
    except OSError:  # another install made it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _hook_requirements(project: str, system: dict, hook: str, tools: str | None) -> list[str] | None:
    """What the backend's ``get_requires_for_build_*`` hook adds, cached by the project's build
    configuration (it only changes when that does); None when the hook failed."""
    parts = [json.dumps(system, sort_keys=True), hook, tools or ""]
    for name in ("pyproject.toml", "setup.cfg", "hatch.toml"):
        try:
            with open(os.path.join(project, name), "rb") as handle:
                parts.append(hashlib.sha256(handle.read()).hexdigest())
        except OSError:
            parts.append("")
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    cache_file = os.path.join(_cache_root(), "requires.json")
    try:
        with open(cache_file, encoding="utf-8") as handle:
            cache = json.load(handle)
        if isinstance(cache.get(key), list):
            return cache[key]
    except (OSError, ValueError, AttributeError):
        cache = {}
    env = dict(os.environ)
    if tools:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tools, env.get("PYTHONPATH")) if p)
    backend, paths = system["build-backend"], system.get("backend-path") or []
    proc = subprocess.run(
        [sys.executable, "-c", _REQUIRES, backend, json.dumps(paths), hook],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    except (ValueError, IndexError):
        found = None
    if not isinstance(found, list) or not all(isinstance(r, str) for r in found):
        return None
    cache = dict(list(cache.items())[-63:], **{key: found})  # a few dozen projects at most
    try:
        os.makedirs(_cache_root(), exist_ok=True)
        tmp = f"{cache_file}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(cache, handle)
        os.replace(tmp, cache_file)
    except OSError:
        pass
    return found


def _dependencies_met(meta: object) -> bool:
    """Whether ``[project]`` lists its dependencies statically and each is installed here."""
    if not isinstance(meta, dict) or "dependencies" in (meta.get("dynamic") or ()):
        return False
    dependencies = meta.get("dependencies", [])
    return isinstance(dependencies, list) and all(
        isinstance(d, str) and _requirement_met(d) for d in dependencies
    )


def plan(project: str, editable: bool, pip_extra: list[str], upgrade: bool = False) -> BuildPlan | None:
    """How to build local folder ``project`` without isolation, or None to let pip isolate it
    (``upgrade``: its dependencies are to be upgraded, so pip resolves them)."""
    try:
        with open(os.path.join(project, "pyproject.toml"), "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError):
        return None
    system = data.get("build-system")
    if not isinstance(system, dict) or not isinstance(system.get("build-backend"), str):
        return None  # pip's legacy setuptools path: leave it as it was
    requires = system.get("requires")
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        return None
    hook = "get_requires_for_build_editable" if editable else "get_requires_for_build_wheel"
    try:
        tools = None
        if not all(_requirement_met(r) for r in requires):
            tools = _tools_folder(requires, pip_extra)
            if tools is None:
                return None
        more = _hook_requirements(project, system, hook, tools)
        if more is None:
            return None
        if not all(_requirement_met(r) for r in more):
            tools = _tools_folder([*requires, *more], pip_extra)
            if tools is None:
                return None
        no_deps = not upgrade and "--no-deps" not in pip_extra and _dependencies_met(data.get("project"))
    except Exception:  # an unreadable requirement, no pip to parse it: pip decides
        return None
    return BuildPlan(tools, no_deps)
