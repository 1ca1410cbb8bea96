"""What interactive mode prints once at start, above the conversation: theme problems, the
banner (version, key hints, model) and the loaded resources in sections, as pi does: ``[Context]``
(AGENTS.md and friends), ``[Skills]``, ``[Prompts]``, ``[Extensions]`` and ``[Themes]`` (problems).

``quietStartup: true`` hides the banner and the sections, ``"header"`` keeps the banner's first
line only; ``--verbose`` shows everything whatever the setting says.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import TYPE_CHECKING, Any

from pi_host.lib.render import safe_for_terminal

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

LISTED_PLUGIN_SOURCES = ("installed", "global", "project", "cli")
"""Plugins the user added (not the built-ins nor an SDK caller's): the ``[Extensions]`` section."""


def show(app: Screen) -> None:
    app.show_messages()
    quiet = quiet_setting(app)
    if quiet is True or quiet == "header":  # no section to hold them: one warning line each
        for line in app.theme_problems:
            app.notice(line, "warning")
    if quiet is True:
        return
    version = getattr(sys.modules.get("pi_host"), "__version__", "")
    model = app.session.model
    hint = "esc interrupt · ctrl+c clear · ctrl+d exit · /hotkeys for keys"
    title = app.paint("accent", f"pi-host {version}".strip())
    label = "model: " + (model.key if model else "none (set one with --model)")
    banner = f"{title} {app.paint('muted', hint)}"
    if quiet != "header":  # "header" keeps the version and key hints only, as pi
        banner += "\n" + app.paint("muted", label)
    app.add_item(lambda rc: app.fit(banner, rc))
    if quiet != "header":
        # templates and skills are listed by their (possibly async) sources: the editor does
        # not wait for them
        app.spawn(_show_resources(app))


def quiet_setting(app: Screen) -> Any:
    args = getattr(app.request, "args", None)
    if getattr(args, "verbose", False):
        return False
    return (app.session.config.settings or {}).get("quietStartup")


async def _show_resources(app: Screen) -> None:
    sections = await loaded_resources(app.session, app.cwd)
    if app.theme_problems:
        sections.append(("Themes", list(app.theme_problems)))
    lines = []
    for title, items in sections:
        if not items:
            continue
        if lines:
            lines.append("")
        # names come from files and plugins: cleaned before they reach the terminal
        cleaned = [safe_for_terminal(item) for item in items]
        lines.append(app.paint("accent", f"[{title}]"))
        body = ", ".join(cleaned) if title != "Themes" else "\n  ".join(cleaned)
        lines.append("  " + (body if title != "Themes" else app.paint("warning", body)))
    if lines:
        text = "\n".join(lines)
        app.add_item(lambda rc: app.fit(text, rc))


async def loaded_resources(session: Any, cwd: str) -> list[tuple[str, list[str]]]:
    """``[(section, names)]``: context files, skills, prompt templates, extensions."""
    context: list[str] = []
    skills: list[str] = []
    prompts: list[str] = []
    for source in getattr(session, "context_sources", None) or ():
        for capability, found in (("context_files", context), ("commands", None)):
            lister = getattr(source, capability, None)
            if lister is None:
                continue
            try:
                listed = lister(session.ctx)
                if inspect.isawaitable(listed):
                    listed = await listed
            except Exception as exc:  # a failing source is reported and left out
                session.report(source, capability, exc)
                continue
            if found is not None:
                found.extend(shown_path(str(path), cwd) for path in listed or ())
                continue
            for item in listed or ():
                if not isinstance(item, dict) or not item.get("name"):
                    continue
                if item.get("source") == "skill":
                    skills.append(str(item["name"]).removeprefix("skill:"))
                elif item.get("source") == "prompt":
                    prompts.append("/" + str(item["name"]))
    return [
        ("Context", context),
        ("Skills", sorted(skills)),
        ("Prompts", sorted(prompts)),
        ("Extensions", extensions(session.host)),
    ]


def extensions(host: Any) -> list[str]:
    names = []
    for record in getattr(host, "records", None) or ():
        if record.source in LISTED_PLUGIN_SOURCES and record.error is None and not record.disabled:
            origin = record.origin or ""
            names.append(os.path.basename(origin.rstrip("/")) if os.sep in origin else record.name)
    return names


def shown_path(path: str, cwd: str) -> str:
    """A path under the working directory relative to it, one under home with ``~``."""
    absolute = os.path.abspath(path)
    if absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, cwd)
    home = os.path.expanduser("~")
    if home not in ("", "/") and absolute.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + absolute[len(home) :]
    return absolute
