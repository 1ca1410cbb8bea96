"""Keys plugins register (``Shortcut`` items from ``register_commands``; pi's
``registerShortcut``), bound after the built-in keys with pi's conflict rules."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from pi_host.plugins.registrations import Shortcut
from pi_mode_interactive.editor.keys import KeySpecError, normalize_key, to_prompt_toolkit

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

RESERVED = frozenset(
    (
        "app.interrupt app.clear app.exit app.suspend app.thinking.cycle app.model.cycleForward "
        "app.model.cycleBackward app.model.select app.tools.expand app.thinking.toggle "
        "app.editor.external app.message.copy app.message.followUp tui.input.submit "
        "tui.select.confirm tui.select.cancel tui.input.copy tui.editor.deleteToLineEnd"
    ).split()
)
"""pi's editor-global actions: a plugin key that one of them uses is refused."""


def plugin_shortcuts(
    ui: Screen, keymap: dict[str, list[str]]
) -> tuple[dict[str, tuple[str, Shortcut]], list[str]]:
    """``{normalised key: (plugin, shortcut)}`` that may be bound, and one warning per problem."""
    builtin: dict[str, tuple[str, bool]] = {}
    for action, keys in keymap.items():
        for key in keys:
            reserved = action in RESERVED
            if builtin.get(key, ("", False))[1] and not reserved:
                continue  # a reserved action keeps the key whatever the order
            builtin[key] = (action, reserved)
    chosen: dict[str, tuple[str, Shortcut]] = {}
    problems: list[str] = []
    for plugin, item in ui.session.host.collect_named("register_commands"):
        if not isinstance(item, Shortcut):
            continue
        try:
            key = normalize_key(item.key)
            to_prompt_toolkit(key)
        except KeySpecError as exc:
            problems.append(f"Shortcut {item.key!r} from {plugin}: {exc}; skipped")
            continue
        action, reserved = builtin.get(key, ("", False))
        if reserved:
            problems.append(f"Shortcut {item.key!r} from {plugin} conflicts with built-in {action}; skipped")
            continue
        if action:
            problems.append(f"Shortcut {item.key!r} from {plugin} replaces built-in {action}")
        if key in chosen:
            problems.append(
                f"Shortcut {item.key!r} registered by {chosen[key][0]} and {plugin}; {plugin}'s wins"
            )
        chosen[key] = (plugin, item)
    return chosen, problems


def bind(ui: Screen, bindings: Any, keymap: dict[str, list[str]], condition: Any) -> list[str]:
    """Bind the plugins' keys (after the built-ins, so a key they share is the plugin's)."""
    chosen, problems = plugin_shortcuts(ui, keymap)
    ui.plugin_keys = [(key, item.description or plugin) for key, (plugin, item) in chosen.items()]
    for key, (plugin, item) in chosen.items():
        bindings.add(*to_prompt_toolkit(key), filter=condition)(
            lambda event, plugin=plugin, item=item: ui.spawn(run(ui, plugin, item))
        )
    return problems


async def run(ui: Screen, plugin: str, item: Shortcut) -> None:
    """The handler with the current session's ``ctx``; a failure is reported under its plugin."""
    session = ui.session
    try:
        result = item.handler(session.ctx)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        session.host.report(plugin, "shortcut", f"{item.key}: {type(exc).__name__}: {exc}")
        ui.notice(f"Shortcut handler error ({plugin}, {item.key}): {exc}", "error")
