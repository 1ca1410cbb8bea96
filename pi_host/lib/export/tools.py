"""A tool call with its result, as one collapsible ``<details>``.

The built-in tools get a readable rendering of their arguments (the bash command, the file being
read, written or edited as highlighted code or a diff); any other tool shows its arguments as
JSON. The result is the ``toolResult`` message answering the call, found by the caller.
"""

from __future__ import annotations

import json
from typing import Any

from pi_host.lib.export.blocks import blocks_of, image, json_block, one_line, plain_text, preformatted
from pi_host.lib.export.markup import code_block, escape


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    return value if isinstance(value, str) else ""


def brief(name: str, args: Any) -> str:
    """One line saying what the call does (the summary of the ``<details>``, the sidebar)."""
    if not isinstance(args, dict):
        return ""
    if name == "bash":
        return one_line(_text(args, "command"), 120)
    if name in ("read", "write", "edit", "ls"):
        return _text(args, "path")
    if name in ("grep", "find"):
        where = _text(args, "path")
        return one_line(_text(args, "pattern") + (f" in {where}" if where else ""), 120)
    try:
        return one_line(json.dumps(args, ensure_ascii=False, default=str), 120)
    except (TypeError, ValueError):
        return ""


def _path_line(path: str, extra: str = "") -> str:
    return f'<div class="tool-path">{escape(path)}{escape(extra)}</div>' if path else ""


def arguments_html(name: str, args: Any) -> str:
    if not isinstance(args, dict):
        return json_block(args)
    if name == "bash" and isinstance(args.get("command"), str):
        timeout = f" (timeout {args['timeout']}s)" if isinstance(args.get("timeout"), int | float) else ""
        return code_block(args["command"], language="bash") + (
            f'<div class="muted">{escape(timeout.strip())}</div>' if timeout else ""
        )
    if name == "read" and isinstance(args.get("path"), str):
        window = [
            f"{key} {args[key]}" for key in ("offset", "limit") if isinstance(args.get(key), int | float)
        ]
        return _path_line(args["path"], f" ({', '.join(window)})" if window else "")
    if name == "write" and isinstance(args.get("path"), str):
        return _path_line(args["path"]) + code_block(_text(args, "content"), filename=args["path"])
    if name == "edit" and isinstance(args.get("path"), str):
        return _path_line(args["path"]) + _edits(args)
    return json_block(args)


def _edits(args: dict[str, Any]) -> str:
    edits = args.get("edits")
    if not isinstance(edits, list):  # old sessions: one edit at the top level
        edits = [args]
    lines: list[str] = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        if lines:
            lines.append("@@")
        lines += [f"-{line}" for line in _text(edit, "oldText").split("\n")]
        lines += [f"+{line}" for line in _text(edit, "newText").split("\n")]
    return code_block("\n".join(lines), language="diff") if lines else json_block(args)


def result_html(name: str, args: Any, result: dict[str, Any] | None) -> str:
    if result is None:
        return '<div class="tool-result muted">(no result recorded)</div>'
    parts = []
    path = args.get("path") if isinstance(args, dict) and name == "read" else None
    for block in blocks_of(result.get("content")):
        if block.get("type") == "image":
            parts.append(image(block))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            # A successful read is the file: highlight it like the file's language.
            if isinstance(path, str) and not result.get("isError"):
                parts.append(code_block(text, filename=path))
            else:
                parts.append(preformatted(text))
    body = "".join(parts) or '<div class="muted">(empty output)</div>'
    css = "tool-result error" if result.get("isError") else "tool-result"
    return f'<div class="{css}">{body}</div>'


def tool_call_html(call: dict[str, Any], result: dict[str, Any] | None) -> str:
    name = call.get("name") if isinstance(call.get("name"), str) else "tool"
    args = call.get("arguments")
    if result is None:
        status = '<span class="tool-status muted">no result</span>'
    elif result.get("isError"):
        status = '<span class="tool-status error">error</span>'
    else:
        status = ""
    summary = (
        f'<summary><span class="tool-name">{escape(name)}</span> '
        f'<span class="tool-brief">{escape(brief(name, args))}</span> {status}</summary>'
    )
    css = "tool error" if result is not None and result.get("isError") else "tool"
    call_id = call.get("id")
    data = f' data-call="{escape(call_id)}"' if isinstance(call_id, str) else ""
    return (
        f'<details class="{css}"{data}>{summary}<div class="tool-args">{arguments_html(name, args)}</div>'
        f"{result_html(name, args, result)}</details>"
    )


def orphan_result_html(result: dict[str, Any]) -> str:
    """A tool result whose call is not in the session (shown on its own)."""
    name = result.get("toolName") if isinstance(result.get("toolName"), str) else "tool"
    css = "tool error" if result.get("isError") else "tool"
    preview = one_line(plain_text(result.get("content")), 120)
    return (
        f'<details class="{css}"><summary><span class="tool-name">{escape(name)}</span> result '
        f'<span class="tool-brief">{escape(preview)}</span></summary>{result_html(name, None, result)}</details>'
    )
