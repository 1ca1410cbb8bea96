"""The commands context sources expand (prompt templates, ``skill:`` commands), as the terminal's
``/`` menu and RPC's ``get_commands`` list them."""

from __future__ import annotations

import inspect
from typing import Any


async def context_source_commands(session: Any) -> list[dict[str, Any]]:
    """Each source's ``commands(ctx)`` entries (dicts with ``name``, ``description``, ``source``...),
    in the sources' order; a failing source is reported once and skipped."""
    found: list[dict[str, Any]] = []
    for source in getattr(session, "context_sources", None) or ():
        lister = getattr(source, "commands", None)
        if lister is None:
            continue
        try:
            listed = lister(session.ctx)
            if inspect.isawaitable(listed):
                listed = await listed
        except Exception as exc:  # noqa: BLE001 - a plugin's failure is named, the list goes on
            session.report(source, "commands", exc)
            continue
        found.extend(item for item in listed or () if isinstance(item, dict))
    return found
