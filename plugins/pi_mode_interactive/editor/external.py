"""Edit the draft in an external editor (pi's ``app.editor.external``, Ctrl+G).

Editor choice follows pi: an explicit ``editor`` command (the ``externalEditor`` setting), then
``$VISUAL``, then ``$EDITOR``, then ``nano``; if ``nano`` is not installed, ``vi``. The command
is split with :func:`shlex.split`, so ``"code --wait"`` works; the temp file path is appended.

The call is synchronous and uses the real terminal: run it from prompt_toolkit with
``await run_in_terminal(lambda: edit_in_external_editor(text))`` (or ``app.run_system_command``
style suspension) so the UI is suspended while the editor owns the screen.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

FALLBACK_EDITORS = ("nano", "vi")


def editor_command(env: Mapping[str, str] = os.environ, editor: str | None = None) -> list[str]:
    """The argv (without the file) that :func:`edit_in_external_editor` would run."""
    for candidate in (editor, env.get("VISUAL"), env.get("EDITOR")):
        if candidate and candidate.strip():
            try:
                argv = shlex.split(candidate)
            except ValueError:
                argv = candidate.split()
            if argv:
                return argv
    search_path = env.get("PATH")
    for fallback in FALLBACK_EDITORS:
        if shutil.which(fallback, path=search_path):
            return [fallback]
    return [FALLBACK_EDITORS[-1]]


def edit_in_external_editor(
    text: str,
    env: Mapping[str, str] = os.environ,
    *,
    editor: str | None = None,
    suffix: str = ".md",
) -> str | None:
    """Open ``text`` in the external editor; return the edited text, or ``None`` on failure.

    Failure means: the editor could not be started, or exited with a non-zero status, or the
    file could not be read back. One trailing newline (which most editors add) is removed.
    """
    argv = editor_command(env, editor)
    fd, path = tempfile.mkstemp(prefix="pi-editor-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        try:
            completed = subprocess.run([*argv, path], env=dict(env), check=False)
        except OSError:
            return None
        if completed.returncode != 0:
            return None
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                result = handle.read()
        except OSError:
            return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if result.endswith("\r\n"):
        result = result[:-2]
    elif result.endswith("\n"):
        result = result[:-1]
    return result
