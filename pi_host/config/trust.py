"""Project trust (reference §8.7): may this directory's own resources run code or change behaviour?

Protected resources are the project's ``.pi/settings.json``, ``.pi/mcp.json``, ``.pi/extensions``,
``.pi/skills``, ``.pi/prompts``, ``.pi/themes``, ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md`` and
``.agents/skills`` in the working directory or an ancestor (pi's list), and pi-host's own
``.pi/pi-host-packages.json`` (the project's plugin packages: ``pi install --sync`` would run
their code). Context files (AGENTS.md) are not protected.

Decision order: ``--approve`` / ``--no-approve``; then a ``project_trust`` plugin vote (the
caller passes a function that dispatches the event); then the closest saved decision in
``<agent dir>/trust.json``; then the user setting ``defaultProjectTrust`` (``ask`` by default).
Only a mode that can ask the user does; print, JSON and RPC runs treat ``ask`` like ``never``.
A directory without protected resources is trusted: there is nothing to decide.

trust.json is shared with pi in the agent dir: a flat object from a directory's canonical path to
true or false (``{"/home/me/project": true}``), the layout pi writes. Other keys are preserved;
a ``{"projects": {path: {"trusted": bool}}}`` layout is also read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pi_host.config import paths
from pi_host.config.json_files import read_json_object, update_json_file
from pi_host.config.paths import agents_skill_dirs, walk_up

PROTECTED_PI_ENTRIES = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    "pi-host-packages.json",  # pi-host's: the packages pi install --sync would install
)


class TrustDecision:
    """Whether a project is trusted and why (a plain class: it loads on every start-up)."""

    __slots__ = ("trusted", "reason", "skipped", "ask")

    def __init__(
        self, trusted: bool, reason: str, skipped: list[str] | None = None, ask: bool = False
    ) -> None:
        self.trusted = trusted
        self.reason = reason
        """Why: ``--approve``, ``--no-approve``, ``extension``, ``saved``, ``defaultProjectTrust=...``,
        ``no project resources``."""
        self.skipped = skipped or []
        """Protected resources that will not be loaded (paths relative to cwd where possible)."""
        self.ask = ask
        """True when the mode should ask the user (then save the answer with
        :func:`save_trust_decision` if they want it remembered)."""

    def __repr__(self) -> str:
        return f"TrustDecision(trusted={self.trusted}, reason={self.reason!r}, skipped={self.skipped})"

    def message(self) -> str | None:
        """One stderr line naming what was skipped, or None when nothing was."""
        if self.trusted or not self.skipped:
            return None
        return (
            f"Project not trusted ({self.reason}); skipped {', '.join(self.skipped)}. "
            "Run with --approve (-a) to load them."
        )


def trust_file() -> str:
    return os.path.join(paths.agent_dir(), "trust.json")


def protected_resources(cwd: str) -> list[str]:
    """The protected resources that exist for ``cwd`` (relative to cwd when inside it)."""
    cwd = os.path.abspath(cwd)
    found: list[str] = []
    pi_dir = os.path.join(cwd, ".pi")
    if os.path.isdir(pi_dir):
        for name in PROTECTED_PI_ENTRIES:
            if os.path.exists(os.path.join(pi_dir, name)):
                found.append(os.path.join(".pi", name))
    home = os.path.expanduser("~")
    for candidate in agents_skill_dirs(cwd):
        # ~/.agents/skills is the user's own global location, not a project resource.
        if os.path.dirname(os.path.dirname(candidate)) == home:
            continue
        if os.path.isdir(candidate):
            rel = os.path.relpath(candidate, cwd)
            found.append(rel)
    return found


def _read_trust_file() -> dict[str, Any]:
    data, _error = read_json_object(trust_file())
    return data


def _entries(data: dict[str, Any]) -> dict[str, bool]:
    """Saved decisions by absolute path (tolerates a flat ``{path: bool}`` layout too)."""
    decisions: dict[str, bool] = {}
    projects = data.get("projects")
    sources = [projects] if isinstance(projects, dict) else []
    sources.append({k: v for k, v in data.items() if k.startswith(("/", "\\")) or k[1:3] == ":\\"})
    for source in sources:
        for path, value in source.items():
            if isinstance(value, bool):
                decisions[os.path.normpath(path)] = value
            elif isinstance(value, dict) and isinstance(value.get("trusted"), bool):
                decisions[os.path.normpath(path)] = value["trusted"]
    return decisions


def saved_decision(cwd: str) -> tuple[bool, str] | None:
    """The closest saved decision for ``cwd`` or an ancestor: ``(trusted, path)``."""
    decisions = _entries(_read_trust_file())
    if not decisions:
        return None
    # Try the canonical path first (what pi saves), then the path as given (symlinked checkouts).
    for start in dict.fromkeys((os.path.realpath(cwd), os.path.abspath(cwd))):
        for directory in walk_up(start):
            if directory in decisions:
                return decisions[directory], directory
    return None


def save_trust_decision(project_dir: str, trusted: bool) -> None:
    """Remember a decision for ``project_dir`` (and, by closeness, everything below it)."""
    canonical = os.path.realpath(project_dir)

    def change(data: dict[str, Any]) -> None:
        data[canonical] = bool(trusted)
        projects = data.get("projects")
        if isinstance(projects, dict):  # keep an older nested entry from contradicting this one
            projects.pop(canonical, None)

    update_json_file(trust_file(), change)


def _default_policy() -> str:
    data, _error = read_json_object(os.path.join(paths.agent_dir(), "settings.json"))
    value = data.get("defaultProjectTrust")
    return value if value in ("ask", "always", "never") else "ask"


def decide_trust(
    cwd: str,
    approve: bool | None = None,
    *,
    can_ask: bool = False,
    vote: Callable[[], bool | None] | None = None,
) -> TrustDecision:
    """Decide whether ``cwd``'s protected resources load.

    ``approve`` is ``--approve`` (True) / ``--no-approve`` (False) / neither (None); ``vote``
    asks the ``project_trust`` handlers (called only when flags left the question open and there
    is something to protect); ``can_ask`` is true for a mode that can put the question to the
    user (then an ``ask`` policy returns ``ask=True``).
    """
    resources = protected_resources(cwd)

    def result(trusted: bool, reason: str, ask: bool = False) -> TrustDecision:
        return TrustDecision(trusted, reason, [] if trusted else resources, ask)

    if approve is not None:
        return result(approve, "--approve" if approve else "--no-approve")
    if not resources:
        return TrustDecision(True, "no project resources")
    extension_vote = vote() if vote is not None else None
    if extension_vote is not None:
        return result(extension_vote, "extension")
    saved = saved_decision(cwd)
    if saved is not None:
        return result(saved[0], f"saved for {saved[1]}")
    policy = _default_policy()
    if policy == "always":
        return result(True, "defaultProjectTrust=always")
    if policy == "ask" and can_ask:
        return result(False, "defaultProjectTrust=ask", ask=True)
    return result(False, f"defaultProjectTrust={policy}")
