"""Scripting pi-host (or pi 1.6.0) over the RPC protocol of ``pi --mode rpc`` (docs/rpc.md).

:class:`RpcClient` (in :mod:`pi_host.rpc.client`) runs the agent as a child process; this module
holds what it shares with its callers: the errors it raises and the types of the responses'
``data``. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from pi_host._exports import lazy_exports

__all__ = [
    "DIALOG_METHODS",
    "BashResult",
    "Cancelled",
    "Entries",
    "ForkResult",
    "ModelCycle",
    "PromptResult",
    "QueueContents",
    "QueueMode",
    "Record",
    "RpcClient",
    "RpcClosedError",
    "RpcError",
    "RpcTimeoutError",
    "SessionState",
    "SessionStats",
    "StreamingBehavior",
    "ThinkingCycle",
    "ThinkingLevel",
    "Tree",
    "UiAnswer",
]

Record = dict[str, Any]
"""One decoded JSON object of the protocol."""

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]
StreamingBehavior = Literal["steer", "followUp"]

DIALOG_METHODS = frozenset({"select", "confirm", "input", "editor"})
"""``extension_ui_request`` methods that wait for an ``extension_ui_response``."""

UiAnswer = bool | str | Mapping[str, Any] | None
"""What an :meth:`RpcClient.on_ui_request` callback returns for a dialog: a string (``value``,
for select/input/editor), a bool (``confirmed``, for confirm), ``None`` (``cancelled: true``), or
the response's fields themselves (``{"confirmed": True}``, ``{"value": "x"}``,
``{"cancelled": True}``)."""


# --- response data -------------------------------------------------------------------------------


class PromptResult(TypedDict):
    disposition: Literal["started", "queued", "handled"]


class QueueContents(TypedDict):
    steering: list[str]
    followUp: list[str]


class Cancelled(TypedDict):
    cancelled: bool


class SessionState(TypedDict, total=False):
    model: Record
    thinkingLevel: ThinkingLevel
    isStreaming: bool
    isCompacting: bool
    steeringMode: QueueMode
    followUpMode: QueueMode
    sessionFile: str
    sessionId: str
    sessionName: str
    autoCompactionEnabled: bool
    messageCount: int
    pendingMessageCount: int


class ModelCycle(TypedDict):
    model: Record
    thinkingLevel: ThinkingLevel
    isScoped: bool


class ThinkingCycle(TypedDict):
    level: ThinkingLevel


class BashResult(TypedDict, total=False):
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str


class SessionStats(TypedDict, total=False):
    sessionFile: str | None
    sessionId: str
    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    totalMessages: int
    tokens: dict[str, int]
    cost: float
    contextUsage: dict[str, Any]


class ForkResult(TypedDict, total=False):
    text: str
    cancelled: bool


class Entries(TypedDict):
    entries: list[Record]
    leafId: str | None


class Tree(TypedDict):
    tree: list[Record]
    leafId: str | None


# --- errors --------------------------------------------------------------------------------------


class RpcError(Exception):
    """The agent answered a command with ``success: false``."""

    def __init__(self, command: str, error: str, response: Record | None = None) -> None:
        super().__init__(f"{command}: {error}")
        self.command = command
        self.error = error
        self.response = response or {}


class RpcClosedError(ConnectionError):
    """The agent's process ended (or its stdout closed) before answering."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = "") -> None:
        detail = f"{message} (exit code {returncode})" if returncode is not None else message
        if stderr.strip():
            detail += "; stderr ends:\n" + stderr.strip()[-2000:]
        super().__init__(detail)
        self.returncode = returncode
        self.stderr = stderr


class RpcTimeoutError(TimeoutError):
    """No answer (or no awaited event) within the timeout."""


__getattr__ = lazy_exports("pi_host.rpc", {"RpcClient": ".client"})  # the client imports this module
