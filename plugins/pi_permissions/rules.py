"""Permission rules: ``tool`` or ``tool(pattern)``, as in Claude Code's settings.

* ``bash(git status)`` the exact command; ``bash(npm run test:*)`` commands starting with
  ``npm run test`` (``npm run test:unit`` too); ``bash(git * --dry-run)`` a glob (``*`` is any text);
* ``edit(src/**)``, ``write(*.md)``, ``read(/etc/**)``: a glob on the path the tool is given,
  relative to the project (``**`` crosses folders) or absolute (``~/`` works);
* ``mcp__github``, ``mcp__github__*``: tool names may be globs; another tool's pattern is a
  glob on its arguments as compact JSON.

Tool names are compared without case and Claude Code's names work (``Bash``, ``Edit``,
``MultiEdit``, ``Write``, ``Read``, ``Grep``, ``Glob`` → ``find``, ``LS`` → ``ls``), so a
``permissions`` block copied from ``.claude/settings.json`` means the same here.

An *allow* rule on ``bash`` never matches a compound command (``;``, ``&&``, ``|``, ``$(...)``,
redirections...) unless it is the exact command: ``bash(git status:*)`` must not allow
``git status; rm -rf ~``. *Deny* and *ask* rules match the whole command or any part of it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass
from typing import Any

CLAUDE_NAMES = {"multiedit": "edit", "glob": "find", "notebookedit": "edit"}
PATH_KEYS = ("path", "file_path", "filePath", "file")
_RULE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_CONTROL = re.compile(r"(;|&&|\|\||\||&|\n|`|\$\(|<\(|>\(|>|<)")


@dataclass(frozen=True)
class Rule:
    tool: str
    pattern: str | None
    source: str = "settings"
    """Where it came from, for the reason line (``user settings``, ``project settings``,
    ``this session``, ``this project``)."""

    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def parse(text: str, source: str = "settings") -> Rule | None:
    match = _RULE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    name = match.group(1).lower()
    return Rule(CLAUDE_NAMES.get(name, name), match.group(2), source)


def parse_all(values: Any, source: str, problems: list[str]) -> list[Rule]:
    rules = []
    for value in values if isinstance(values, list) else []:
        rule = parse(value, source)
        if rule is None:
            problems.append(
                f"permissions: {value!r} in the {source} is not a rule (tool or tool(pattern)); ignored"
            )
        else:
            rules.append(rule)
    return rules


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses folders, ``*`` and ``?`` stay within one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def path_matches(pattern: str, path: str, cwd: str) -> bool:
    pattern = os.path.expanduser(pattern)
    absolute = os.path.normpath(os.path.join(cwd, path))
    if os.path.isabs(pattern):
        return bool(_glob_regex(pattern).match(absolute))
    relative = os.path.relpath(absolute, cwd)
    if relative.startswith(".."):
        return False
    pattern = pattern.removeprefix("./")
    return bool(
        _glob_regex(pattern).match(relative)
        or ("/" not in pattern and _glob_regex(pattern).match(os.path.basename(relative)))
    )


def command_parts(command: str) -> list[str]:
    return [part.strip() for part in _CONTROL.split(command) if part.strip() and not _CONTROL.fullmatch(part)]


def _command_matches(pattern: str, command: str) -> bool:
    command = command.strip()
    if pattern.endswith(":*"):  # Claude Code's prefix form: npm run test:* takes npm run test:unit too
        return command.startswith(pattern[:-2].strip())
    return fnmatch.fnmatchcase(command, pattern)


def matches(rule: Rule, tool: str, args: dict[str, Any], cwd: str, kind: str) -> bool:
    """Does ``rule`` cover this call? ``kind`` is ``allow``, ``ask`` or ``deny`` (allow rules
    are stricter about compound commands)."""
    if not fnmatch.fnmatchcase(tool.lower(), rule.tool) and not tool.lower().startswith(rule.tool + "__"):
        return False
    if rule.pattern is None:
        return True
    if tool == "bash" or "command" in args and isinstance(args.get("command"), str):
        command = str(args.get("command", ""))
        if command.strip() == rule.pattern.strip():
            return True
        if kind == "allow":
            return (
                len(command_parts(command)) <= 1
                and not _CONTROL.search(command)
                and _command_matches(rule.pattern, command)
            )
        return _command_matches(rule.pattern, command) or any(
            _command_matches(rule.pattern, part) for part in command_parts(command)
        )
    path = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
    if path is not None:
        return path_matches(rule.pattern, path.removeprefix("@"), cwd)
    return fnmatch.fnmatchcase(json.dumps(args, sort_keys=True, separators=(",", ":")), rule.pattern)


def first_match(rules: list[Rule], tool: str, args: dict[str, Any], cwd: str, kind: str) -> Rule | None:
    return next((rule for rule in rules if matches(rule, tool, args, cwd, kind)), None)


def suggestion(tool: str, args: dict[str, Any]) -> Rule:
    """The rule an "always" answer remembers: the exact command for bash, the tool otherwise."""
    command = args.get("command")
    if tool == "bash" and isinstance(command, str) and command.strip():
        return Rule("bash", command.strip())
    return Rule(tool.lower(), None)
