"""``.gitignore`` rules applied the way git (and fd) apply them, using pathspec.

Rules come from ``.gitignore``, ``.ignore`` and ``.fdignore`` in every directory walked, plus
``.git/info/exclude`` at a repository root. A deeper file overrides a shallower one; inside one
file the last matching rule wins (``!`` re-includes). An ignored directory is not entered, so
nothing inside it can be re-included, as in git. Entering a directory that holds ``.git`` starts a
nested repository: rules from outside it stop applying.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec  # imported where rules are built: registering the find tool stays cheap

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True)
class _Rules:
    """The patterns of one ignore file and the directory they apply under."""

    base: str
    """Absolute directory of the ignore file, POSIX separators, no trailing slash."""
    spec: pathspec.GitIgnoreSpec


class IgnoreStack:
    """The ignore rules in force for one directory; :meth:`child` gives a subdirectory's."""

    def __init__(self, rules: tuple[_Rules, ...] = ()) -> None:
        self._rules = rules

    def child(self, directory: str, ignore_texts: list[str], new_repo: bool = False) -> IgnoreStack:
        """Rules for ``directory`` (absolute) given the text of the ignore files found in it."""
        rules = () if new_repo else self._rules
        lines: list[str] = []
        for text in ignore_texts:
            lines.extend(text.splitlines())
        if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            import pathspec

            rules = (*rules, _Rules(directory.rstrip("/"), pathspec.GitIgnoreSpec.from_lines(lines)))
        return IgnoreStack(rules)

    def is_ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (absolute, POSIX separators, below every rule's directory) is ignored."""
        for rules in reversed(self._rules):
            if not path.startswith(rules.base + "/"):
                continue
            local = path[len(rules.base) + 1 :]
            if is_dir:
                local += "/"
            result = rules.spec.check_file(local)
            if result.include is not None:
                return bool(result.include)
        return False

    def __bool__(self) -> bool:
        return bool(self._rules)
