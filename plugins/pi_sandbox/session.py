"""One session's sandbox: its policy, the backend chosen for this machine, the hook on the bash
tool's shell, and the check of pi-host's own file-writing tools (``write``, ``edit``, any tool
that declares ``capability = "write"``), which run inside pi-host and not in a child process."""

from __future__ import annotations

import json
import os
import sys
import weakref
from dataclasses import dataclass
from typing import Any

from pi_sandbox.launch import Capabilities, bwrap_argv, preexec, prepare, wants_netns
from pi_sandbox.namespaces import Network
from pi_sandbox.policy import MODES, Policy, build_policy, describe
from pi_sandbox.probe import backend_for, capabilities

PATH_KEYS = ("path", "file_path", "filePath", "file")
_sessions: weakref.WeakKeyDictionary[Any, SessionSandbox] = weakref.WeakKeyDictionary()
_said: set[str] = set()


@dataclass
class SessionSandbox:
    policy: Policy
    backend: str
    unavailable: str | None = None
    """Why the sandbox cannot run here (then bash commands are refused)."""
    network: Any = None
    """The session's network namespace (network off), made at the first command."""

    def close(self) -> None:
        if self.network is not None:
            self.network.close()
            self.network = None

    def launcher(self, caps: Capabilities) -> Any:
        from pi_host.lib.toolkit.local_shell import Launch
        from pi_host.loop.tools import ToolError

        def launch(argv: list[str], cwd: str, env: dict[str, str]) -> Launch:
            if self.unavailable is not None:
                raise ToolError(
                    f"sandbox {self.policy.mode}: {self.unavailable}; the command was not run "
                    "(pi --sandbox off runs commands without it)"
                )
            if self.backend == "bwrap":
                assert caps.bwrap is not None
                return Launch(bwrap_argv(caps.bwrap, self.policy, argv))
            if self.network is None and wants_netns(self.policy, caps):
                self.network = Network()
            plan = prepare(self.policy, caps, self.network)
            try:
                start = preexec(plan, argv, env)
            except BaseException:
                os.close(plan.ruleset_fd)
                raise
            return Launch(argv, preexec_fn=start, cleanup=lambda: os.close(plan.ruleset_fd))

        return launch

    def check_write(self, tool: str, args: dict[str, Any], cwd: str) -> str | None:
        """Why this call of a writing tool is refused, or None."""
        if self.policy.mode == "read-only":
            return f"sandbox read-only: {tool} cannot change files"
        raw = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
        if raw is None:
            return None
        from pi_host.lib.toolkit import resolve_path

        path = resolve_path(raw, cwd)
        if not self.policy.is_writable(path):
            return f"sandbox {self.policy.mode}: {raw} is outside the writable folders or read-only"
        try:
            info = os.stat(path)
        except OSError:
            return None
        if info.st_nlink > 1 and not os.path.isdir(path):
            return f"sandbox {self.policy.mode}: {raw} is a hard link ({info.st_nlink} names); not written through"
        return None


def say(ctx: Any, line: str) -> None:
    """One line, once per process: the UI's notice, else stderr."""
    if line in _said:
        return
    _said.add(line)
    ui = getattr(ctx, "ui", None)
    if getattr(ctx, "has_ui", False) and ctx.mode == "interactive" and ui is not None:
        ui.notify(line, "warning")
    else:
        sys.stderr.write(f"pi: {line}\n")
        sys.stderr.flush()


def _section(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    value = data.get("sandbox") if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def setup(ctx: Any) -> SessionSandbox | None:
    """Build the session's sandbox and hook the bash tool's shell; None when it is off."""
    from pi_host.config.settings import project_settings_path, user_settings_path

    flag = ctx.get_flag("sandbox")
    if flag is not None and flag not in MODES:
        say(ctx, f"sandbox: --sandbox {flag!r} is not one of {', '.join(MODES)}; using read-only")
        flag = "read-only"
    project = _section(project_settings_path(ctx.cwd)) if ctx.is_project_trusted() else None
    home = os.path.expanduser("~")
    policy = build_policy(flag, _section(user_settings_path()), project, ctx.cwd, ctx.agent_dir, home)
    for line in policy.problems:
        say(ctx, line)
    session = getattr(ctx, "session", ctx)
    if not policy.active:
        _sessions.pop(session, None)
        _hook_bash(ctx, None)
        return None
    caps = capabilities()
    backend, problem = backend_for(caps, policy.backend)
    box = SessionSandbox(policy, backend, problem)
    if problem:
        say(
            ctx,
            f"sandbox {policy.mode}: {problem}; bash commands are refused (--sandbox off runs them without it)",
        )
    else:
        for line in _degraded(policy, caps, backend):
            say(ctx, line)
    old = _sessions.get(session)
    if old is not None:
        old.close()
    _sessions[session] = box
    _hook_bash(ctx, box.launcher(caps))
    return box


def shutdown(ctx: Any) -> None:
    box = _sessions.pop(getattr(ctx, "session", ctx), None)
    if box is not None:
        box.close()


def _degraded(policy: Policy, caps: Capabilities, backend: str) -> list[str]:
    """What this machine cannot enforce of the policy, one line each."""
    lines = []
    if backend == "landlock" and not caps.namespaces:
        lines.append(
            "sandbox: no namespaces here (unprivileged user namespaces are off): protected paths inside "
            "the project stay writable and /proc is shared"
        )
        if policy.network == "off" and caps.landlock_abi < 4:
            lines.append("sandbox: the network cannot be turned off here (needs namespaces or kernel 6.7)")
        elif policy.network == "off":
            lines.append("sandbox: network off covers TCP only here (no network namespace)")
    if policy.network == "ports" and (backend == "bwrap" or caps.landlock_abi < 4):
        lines.append("sandbox: a TCP port allowlist needs Landlock ABI 4 (kernel 6.7); the network is off")
    return lines


def _hook_bash(ctx: Any, launcher: Any) -> None:
    from pi_host.lib.toolkit.local_shell import LocalShell

    tools = getattr(getattr(ctx, "session", None), "all_tools", None) or {}
    tool = tools.get("bash")
    shell = getattr(tool, "shell", None)
    if isinstance(shell, LocalShell):
        shell.launcher = launcher
    elif tool is not None and launcher is not None:
        say(
            ctx,
            f"sandbox: the bash tool runs through {type(shell).__name__}, not a local shell; it is not sandboxed",
        )


def current(ctx: Any) -> SessionSandbox | None:
    return _sessions.get(getattr(ctx, "session", ctx))


def section(ctx: Any) -> dict[str, str | None]:
    box = current(ctx)
    if box is None or box.unavailable:
        return {"sandbox": None}
    return {"sandbox": describe(box.policy, box.backend)}


def tool_capability(ctx: Any, name: str) -> str:
    tools = getattr(getattr(ctx, "session", None), "all_tools", None) or {}
    return str(getattr(tools.get(name), "capability", "unknown"))
