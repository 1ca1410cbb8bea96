"""pi-host's tools as Claude Code's hooks see them, and back.

A hook file written for Claude Code matches ``Bash``, ``Edit``, ``Write``... and reads
``tool_input.command`` or ``tool_input.file_path``; pi-host's tools are ``bash``, ``edit``,
``write`` with ``path``. The names and arguments are translated both ways, so a hook file runs
unchanged: what it gets looks like Claude Code's, and an ``updatedInput`` it returns is turned
back into pi-host's arguments. Codex's names work too (``Bash``; ``apply_patch`` for file edits).
"""

from __future__ import annotations

import os
from typing import Any

CLAUDE_NAME = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "find": "Glob",
    "ls": "LS",
}


def names(tool: str, args: dict[str, Any]) -> list[str]:
    """Every name a matcher may use for this call: Claude Code's, pi-host's, Codex's."""
    found = [claude_name(tool, args), tool]
    if tool in ("edit", "write"):
        found.append("apply_patch")  # Codex's file-edit tool (its matchers alias Edit and Write)
    if tool == "bash":
        found.append("shell")
    return list(dict.fromkeys(found))


def claude_name(tool: str, args: dict[str, Any]) -> str:
    if tool == "edit" and len(args.get("edits") or []) > 1:
        return "MultiEdit"
    return CLAUDE_NAME.get(tool, tool)


def _absolute(path: Any, cwd: str) -> Any:
    if not isinstance(path, str):
        return path
    path = os.path.expanduser(path.removeprefix("@"))
    return os.path.normpath(os.path.join(cwd, path))


def to_claude(tool: str, args: dict[str, Any], cwd: str) -> dict[str, Any]:
    """``tool_input`` as Claude Code would send it (file paths absolute)."""
    if tool == "bash":
        out: dict[str, Any] = {"command": args.get("command", "")}
        if isinstance(args.get("timeout"), int | float):
            out["timeout"] = int(args["timeout"] * 1000)  # Claude Code's bash timeout is in ms
        return out
    if tool in ("read", "write"):
        out = {"file_path": _absolute(args.get("path"), cwd)}
        for key in ("content", "offset", "limit"):
            if key in args:
                out[key] = args[key]
        return out
    if tool == "edit":
        edits = [
            {"old_string": e.get("oldText", ""), "new_string": e.get("newText", "")}
            for e in args.get("edits") or []
            if isinstance(e, dict)
        ]
        path = _absolute(args.get("path"), cwd)
        if len(edits) == 1:
            return {"file_path": path, **edits[0], "replace_all": False}
        return {"file_path": path, "edits": edits}
    if tool == "grep":
        out = {"pattern": args.get("pattern", ""), "output_mode": "content", "-n": True}
        for key, theirs in (
            ("path", "path"),
            ("glob", "glob"),
            ("ignoreCase", "-i"),
            ("context", "-C"),
            ("limit", "head_limit"),
        ):
            if key in args:
                out[theirs] = _absolute(args[key], cwd) if key == "path" else args[key]
        return out
    if tool == "find":
        return {
            "pattern": args.get("pattern", ""),
            **({"path": _absolute(args["path"], cwd)} if "path" in args else {}),
        }
    if tool == "ls":
        return {"path": _absolute(args.get("path", "."), cwd)}
    return dict(args)


def from_claude(tool: str, updated: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """pi-host's arguments from a hook's ``updatedInput``, over the original ones (a key the
    hook left out keeps its value)."""
    out = dict(original)
    if tool == "bash":
        if "command" in updated:
            out["command"] = updated["command"]
        if isinstance(updated.get("timeout"), int | float):
            out["timeout"] = updated["timeout"] / 1000
        return out
    if tool in ("read", "write", "edit", "ls", "find", "grep"):
        if "file_path" in updated:
            out["path"] = updated["file_path"]
        for key in ("path", "content", "offset", "limit", "pattern", "glob"):
            if key in updated:
                out[key] = updated[key]
        if tool == "grep":
            for theirs, key in (("-i", "ignoreCase"), ("-C", "context"), ("head_limit", "limit")):
                if theirs in updated:
                    out[key] = updated[theirs]
        if tool == "edit":
            if "old_string" in updated or "new_string" in updated:
                first = (original.get("edits") or [{}])[0]
                out["edits"] = [
                    {
                        "oldText": updated.get("old_string", first.get("oldText", "")),
                        "newText": updated.get("new_string", first.get("newText", "")),
                    }
                ]
            elif isinstance(updated.get("edits"), list):
                out["edits"] = [
                    {"oldText": e.get("old_string", ""), "newText": e.get("new_string", "")}
                    for e in updated["edits"]
                    if isinstance(e, dict)
                ]
        return out
    out.update(updated)
    return out


def tool_response(tool: str, args: dict[str, Any], text: str, is_error: bool, cwd: str) -> dict[str, Any]:
    """``tool_response`` for PostToolUse: Claude Code's fields where it has them, plus the text."""
    response: dict[str, Any] = {"output": text, "is_error": is_error}
    if tool == "bash":
        response.update(stdout=text, stderr="", interrupted=False, isImage=False)
    elif tool in ("write", "edit"):
        response.update(filePath=_absolute(args.get("path"), cwd), success=not is_error)
    return response
