"""The ``skills`` prompt section and ``/skill:name`` expansion (reference §8.4).

Progressive disclosure: the prompt lists only each skill's name, description and file location;
the model reads the file itself when a task matches. ``/skill:name args`` inlines the body.
"""

from __future__ import annotations

import re

from pi_context_skills.discovery import Skill
from pi_host.lib.frontmatter import read_frontmatter

_SKILL_COMMAND = re.compile(r"^/skill:(\S+)(?:\s+([\s\S]*))?$")


def xml_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def skills_section(skills: list[Skill], reader: str | None) -> str | None:
    """The section body (unwrapped), or None when no skill is visible to the model.

    ``reader`` is ``read`` or ``bash`` (the tool the model should load files with), or None when
    neither may be named.
    """
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return None
    if reader == "read":
        how = "open its file with the read tool"
    elif reader == "bash":
        how = "print its file with bash (for example `cat <location>`)"
    else:
        how = "load its file"
    lines = [
        "Skills are packaged instructions for particular kinds of task. Only their names and "
        f"descriptions are listed here: when a task fits a skill's description, {how} before you "
        "start, and follow it. Paths mentioned inside a skill are relative to the directory that "
        "holds its file; turn them into absolute paths before using them.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines.extend(
            [
                "  <skill>",
                f"    <name>{xml_escape(skill.name)}</name>",
                f"    <description>{xml_escape(skill.description)}</description>",
                f"    <location>{xml_escape(skill.file_path)}</location>",
                "  </skill>",
            ]
        )
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill_command(text: str, skills: list[Skill]) -> str | None:
    """The expanded text for ``/skill:name [args]``, or None (unknown skill or not a skill command)."""
    match = _SKILL_COMMAND.match(text)
    if match is None:
        return None
    name, args = match.group(1), (match.group(2) or "").strip()
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return None
    try:
        body = read_frontmatter(skill.file_path).body.strip()
    except OSError:
        return None
    expanded = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"Relative paths in this skill refer to {skill.base_dir}.\n\n"
        f"{body}\n</skill>"
    )
    if args:
        expanded += f"\n\n{args}"
    return expanded
