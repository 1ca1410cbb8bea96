"""Glob patterns for ``find`` (fd's ``--glob`` dialect).

``*`` and ``?`` stay within one path component, ``**`` crosses components (``**/`` also matches
no directory at all), ``[abc]``/``[!a-z]`` are classes and ``{a,b}`` alternatives.
"""

from __future__ import annotations

import re


def glob_to_regex(pattern: str) -> str:
    """A regular expression (anchored at both ends) equivalent to ``pattern``."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0  # inside {...}
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append(".*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "^" + "".join(out) + "$"


def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern), re.IGNORECASE if ignore_case else 0)
