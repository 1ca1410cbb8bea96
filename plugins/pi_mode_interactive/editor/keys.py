"""pi's keybinding action ids, their default keys, ``keybindings.json`` loading and conversion of
pi key names (``ctrl+c``, ``alt+enter``, ``shift+tab``...) to prompt_toolkit key sequences.

Key syntax (pi): ``modifier+key`` with modifiers ``ctrl``, ``shift``, ``alt``, ``super`` in any
order and combination; keys ``a-z``, ``0-9``, ``escape``/``esc``, ``enter``/``return``, ``tab``,
``space``, ``backspace``, ``delete``, ``insert``, ``clear``, ``home``, ``end``, ``pageUp``,
``pageDown``, ``up``, ``down``, ``left``, ``right``, ``f1``-``f12`` and the symbols
`` ` - = [ ] \\ ; ' , . / ! @ # $ % ^ & * ( ) _ + | ~ { } : < > ? ``.

A plain terminal cannot report every combination pi's syntax can name. ``to_prompt_toolkit``
raises :class:`UnsupportedKey` for those (``super+…``, ``ctrl+shift+<letter>``,
``ctrl+backspace``, ``ctrl+enter``, ``shift+<digit>``...). :func:`bindings_for` silently skips
them for defaults; :func:`load_keybindings` reports them when the user configured them.

Shift+Enter
-----------
Legacy terminals send the same ``\\r`` for Enter and Shift+Enter. Terminals with extended key
reporting send ``ESC [ 13 ; 2 u`` (CSI-u: kitty, WezTerm, Ghostty, foot, tmux ``extended-keys``,
the VS Code mapping pi recommends) or ``ESC [ 27 ; 2 ; 13 ~`` (xterm ``modifyOtherKeys``).
prompt_toolkit knows no Shift+Enter key and maps the latter to plain Enter, so Shift+Enter
would submit. :func:`register_extra_sequences` maps both sequences to :data:`SHIFT_ENTER_KEY`.

Choice of that key: it must be a prompt_toolkit ``Keys`` member (the key processor only
dispatches those) that real terminals practically never send and that no pi key name
converts to otherwise:

* ``Keys.ControlJ`` would make Shift+Enter and Ctrl+J indistinguishable, so a user binding
  ``"tui.input.submit": "shift+enter"`` would also make Ctrl+J submit.
* ``(Keys.Escape, Keys.ControlM)`` is Alt+Enter (follow-up), so Shift+Enter would queue a
  follow-up instead of inserting a newline.
* ``Keys.F13``-``Keys.F24`` are what xterm-like terminals send for Shift+F1..F12.

We use ``Keys.ControlF24`` (``"c-f24"``): only xterm's Ctrl+Shift+F12 produces it, and pi's
``ctrl+shift+f12`` is therefore treated as unsupported. ``to_prompt_toolkit("shift+enter")``
returns ``("c-f24",)``. Terminals that send a raw ``\\n`` for Shift+Enter (a common manual
terminal mapping) produce Ctrl+J, which pi binds to newline as well.

Alt+Enter in CSI-u form (``ESC [ 13 ; 3 u`` / ``ESC [ 27 ; 3 ; 13 ~``) is mapped to
``(Escape, ControlM)`` so it matches ``to_prompt_toolkit("alt+enter")``, and CSI-u Shift+Tab
``ESC [ 9 ; 2 u`` to ``Keys.BackTab``.

Platform-specific defaults (Windows / WSL alternatives) are not modelled; the Linux/macOS
defaults are used.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prompt_toolkit.keys import Keys

KEYBINDINGS_FILE_NAME = "keybindings.json"

SHIFT_ENTER_KEY = Keys.ControlF24

# pi's action ids with their default keys (Linux/macOS), in pi's documentation order.
_DEFAULTS: dict[str, list[str]] = {
    # Terminal UI: cursor movement
    "tui.editor.cursorUp": ["up"],
    "tui.editor.cursorDown": ["down"],
    "tui.editor.historyPrevious": [],
    "tui.editor.historyNext": [],
    "tui.editor.cursorLeft": ["left", "ctrl+b"],
    "tui.editor.cursorRight": ["right", "ctrl+f"],
    "tui.editor.cursorWordLeft": ["alt+left", "ctrl+left", "alt+b"],
    "tui.editor.cursorWordRight": ["alt+right", "ctrl+right", "alt+f"],
    "tui.editor.cursorLineStart": ["home", "ctrl+a"],
    "tui.editor.cursorLineEnd": ["end", "ctrl+e"],
    "tui.editor.jumpForward": ["ctrl+]"],
    "tui.editor.jumpBackward": ["ctrl+alt+]"],
    "tui.editor.pageUp": ["pageUp", "ctrl+pageUp"],
    "tui.editor.pageDown": ["pageDown", "ctrl+pageDown"],
    # Text editing
    "tui.editor.deleteCharBackward": ["backspace"],
    "tui.editor.deleteCharForward": ["delete", "ctrl+d"],
    "tui.editor.deleteWordBackward": ["ctrl+w", "alt+backspace"],
    "tui.editor.deleteWordForward": ["alt+d", "alt+delete"],
    "tui.editor.deleteToLineStart": ["ctrl+u"],
    "tui.editor.deleteToLineEnd": ["ctrl+k"],
    "tui.editor.yank": ["ctrl+y"],
    "tui.editor.yankPop": ["alt+y"],
    "tui.editor.undo": ["ctrl+-"],
    # Input and selection
    "tui.input.newLine": ["shift+enter", "ctrl+j"],
    "tui.input.submit": ["enter"],
    "tui.input.tab": ["tab"],
    "tui.input.copy": ["ctrl+c"],
    "tui.select.up": ["up"],
    "tui.select.down": ["down"],
    "tui.select.pageUp": ["pageUp"],
    "tui.select.pageDown": ["pageDown"],
    "tui.select.confirm": ["enter"],
    "tui.select.cancel": ["escape", "ctrl+c"],
    # Fullscreen transcript
    "tui.altScreen.pageUp": ["pageUp"],
    "tui.altScreen.pageDown": ["pageDown"],
    "tui.altScreen.halfPageUp": [],
    "tui.altScreen.halfPageDown": [],
    "tui.altScreen.lineUp": [],
    "tui.altScreen.lineDown": [],
    "tui.altScreen.previousPrompt": ["ctrl+shift+up"],
    "tui.altScreen.nextPrompt": ["ctrl+shift+down"],
    "tui.altScreen.search": ["ctrl+shift+f"],
    "tui.altScreen.searchNext": ["enter", "ctrl+g"],
    "tui.altScreen.searchPrevious": ["shift+enter", "ctrl+shift+g"],
    "tui.altScreen.searchClose": ["escape"],
    "tui.altScreen.top": ["ctrl+home"],
    "tui.altScreen.bottom": ["ctrl+end"],
    # Application
    "app.interrupt": ["escape"],
    "app.clear": ["ctrl+c"],
    "app.exit": ["ctrl+d"],
    "app.suspend": ["ctrl+z"],
    "app.editor.external": ["ctrl+g"],
    "app.clipboard.pasteImage": ["ctrl+v"],
    # Sessions
    "app.session.new": [],
    "app.session.tree": [],
    "app.session.fork": [],
    "app.session.resume": [],
    "app.session.togglePath": ["ctrl+p"],
    "app.session.toggleSort": ["ctrl+s"],
    "app.session.toggleNamedFilter": ["ctrl+n"],
    "app.session.rename": ["ctrl+r"],
    "app.session.delete": ["ctrl+d"],
    "app.session.deleteNoninvasive": ["ctrl+backspace"],
    # Models and thinking
    "app.model.select": ["ctrl+l"],
    "app.model.cycleForward": ["ctrl+p"],
    "app.model.cycleBackward": ["shift+ctrl+p"],
    "app.models.save": ["ctrl+s"],
    "app.thinking.cycle": ["shift+tab"],
    "app.thinking.save": ["ctrl+s"],
    "app.thinking.toggle": ["ctrl+t"],
    # Display and message queue
    "app.tools.expand": ["ctrl+o"],
    "app.transcript.open": ["alt+o"],  # pi-host's own: the transcript view (no pi default uses alt+o)
    "app.message.copy": ["ctrl+x"],
    "app.message.followUp": ["alt+enter"],
    "app.message.dequeue": ["alt+up"],
    # Tree navigation
    "app.tree.foldOrUp": ["ctrl+left", "alt+left"],
    "app.tree.unfoldOrDown": ["ctrl+right", "alt+right"],
    "app.tree.editLabel": ["shift+l"],
    "app.tree.toggleLabelTimestamp": ["shift+t"],
    "app.tree.filter.default": ["ctrl+d"],
    "app.tree.filter.noTools": ["ctrl+t"],
    "app.tree.filter.userOnly": ["ctrl+u"],
    "app.tree.filter.labeledOnly": ["ctrl+l"],
    "app.tree.filter.all": ["ctrl+a"],
    "app.tree.filter.cycleForward": ["ctrl+o"],
    "app.tree.filter.cycleBackward": ["shift+ctrl+o"],
    # Scoped models selector
    "app.models.enableAll": ["ctrl+a"],
    "app.models.clearAll": ["ctrl+x"],
    "app.models.toggleProvider": ["ctrl+p"],
    "app.models.reorderUp": ["alt+up"],
    "app.models.reorderDown": ["alt+down"],
}


class KeySpecError(ValueError):
    """A key name that is not valid pi key syntax."""


class UnsupportedKey(KeySpecError):
    """Valid pi syntax, but a terminal read through prompt_toolkit cannot report it."""


_MODIFIER_ORDER = ("ctrl", "shift", "alt", "super")
_SPECIAL_ALIASES = {
    "esc": "escape",
    "escape": "escape",
    "enter": "enter",
    "return": "enter",
    "tab": "tab",
    "space": "space",
    "backspace": "backspace",
    "delete": "delete",
    "insert": "insert",
    "clear": "clear",
    "home": "home",
    "end": "end",
    "pageup": "pageUp",
    "pagedown": "pageDown",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
}
_SYMBOLS = frozenset("`-=[]\\;',./!@#$%^&*()_+|~{}:<>?")
# Keys prompt_toolkit names the same way, which also exist with c- / s- / c-s- prefixes.
_NAVIGATION = {
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
    "home": "home",
    "end": "end",
    "delete": "delete",
    "insert": "insert",
    "pageUp": "pageup",
    "pageDown": "pagedown",
}
_CTRL_SYMBOLS = {"]": "c-]", "\\": "c-\\", "^": "c-^", "_": "c-_", "-": "c-_", "@": "c-@"}


def parse_key(spec: str) -> tuple[frozenset[str], str]:
    """Split a pi key name into (modifiers, canonical key). Raises :class:`KeySpecError`."""
    if not isinstance(spec, str):
        raise KeySpecError(f"key must be a string, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise KeySpecError("empty key")
    if text == "+":
        parts = ["+"]
    elif text.endswith("++"):
        parts = [*text[:-2].split("+"), "+"]
    else:
        parts = text.split("+")
    *modifier_parts, key_part = parts
    modifiers: set[str] = set()
    for part in modifier_parts:
        name = part.strip().lower()
        if name not in _MODIFIER_ORDER:
            raise KeySpecError(f"unknown modifier {part!r}" if name else "empty modifier")
        if name in modifiers:
            raise KeySpecError(f"modifier {name!r} repeated")
        modifiers.add(name)
    key = key_part.strip()
    lower = key.lower()
    if len(key) == 1 and (lower.isascii() and lower.isalnum()):
        canonical = lower
    elif len(key) == 1 and key in _SYMBOLS:
        canonical = key
    elif lower in _SPECIAL_ALIASES:
        canonical = _SPECIAL_ALIASES[lower]
    elif lower.startswith("f") and lower[1:].isdigit() and 1 <= int(lower[1:]) <= 12:
        canonical = f"f{int(lower[1:])}"
    elif not key:
        raise KeySpecError("missing key after modifier")
    else:
        raise KeySpecError(f"unknown key {key!r}")
    return frozenset(modifiers), canonical


def normalize_key(spec: str) -> str:
    """Canonical spelling: ``Shift+Ctrl+P`` -> ``ctrl+shift+p``, ``esc`` -> ``escape``."""
    modifiers, key = parse_key(spec)
    return "+".join([*(m for m in _MODIFIER_ORDER if m in modifiers), key])


def _convert_base(key: str, ctrl: bool, shift: bool, spec: str) -> str:
    def unsupported() -> UnsupportedKey:
        return UnsupportedKey(f"{spec!r} cannot be told apart by a terminal here")

    if len(key) == 1 and key.isalpha():
        if ctrl and shift:
            raise unsupported()
        if ctrl:
            return f"c-{key}"
        return key.upper() if shift else key
    if len(key) == 1 and key.isdigit():
        if ctrl:
            return f"c-s-{key}" if shift else f"c-{key}"
        if shift:
            raise unsupported()
        return key
    if len(key) == 1:  # symbol
        if shift:
            raise unsupported()
        if ctrl:
            if key in _CTRL_SYMBOLS:
                return _CTRL_SYMBOLS[key]
            raise unsupported()
        return key
    if key in _NAVIGATION:
        name = _NAVIGATION[key]
        if ctrl and shift:
            return f"c-s-{name}"
        if ctrl:
            return f"c-{name}"
        return f"s-{name}" if shift else name
    if key.startswith("f"):
        number = int(key[1:]) + (12 if shift else 0)
        if ctrl and number == 24:
            raise unsupported()  # c-f24 is reserved for Shift+Enter
        return f"c-f{number}" if ctrl else f"f{number}"
    if key == "enter":
        if ctrl:
            raise unsupported()
        return SHIFT_ENTER_KEY.value if shift else Keys.ControlM.value
    if key == "tab":
        if ctrl:
            raise unsupported()
        return Keys.BackTab.value if shift else Keys.ControlI.value
    if key == "escape":
        if ctrl or shift:
            raise unsupported()
        return Keys.Escape.value
    if key == "space":
        if shift:
            raise unsupported()
        return Keys.ControlSpace.value if ctrl else " "
    if key == "backspace":
        if ctrl or shift:
            raise unsupported()
        return Keys.ControlH.value
    raise unsupported()  # "clear" and anything else


def to_prompt_toolkit(spec: str) -> tuple[str, ...]:
    """Convert a pi key name to the key sequence prompt_toolkit's ``KeyBindings.add`` expects.

    ``ctrl+c`` -> ``("c-c",)``; ``alt+enter`` -> ``("escape", "c-m")``; ``alt+up`` ->
    ``("escape", "up")``; ``shift+tab`` -> ``("s-tab",)``; ``shift+enter`` -> ``("c-f24",)``
    (see the module docstring); ``shift+l`` -> ``("L",)``. Raises :class:`KeySpecError` for
    invalid names and :class:`UnsupportedKey` for combinations a terminal cannot report.
    """
    modifiers, key = parse_key(spec)
    if "super" in modifiers:
        raise UnsupportedKey(f"{spec!r}: the super modifier needs the kitty keyboard protocol")
    base = _convert_base(key, "ctrl" in modifiers, "shift" in modifiers, spec)
    if "alt" in modifiers:
        return (Keys.Escape.value, base)
    return (base,)


DEFAULT_KEYS: dict[str, list[str]] = {
    action: [normalize_key(key) for key in keys] for action, keys in _DEFAULTS.items()
}
KNOWN_ACTIONS: frozenset[str] = frozenset(DEFAULT_KEYS)


def default_keys() -> dict[str, list[str]]:
    """A fresh copy of :data:`DEFAULT_KEYS`."""
    return {action: list(keys) for action, keys in DEFAULT_KEYS.items()}


def load_keybindings(agent_dir: str | os.PathLike[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Defaults overlaid with ``<agent dir>/keybindings.json``; returns (keymap, problems).

    A string or list value replaces the default for that action; ``[]`` disables it. Keys are
    normalised (:func:`normalize_key`). Each unknown action id, bad value or bad / unsupported
    key yields one problem line, and the rest of the file still applies. A missing file is not
    a problem; unreadable or invalid JSON yields one problem and the defaults.
    """
    keymap = default_keys()
    path = Path(agent_dir) / KEYBINDINGS_FILE_NAME
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return keymap, []
    except (OSError, UnicodeDecodeError) as error:
        return keymap, [f"{path}: cannot read: {error}"]
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        return keymap, [f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"]
    if not isinstance(data, dict):
        return keymap, [f"{path}: expected a JSON object mapping action ids to keys"]
    problems: list[str] = []
    for action, value in data.items():
        if action == "$schema":
            continue
        if action not in KNOWN_ACTIONS:
            problems.append(f"{path}: unknown action id {action!r}")
            continue
        if isinstance(value, str):
            values: list[object] = [value]
        elif isinstance(value, list):
            values = value
        else:
            problems.append(f"{path}: {action}: expected a key string or a list of keys")
            continue
        keys: list[str] = []
        for item in values:
            if not isinstance(item, str):
                problems.append(f"{path}: {action}: key {item!r} is not a string")
                continue
            try:
                to_prompt_toolkit(item)
            except UnsupportedKey as error:
                problems.append(f"{path}: {action}: unsupported key {item!r}: {error}")
                continue
            except KeySpecError as error:
                problems.append(f"{path}: {action}: invalid key {item!r}: {error}")
                continue
            normalized = normalize_key(item)
            if normalized not in keys:
                keys.append(normalized)
        keymap[action] = keys
    return keymap, problems


def bindings_for(keymap: dict[str, list[str]], action: str) -> list[tuple[str, ...]]:
    """prompt_toolkit key sequences for ``action``; keys that cannot be bound are skipped."""
    sequences: list[tuple[str, ...]] = []
    for spec in keymap.get(action, []):
        try:
            sequence = to_prompt_toolkit(spec)
        except KeySpecError:
            continue
        if sequence not in sequences:
            sequences.append(sequence)
    return sequences


EXTRA_SEQUENCES: dict[str, Keys | tuple[Keys, ...]] = {
    "\x1b[13;2u": SHIFT_ENTER_KEY,  # Shift+Enter, CSI-u (kitty protocol / tmux extended-keys)
    "\x1b[27;2;13~": SHIFT_ENTER_KEY,  # Shift+Enter, xterm modifyOtherKeys
    "\x1b[13;3u": (Keys.Escape, Keys.ControlM),  # Alt+Enter, CSI-u
    "\x1b[27;3;13~": (Keys.Escape, Keys.ControlM),  # Alt+Enter, modifyOtherKeys
    "\x1b[9;2u": Keys.BackTab,  # Shift+Tab, CSI-u
}


def register_extra_sequences() -> dict[str, Keys | tuple[Keys, ...]]:
    """Teach prompt_toolkit's VT100 parser the sequences above (idempotent; call once at start).

    Returns the mapping that was installed.
    """
    from prompt_toolkit.input import ansi_escape_sequences, vt100_parser

    ansi_escape_sequences.ANSI_SEQUENCES.update(EXTRA_SEQUENCES)
    # The parser caches "is this a prefix of a longer sequence" answers; drop them.
    cache = getattr(vt100_parser, "_IS_PREFIX_OF_LONGER_MATCH_CACHE", None)
    if isinstance(cache, dict):
        cache.clear()
    return dict(EXTRA_SEQUENCES)
