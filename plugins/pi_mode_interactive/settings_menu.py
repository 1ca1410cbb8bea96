"""``/settings``: pi's settings screen. Type to search, Enter or Space changes the highlighted
entry (saved at once to ``<agent dir>/settings.json``, re-read under its lock, unknown keys kept),
Escape closes. Three entries open a sub-menu: the theme (each theme is previewed while the
cursor is on it; Escape puts the theme back), the warnings, and per-model thinking levels.

What the open session can follow is applied at once (theme, hidden thinking, steering and
follow-up modes; the rest is read from the settings where it is used, or at the next start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_mode_interactive import settings_list
from pi_mode_interactive.settings_view import PreviewDialog, SettingsDialog

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

AUTOMATIC = "/"
"""The theme menu's "automatic" row: a light and a dark theme, stored as ``light/dark``."""

CLEAR = "__clear__"
"""The level picker's "(clear override)" row (None would read as Escape)."""

WARNINGS = (
    settings_list.Entry(
        "anthropic-extra-usage",
        "Anthropic extra usage",
        "Warn when signing in to Anthropic with a subscription may bill extra usage",
        "warnings.anthropicExtraUsage",
        True,
        ("true", "false"),
        lambda value: "true" if value is True else "false",
        lambda shown: shown == "true",
    ),
)


class SettingsState:
    """The settings as the list shows them, and the changes saved during this ``/settings``."""

    def __init__(self, ui: Screen) -> None:
        from pi_host.config.settings import user_settings_path

        self.ui = ui
        self.saved: dict[str, Any] = {}
        self.path = user_settings_path()

    @property
    def settings(self) -> dict[str, Any]:
        config = self.ui.session.config
        if config.settings is None:
            config.settings = {}
        return config.settings

    def view(self) -> dict[str, Any]:
        """The merged settings with what is in effect where a flag overrides the file
        (``--use-theme``, ``--tui-mode``), as pi shows the running state."""
        from pi_mode_interactive import theming

        shown = dict(self.settings)
        shown["theme"] = self.theme_setting()
        shown["tuiMode"] = theming.layout_setting(self.ui.session)
        return shown

    def theme_setting(self) -> str:
        from pi_mode_interactive.theming import cli_flag

        chosen = cli_flag(self.ui.session, "use-theme") or self.settings.get("theme")
        return chosen if isinstance(chosen, str) and chosen.strip() else "system"

    # --- the list's callbacks -------------------------------------------------------------------

    def rows(
        self, entries: tuple[settings_list.Entry, ...] = settings_list.ENTRIES
    ) -> list[tuple[str, str, str]]:
        view = self.view()
        return [(entry.id, entry.label, settings_list.shown_value(entry, view)) for entry in entries]

    def activate(self, entry: settings_list.Entry) -> bool:
        """Enter on ``entry``: the next value, saved. False for an entry with a sub-menu."""
        if entry.submenu:
            return False
        _shown, stored = settings_list.next_value(entry, self.view())
        self.save({entry.key: stored})
        return True

    def save(self, changes: dict[str, Any]) -> bool:
        from pi_host.config.settings import update_user_settings

        try:
            update_user_settings(changes)
        except (OSError, ValueError) as exc:
            self.ui.notice(f"Could not save settings: {exc}", "error")
            return False
        from pi_host.config.settings import DELETE, set_dotted

        for key, value in changes.items():
            if value is DELETE:
                self.settings.pop(key, None)  # only whole top-level keys are deleted here
                value = None
            else:
                set_dotted(self.settings, key, value)  # this run follows it where settings are read live
            self.saved[key] = value
        apply_now(self.ui, changes)
        return True

    def report(self) -> None:
        if not self.saved:
            return
        shown = ", ".join(f"{key} = {_plain(value)}" for key, value in self.saved.items())
        self.ui.notice(f"Saved {shown} to {self.path}")


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return "(removed)" if value is None else str(value)


async def settings(ui: Screen, args: str = "") -> None:
    """The settings list until Escape; a sub-menu entry closes it, runs, and reopens it on the
    same entry with the same search."""
    state = SettingsState(ui)
    chosen: str | None = None
    query = ""
    while True:
        dialog = SettingsDialog(
            state.rows,
            lambda entry_id: state.activate(settings_list.BY_ID[entry_id]),
            lambda entry_id: settings_list.BY_ID[entry_id].description,
            ui.paint,
            initial=chosen,
            query=query,
        )
        picked = await ui.ask(dialog)
        if picked is None:
            break
        chosen, query = picked, dialog.picker.query
        await SUBMENUS[picked](ui, state)
    state.report()


# --- sub-menus --------------------------------------------------------------------------------------


def preview_theme(ui: Screen, setting: str) -> None:
    """Draw with ``setting`` now without saving it (the footer is drawn again too)."""
    ui.apply_theme(setting)
    ui.footer_generation += 1  # the footer is cached by what it shows, not by its colours


def _theme_names(ui: Screen) -> list[str]:
    from pi_host.lib.render.themes import available_themes
    from pi_mode_interactive.theming import cli_flag

    trusted = bool(getattr(ui.session.config, "project_trusted", True))
    if cli_flag(ui.session, "no-themes"):
        return ["system", "dark", "light"]  # theme files are not read in this run
    paths = tuple(cli_flag(ui.session, "theme") or ())
    return available_themes(ui.agent_dir, ui.cwd, trusted, paths=paths)


def _theme_rows(names: list[str], current: str, automatic: bool = False) -> list[tuple[Any, str, str]]:
    """Rows of a theme menu: the current one ticked, labels padded so the notes line up;
    ``automatic`` adds that row after ``system``, as pi orders them."""
    rows: list[tuple[Any, str, str]] = [
        (
            name,
            ("✓ " if name == current else "  ") + name,
            "built from the terminal's own colours" if name == "system" else "",
        )
        for name in names
    ]
    if automatic:
        rows.insert(1, (AUTOMATIC, "  automatic", "a light and a dark theme, following the terminal"))
    width = max(len(label) for _value, label, _note in rows)
    return [(value, label.ljust(width), note) for value, label, note in rows]


async def _theme(ui: Screen, state: SettingsState) -> None:
    """One theme, or "automatic" (a light and a dark one, as the terminal's background says).
    Every row previews as the cursor reaches it; Escape restores the theme of before."""
    original = state.theme_setting()
    names = _theme_names(ui)
    single = original if AUTOMATIC not in original else None
    rows = _theme_rows(names, single or "", automatic=True)

    def preview(value: Any) -> None:
        preview_theme(ui, original if value == AUTOMATIC else str(value))

    picked = await ui.ask(PreviewDialog("Theme", rows, preview, initial=single or AUTOMATIC))
    if picked is None:
        preview_theme(ui, original)
        return
    if picked == AUTOMATIC:
        pair = original.split(AUTOMATIC) if AUTOMATIC in original else [original, original]
        light = await _pick_theme(ui, "Light theme (used on a light terminal)", names, pair[0], preview)
        dark = (
            None
            if light is None
            else await _pick_theme(ui, "Dark theme (used on a dark terminal)", names, pair[-1], preview)
        )
        if light is None or dark is None:
            preview_theme(ui, original)
            return
        picked = f"{light}{AUTOMATIC}{dark}"
    if picked == original:
        preview_theme(ui, original)
        return
    state.save({"theme": picked})


async def _pick_theme(
    ui: Screen, title: str, names: list[str], current: str, preview: Callable[[Any], None]
) -> str | None:
    current = current.strip()
    return await ui.ask(PreviewDialog(title, _theme_rows(names, current), preview, initial=current))


async def _warnings(ui: Screen, state: SettingsState) -> None:
    by_id = {entry.id: entry for entry in WARNINGS}
    await ui.ask(
        SettingsDialog(
            lambda: state.rows(WARNINGS),
            lambda entry_id: state.activate(by_id[entry_id]),
            lambda entry_id: by_id[entry_id].description,
            ui.paint,
            title="Warnings",
        )
    )


async def _model_thinking(ui: Screen, state: SettingsState) -> None:
    """Pick a model, then its level (or clear it); back to the models until Escape."""
    from pi_host.lib.llm.tokens import supported_levels

    session = ui.session
    models = list(session.registry.available(session.model))
    current = f"{session.model.provider}/{session.model.id}" if session.model is not None else None
    models.sort(key=lambda m: (f"{m.provider}/{m.id}" != current, m.provider))
    picked_key = current
    while True:
        levels = state.settings.get("modelThinkingLevels")
        levels = levels if isinstance(levels, dict) else {}
        rows = [(m, f"{m.id} [{m.provider}]", str(levels.get(f"{m.provider}/{m.id}") or "")) for m in models]
        if not rows:
            ui.notice("No models available: log in to a provider or configure an API key first", "warning")
            return
        initial = next((m for m in models if f"{m.provider}/{m.id}" == picked_key), None)
        model = await ui.pick("Per-model thinking level (choose a model)", rows, initial=initial)
        if model is None:
            return
        key = picked_key = f"{model.provider}/{model.id}"
        choices = [
            (level, ("✓ " if levels.get(key) == level else "  ") + level, "")
            for level in supported_levels(model)
        ]
        if key in levels:
            fallback = state.settings.get("defaultThinkingLevel") or "medium"
            choices.append((CLEAR, "  (clear override)", f"back to the global default ({fallback})"))
        level = await ui.pick(
            f"Thinking level for {model.id} [{model.provider}]", choices, initial=levels.get(key)
        )
        if level is not None:
            await _save_model_level(ui, state, model, key, None if level == CLEAR else level)


async def _save_model_level(
    ui: Screen, state: SettingsState, model: Any, key: str, level: str | None
) -> None:
    """The whole ``modelThinkingLevels`` object is written (a model id may hold dots, which a
    dotted key would split); the open session takes the level if it is its model."""
    from pi_host.config.settings import DELETE
    from pi_host.runtime.models import DEFAULT_LEVEL, set_level

    levels = dict(state.settings.get("modelThinkingLevels") or {})
    if level is None:
        levels.pop(key, None)
    else:
        levels[key] = level
    if not state.save({"modelThinkingLevels": levels or DELETE}):
        return
    session = ui.session
    if session.model is not None and (session.model.provider, session.model.id) == (model.provider, model.id):
        await set_level(session, level or str(state.settings.get("defaultThinkingLevel") or DEFAULT_LEVEL))


SUBMENUS = {"theme": _theme, "warnings": _warnings, "model-thinking": _model_thinking}


def apply_now(ui: Screen, changes: dict[str, Any]) -> None:
    """Settings the open session can follow at once; the rest apply where they are read."""
    if "hideThinkingBlock" in changes:
        ui.transcript.show_thinking = not changes["hideThinkingBlock"]
    if "theme" in changes:
        preview_theme(ui, changes["theme"])
    config = ui.session.config
    for key, attribute in (("steeringMode", "steering_mode"), ("followUpMode", "follow_up_mode")):
        if key in changes and hasattr(config, attribute):
            setattr(config, attribute, changes[key])
            setattr(ui.session.agent, attribute, changes[key])  # read at each poll of a run
