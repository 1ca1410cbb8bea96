"""The head of the system prompt (reference §8.1, §8.2): preamble, tools, rules, docs, addendum.

A custom prompt (``--system-prompt``, else a trusted project's ``.pi/SYSTEM.md``, else
``<agent dir>/SYSTEM.md``) becomes the preamble and drops ``tools``, ``rules`` and ``docs``.
Append text (every ``--append-system-prompt``, else ``.pi/APPEND_SYSTEM.md`` in a trusted project,
else ``<agent dir>/APPEND_SYSTEM.md``) becomes ``addendum``. A flag value that names an existing
file stands for that file's contents.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from pi_host.lib.resources import string_list
from pi_host.protocol.transcript import wrap_section

PREAMBLE = (
    "You are a coding assistant working inside pi, a coding agent harness. You help the user by "
    "looking at their files, running commands and changing code."
)
MORE_TOOLS = "More tools than the ones listed here may be available; use any whose description fits the task."
SHELL_SEARCH_RULE = (
    "No dedicated search tools are active: use the shell (ls, find, rg or grep) to list and search files."
)
FINAL_RULES = (
    "Keep your answers short and to the point.",
    "Name file paths plainly whenever you refer to files.",
)
DOC_TOPICS = {
    "writing-plugins.md": "writing plugins: tools, providers, commands, context sources, event hooks",
    "architecture.md": "how pi-host is built (host, plugins, protocol)",
    "context.md": "system prompt, AGENTS.md, skills, prompt templates, settings, project trust",
    "providers.md": "providers, models.json, API keys",
    "sessions.md": "session files, branching, compaction",
    "tools.md": "the built-in tools",
    "debugging.md": "diagnosing runs and plugins",
}
"""Topic lines for known doc files; other files are indexed by their first heading."""


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _text_or_file(value: str, cwd: str) -> str:
    """A flag value, or the contents of the file it names."""
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    if len(value) < 4096 and os.path.isfile(path):
        text = _read_text(path)
        if text is not None:
            return text
    return value


def _first_prompt_file(name: str, cwd: str, agent_dir: str, trusted: bool) -> str | None:
    """The text of the project's ``.pi/<name>`` (trusted projects only), else the agent dir's."""
    candidates = ([os.path.join(cwd, ".pi", name)] if trusted else []) + [os.path.join(agent_dir, name)]
    for path in candidates:
        text = _read_text(path)
        if text is not None:
            return text
    return None


def custom_prompt(cwd: str, agent_dir: str, flag: Any, trusted: bool) -> str | None:
    if isinstance(flag, str) and flag:
        return _text_or_file(flag, cwd)
    return _first_prompt_file("SYSTEM.md", cwd, agent_dir, trusted)


def append_text(cwd: str, agent_dir: str, flag: Any, trusted: bool) -> str | None:
    values = [_text_or_file(v, cwd) for v in string_list(flag) if v]
    if values:
        return "\n\n".join(v.strip("\n") for v in values)
    text = _first_prompt_file("APPEND_SYSTEM.md", cwd, agent_dir, trusted)
    return text.strip("\n") if text is not None else None


def visible_tools(tools: dict[str, Any]) -> list[Any]:
    """Active tools in their order, minus those a loadout hides."""
    return [tool for tool in tools.values() if not getattr(tool, "hidden", False)]


def tools_body(tools: list[Any]) -> str:
    lines = [f"- {t.name}: {t.prompt_snippet}" for t in tools if getattr(t, "prompt_snippet", None)]
    return "\n".join(lines or ["(none)"]) + "\n\n" + MORE_TOOLS


def rules_body(tools: list[Any], extra_guidelines: list[str] = ()) -> str:  # type: ignore[assignment]
    names = {t.name for t in tools}
    rules: list[str] = []
    if names & {"bash", "powershell"} and not names & {"grep", "find", "ls"}:
        rules.append(SHELL_SEARCH_RULE)
    for tool in tools:
        rules.extend(str(g) for g in getattr(tool, "prompt_guidelines", None) or ())
    rules.extend(extra_guidelines)
    rules.extend(FINAL_RULES)
    unique = list(dict.fromkeys(r.strip() for r in rules if r and r.strip()))
    return "\n".join(f"- {rule}" for rule in unique)


def package_dir() -> str:
    """Where pi-host's README, docs and examples live (``PI_PACKAGE_DIR`` overrides)."""
    override = os.environ.get("PI_PACKAGE_DIR")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    import pi_host

    return os.path.dirname(os.path.dirname(os.path.abspath(pi_host.__file__)))


def _doc_topic(path: str, name: str) -> str:
    known = DOC_TOPICS.get(name)
    if known:
        return known
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _ in range(20):
                line = handle.readline()
                if not line:
                    break
                if line.startswith("# "):
                    return line[2:].strip()
    except OSError:
        pass
    return name[: -len(".md")]


@lru_cache(maxsize=8)
def docs_body(root: str) -> str:
    """Where the docs are and a topic index of ``<root>/docs/*.md`` (read once per process)."""
    docs = os.path.join(root, "docs")
    lines = [
        "Documentation of pi-host itself. Read it only when the user asks about pi or pi-host "
        "(its configuration, plugins, skills, prompt templates, sessions, providers), not for "
        "ordinary coding work.",
        f"- README: {os.path.join(root, 'README.md')}",
        f"- Documentation: {docs}",
        f"- Plugin examples: {os.path.join(root, 'extension_examples')}",
    ]
    try:
        names = sorted(n for n in os.listdir(docs) if n.endswith(".md"))
    except OSError:
        names = []
    if names:
        lines += ["", "Topics:"]
        lines += [f"- {_doc_topic(os.path.join(docs, n), n)}: {os.path.join(docs, n)}" for n in names]
    return "\n".join(lines)


def prompt_texts(
    cwd: str, agent_dir: str, system_prompt_flag: Any, append_flag: Any, trusted: bool
) -> tuple[str | None, str | None]:
    """The custom prompt and the append text (either None), from flags and files."""
    return (
        custom_prompt(cwd, agent_dir, system_prompt_flag, trusted),
        append_text(cwd, agent_dir, append_flag, trusted),
    )


def assemble(
    custom: str | None,
    addendum: str | None,
    tools: dict[str, Any],
    extra_guidelines: list[str] = (),  # type: ignore[assignment]
) -> dict[str, str]:
    """The head sections in prompt order: preamble, then tools/rules/docs (default prompt only),
    then addendum."""
    sections: dict[str, str] = {}
    if custom is not None:
        sections["preamble"] = custom
    else:
        shown = visible_tools(tools)
        sections["preamble"] = PREAMBLE
        sections["tools"] = wrap_section("tools", tools_body(shown))
        sections["rules"] = wrap_section("rules", rules_body(shown, extra_guidelines))
        sections["docs"] = wrap_section("docs", docs_body(package_dir()))
    if addendum:
        sections["addendum"] = wrap_section("addendum", addendum)
    return sections


def head_sections(
    *,
    cwd: str,
    agent_dir: str,
    tools: dict[str, Any],
    system_prompt_flag: Any = None,
    append_flag: Any = None,
    trusted: bool = True,
    extra_guidelines: list[str] = (),  # type: ignore[assignment]
) -> dict[str, str]:
    custom, addendum = prompt_texts(cwd, agent_dir, system_prompt_flag, append_flag, trusted)
    return assemble(custom, addendum, tools, extra_guidelines)


def cwd_section(cwd: str) -> dict[str, str]:
    return {"cwd": wrap_section("cwd", cwd.replace("\\", "/"))}
