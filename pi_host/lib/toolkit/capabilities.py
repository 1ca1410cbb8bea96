"""Tool capabilities (:attr:`pi_host.loop.tools.Tool.capability`) from what a tool says of itself
elsewhere: MCP's tool annotations, hints the server gives (``readOnlyHint``, ``destructiveHint``,
``openWorldHint``)."""

from __future__ import annotations

from typing import Any

CAPABILITIES = ("read", "write", "exec", "network", "unknown")


def capability_from_annotations(annotations: dict[str, Any] | None) -> str:
    """``readOnlyHint: true`` is ``read``; any other annotated tool is ``network`` unless it says
    ``openWorldHint: false`` (then ``write``); a tool without annotations stays ``unknown``."""
    if not annotations:
        return "unknown"
    if annotations.get("readOnlyHint") is True:
        return "read"
    return "network" if annotations.get("openWorldHint", True) is True else "write"
