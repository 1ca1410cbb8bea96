"""One HTML element per session entry, for the conversation pane.

Every entry gets an element with id ``e-<key>`` (even the ones with nothing to show, as empty
anchors) so the sidebar can scroll to any of them. A ``toolResult`` message is drawn inside the
``<details>`` of the call it answers; its own element is then an empty anchor.
"""

from __future__ import annotations

from typing import Any

from pi_host.lib.export.blocks import (
    blocks_of,
    content_html,
    json_block,
    meta,
    one_line,
    preformatted,
    time_tag,
)
from pi_host.lib.export.branches import Branches
from pi_host.lib.export.markup import escape, markdown
from pi_host.lib.export.tools import orphan_result_html, tool_call_html

SILENT_TYPES = frozenset({"label", "custom", "usage"})
"""Entries listed in the sidebar but with nothing to show in the conversation (a label is shown
on its target; ``custom`` is extension state; ``usage`` only counts toward totals)."""


def _message(entry: dict[str, Any]) -> dict[str, Any] | None:
    message = entry.get("message")
    return message if entry.get("type") == "message" and isinstance(message, dict) else None


def entry_id(entry: dict[str, Any]) -> str:
    value = entry.get("id")
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def labels_of(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Entry id → its label: the latest ``label`` entry per target wins, an empty one clears."""
    labels: dict[str, str] = {}
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("type") == "label"
            and isinstance(entry.get("targetId"), str)
        ):
            label = entry.get("label")
            if isinstance(label, str) and label.strip():
                labels[entry["targetId"]] = label.strip()
            else:
                labels.pop(entry["targetId"], None)
    return labels


def pair_tool_results(branches: Branches) -> dict[tuple[str, str], dict[str, Any]]:
    """(assistant key, tool call id) → the result message, and which result keys were paired.

    A result answers a call of the nearest assistant message above it (results of one turn
    follow each other, so the walk up skips earlier results)."""
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for key in branches.order:
        message = _message(branches.nodes[key].entry)
        if (
            message is None
            or message.get("role") != "toolResult"
            or not isinstance(message.get("toolCallId"), str)
        ):
            continue
        above = branches.nodes[key].parent
        while above is not None:
            upper = _message(branches.nodes[above].entry)
            if upper is None or upper.get("role") != "toolResult":
                break
            above = branches.nodes[above].parent
        upper = _message(branches.nodes[above].entry) if above is not None else None
        if upper is not None and upper.get("role") == "assistant":
            calls = {
                b["id"]
                for b in blocks_of(upper.get("content"))
                if b.get("type") == "toolCall" and isinstance(b.get("id"), str)
            }
            if message["toolCallId"] in calls:
                pairs.setdefault((above, message["toolCallId"]), message | {"_key": key})
    return pairs


class EntryRenderer:
    def __init__(self, branches: Branches, labels: dict[str, str]) -> None:
        self.branches = branches
        self.labels = labels
        self.pairs = pair_tool_results(branches)
        self.paired = {result["_key"] for result in self.pairs.values()}

    def render(self, key: str) -> str:
        entry = self.branches.nodes[key].entry
        kind = entry.get("type") if isinstance(entry.get("type"), str) else ""
        attrs = f'id="e-{escape(key)}"'
        if kind in SILENT_TYPES or key in self.paired:
            return f'<div class="entry anchor" {attrs}></div>'
        label = self.labels.get(entry_id(entry))
        badge = f'<span class="label">{escape(label)}</span>' if label else ""
        when = time_tag(entry.get("timestamp"))
        message = _message(entry)
        if message is not None:
            css, body = self._message(key, message, badge, when)
        elif kind == "custom_message":
            css, body = self._custom(entry, badge, when)
        else:
            css, body = "note", self._note(entry, badge, when)
        return f'<article class="entry {css}" {attrs}>{body}</article>'

    # -- messages -------------------------------------------------------------------------------

    def _message(self, key: str, message: dict[str, Any], badge: str, when: str) -> tuple[str, str]:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return "msg user", meta(
                "User", badge, when, css="user"
            ) + f'<div class="body">{content_html(content)}</div>'
        if role == "assistant":
            return "msg assistant", self._assistant(key, message, badge, when)
        if role == "toolResult":
            return "msg tool", meta("Tool result", badge, when, css="tool") + orphan_result_html(message)
        if role == "bashExecution":
            return "msg bash", self._bash(message, badge, when)
        if role == "custom":
            return self._custom(message, badge, when)
        if role in ("branchSummary", "compactionSummary"):
            title = "Branch summary" if role == "branchSummary" else "Compaction summary"
            return "note summary", _summary_details(title, message.get("summary"), badge, when)
        if role == "system":
            return "note system", self._system(message, badge, when)
        name = role if isinstance(role, str) else "message"
        return "msg other", meta(name, badge, when) + f'<div class="body">{content_html(content)}</div>'

    def _assistant(self, key: str, message: dict[str, Any], badge: str, when: str) -> str:
        model = "/".join(p for p in (message.get("provider"), message.get("model")) if isinstance(p, str))
        facts = [f'<span class="model">{escape(model)}</span>' if model else "", badge, when]
        usage = message.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("output"), int) and usage.get("totalTokens"):
            facts.append(f'<span class="muted">{usage.get("input", 0)}→{usage["output"]} tokens</span>')
        parts = []
        for block in blocks_of(message.get("content")):
            if block.get("type") == "toolCall":
                call_id = block.get("id") if isinstance(block.get("id"), str) else ""
                parts.append(tool_call_html(block, self.pairs.get((key, call_id))))
            else:
                parts.append(content_html([block]))
        stop = message.get("stopReason")
        if stop in ("error", "aborted"):
            text = message.get("errorMessage") if isinstance(message.get("errorMessage"), str) else ""
            parts.append(
                f'<div class="failure">{"Aborted" if stop == "aborted" else "Error"}: {escape(text)}</div>'
            )
        elif stop == "length":
            parts.append('<div class="failure">Stopped: output token limit reached</div>')
        return meta("Assistant", *facts, css="assistant") + f'<div class="body">{"".join(parts)}</div>'

    def _bash(self, message: dict[str, Any], badge: str, when: str) -> str:
        command = message.get("command") if isinstance(message.get("command"), str) else ""
        output = message.get("output") if isinstance(message.get("output"), str) else ""
        notes = []
        if message.get("cancelled"):
            notes.append("cancelled")
        code = message.get("exitCode")
        if isinstance(code, int) and code != 0:
            notes.append(f"exit code {code}")
        if message.get("truncated"):
            full = message.get("fullOutputPath")
            notes.append(
                f"output truncated (full output: {full})" if isinstance(full, str) else "output truncated"
            )
        if message.get("excludeFromContext"):
            notes.append("not sent to the model")
        note_html = f'<div class="muted">{escape("; ".join(notes))}</div>' if notes else ""
        return (
            meta("User ran", badge, when, css="bash")
            + f'<pre class="command">$ {escape(command)}</pre>'
            + (preformatted(output) if output else '<div class="muted">(no output)</div>')
            + note_html
        )

    def _custom(self, message: dict[str, Any], badge: str, when: str) -> tuple[str, str]:
        kind = message.get("customType") if isinstance(message.get("customType"), str) else "custom"
        hidden = ' <span class="muted">(hidden in the UI)</span>' if message.get("display") is False else ""
        head = meta(kind, badge, when, css="custom") + hidden
        return "msg custom", head + f'<div class="body">{content_html(message.get("content"))}</div>'

    def _system(self, message: dict[str, Any], badge: str, when: str) -> str:
        sections = message.get("sections") if isinstance(message.get("sections"), dict) else {}
        added = [t for t in _list(message.get("toolsAdded")) if isinstance(t, dict)]
        removed = [t.get("name") for t in _list(message.get("toolsRemoved")) if isinstance(t, dict)]
        if added and len(sections) > 1:
            title = f"System prompt: {len(sections)} sections, {len(added)} tools"
        else:
            changes = [f"sections {', '.join(map(str, sections))}" if sections else ""]
            changes.append(f"tools added {', '.join(str(t.get('name')) for t in added)}" if added else "")
            changes.append(f"tools removed {', '.join(map(str, removed))}" if removed else "")
            title = "System prompt update: " + ("; ".join(c for c in changes if c) or "instructions")
        parts = []
        text = message.get("content")
        if isinstance(text, str) and text.strip() or isinstance(text, list) and text:
            parts.append(content_html(text, as_markdown=False))
        for name, value in sections.items():
            shown = "(removed)" if value is None else value if isinstance(value, str) else str(value)
            parts.append(f'<div class="section-name">{escape(name)}</div>{preformatted(shown, "prompt")}')
        if added:
            items = "".join(
                f"<li><b>{escape(t.get('name'))}</b> {escape(one_line(str(t.get('description') or ''), 200))}</li>"
                for t in added
            )
            parts.append(f'<div class="section-name">tools</div><ul class="tools">{items}</ul>')
        return f'<details class="system"><summary>{escape(title)} {badge} {when}</summary>{"".join(parts)}</details>'

    # -- other entry types ----------------------------------------------------------------------

    def _note(self, entry: dict[str, Any], badge: str, when: str) -> str:
        kind = entry.get("type")
        if kind == "model_change":
            model = "/".join(p for p in (entry.get("provider"), entry.get("modelId")) if isinstance(p, str))
            return _note_line(f"Model: {model}", badge, when)
        if kind == "thinking_level_change":
            return _note_line(f"Thinking level: {entry.get('thinkingLevel')}", badge, when)
        if kind == "session_info":
            name = entry.get("name")
            text = (
                f"Session named “{name}”"
                if isinstance(name, str) and name.strip()
                else "Session name cleared"
            )
            return _note_line(text, badge, when)
        if kind == "compaction":
            tokens = entry.get("tokensBefore")
            title = f"Compacted earlier history ({tokens} tokens)" if isinstance(tokens, int) else "Compacted"
            return _summary_details(title, entry.get("summary"), badge, when, entry.get("details"))
        if kind == "branch_summary":
            return _summary_details("Summary of an abandoned branch", entry.get("summary"), badge, when)
        if kind == "context_edit":
            target = entry.get("targetId")
            replacement = entry.get("replacement")
            if replacement is None:
                return _note_line(f"Entry {target} removed from the context", badge, when)
            # what the model sees in place of the target from now on, as pi's page shows it
            content = replacement.get("content") if isinstance(replacement, dict) else replacement
            return (
                f'<details class="summary context-edit" open><summary>'
                f"{escape(f'Entry {target} replaced in the context')} {badge} {when}</summary>"
                f'<div class="md">{content_html(content)}</div></details>'
            )
        return (
            _note_line(f"{kind} entry", badge, when)
            + f"<details><summary>data</summary>{json_block(entry)}</details>"
        )


def _note_line(text: str, badge: str, when: str) -> str:
    return f'<div class="note-line">{escape(text)} {badge} {when}</div>'


def _summary_details(title: str, summary: Any, badge: str, when: str, details: Any = None) -> str:
    body = markdown(summary) if isinstance(summary, str) else ""
    files = []
    if isinstance(details, dict):
        for key, name in (("readFiles", "Read"), ("modifiedFiles", "Modified")):
            paths = [p for p in _list(details.get(key)) if isinstance(p, str)]
            if paths:
                files.append(f"<div class='muted'>{name}: {escape(', '.join(paths))}</div>")
    return (
        f'<details class="summary"><summary>{escape(title)} {badge} {when}</summary>'
        f'<div class="md">{body}</div>{"".join(files)}</details>'
    )
