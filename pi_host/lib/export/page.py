"""The whole page: header, session tree sidebar, conversation, inline CSS and script.

Each entry is rendered once. The active branch is placed in the conversation, every other entry
in a hidden store; the script moves elements between the two when another branch is picked. So
the file grows with the session, not with the number of branches, and the active branch reads
fine even with scripts disabled. A Content-Security-Policy forbids every fetch (the page works
offline by construction) and allows only the page's own script, by hash, as a second line of
defence behind the escaping.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pi_host._version import __version__
from pi_host.lib.export.blocks import time_tag
from pi_host.lib.export.branches import Branches
from pi_host.lib.export.entries import EntryRenderer, labels_of
from pi_host.lib.export.markup import escape, pygments_css
from pi_host.lib.export.outline import sidebar_html

ASSETS = Path(__file__).with_name("assets")


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    css = (ASSETS / "page.css").read_text(encoding="utf-8") + "\n" + pygments_css()
    script = (ASSETS / "page.js").read_text(encoding="utf-8")
    return css, script


def session_name(entries: list[dict[str, Any]]) -> str | None:
    """The latest ``session_info`` name in the file (an empty one clears it)."""
    name: str | None = None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            value = entry.get("name")
            name = value.strip() if isinstance(value, str) and value.strip() else None
    return name


def _totals(entries: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {"user": 0, "assistant": 0, "tool calls": 0}
    tokens = 0
    cost = 0.0
    models: list[str] = []
    for entry in entries:
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("user", "assistant"):
            counts[role] += 1
        if role != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            counts["tool calls"] += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall"
            )
        model = "/".join(p for p in (message.get("provider"), message.get("model")) if isinstance(p, str))
        if model and model not in models:
            models.append(model)
        usage = message.get("usage")
        if isinstance(usage, dict):
            tokens += sum(
                v
                for k in ("input", "output", "cacheRead", "cacheWrite")
                if isinstance(v := usage.get(k), int)
            )
            total = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), dict) else None
            if isinstance(total, int | float):
                cost += total
    return {"counts": counts, "tokens": tokens, "cost": cost, "models": models}


def _header(header: dict[str, Any], entries: list[dict[str, Any]], title: str) -> str:
    totals = _totals(entries)
    rows = [("Session", f"<code>{escape(header.get('id', ''))}</code>")]
    if isinstance(header.get("cwd"), str):
        rows.append(("Directory", f"<code>{escape(header['cwd'])}</code>"))
    created = time_tag(header.get("timestamp"), "%Y-%m-%d %H:%M:%S UTC")
    if created:
        rows.append(("Created", created))
    if isinstance(header.get("parentSession"), str):
        rows.append(("Forked from", f"<code>{escape(header['parentSession'])}</code>"))
    counts = totals["counts"]
    shown = [f"{n} {what[:-1] if n == 1 and what.endswith('s') else what}" for what, n in counts.items()]
    shown.append(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
    rows.append(("Messages", escape(", ".join(shown))))
    if totals["models"]:
        rows.append(("Models", escape(", ".join(totals["models"]))))
    if totals["tokens"]:
        rows.append(
            ("Tokens", f"{totals['tokens']:,}" + (f" (${totals['cost']:.4f})" if totals["cost"] else ""))
        )
    items = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<header id="session-header"><h1>{escape(title)}</h1><dl>{items}</dl></header>'


def session_data(
    header: dict[str, Any], entries: list[dict[str, Any]], leaf_id: str | None, extra: dict[str, Any] | None
) -> str:
    """The session itself, base64 of its JSON, as pi's page carries it in ``#session-data``: tools
    that read pi's exports (and a reader who wants the raw entries) find it there."""
    from pi_host.lib.wire import json_bytes

    data = {"header": header, "entries": entries, "leafId": leaf_id, **(extra or {})}
    return base64.b64encode(json_bytes(data)).decode("ascii")


def build_page(
    header: dict[str, Any],
    entries: list[dict[str, Any]],
    *,
    title: str | None,
    leaf_id: str | None,
    extra: dict[str, Any] | None = None,
) -> str:
    entries = [e for e in entries if isinstance(e, dict)]
    branches = Branches(entries)
    leaf = branches.key_of(leaf_id) if leaf_id is not None else None
    active = branches.path_to(leaf or branches.default_leaf())
    labels = labels_of(entries)
    renderer = EntryRenderer(branches, labels)
    on_path = set(active)
    conversation = "".join(renderer.render(key) for key in active)
    # The store keeps tree order: a reader of the raw file finds the other branches in order.
    store = "".join(renderer.render(key) for key in branches.order if key not in on_path)
    name = title or session_name(entries) or f"Session {header.get('id', '')}"
    css, script = _assets()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    empty = '<p class="muted" id="empty">This session has no entries yet.</p>' if not entries else ""
    leaf_attr = escape(active[-1]) if active else ""
    last = entries[-1].get("id") if entries else None  # pi's leaf when none is given
    embedded = session_data(header, entries, leaf_id if leaf_id is not None else last, extra)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="pi-host {escape(__version__)}">'
        f"<title>{escape(name)}</title><style>{css}</style></head>\n"
        '<body><div id="app">'
        '<aside id="sidebar"><div class="sidebar-head"><span>Session tree</span>'
        '<input id="tree-filter" type="search" placeholder="Filter" aria-label="Filter entries"></div>'
        f"{sidebar_html(branches, active, labels)}</aside>\n"
        f'<main id="content">{_header(header, entries, name)}'
        '<div class="toolbar"><button type="button" id="expand-all">Expand all</button>'
        '<button type="button" id="collapse-all">Collapse all</button></div>'
        f'<section id="conversation" data-leaf="{leaf_attr}">{empty}{conversation}</section></main></div>\n'
        f'<div id="store" hidden>{store}</div>\n'
        # a data block is never run, so the script policy does not apply to it
        f'<script id="session-data" type="application/json">{embedded}</script>\n'
        f"<script>{script}</script></body></html>\n"
    )
