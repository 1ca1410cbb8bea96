"""The decision for one tool call: allow, deny (with one line saying why) or ask the user.

Order: plan mode's gate (only tools that declare ``capability = "read"`` run) · deny rules ·
a hook's decision (``permissionDecision`` of a PreToolUse hook: ``allow`` skips the question,
``ask`` forces it) · ask rules · allow rules (settings, then remembered answers) · the mode's
default for the tool's capability.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pi_permissions import rules as R

MODES = ("default", "accept-edits", "plan", "auto")
"""In the order Alt+M cycles through them."""
ALIASES = {
    "acceptEdits": "accept-edits",
    "acceptedits": "accept-edits",
    "bypassPermissions": "auto",
    "bypass": "auto",
    "ask": "default",
}
STRICTNESS = ("auto", "accept-edits", "default", "plan")
CLAUDE_MODE = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "auto": "bypassPermissions",
}


def mode_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = ALIASES.get(value, value)
    return value if value in MODES else None


@dataclass
class Decision:
    action: str
    """``allow``, ``deny`` or ``ask``."""
    reason: str = ""


@dataclass
class Permissions:
    """One session's permission state."""

    mode: str = "auto"
    cwd: str = "."
    agent_dir: str = "."
    allow: list[R.Rule] = field(default_factory=list)
    ask: list[R.Rule] = field(default_factory=list)
    deny: list[R.Rule] = field(default_factory=list)
    remembered: list[R.Rule] = field(default_factory=list)
    """Answers "always for this session / project"."""
    hook_decisions: dict[str, tuple[str, str]] = field(default_factory=dict)
    """``toolCallId`` → (``allow``/``ask``, reason) from a PreToolUse hook (the events bus)."""
    ask_timeout: float | None = None
    """``permissions.askTimeoutSeconds``: an unanswered question denies after it (None: waits)."""

    @property
    def idle(self) -> bool:
        """Nothing to check: today's behaviour, no rule configured."""
        return self.mode == "auto" and not (self.deny or self.ask) and not self.hook_decisions

    def decide(self, tool: str, args: dict[str, Any], capability: str, call_id: str = "") -> Decision:
        hook, hook_reason = self.hook_decisions.pop(call_id, ("", ""))
        if self.mode == "plan" and capability != "read":
            return Decision(
                "deny",
                f"plan mode: {tool} is not a read-only tool (capability: {capability}), so it does not run; "
                "present the plan, and the user leaves plan mode to carry it out",
            )
        rule = R.first_match(self.deny, tool, args, self.cwd, "deny")
        if rule is not None:
            return Decision("deny", f"permission denied by the rule {rule.text()} ({rule.source})")
        if hook == "ask":
            return Decision("ask", hook_reason)
        rule = R.first_match(self.ask, tool, args, self.cwd, "ask")
        if rule is not None:
            return Decision("ask", f"the rule {rule.text()} ({rule.source}) asks for this call")
        if hook == "allow":
            return Decision("allow", hook_reason)
        if R.first_match(self.allow + self.remembered, tool, args, self.cwd, "allow") is not None:
            return Decision("allow")
        return Decision(self._default(capability, args), "")

    def _default(self, capability: str, args: dict[str, Any]) -> str:
        if self.mode == "auto" or capability == "read":
            return "allow"
        if self.mode == "accept-edits" and capability == "write":
            path = next((args[k] for k in R.PATH_KEYS if isinstance(args.get(k), str)), None)
            inside = path is not None and not os.path.relpath(
                os.path.realpath(os.path.join(self.cwd, path.removeprefix("@"))), os.path.realpath(self.cwd)
            ).startswith("..")
            return "allow" if inside else "ask"
        return "ask"

    def summary(self) -> str:
        counts = f"{len(self.allow)} allow, {len(self.ask)} ask, {len(self.deny)} deny rules"
        return f"permission mode: {self.mode} ({counts}; {len(self.remembered)} remembered answers)"


def load_rules(
    state: Permissions, user: dict[str, Any], project: dict[str, Any] | None, problems: list[str]
) -> None:
    """Rules from the ``permissions`` objects of the user's and a trusted project's settings."""
    timeout = user.get("askTimeoutSeconds")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        state.ask_timeout = float(timeout)
    for block, source in ((user, "user settings"), (project or {}, "project settings")):
        state.allow += R.parse_all(block.get("allow"), source, problems)
        state.ask += R.parse_all(block.get("ask"), source, problems)
        state.deny += R.parse_all(block.get("deny"), source, problems)


def starting_mode(
    flag: Any, user: dict[str, Any], project: dict[str, Any] | None, problems: list[str]
) -> str:
    """``--permission-mode``, else the user's ``defaultMode`` (a project's only when stricter),
    else ``auto`` (today's behaviour)."""
    mode = "auto"
    if "defaultMode" in user:
        chosen = mode_name(user["defaultMode"])
        if chosen is None:
            problems.append(
                f"permissions.defaultMode: {user['defaultMode']!r} is not one of {', '.join(MODES)}; ignored"
            )
        else:
            mode = chosen
    wanted = mode_name((project or {}).get("defaultMode"))
    if wanted is not None and STRICTNESS.index(wanted) > STRICTNESS.index(mode):
        mode = wanted
    if flag is not None:
        chosen = mode_name(flag)
        if chosen is None:
            problems.append(f"--permission-mode {flag!r} is not one of {', '.join(MODES)}; using default")
            chosen = "default"
        mode = chosen
    return mode
