"""Large pastes collapse to a marker in the editor and expand again when the prompt is sent.

pi's rule: a paste with more than 10 lines or more than 1000 characters becomes
``[paste #<n> +<lines> lines]`` (when it has more than 10 lines) or ``[paste #<n> <chars> chars]``
(a long text with few lines). Pasted text is normalised first: CRLF/CR become LF, tabs become
four spaces, and control characters other than LF are dropped. ``expand()`` replaces each
marker whose number the store knows by the pasted content (a marker whose size suffix was
edited away, ``[paste #2]``, still expands); a marker the user deleted from the draft simply
drops its content, and text that merely looks like a marker but has an unknown number stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, FilterOrBool, has_focus, to_filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

MAX_INLINE_LINES = 10
MAX_INLINE_CHARS = 1000

MARKER_RE = re.compile(r"\[paste #(\d+)(?: (?:\+\d+ lines|\d+ chars))?\]")
_MARKER_AT_END_RE = re.compile(r"\[paste #(\d+)(?: (?:\+\d+ lines|\d+ chars))?\]\Z")
# Some terminals (tmux with extended keys in CSI-u format) re-encode control bytes inside a
# bracketed paste as ESC [ <codepoint> ; 5 u. Decode Ctrl+letter back to the byte.
_CSI_U_CTRL_RE = re.compile(r"\x1b\[(\d+);5u")


def _decode_csi_u(match: re.Match[str]) -> str:
    code = int(match.group(1))
    if 97 <= code <= 122:
        return chr(code - 96)
    if 65 <= code <= 90:
        return chr(code - 64)
    return match.group(0)


def normalize_paste(text: str) -> str:
    """Apply pi's paste clean-up: decode CSI-u control bytes, LF line ends, tabs, no controls."""
    text = _CSI_U_CTRL_RE.sub(_decode_csi_u, text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "".join(char for char in text if char == "\n" or ord(char) >= 32)


def is_large_paste(text: str) -> bool:
    return text.count("\n") + 1 > MAX_INLINE_LINES or len(text) > MAX_INLINE_CHARS


class PasteStore:
    """Holds the content of collapsed pastes for one editor draft."""

    def __init__(self) -> None:
        self._pastes: dict[int, str] = {}
        self._counter = 0

    def __len__(self) -> int:
        return len(self._pastes)

    def __contains__(self, paste_id: object) -> bool:
        return paste_id in self._pastes

    def get(self, paste_id: int) -> str | None:
        return self._pastes.get(paste_id)

    def add(self, text: str) -> str:
        """Store ``text`` (already normalised) if it is large; return what to insert in the editor."""
        if not is_large_paste(text):
            return text
        self._counter += 1
        paste_id = self._counter
        self._pastes[paste_id] = text
        line_count = text.count("\n") + 1
        if line_count > MAX_INLINE_LINES:
            return f"[paste #{paste_id} +{line_count} lines]"
        return f"[paste #{paste_id} {len(text)} chars]"

    def expand(self, text: str) -> str:
        """Replace known markers by their content (call this on the draft when sending)."""
        if not self._pastes or "[paste #" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            content = self._pastes.get(int(match.group(1)))
            return match.group(0) if content is None else content

        return MARKER_RE.sub(replace, text)

    def prune(self, text: str) -> None:
        """Forget pastes whose marker is no longer in ``text``."""
        present = {int(match.group(1)) for match in MARKER_RE.finditer(text)}
        for paste_id in [key for key in self._pastes if key not in present]:
            del self._pastes[paste_id]

    def marker_before(self, text_before_cursor: str) -> str | None:
        """The known marker ending exactly at the cursor, if any (for atomic Backspace)."""
        if not text_before_cursor.endswith("]"):
            return None
        match = _MARKER_AT_END_RE.search(text_before_cursor)
        if match is None or int(match.group(1)) not in self._pastes:
            return None
        return match.group(0)

    def reset(self) -> None:
        """Drop all pastes and restart numbering (call after the draft was sent or replaced)."""
        self._pastes.clear()
        self._counter = 0


def insert_paste(buffer: Buffer, store: PasteStore, data: str) -> str:
    """Normalise ``data``, collapse it if large, insert at the cursor; return the inserted text."""
    text = normalize_paste(data)
    if not text:
        return ""
    # A pasted path right after a word character gets a separating space (as pi does).
    before = buffer.document.text_before_cursor
    if text[0] in "/~." and before and (before[-1].isalnum() or before[-1] == "_"):
        text = " " + text
    inserted = store.add(text)
    buffer.insert_text(inserted)
    return inserted


def bind_paste(
    kb: KeyBindings,
    buffer: Buffer,
    store: PasteStore,
    *,
    filter: FilterOrBool = True,
    on_paste: Callable[[str], None] | None = None,
) -> None:
    """Add bracketed-paste and atomic-marker-Backspace handling for ``buffer`` to ``kb``.

    * ``Keys.BracketedPaste`` (the terminal's ``ESC[200~ ... ESC[201~``) while ``buffer`` has
      focus inserts through :func:`insert_paste`. prompt_toolkit enables bracketed paste mode on
      its own for a full-screen or regular ``Application``.
    * Backspace right after a known marker deletes the whole marker and forgets its paste.
    ``on_paste(inserted_text)`` runs after each paste (e.g. to re-render or update a status).
    """
    active = has_focus(buffer) & to_filter(filter)

    @kb.add(Keys.BracketedPaste, filter=active, eager=True)
    def _paste(event: KeyPressEvent) -> None:
        inserted = insert_paste(buffer, store, event.data)
        if on_paste is not None:
            on_paste(inserted)

    marker_at_cursor = Condition(lambda: store.marker_before(buffer.document.text_before_cursor) is not None)

    @kb.add("c-h", filter=active & marker_at_cursor)
    def _delete_marker(event: KeyPressEvent) -> None:
        marker = store.marker_before(buffer.document.text_before_cursor)
        if marker is None:  # pragma: no cover - the filter just checked
            return
        buffer.delete_before_cursor(len(marker))
        store.prune(buffer.text)
