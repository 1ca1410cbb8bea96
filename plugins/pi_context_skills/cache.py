"""The parsed-skill cache: :class:`pi_host.lib.frontmatter.StatCache` in
``<pi-host cache dir>/skills-frontmatter.json``."""

from __future__ import annotations

import os
from typing import Any

from pi_host.config import paths
from pi_host.lib.frontmatter import StatCache

NAME = "skills-frontmatter"


def cache_file() -> str:
    return os.path.join(paths.cache_dir(), f"{NAME}.json")


class SkillCache(StatCache):
    """Entries: ``[skill fields or None, warnings]`` keyed by path and standalone-ness."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__(NAME, path)

    def get_skill(
        self, path: str, standalone: bool, st: os.stat_result
    ) -> tuple[dict[str, Any] | None, list[str]] | None:
        value = self.get(f"{int(standalone)}|{path}", st)
        if not isinstance(value, list) or len(value) != 2:
            return None
        return value[0], list(value[1])

    def put_skill(
        self,
        path: str,
        standalone: bool,
        st: os.stat_result,
        skill: dict[str, Any] | None,
        warnings: list[str],
    ) -> None:
        self.put(f"{int(standalone)}|{path}", st, [skill, warnings])
