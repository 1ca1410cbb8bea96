"""A small on-disk cache of parsed skill files, so start-up does not re-parse unchanged YAML.

Each entry is keyed by the file path (and whether it was read as a standalone skill) and is valid
while the file's ``(mtime_ns, size, inode)`` are unchanged, the same test git uses for its index.
The cache lives in pi-host's own cache dir (never the agent dir pi shares). Any problem with the
cache file just means a cold parse.
"""

from __future__ import annotations

import os
from typing import Any

from pi_host import paths

VERSION = 1
MAX_ENTRIES = 5000


def cache_file() -> str:
    return os.path.join(paths.cache_dir(), "skills-frontmatter.json")


class SkillCache:
    def __init__(self, path: str | None = None) -> None:
        self.path = path or cache_file()
        self.entries: dict[str, list[Any]] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            import orjson

            with open(self.path, "rb") as handle:
                data = orjson.loads(handle.read())
            if (
                isinstance(data, dict)
                and data.get("version") == VERSION
                and isinstance(data.get("entries"), dict)
            ):
                self.entries = data["entries"]
        except Exception:
            self.entries = {}

    @staticmethod
    def _key(path: str, standalone: bool) -> str:
        return f"{int(standalone)}|{path}"

    def get(
        self, path: str, standalone: bool, st: os.stat_result
    ) -> tuple[dict[str, Any] | None, list[str]] | None:
        key = self._key(path, standalone)
        entry = self.entries.get(key)
        if not isinstance(entry, list) or len(entry) != 5:
            return None
        if entry[0] != st.st_mtime_ns or entry[1] != st.st_size or entry[2] != st.st_ino:
            return None
        self.used.add(key)
        return entry[3], list(entry[4])

    def put(
        self,
        path: str,
        standalone: bool,
        st: os.stat_result,
        skill: dict[str, Any] | None,
        warnings: list[str],
    ) -> None:
        key = self._key(path, standalone)
        self.entries[key] = [st.st_mtime_ns, st.st_size, st.st_ino, skill, warnings]
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        entries = self.entries
        if len(entries) > MAX_ENTRIES:
            entries = {k: v for k, v in entries.items() if k in self.used}
        try:
            import orjson

            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as handle:
                handle.write(orjson.dumps({"version": VERSION, "entries": entries}))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only cache dir only costs speed
        self.dirty = False
