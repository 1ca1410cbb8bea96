"""The editor's parts put together: history, completion, paste markers, image mentions."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from pi_host.lib.toolkit.images import file_image_mime, prepare_image
from pi_host.protocol.messages import ImageContent
from pi_mode_interactive.editor.completion import PiCompleter
from pi_mode_interactive.editor.history import PromptHistory, history_path
from pi_mode_interactive.editor.paste import PasteStore

MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"]+)"|(\S+))')
IMAGE_BYTES_LIMIT = 50 * 1024 * 1024


class EditorParts:
    def __init__(
        self,
        agent_dir: str,
        cwd: str,
        commands: Callable[[], list[tuple[str, str]]],
        arguments: Callable[[str], Any] | None = None,
    ) -> None:
        self.cwd = cwd
        self.history = PromptHistory(history_path(agent_dir), cwd)
        # its file index starts once the editor is up
        self.completer = PiCompleter(commands, cwd, arguments_provider=arguments)
        self.pastes = PasteStore()
        self.processors: list[Any] = []

    def expand(self, text: str) -> str:
        """The draft as sent: paste markers replaced by what was pasted."""
        expanded = self.pastes.expand(text)
        self.pastes.reset()
        return expanded

    def refresh(self) -> None:
        self.completer.refresh()

    def attachments(self, text: str, images: list[Any] | None) -> tuple[str, list[Any] | None]:
        """``@path`` mentions of image files attach the image (the mention stays in the text)."""
        found = list(images or [])
        for match in MENTION.finditer(text):
            path = os.path.join(self.cwd, os.path.expanduser(match.group(1) or match.group(2)))
            image = _image(path)
            if image is not None:
                found.append(image)
        return text, found or None


def _image(path: str) -> ImageContent | None:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > IMAGE_BYTES_LIMIT:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    mime = file_image_mime(data)
    if mime is None:
        return None
    prepared = prepare_image(data, mime)
    if prepared.data is None:
        return None
    return ImageContent(data=prepared.base64, mime_type=prepared.mime_type)


def make_editor_parts(
    agent_dir: str,
    cwd: str,
    commands: Callable[[], list[tuple[str, str]]],
    arguments: Callable[[str], Any] | None = None,
) -> EditorParts:
    return EditorParts(agent_dir, cwd, commands, arguments)
