"""Finding and reading skills (the Agent Skills format; reference §8.4).

A skill is a directory holding ``SKILL.md`` (YAML frontmatter + Markdown instructions). Scanning a
location: a directory with ``SKILL.md`` is one skill (nothing below it is scanned); otherwise its
subdirectories are scanned (skipping dot-names and ``node_modules``); ``*.md`` files directly in
the location's top directory are standalone skills when they have a description. ``.gitignore``,
``.ignore`` and ``.fdignore`` are honoured; symlinks are followed and each real file loads once.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.frontmatter import read_frontmatter
from pi_host.lib.resources import ResourceLocations, absolute_path, agents_skill_dirs, parse_setting_entries

MAX_NAME = 64
MAX_DESCRIPTION = 1024
IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")
_VALID_NAME = re.compile(r"^[a-z0-9-]+$")


@dataclass
class Skill:
    """One skill found on disk: its name, description and where its file is."""

    name: str
    description: str
    file_path: str
    """Absolute path of the skill file (``SKILL.md`` or a standalone ``.md``)."""
    base_dir: str
    """The directory relative references inside the skill resolve against."""
    disable_model_invocation: bool = False
    source: str = ""
    """Which location found it (``user``, ``project``, ``settings``, ``cli``, ``extension``...)."""


@dataclass
class Discovery:
    """The skills found, and the warnings about those that broke a rule or could not load."""

    skills: list[Skill] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def name_problems(name: str) -> list[str]:
    """pi's naming rules for skills; each broken rule is one warning (the skill still loads)."""
    problems: list[str] = []
    if len(name) > MAX_NAME:
        problems.append(f"name is longer than {MAX_NAME} characters")
    if not _VALID_NAME.match(name):
        problems.append("name should use only lowercase letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name should not start or end with a hyphen")
    if "--" in name:
        problems.append("name should not contain two hyphens in a row")
    return problems


def load_skill_file(path: str, source: str, standalone: bool, warnings: list[str]) -> Skill | None:
    """Read one skill file. ``standalone`` files are silently skipped when unusable."""
    try:
        parsed = read_frontmatter(path)
    except OSError as exc:
        if not standalone:
            warnings.append(f"{path}: cannot read skill: {exc.strerror or exc}")
        return None
    if parsed.error:
        if not standalone:
            warnings.append(f"{path}: skill not loaded: {parsed.error}")
        return None
    data = parsed.data
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        if not standalone:
            warnings.append(f"{path}: skill not loaded: the frontmatter has no description")
        return None
    description = description.strip()
    directory = os.path.dirname(path)
    default_name = os.path.basename(directory) if not standalone else os.path.basename(path)[: -len(".md")]
    name = data.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else default_name
    for problem in name_problems(name):
        warnings.append(f"{path}: skill {name!r}: {problem}")
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"{path}: skill {name!r}: description is longer than {MAX_DESCRIPTION} characters")
    return Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=directory,
        disable_model_invocation=data.get("disable-model-invocation") is True,
        source=source,
    )


class _Ignores:
    """Ignore-file rules collected on the way down, each relative to its own directory."""

    def __init__(self, rules: tuple[tuple[str, Any], ...] = ()) -> None:
        self.rules = rules

    def extended(self, directory: str, names: set[str]) -> _Ignores:
        present = [n for n in IGNORE_FILES if n in names]
        if not present:
            return self
        lines: list[str] = []
        for name in present:
            try:
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as handle:
                    lines.extend(handle.read().splitlines())
            except OSError:
                continue
        if not any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            return self
        import pathspec  # only paid for when an ignore file exists

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _Ignores((*self.rules, (directory, spec)))

    def ignored(self, path: str, is_dir: bool) -> bool:
        for base, spec in self.rules:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


class Scanner:
    """Scans locations in order; the first skill of a name wins."""

    def __init__(self, cache: Any = None) -> None:
        self.cache = cache
        """A :class:`pi_context_skills.cache.SkillCache` (or None to always parse)."""
        self.result = Discovery()
        self._by_name: dict[str, Skill] = {}
        self._seen_files: set[tuple[int, int]] = set()
        self._seen_dirs: set[tuple[int, int]] = set()

    def add(self, skill: Skill) -> None:
        earlier = self._by_name.get(skill.name)
        if earlier is not None:
            self.result.warnings.append(
                f"{skill.file_path}: skill {skill.name!r} ignored: the name is already used by {earlier.file_path}"
            )
            return
        self._by_name[skill.name] = skill
        self.result.skills.append(skill)

    def _load(self, path: str, source: str, standalone: bool, st: os.stat_result | None = None) -> None:
        # Identity by (device, inode) rather than realpath(): the same real file, reached through
        # symlinks or listed twice, loads once, at one stat() instead of one lstat() per component.
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                return
        key = (st.st_dev, st.st_ino)
        if key in self._seen_files:
            return
        self._seen_files.add(key)
        cached = self.cache.get_skill(path, standalone, st) if self.cache is not None else None
        if cached is not None:
            fields, warnings = cached
            self.result.warnings.extend(warnings)
            skill = Skill(**fields, source=source) if fields is not None else None
        else:
            warnings = []
            skill = load_skill_file(path, source, standalone, warnings)
            self.result.warnings.extend(warnings)
            if self.cache is not None:
                fields = None
                if skill is not None:
                    fields = {k: v for k, v in vars(skill).items() if k != "source"}
                self.cache.put_skill(path, standalone, st, fields, warnings)
        if skill is not None:
            self.add(skill)

    def scan_path(self, path: str, source: str) -> None:
        """A location, a skill directory or a single skill file."""
        try:
            st = os.stat(path)
        except OSError:
            return  # most locations do not exist; one failed stat says so
        if stat.S_ISREG(st.st_mode):
            self._load(path, source, standalone=os.path.basename(path) != "SKILL.md", st=st)
        elif stat.S_ISDIR(st.st_mode):
            self._scan_dir(path, source, top=True, ignores=_Ignores(), identity=(st.st_dev, st.st_ino))

    def _scan_dir(
        self, directory: str, source: str, top: bool, ignores: _Ignores, identity: tuple[int, int]
    ) -> None:
        if identity in self._seen_dirs:
            return  # a symlink loop, or a location listed twice
        self._seen_dirs.add(identity)
        # Most directories met are skills: one stat of SKILL.md settles those without a listing.
        skill_file = os.path.join(directory, "SKILL.md")
        try:
            skill_stat = os.stat(skill_file)
        except OSError:
            skill_stat = None
        if skill_stat is not None and stat.S_ISREG(skill_stat.st_mode):
            self._load(skill_file, source, standalone=False, st=skill_stat)
            return
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        ignores = ignores.extended(directory, {e.name for e in entries})
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "node_modules":
                continue
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                continue
            if ignores.rules and ignores.ignored(entry.path, is_dir):
                continue
            if is_dir:
                try:
                    # A plain directory's identity comes free from the listing; only a symlink
                    # needs a stat() to learn where it leads (which is what stops loops).
                    if entry.is_symlink():
                        target = entry.stat()
                        child = (target.st_dev, target.st_ino)
                    else:
                        child = (identity[0], entry.inode())
                except OSError:
                    continue
                self._scan_dir(entry.path, source, top=False, ignores=ignores, identity=child)
            elif top and name.endswith(".md"):
                try:
                    if entry.is_file():
                        self._load(entry.path, source, standalone=True, st=entry.stat())
                except OSError:
                    continue


@dataclass
class Locations(ResourceLocations):
    """Where to look, in precedence order (first name wins): the agent dir, ``~/.agents/skills``,
    the project's ``.pi/skills`` and ``.agents/skills`` up to the git root (when trusted), the
    ``skills`` setting, packages (``register_resources``, ``packages`` settings), ``--skill``, then
    ``resources_discover`` handlers."""

    home: str = field(default_factory=lambda: os.path.expanduser("~"))


def discover(locations: Locations, cache: Any = None) -> Discovery:
    """Skills from every location in precedence order. ``cache`` (a ``SkillCache``) skips
    re-parsing unchanged files; it is saved at the end."""
    scanner = Scanner(cache)
    cwd = locations.cwd
    setting = parse_setting_entries(locations.settings_entries if locations.include_defaults else (), cwd)
    if locations.include_defaults:
        scanner.scan_path(os.path.join(locations.agent_dir, "skills"), "user")
        scanner.scan_path(os.path.join(locations.home, ".agents", "skills"), "user")
        if locations.trusted:
            scanner.scan_path(os.path.join(cwd, ".pi", "skills"), "project")
            for directory in agents_skill_dirs(cwd):
                scanner.scan_path(directory, "project")
        for path in setting.paths:
            scanner.scan_path(path, "settings")
        for package in locations.packages:
            scanner.scan_path(package.path, f"package:{package.package}")
    for path in locations.cli_paths:
        scanner.scan_path(absolute_path(path, cwd), "cli")
    if locations.include_defaults:
        for path in locations.extension_paths:
            scanner.scan_path(absolute_path(path, cwd), "extension")
    if cache is not None:
        cache.save()
    result = scanner.result
    excluded_paths, excluded_globs = setting.excluded_paths, setting.excluded_globs
    if excluded_paths or excluded_globs:
        result.skills = [
            s
            for s in result.skills
            if not any(s.file_path == p or s.file_path.startswith(p + os.sep) for p in excluded_paths)
            and not any(fnmatch.fnmatch(s.file_path, g) or fnmatch.fnmatch(s.name, g) for g in excluded_globs)
        ]
    return result
