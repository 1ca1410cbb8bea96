"""The session tree sidebar: one line per entry, all branches, indented at branch points."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from pi_host.lib.export.blocks import blocks_of, one_line, plain_text
from pi_host.lib.export.branches import Branches
from pi_host.lib.export.entries import entry_id
from pi_host.lib.export.markup import escape
from pi_host.lib.export.tools import brief


def describe(entry: dict[str, Any]) -> tuple[str, str]:
    """(css kind, one-line text) for an entry's sidebar line."""
    kind = entry.get("type")
    message = entry.get("message")
    if kind == "message" and isinstance(message, dict):
        return _describe_message(message)
    if kind == "model_change":
        return "setting", f"model: {entry.get('provider')}/{entry.get('modelId')}"
    if kind == "thinking_level_change":
        return "setting", f"thinking: {entry.get('thinkingLevel')}"
    if kind == "compaction":
        return "summary", "compaction: " + one_line(str(entry.get("summary") or ""), 80)
    if kind == "branch_summary":
        return "summary", "branch summary: " + one_line(str(entry.get("summary") or ""), 80)
    if kind == "custom_message":
        return "custom", f"[{entry.get('customType')}] " + one_line(plain_text(entry.get("content")), 80)
    if kind == "label":
        return "setting", f"label {entry.get('label') or '(cleared)'} → {entry.get('targetId')}"
    if kind == "session_info":
        return "setting", f"name: {entry.get('name') or '(cleared)'}"
    if kind == "custom":
        return "setting", f"state: {entry.get('customType')}"
    if kind == "context_edit":
        return "setting", f"context edit → {entry.get('targetId')}"
    return "setting", str(kind)


def _describe_message(message: dict[str, Any]) -> tuple[str, str]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        text = plain_text(content)
        images = sum(1 for b in blocks_of(content) if b.get("type") == "image")
        return "user", "user: " + (one_line(text) or f"[{images} image(s)]")
    if role == "assistant":
        text = plain_text([b for b in blocks_of(content) if b.get("type") == "text"])
        calls = [b for b in blocks_of(content) if b.get("type") == "toolCall"]
        if message.get("stopReason") in ("error", "aborted") and not text:
            return "error", f"assistant ({message.get('stopReason')}): " + one_line(
                str(message.get("errorMessage") or "")
            )
        if text:
            return "assistant", "assistant: " + one_line(text)
        shown = ", ".join(
            f"{c.get('name')} {brief(str(c.get('name')), c.get('arguments'))}".strip() for c in calls
        )
        return "assistant", "assistant → " + one_line(shown or "(empty)")
    if role == "toolResult":
        css = "error" if message.get("isError") else "tool"
        return css, f"[{message.get('toolName')}] " + one_line(plain_text(content), 80)
    if role == "bashExecution":
        return "bash", "$ " + one_line(str(message.get("command") or ""))
    if role == "custom":
        return "custom", f"[{message.get('customType')}] " + one_line(plain_text(content), 80)
    if role in ("branchSummary", "compactionSummary"):
        return "summary", f"{role}: " + one_line(str(message.get("summary") or ""), 80)
    if role == "system":
        return "setting", "system prompt"
    return "setting", f"{role}"


def sidebar_html(branches: Branches, active: list[str], labels: dict[str, str]) -> str:
    """An ordered list in tree order; each item knows its parent so the script can walk branches."""
    on_path = set(active)
    leaf = active[-1] if active else None
    items = []
    for key in branches.order:
        node = branches.nodes[key]
        css, text = describe(node.entry)
        classes = [css]
        if key in on_path:
            classes.append("on-path")
        if key == leaf:
            classes.append("current")
        if len(node.children) > 1:
            classes.append("fork")
        label = labels.get(entry_id(node.entry))
        badge = f'<span class="label">{escape(label)}</span>' if label else ""
        parent = f' data-parent="{escape(node.parent)}"' if node.parent is not None else ""
        # No title attribute (the script adds one on hover): it would double the sidebar's size.
        indent = f' style="--indent:{node.indent}"' if node.indent else ""
        items.append(
            f'<li class="{" ".join(classes)}" data-key="{escape(key)}"{parent}{indent}>'
            f'<a href="#e-{escape(quote(key, safe=""))}">{badge}{escape(text)}</a></li>'
        )
    return f'<ol id="tree">{"".join(items)}</ol>'
