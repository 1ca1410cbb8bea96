"""Which theme the interactive app draws with: the setting or ``--use-theme``, and the theme
files ``--theme``/``--no-themes`` allow."""

from __future__ import annotations

from typing import Any


def cli_flag(session: Any, name: str) -> Any:
    return (getattr(session.config, "flags", None) or {}).get(name)


def load_theme_for(session: Any, name: Any, agent_dir: Any, cwd: Any) -> tuple[Any, list[str]]:
    """``--no-themes``: the built-ins only; ``--theme <path>``: files searched first."""
    from pi_host.lib.render.themes import load_theme

    no_themes = cli_flag(session, "no-themes")
    if no_themes and name not in (None, "system", "dark", "light"):
        name = None  # a built-in name never reads a theme file
    trusted = bool(getattr(session.config, "project_trusted", True))
    paths = () if no_themes else tuple(cli_flag(session, "theme") or ())
    return load_theme(name, agent_dir=agent_dir, cwd=cwd, project_trusted=trusted, paths=paths)


def startup_theme(session: Any, agent_dir: Any, cwd: Any) -> tuple[Any, list[str]]:
    """The theme a run starts with, and the problems to show at start."""
    settings = session.config.settings or {}
    theme, problems = load_theme_for(
        session, cli_flag(session, "use-theme") or settings.get("theme"), agent_dir, cwd
    )
    layout = cli_flag(session, "tui-mode")
    if layout not in (None, "", "regular", "fullscreen"):
        problems.append(f"--tui-mode {layout}: one of regular, fullscreen")
    return theme, problems


def layout_setting(session: Any) -> str:
    """``--tui-mode`` or the ``tuiMode`` setting: ``fullscreen`` starts in the transcript view;
    pi-host's default stays ``regular`` (inline, the terminal's own scrollback)."""
    chosen = cli_flag(session, "tui-mode") or (session.config.settings or {}).get("tuiMode")
    return "fullscreen" if chosen == "fullscreen" else "regular"
