"""Editor components for the interactive mode: history, completion, paste markers, keys,
external editor and a list picker. Pure prompt_toolkit building blocks; no Application here."""

from .completion import FileEntry, FileIndex, PiCompleter, extract_mention, extract_path
from .external import edit_in_external_editor, editor_command
from .fuzzy import fuzzy_filter, fuzzy_score
from .history import HISTORY_FILE_NAME, PromptHistory, history_path
from .keys import (
    DEFAULT_KEYS,
    KNOWN_ACTIONS,
    SHIFT_ENTER_KEY,
    KeySpecError,
    UnsupportedKey,
    bindings_for,
    load_keybindings,
    normalize_key,
    register_extra_sequences,
    to_prompt_toolkit,
)
from .paste import PasteStore, bind_paste, insert_paste, normalize_paste
from .picker import Picker

__all__ = [
    "DEFAULT_KEYS",
    "HISTORY_FILE_NAME",
    "KNOWN_ACTIONS",
    "SHIFT_ENTER_KEY",
    "FileEntry",
    "FileIndex",
    "KeySpecError",
    "PasteStore",
    "Picker",
    "PiCompleter",
    "PromptHistory",
    "UnsupportedKey",
    "bind_paste",
    "bindings_for",
    "edit_in_external_editor",
    "editor_command",
    "extract_mention",
    "extract_path",
    "fuzzy_filter",
    "fuzzy_score",
    "history_path",
    "insert_paste",
    "load_keybindings",
    "normalize_key",
    "normalize_paste",
    "register_extra_sequences",
    "to_prompt_toolkit",
]
