"""YAML frontmatter of Markdown resources (skills, prompt templates).

A file may start with a ``---`` line, YAML, and a closing ``---`` line; the rest is the body.
Parsed with PyYAML's safe loader (the C one when available), imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_loader: Any = None


def _load_yaml(text: str) -> Any:
    global _loader
    import yaml

    if _loader is None:
        _loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=_loader)  # noqa: S506 - a safe loader


@dataclass
class Frontmatter:
    data: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    error: str | None = None
    """Why the YAML could not be read (then ``data`` is empty)."""
    present: bool = False


def parse_frontmatter(text: str) -> Frontmatter:
    """Split ``text`` into frontmatter data and body. Never raises."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return Frontmatter(body=text)
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != "---":
        return Frontmatter(body=text)
    start = first_nl + 1
    pos = start
    end = -1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        if line.rstrip("\r").rstrip() == "---":
            end = pos
            body_start = len(text) if nl == -1 else nl + 1
            break
        if nl == -1:
            break
        pos = nl + 1
    if end == -1:
        return Frontmatter(body=text)  # no closing fence: it is all body
    yaml_text = text[start:end]
    body = text[body_start:]
    try:
        data = _load_yaml(yaml_text) if yaml_text.strip() else {}
    except Exception as exc:  # yaml.YAMLError and friends
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Frontmatter(body=body, error=f"invalid YAML frontmatter: {detail}", present=True)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return Frontmatter(body=body, error="frontmatter is not a mapping", present=True)
    return Frontmatter(data=data, body=body, present=True)
