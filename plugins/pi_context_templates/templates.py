"""Prompt templates: discovery, argument parsing and substitution (reference §8.5).

A template is a ``.md`` file; its command name is the file name without ``.md``. Typing
``/name args`` replaces the input with the template body, arguments substituted in one
left-to-right pass (substituted values are never expanded again).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.frontmatter import read_frontmatter
from pi_host.lib.resources import ResourceLocations, absolute_path, parse_setting_entries

_COMMAND = re.compile(r"^/(\S+)(?:\s+([\s\S]*))?$")
_PLACEHOLDER = re.compile(
    r"\$\{(\d+):-([^}]*)\}"  # ${N:-default}
    r"|\$\{(@|ARGUMENTS):-([^}]*)\}"  # ${@:-default} / ${ARGUMENTS:-default}
    r"|\$\{@:(\d+)(?::(\d+))?\}"  # ${@:N} / ${@:N:L}
    r"|\$ARGUMENTS"
    r"|\$@"
    r"|\$(\d+)"
)


@dataclass
class Template:
    name: str
    body: str | None
    """None when the template came from the parse cache; :meth:`text` reads it on use."""
    description: str
    file_path: str
    argument_hint: str | None = None
    source: str = ""

    def text(self) -> str:
        """The template body (read from the file when it was not loaded at discovery)."""
        if self.body is None:
            self.body = read_frontmatter(self.file_path).body
        return self.body


@dataclass
class Discovery:
    templates: dict[str, Template] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _description(data: dict[str, Any], body: str) -> str:
    value = data.get("description")
    if isinstance(value, str) and value.strip():
        return value.strip()
    for line in body.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 60 else line[:60] + "..."
    return ""


def load_template(path: str, source: str, warnings: list[str]) -> Template | None:
    try:
        parsed = read_frontmatter(path)
    except OSError as exc:
        warnings.append(f"{path}: cannot read prompt template: {exc.strerror or exc}")
        return None
    if parsed.error:
        warnings.append(f"{path}: {parsed.error}; using the file without it")
    hint = parsed.data.get("argument-hint")
    return Template(
        name=os.path.basename(path)[: -len(".md")],
        body=parsed.body,
        description=_description(parsed.data, parsed.body),
        file_path=os.path.abspath(path),
        argument_hint=str(hint) if hint is not None else None,
        source=source,
    )


def _load_cached(
    file: str, source: str, st: os.stat_result, cache: Any, warnings: list[str]
) -> Template | None:
    if cache is not None:
        value = cache.get(file, st)
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], dict):
            warnings.extend(value[1])
            return Template(body=None, source=source, **value[0])
    found: list[str] = []
    template = load_template(file, source, found)
    warnings.extend(found)
    if cache is not None and template is not None:
        fields = {k: v for k, v in vars(template).items() if k not in ("body", "source")}
        cache.put(file, st, [fields, found])
    return template


def _md_files(path: str) -> list[str]:
    """A ``.md`` file itself, or the ``.md`` files directly in a directory (no recursion)."""
    if os.path.isfile(path):
        return [path] if path.endswith(".md") else []
    try:
        with os.scandir(path) as it:
            return sorted(e.path for e in it if e.name.endswith(".md") and e.is_file())
    except OSError:
        return []


@dataclass
class Locations(ResourceLocations):
    """Where to look, in precedence order (first name wins): the agent dir's ``prompts``, the
    project's ``.pi/prompts`` (when trusted), the ``prompts`` setting, packages, ``--prompt-template``,
    then ``resources_discover`` handlers. Directories are not searched recursively."""


def discover(locations: Locations, cache: Any = None) -> Discovery:
    """Templates in precedence order; the first of a name wins (a warning names the loser).

    ``cache`` (a :class:`pi_host.lib.frontmatter.StatCache`) keeps each file's name, description and
    hint while the file is unchanged; bodies are then read when a template is used.
    """
    result = Discovery()
    seen: set[tuple[int, int]] = set()
    sources: list[tuple[str, str]] = []
    # ``!pattern`` entries filter skills by name; they do not apply to prompt templates.
    setting = parse_setting_entries(
        locations.settings_entries if locations.include_defaults else (), locations.cwd
    )
    if locations.include_defaults:
        sources.append((os.path.join(locations.agent_dir, "prompts"), "user"))
        if locations.trusted:
            sources.append((os.path.join(locations.cwd, ".pi", "prompts"), "project"))
        sources.extend((path, "settings") for path in setting.paths)
        sources.extend((package.path, f"package:{package.package}") for package in locations.packages)
    sources.extend((absolute_path(p, locations.cwd), "cli") for p in locations.cli_paths)
    if locations.include_defaults:
        sources.extend((absolute_path(p, locations.cwd), "extension") for p in locations.extension_paths)
    for path, source in sources:
        for file in _md_files(path):
            try:
                st = os.stat(file)
            except OSError:
                continue
            real = (st.st_dev, st.st_ino)  # the same file through a symlink loads once
            if real in seen or os.path.abspath(file) in setting.excluded_paths:
                continue
            seen.add(real)
            template = _load_cached(file, source, st, cache, result.warnings)
            if template is None:
                continue
            earlier = result.templates.get(template.name)
            if earlier is not None:
                result.warnings.append(
                    f"{file}: prompt template /{template.name} ignored: already defined by {earlier.file_path}"
                )
                continue
            result.templates[template.name] = template
    if cache is not None:
        cache.save()
    return result


def parse_args(text: str) -> list[str]:
    """Split template arguments the way pi does.

    Whitespace separates arguments. A ``"`` or ``'`` quotes only at the start of an argument;
    inside, a backslash before the same quote is a literal quote and other backslashes stay.
    ``""`` is an empty argument. An unclosed quote is ordinary text.
    """
    args: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        quote = text[i]
        if quote in "\"'":
            j, buf = i + 1, []
            while j < n:
                if text[j] == "\\" and j + 1 < n and text[j + 1] == quote:
                    buf.append(quote)
                    j += 2
                elif text[j] == quote:
                    break
                else:
                    buf.append(text[j])
                    j += 1
            if j < n:  # closed: the argument goes on until whitespace
                j += 1
                while j < n and not text[j].isspace():
                    buf.append(text[j])
                    j += 1
                args.append("".join(buf))
                i = j
                continue
        j = i
        while j < n and not text[j].isspace():
            j += 1
        args.append(text[i:j])
        i = j
    return args


def substitute(template: str, args: list[str]) -> str:
    """Fill the placeholders of ``template`` in one pass (values are never re-expanded)."""
    joined = " ".join(args)

    def nth(number: str) -> str:
        index = int(number)
        return args[index - 1] if 1 <= index <= len(args) else ""

    def replace(match: re.Match[str]) -> str:
        number, default, _all, all_default, start, length, single = match.groups()
        if number is not None:
            return nth(number) or default
        if all_default is not None:
            return joined or all_default
        if start is not None:
            begin = max(int(start), 1) - 1
            selected = args[begin:] if length is None else args[begin : begin + int(length)]
            return " ".join(selected)
        if single is not None:
            return nth(single)
        return joined  # $ARGUMENTS or $@

    return _PLACEHOLDER.sub(replace, template)


def expand(text: str, templates: dict[str, Template]) -> str | None:
    """The expansion of ``/name args``, or None when ``text`` names no template."""
    match = _COMMAND.match(text)
    if match is None:
        return None
    template = templates.get(match.group(1))
    if template is None:
        return None
    try:
        body = template.text()
    except OSError:
        return None
    return substitute(body, parse_args(match.group(2) or ""))
