"""What the sandbox allows: the mode, the writable roots, the protected paths and the network,
from ``--sandbox``, the user's settings and a trusted project's settings (which may only make it
stricter: a repository cannot loosen the sandbox it is run in).

```json
{"sandbox": {"mode": "workspace-write", "network": [8080], "writableRoots": ["~/.cache/pip"],
             "writableTemp": true, "protectedPaths": ["secrets"], "backend": "auto"}}
```
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

MODES = ("off", "workspace-write", "read-only")
"""From the loosest to the strictest."""
PROJECT_PROTECTED = (".pi", ".claude", ".codex", ".agents", ".git/hooks", ".git/config")
"""Inside the project, kept read-only in ``workspace-write``: what loads or runs code outside
the sandbox later (pi's project resources, Claude Code / Codex hook files, git hooks and config)."""
PROTECTED_DIRS = (".pi", ".claude", ".codex")
"""Created empty when missing, so that they can be made read-only (git ignores empty folders)."""
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
"""Writable in every sandboxed mode: ``> /dev/null`` and terminals work."""


@dataclass
class Policy:
    mode: str = "off"
    cwd: str = "."
    writable_roots: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    """Paths made read-only (those inside a writable root matter)."""
    network: str = "off"
    """``off``, ``on`` or ``ports``."""
    ports: list[int] = field(default_factory=list)
    backend: str = "auto"
    problems: list[str] = field(default_factory=list)
    """Settings that were ignored, one line each."""

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def is_writable(self, path: str) -> bool:
        """May a tool of pi-host itself (``write``, ``edit``) write ``path``? Symlinks resolved."""
        if not self.active:
            return True
        real = os.path.realpath(path)
        if self.mode == "read-only":
            return False
        inside = any(_within(real, root) for root in self.writable_roots)
        return inside and not any(_within(real, os.path.realpath(p)) for p in self.protected)


def _home(path: str, home: str) -> str:
    return home + path[1:] if path == "~" or path.startswith("~/") else path


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _network(value: Any) -> tuple[str, list[int]] | None:
    if value in ("off", False):
        return "off", []
    if value in ("on", True):
        return "on", []
    if isinstance(value, list) and all(isinstance(p, int) and 0 < p < 65536 for p in value):
        return ("ports", sorted(set(value))) if value else ("off", [])
    return None


def _stricter_network(a: tuple[str, list[int]], b: tuple[str, list[int]]) -> tuple[str, list[int]]:
    order = {"off": 0, "ports": 1, "on": 2}
    if a[0] == b[0] == "ports":
        common = sorted(set(a[1]) & set(b[1]))
        return ("ports", common) if common else ("off", [])
    return a if order[a[0]] <= order[b[0]] else b


def temp_roots() -> list[str]:
    roots = ["/tmp", "/dev/shm", tempfile.gettempdir()]
    return [r for r in dict.fromkeys(roots) if os.path.isdir(r)]


def build_policy(
    flag: str | None,
    user: dict[str, Any],
    project: dict[str, Any] | None,
    cwd: str,
    agent_dir: str,
    home: str,
) -> Policy:
    """The session's policy. ``user`` / ``project`` are the ``sandbox`` objects of the two
    settings files (``project`` None when the project is not trusted)."""
    problems: list[str] = []
    mode = user.get("mode", "off")
    if mode not in MODES:
        problems.append(f"sandbox.mode: {mode!r} is not one of {', '.join(MODES)}; off")
        mode = "off"
    network = _network(user.get("network", "off"))
    if network is None:
        problems.append('sandbox.network: use "off", "on" or a list of TCP ports; off')
        network = ("off", [])
    writable_temp = user.get("writableTemp", True) is not False
    protected_extra = [p for p in user.get("protectedPaths") or [] if isinstance(p, str)]
    roots = [_home(r, home) for r in user.get("writableRoots") or [] if isinstance(r, str)]
    backend = user.get("backend", "auto")
    if project:
        wanted = project.get("mode")
        if wanted in MODES and MODES.index(wanted) > MODES.index(mode):
            mode = wanted
        elif wanted is not None and wanted != mode:
            problems.append(
                f"sandbox.mode {wanted!r} from the project: a project may only make the sandbox stricter"
            )
        project_network = _network(project.get("network")) if "network" in project else None
        if project_network is not None:
            network = _stricter_network(network, project_network)
        if project.get("writableTemp") is False:
            writable_temp = False
        protected_extra += [p for p in project.get("protectedPaths") or [] if isinstance(p, str)]
        if project.get("writableRoots"):
            problems.append(
                "sandbox.writableRoots from the project: only the user's settings may add roots; ignored"
            )
    if flag:
        mode = flag
    cwd = os.path.realpath(cwd)
    writable = [cwd, *(temp_roots() if writable_temp else []), *roots]
    writable = [os.path.realpath(os.path.join(cwd, r)) for r in writable]
    protected = [os.path.join(cwd, p) for p in (*PROJECT_PROTECTED, *protected_extra)]
    protected += [agent_dir, os.path.join(home, ".claude"), os.path.join(home, ".codex")]
    return Policy(
        mode=mode,
        cwd=cwd,
        writable_roots=list(dict.fromkeys(writable)),
        protected=list(dict.fromkeys(os.path.abspath(p) for p in protected)),
        network=network[0],
        ports=network[1],
        backend=backend if backend in ("auto", "landlock", "bwrap") else "auto",
        problems=problems,
    )


def prepare_protected(policy: Policy) -> list[str]:
    """The real paths to bind read-only for one command: the protected paths inside a writable
    root. Missing protected folders of the project are created (empty) first."""
    for name in PROTECTED_DIRS:
        path = os.path.join(policy.cwd, name)
        if not os.path.lexists(path):
            try:
                os.mkdir(path)
            except OSError:
                pass
    git = os.path.join(policy.cwd, ".git")
    if os.path.isdir(git) and not os.path.lexists(os.path.join(git, "hooks")):
        try:
            os.mkdir(os.path.join(git, "hooks"))
        except OSError:
            pass
    found: list[str] = []
    for path in policy.protected:
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if os.path.exists(real) and any(_within(real, r) for r in policy.writable_roots):
            found.append(real)
    return list(dict.fromkeys(found))


def describe(policy: Policy, backend: str) -> str:
    """The rules, for the model's system prompt (so it does not fight the sandbox)."""
    if policy.mode == "read-only":
        writes = "No command may write files anywhere (only /dev/null); the write and edit tools are refused."
    else:
        roots = ", ".join(policy.writable_roots)
        writes = (
            f"Commands and the write/edit tools may write only beneath: {roots}. These stay read-only: "
            f"{', '.join(os.path.relpath(p, policy.cwd) if _within(p, policy.cwd) else p for p in policy.protected)}."
        )
    if policy.network == "off":
        net = "Network access is off (only the sandbox's own loopback works)."
    elif policy.network == "ports":
        net = f"Outgoing TCP connections are allowed only to ports {', '.join(map(str, policy.ports))}."
    else:
        net = "Network access is allowed."
    return (
        f"Tool commands run in an OS sandbox ({policy.mode}, {backend}). {writes} {net} "
        "Processes started by a command are killed when it ends. A command that hits the sandbox "
        "fails with 'Permission denied' or 'Read-only file system': do not try to get around it; "
        "say what you need instead."
    )
