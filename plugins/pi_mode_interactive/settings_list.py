"""The entries of ``/settings``: the same list, order and settings.json keys as pi 1.6.0's settings
screen, each with a one-line description of our own.

An entry either cycles through a few values (Enter or Space in the list) or opens a sub-menu
(``theme``, ``warnings``, ``model-thinking``). Values are shown as pi shows them (``true``,
``1 min``, ``Always trust``) and stored as pi stores them (booleans, milliseconds, ``always``).
Settings pi-host has no behaviour for are still written faithfully, so a pi started on the same
agent dir finds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.config.settings import get as get_dotted


def _bool_shown(value: Any) -> str:
    return "true" if value is True else "false"


def _bool_stored(shown: str) -> Any:
    return shown == "true"


def _plain(value: Any) -> str:
    return str(value)


def _same(shown: str) -> Any:
    return shown


def _int_stored(shown: str) -> Any:
    return int(shown)


@dataclass(frozen=True)
class Entry:
    id: str
    label: str
    description: str
    key: str
    """Dotted key in settings.json (for a sub-menu: the key it edits)."""
    default: Any
    values: tuple[str, ...] = ()
    """The shown values Enter cycles through; empty for a sub-menu entry."""
    shown: Callable[[Any], str] = _plain
    """Stored value → shown value."""
    stored: Callable[[str], Any] = _same
    """Shown value → stored value."""
    submenu: bool = False
    extra_values: Callable[[Any], tuple[str, ...]] = field(default=lambda stored: ())
    """Shown values added for what the file holds (a custom wheel step), so cycling starts there."""

    def current(self, settings: dict[str, Any]) -> Any:
        return get_dotted(settings, self.key, self.default)

    def choices(self, settings: dict[str, Any]) -> tuple[str, ...]:
        return self.values + tuple(
            v for v in self.extra_values(self.current(settings)) if v not in self.values
        )


def _boolean(entry_id: str, label: str, description: str, key: str, default: bool) -> Entry:
    return Entry(entry_id, label, description, key, default, ("true", "false"), _bool_shown, _bool_stored)


def _choice(
    entry_id: str, label: str, description: str, key: str, default: str, values: tuple[str, ...]
) -> Entry:
    return Entry(entry_id, label, description, key, default, values)


# --- values with a shown form of their own ------------------------------------------------------

HTTP_IDLE_CHOICES = (
    ("30 sec", 30_000),
    ("1 min", 60_000),
    ("2 min", 120_000),
    ("5 min", 300_000),
    ("disabled", 0),
)


def _idle_shown(value: Any) -> str:
    for label, ms in HTTP_IDLE_CHOICES:
        if value == ms:
            return label
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value / 1000:g} sec"  # a value set by hand keeps its own name
    return "5 min"


def _idle_stored(shown: str) -> Any:
    return dict(HTTP_IDLE_CHOICES)[shown]


TRUST_LABELS = {"ask": "Ask", "always": "Always trust", "never": "Never trust"}


def _trust_shown(value: Any) -> str:
    return TRUST_LABELS.get(str(value), "Ask")


def _trust_stored(shown: str) -> Any:
    return {label: value for value, label in TRUST_LABELS.items()}[shown]


def _quiet_shown(value: Any) -> str:
    return "header" if value == "header" else _bool_shown(value)


def _quiet_stored(shown: str) -> Any:
    return "header" if shown == "header" else shown == "true"


def _wheel_stored(shown: str) -> Any:
    return "auto" if shown == "auto" else int(shown)


def _wheel_extra(stored: Any) -> tuple[str, ...]:
    return (str(stored),) if isinstance(stored, int) and not isinstance(stored, bool) else ()


def _model_levels_shown(value: Any) -> str:
    count = len(value) if isinstance(value, dict) else 0
    return f"{count} configured" if count else "none"


# --- the list -----------------------------------------------------------------------------------

ENTRIES: tuple[Entry, ...] = (
    _boolean(
        "autocompact",
        "Auto-compact",
        "Summarize older messages on its own once the context is nearly full",
        "compaction.enabled",
        True,
    ),
    _boolean(
        "auto-resize-images",
        "Auto-resize images",
        "Scale big images down (2000x2000 at most) before a model sees them",
        "images.autoResize",
        True,
    ),
    _boolean(
        "block-images", "Block images", "Never send an image to a model provider", "images.blockImages", False
    ),
    _boolean(
        "skill-commands",
        "Skill commands",
        "Offer each skill as a /skill:<name> command",
        "enableSkillCommands",
        True,
    ),
    _boolean(
        "show-hardware-cursor",
        "Show hardware cursor",
        "Show the terminal's own cursor in the editor instead of a drawn one",
        "showHardwareCursor",
        False,
    ),
    Entry(
        "editor-padding",
        "Editor padding",
        "Blank columns left and right of the editor (0 to 3)",
        "editorPaddingX",
        0,
        ("0", "1", "2", "3"),
        stored=_int_stored,
    ),
    Entry(
        "output-padding",
        "Output padding",
        "Blank columns left of messages, tool output and command output",
        "outputPad",
        1,
        ("0", "1"),
        stored=_int_stored,
    ),
    Entry(
        "autocomplete-max-visible",
        "Autocomplete max items",
        "How many rows the completion menu shows (3 to 20)",
        "autocompleteMaxVisible",
        5,
        ("3", "5", "7", "10", "15", "20"),
        stored=_int_stored,
    ),
    _boolean(
        "clear-on-shrink",
        "Clear on shrink",
        "Erase rows left empty when the screen gets shorter (can flicker)",
        "terminal.clearOnShrink",
        False,
    ),
    _boolean(
        "terminal-progress",
        "Terminal progress",
        "Report progress to the terminal's tab or title bar (OSC 9;4)",
        "terminal.showTerminalProgress",
        False,
    ),
    _choice(
        "steering-mode",
        "Steering mode",
        "Messages sent with Enter while the agent works: one per turn, or all together",
        "steeringMode",
        "one-at-a-time",
        ("one-at-a-time", "all"),
    ),
    _choice(
        "follow-up-mode",
        "Follow-up mode",
        "Messages queued with Alt+Enter for after the run: one per turn, or all together",
        "followUpMode",
        "one-at-a-time",
        ("one-at-a-time", "all"),
    ),
    _choice(
        "transport",
        "Transport",
        "How to reach providers that offer several transports",
        "transport",
        "auto",
        ("sse", "websocket", "websocket-cached", "auto"),
    ),
    _choice(
        "share-destination",
        "Session share destination",
        "Where /share uploads a session (auto: Radius when signed in, else a GitHub gist)",
        "sessionShareDestination",
        "auto",
        ("auto", "gist", "radius"),
    ),
    Entry(
        "http-idle-timeout",
        "HTTP idle timeout",
        "Give up on a provider that sends nothing for this long (disable for slow local models)",
        "httpIdleTimeoutMs",
        300_000,
        tuple(label for label, _ms in HTTP_IDLE_CHOICES),
        _idle_shown,
        _idle_stored,
    ),
    _choice(
        "cache-warming-mode",
        "Cache warming",
        "Keep the provider's prompt cache warm: never, while the agent runs, or also between runs",
        "cacheWarming",
        "idle",
        ("off", "streaming", "idle"),
    ),
    _boolean(
        "hide-thinking",
        "Hide thinking",
        "Leave the model's thinking out of the transcript",
        "hideThinkingBlock",
        False,
    ),
    _choice(
        "mermaid-rendering",
        "Mermaid diagrams",
        "Draw Mermaid code blocks as text diagrams: never, once finished, or while streaming",
        "markdown.mermaid",
        "streaming",
        ("off", "final", "streaming"),
    ),
    _boolean(
        "cache-miss-notices",
        "Cache miss notices",
        "Note in the transcript when the prompt cache missed or a provider recovered",
        "showCacheMissNotices",
        False,
    ),
    _boolean(
        "collapse-changelog",
        "Collapse changelog",
        "After an update, show the changes in short form",
        "collapseChangelog",
        False,
    ),
    Entry(
        "quiet-startup",
        "Quiet startup",
        "Print less at start (header: only the header, without the loaded resources)",
        "quietStartup",
        False,
        ("true", "header", "false"),
        _quiet_shown,
        _quiet_stored,
    ),
    _boolean(
        "install-telemetry",
        "Install telemetry",
        "After an update, send an anonymous version ping",
        "enableInstallTelemetry",
        True,
    ),
    Entry(
        "default-project-trust",
        "Default project trust",
        "What to do with a project's .pi/ resources when nothing else has decided",
        "defaultProjectTrust",
        "ask",
        tuple(TRUST_LABELS.values()),
        _trust_shown,
        _trust_stored,
    ),
    _choice(
        "double-escape-action",
        "Double-escape action",
        "What Escape twice on an empty editor opens",
        "doubleEscapeAction",
        "tree",
        ("tree", "fork", "none"),
    ),
    _choice(
        "tree-filter-mode",
        "Tree filter mode",
        "The filter /tree starts with",
        "treeFilterMode",
        "default",
        ("default", "no-tools", "user-only", "labeled-only", "all"),
    ),
    Entry(
        "warnings",
        "Warnings",
        "Turn single warnings on or off",
        "warnings",
        None,
        shown=lambda value: "configure",
        submenu=True,
    ),
    Entry(
        "model-thinking",
        "Default thinking level per model",
        "A thinking level a model starts with, instead of the global default",
        "modelThinkingLevels",
        None,
        shown=_model_levels_shown,
        submenu=True,
    ),
    _choice(
        "tui-mode",
        "TUI mode",
        "Screen layout: regular keeps the terminal's scrollback, fullscreen takes the window",
        "tuiMode",
        "regular",
        ("regular", "fullscreen"),
    ),
    _choice(
        "fullscreen-exit-output",
        "Fullscreen exit output",
        "On leaving fullscreen, print the transcript or only how to resume",
        "fullscreenExitOutput",
        "transcript",
        ("transcript", "resume-hint"),
    ),
    _choice(
        "fullscreen-scrollbar",
        "Fullscreen scrollbar",
        "When fullscreen shows a scrollbar (no effect in regular mode)",
        "fullscreenScrollbar",
        "auto",
        ("auto", "always", "hidden"),
    ),
    _boolean(
        "fullscreen-copy-on-select",
        "Fullscreen copy on select",
        "Copy text as soon as it is selected in fullscreen (off: copy with Ctrl+X)",
        "fullscreenCopyOnSelect",
        True,
    ),
    Entry(
        "fullscreen-wheel-scroll-lines",
        "Fullscreen wheel scrolling",
        "Lines one mouse-wheel step scrolls in fullscreen (auto: faster for fast spins)",
        "fullscreenWheelScrollLines",
        "auto",
        ("auto", "1", "2", "3", "5", "10"),
        stored=_wheel_stored,
        extra_values=_wheel_extra,
    ),
    Entry(
        "theme",
        "Theme",
        "Colours of the interface (moving over a theme previews it)",
        "theme",
        "system",
        submenu=True,
    ),
)
"""pi 1.6.0's settings screen in a terminal without inline images (pi adds two image-size entries
only where it can draw images; pi-host draws none)."""

BY_ID = {entry.id: entry for entry in ENTRIES}


def shown_value(entry: Entry, settings: dict[str, Any]) -> str:
    """What the list shows for ``entry`` under the merged ``settings``."""
    return entry.shown(entry.current(settings))


def next_value(entry: Entry, settings: dict[str, Any]) -> tuple[str, Any]:
    """The value Enter moves ``entry`` to: ``(shown, stored)``; after the last comes the first."""
    choices = entry.choices(settings)
    now = shown_value(entry, settings)
    following = choices[(choices.index(now) + 1) % len(choices)] if now in choices else choices[0]
    return following, entry.stored(following)
