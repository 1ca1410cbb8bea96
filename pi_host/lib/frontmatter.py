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
    """A Markdown file split into its YAML front matter and its body."""

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


def read_frontmatter(path: str) -> Frontmatter:
    """Read a Markdown resource file and split it (undecodable bytes replaced).

    Raises ``OSError`` when the file cannot be read; never for its content.
    """
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_frontmatter(handle.read())


class StatCache:
    """A small on-disk cache of values derived from files, so start-up does not re-parse
    unchanged YAML (used by the skill and prompt-template sources).

    An entry is valid while its file's ``(mtime_ns, size, inode)`` are unchanged, the same test
    git uses for its index. The cache lives in pi-host's own cache dir (never the agent dir pi
    shares); any problem with the cache file only means parsing again.
    """

    VERSION = 1
    MAX_ENTRIES = 5000

    def __init__(self, name: str, path: str | None = None) -> None:
        import os

        from pi_host.config import paths

        self.path = path or os.path.join(paths.cache_dir(), f"{name}.json")
        self.entries: dict[str, list[Any]] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            import orjson

            with open(self.path, "rb") as handle:
                data = orjson.loads(handle.read())
            if (
                isinstance(data, dict)
                and data.get("version") == self.VERSION
                and isinstance(data.get("entries"), dict)
            ):
                self.entries = data["entries"]
        except Exception:
            self.entries = {}

    def get(self, key: str, st: Any) -> Any:
        """The value stored for ``key`` if the file still has stat ``st``, else None."""
        entry = self.entries.get(key)
        if not isinstance(entry, list) or len(entry) != 4:
            return None
        if entry[0] != st.st_mtime_ns or entry[1] != st.st_size or entry[2] != st.st_ino:
            return None
        self.used.add(key)
        return entry[3]

    def put(self, key: str, st: Any, value: Any) -> None:
        """Store a JSON-serialisable ``value`` (not None) for ``key``."""
        self.entries[key] = [st.st_mtime_ns, st.st_size, st.st_ino, value]
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        import os

        entries = self.entries
        if len(entries) > self.MAX_ENTRIES:
            entries = {k: v for k, v in entries.items() if k in self.used}
        try:
            import orjson

            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as handle:
                handle.write(orjson.dumps({"version": self.VERSION, "entries": entries}))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only cache dir only costs speed
        self.dirty = False
