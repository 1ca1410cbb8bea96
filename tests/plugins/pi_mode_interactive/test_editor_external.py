from __future__ import annotations

import os
import stat
from pathlib import Path

from pi_mode_interactive.editor.external import edit_in_external_editor, editor_command


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def env_with(**values: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("VISUAL", "EDITOR")}
    env.update(values)
    return env


def test_editor_output_is_returned_without_trailing_newline(tmp_path):
    seen = tmp_path / "seen.txt"
    editor = script(
        tmp_path / "fake-editor", f'echo "$1" > "{seen}"\nprintf "\\nadded by editor\\n" >> "$1"\n'
    )
    result = edit_in_external_editor("my draft\nsecond line", env_with(EDITOR=str(editor)))
    assert result == "my draft\nsecond line\nadded by editor"
    temp_file = Path(seen.read_text().strip())
    assert temp_file.suffix == ".md"
    assert not temp_file.exists()  # cleaned up


def test_visual_wins_over_editor_and_commands_are_shell_split(tmp_path):
    visual = script(tmp_path / "visual.sh", 'echo "visual got $1" >> "$2"\n')
    editor = script(tmp_path / "editor.sh", 'echo "editor" >> "$1"\n')
    env = env_with(VISUAL=f"'{visual}' --flag", EDITOR=str(editor))
    assert editor_command(env) == [str(visual), "--flag"]
    # visual.sh receives "--flag <file>" and appends to the file
    assert edit_in_external_editor("", env) == "visual got --flag"


def test_explicit_editor_setting_wins(tmp_path):
    chosen = script(tmp_path / "chosen.sh", 'echo "chosen" > "$1"\n')
    env = env_with(VISUAL="false", EDITOR="false")
    assert edit_in_external_editor("x", env, editor=str(chosen)) == "chosen"


def test_failing_or_missing_editor_returns_none(tmp_path):
    failing = script(tmp_path / "fail.sh", 'echo "changed" > "$1"\nexit 3\n')
    assert edit_in_external_editor("draft", env_with(EDITOR=str(failing))) is None
    assert edit_in_external_editor("draft", env_with(EDITOR=str(tmp_path / "does-not-exist"))) is None


def test_unchanged_draft_round_trips_exactly(tmp_path):
    noop = script(tmp_path / "noop.sh", "exit 0\n")
    text = "keep   spacing\n\n  and blank lines\n"
    # only one trailing newline is removed
    assert edit_in_external_editor(text, env_with(EDITOR=str(noop))) == "keep   spacing\n\n  and blank lines"


def test_fallback_prefers_nano_then_vi(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    assert editor_command(env_with(PATH=str(empty))) == ["vi"]
    with_nano = tmp_path / "bin"
    with_nano.mkdir()
    script(with_nano / "nano", "exit 0\n")
    assert editor_command(env_with(PATH=str(with_nano))) == ["nano"]
