from __future__ import annotations

import asyncio
import json

import pytest
from pi_mode_interactive.editor.keys import (
    DEFAULT_KEYS,
    EXTRA_SEQUENCES,
    SHIFT_ENTER_KEY,
    KeySpecError,
    UnsupportedKey,
    bindings_for,
    load_keybindings,
    normalize_key,
    register_extra_sequences,
    to_prompt_toolkit,
)
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import ansi_escape_sequences, create_pipe_input, vt100_parser
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output import DummyOutput


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ctrl+c", ("c-c",)),
        ("Ctrl+C", ("c-c",)),
        ("ctrl+j", ("c-j",)),
        ("enter", ("c-m",)),
        ("return", ("c-m",)),
        ("alt+enter", ("escape", "c-m")),
        ("alt+up", ("escape", "up")),
        ("escape", ("escape",)),
        ("esc", ("escape",)),
        ("shift+tab", ("s-tab",)),
        ("tab", ("c-i",)),
        ("shift+enter", (SHIFT_ENTER_KEY.value,)),
        ("ctrl+-", ("c-_",)),
        ("ctrl+]", ("c-]",)),
        ("ctrl+alt+]", ("escape", "c-]")),
        ("alt+ctrl+x", ("escape", "c-x")),
        ("ctrl+shift+up", ("c-s-up",)),
        ("ctrl+pageUp", ("c-pageup",)),
        ("pageDown", ("pagedown",)),
        ("shift+l", ("L",)),
        ("alt+backspace", ("escape", "c-h")),
        ("alt+delete", ("escape", "delete")),
        ("ctrl+home", ("c-home",)),
        ("f5", ("f5",)),
        ("shift+f2", ("f14",)),
        ("ctrl+1", ("c-1",)),
        ("space", (" ",)),
        ("?", ("?",)),
        ("+", ("+",)),
        ("alt++", ("escape", "+")),
    ],
)
def test_to_prompt_toolkit(spec, expected):
    assert to_prompt_toolkit(spec) == expected


@pytest.mark.parametrize(
    "spec", ["ctrl+shift+p", "super+k", "ctrl+backspace", "ctrl+enter", "shift+1", "clear"]
)
def test_unrepresentable_keys_are_unsupported(spec):
    with pytest.raises(UnsupportedKey):
        to_prompt_toolkit(spec)


@pytest.mark.parametrize("spec", ["", "ctrl+", "hyper+x", "ctrl+ctrl+x", "ctrl+foo", "f13", "ctrl+é"])
def test_invalid_keys(spec):
    with pytest.raises(KeySpecError):
        to_prompt_toolkit(spec)


def test_shift_enter_sentinel_is_distinct_from_other_bindings():
    # Shift+Enter must not collide with Enter, Alt+Enter or Ctrl+J.
    others = {to_prompt_toolkit(key) for key in ("enter", "alt+enter", "ctrl+j")}
    assert to_prompt_toolkit("shift+enter") not in others
    with pytest.raises(UnsupportedKey):
        to_prompt_toolkit("ctrl+shift+f12")  # would produce the same key


def test_normalize_key():
    assert normalize_key("Shift+Ctrl+P") == "ctrl+shift+p"
    assert normalize_key("esc") == "escape"
    assert normalize_key("alt+PageUp") == "alt+pageUp"


def test_default_keys_follow_pi():
    assert DEFAULT_KEYS["tui.input.submit"] == ["enter"]
    assert DEFAULT_KEYS["tui.input.newLine"] == ["shift+enter", "ctrl+j"]
    assert DEFAULT_KEYS["app.message.followUp"] == ["alt+enter"]
    assert DEFAULT_KEYS["app.message.dequeue"] == ["alt+up"]
    assert DEFAULT_KEYS["app.interrupt"] == ["escape"]
    assert DEFAULT_KEYS["app.clear"] == ["ctrl+c"]
    assert DEFAULT_KEYS["app.exit"] == ["ctrl+d"]
    assert DEFAULT_KEYS["app.editor.external"] == ["ctrl+g"]
    assert DEFAULT_KEYS["app.thinking.toggle"] == ["ctrl+t"]
    assert DEFAULT_KEYS["app.thinking.cycle"] == ["shift+tab"]
    assert DEFAULT_KEYS["app.tools.expand"] == ["ctrl+o"]
    assert DEFAULT_KEYS["app.model.select"] == ["ctrl+l"]
    assert DEFAULT_KEYS["app.model.cycleBackward"] == ["ctrl+shift+p"]
    assert DEFAULT_KEYS["app.session.new"] == []
    for keys in DEFAULT_KEYS.values():
        for key in keys:
            assert normalize_key(key) == key


def test_bindings_for_skips_unsupported_defaults():
    assert bindings_for(DEFAULT_KEYS, "app.model.cycleBackward") == []
    assert bindings_for(DEFAULT_KEYS, "tui.input.newLine") == [(SHIFT_ENTER_KEY.value,), ("c-j",)]
    assert bindings_for(DEFAULT_KEYS, "no.such.action") == []
    kb = KeyBindings()
    for action in DEFAULT_KEYS:
        for sequence in bindings_for(DEFAULT_KEYS, action):
            kb.add(*sequence)(lambda event: None)  # every produced sequence is accepted


def write(agent, data) -> None:
    (agent / "keybindings.json").write_text(data if isinstance(data, str) else json.dumps(data))


def test_missing_file_gives_defaults(tmp_path):
    keymap, problems = load_keybindings(tmp_path)
    assert keymap == DEFAULT_KEYS
    assert problems == []
    keymap["app.clear"].append("x")
    assert DEFAULT_KEYS["app.clear"] == ["ctrl+c"]  # a copy was returned


def test_file_overrides_replace_and_disable(tmp_path):
    write(
        tmp_path,
        {
            "$schema": "https://pi.dev/schemas/keybindings.schema.json",
            "app.message.followUp": "ctrl+q",
            "app.session.tree": ["ctrl+x", "Alt+T"],
            "app.interrupt": [],
        },
    )
    keymap, problems = load_keybindings(tmp_path)
    assert problems == []
    assert keymap["app.message.followUp"] == ["ctrl+q"]
    assert keymap["app.session.tree"] == ["ctrl+x", "alt+t"]
    assert keymap["app.interrupt"] == []
    assert bindings_for(keymap, "app.interrupt") == []
    assert keymap["app.clear"] == ["ctrl+c"]  # untouched


def test_each_bad_entry_is_one_problem_and_the_rest_applies(tmp_path):
    write(
        tmp_path,
        {
            "app.no.such": "ctrl+x",
            "app.clear": ["ctrl+q", "ctrl+nope"],
            "app.exit": 42,
            "app.tools.expand": ["super+o"],
            "app.thinking.toggle": [7],
            "app.editor.external": "ctrl+e",
        },
    )
    keymap, problems = load_keybindings(tmp_path)
    assert len(problems) == 5
    joined = "\n".join(problems)
    assert "unknown action id 'app.no.such'" in joined
    assert "invalid key 'ctrl+nope'" in joined
    assert "app.exit: expected a key string or a list of keys" in joined
    assert "unsupported key 'super+o'" in joined
    assert "key 7 is not a string" in joined
    assert keymap["app.clear"] == ["ctrl+q"]
    assert keymap["app.exit"] == ["ctrl+d"]  # wrong type keeps the default
    assert keymap["app.tools.expand"] == []
    assert keymap["app.editor.external"] == ["ctrl+e"]
    assert "app.no.such" not in keymap


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '"ctrl+c"'])
def test_broken_file_is_one_problem_and_defaults(tmp_path, content):
    write(tmp_path, content)
    keymap, problems = load_keybindings(tmp_path)
    assert keymap == DEFAULT_KEYS
    assert len(problems) == 1
    assert "keybindings.json" in problems[0]


@pytest.fixture
def restore_sequences():
    saved = dict(ansi_escape_sequences.ANSI_SEQUENCES)
    yield
    ansi_escape_sequences.ANSI_SEQUENCES.clear()
    ansi_escape_sequences.ANSI_SEQUENCES.update(saved)
    vt100_parser._IS_PREFIX_OF_LONGER_MATCH_CACHE.clear()


async def _pressed(keys: str) -> list[str]:
    """Feed raw terminal input to an app bound with pi's submit/newline/follow-up keys."""
    seen: list[str] = []
    kb = KeyBindings()
    for action in ("tui.input.submit", "tui.input.newLine", "app.message.followUp", "app.thinking.cycle"):
        for sequence in bindings_for(DEFAULT_KEYS, action):
            kb.add(*sequence)(lambda event, action=action: seen.append(action))

    @kb.add("c-t")
    def _finish(event):
        event.app.exit()

    with create_pipe_input() as pipe:
        app = Application(
            layout=Layout(Window(BufferControl(Buffer()))), key_bindings=kb, input=pipe, output=DummyOutput()
        )
        pipe.send_text(keys)
        await asyncio.wait_for(app.run_async(), 5)
    return seen


async def test_extended_shift_enter_sequences_reach_the_newline_action(restore_sequences):
    installed = register_extra_sequences()
    assert installed["\x1b[13;2u"] == SHIFT_ENTER_KEY
    assert ansi_escape_sequences.ANSI_SEQUENCES["\x1b[27;2;13~"] == SHIFT_ENTER_KEY
    seen = await _pressed(
        "\x1b[13;2u" + "\x1b[27;2;13~" + "\r" + "\n" + "\x1b[13;3u" + "\x1b\r" + "\x1b[9;2u\x14"
    )
    assert seen == [
        "tui.input.newLine",  # CSI-u Shift+Enter
        "tui.input.newLine",  # modifyOtherKeys Shift+Enter
        "tui.input.submit",  # plain Enter
        "tui.input.newLine",  # Ctrl+J / raw LF
        "app.message.followUp",  # CSI-u Alt+Enter
        "app.message.followUp",  # ESC + CR (legacy Alt+Enter)
        "app.thinking.cycle",  # CSI-u Shift+Tab
    ]


async def test_without_registration_modify_other_keys_shift_enter_submits(restore_sequences):
    # Documents why register_extra_sequences() is needed: prompt_toolkit maps it to Enter.
    # (The interactive app's tests may have registered them in this process already: undo that.)
    for sequence in EXTRA_SEQUENCES:
        ansi_escape_sequences.ANSI_SEQUENCES.pop(sequence, None)
    ansi_escape_sequences.ANSI_SEQUENCES["\x1b[27;2;13~"] = Keys.ControlM
    vt100_parser._IS_PREFIX_OF_LONGER_MATCH_CACHE.clear()
    assert ansi_escape_sequences.ANSI_SEQUENCES["\x1b[27;2;13~"] == Keys.ControlM
    assert await _pressed("\x1b[27;2;13~\x14") == ["tui.input.submit"]
