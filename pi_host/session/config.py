"""What a session is built with: the settings-derived options the session reads at run time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.session.parts import ToolSelection


@dataclass
class SessionConfig:
    cwd: str
    model: Any = None
    thinking_level: str = "off"
    tools: list[str] | None = None
    """Allowlist of tool names; None = the ``defaultTools`` setting plus other plugins' tools."""
    no_tools: bool = False
    tool_selection: ToolSelection | None = None
    """The command line's ``--tools`` / ``--exclude-tools`` / ``--no-builtin-tools``, applied
    before ``session_start`` (so every handler sees the tools the run will have)."""
    tool_execution: str = "parallel"
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    mode: str = "sdk"
    has_ui: bool = False
    project_trusted: bool = True
    settings: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None
    warn: Callable[[str], None] | None = None
    """Where one-line warnings go (a bad setting found late); default: ``pi: ...`` on stderr."""
