"""Composing the first prompt from CLI arguments (reference §8.8).

``pi [options] [@files...] [messages...]``: each ``@path`` argument is read. Text files are inlined
as ``<file name="<abs path>">`` blocks; images are attached and get an empty block naming them;
empty files are skipped; a missing file is an error (the CLI prints it and exits 1). The first
prompt is piped stdin text + file blocks + the first message, with no separator; later messages
are sent as separate prompts, in order.
"""

from __future__ import annotations

import base64
import os

from pi_host.protocol import ImageContent


class InputFileError(Exception):
    """An ``@file`` argument that cannot be read; ``str(error)`` is the line to print."""


_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime_type(head: bytes) -> str | None:
    """The image type of a file from its first bytes (names are not trusted)."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def resolve_path(arg: str, cwd: str) -> str:
    path = os.path.expanduser(arg)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def read_file_argument(arg: str, cwd: str) -> tuple[str, ImageContent | None]:
    """The text block for one ``@file`` argument (without the ``@``) and its image, if any."""
    path = resolve_path(arg, cwd)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputFileError(f"File not found: {path}") from None
    except IsADirectoryError:
        raise InputFileError(f"Not a file: {path}") from None
    except OSError as exc:
        raise InputFileError(f"Cannot read {path}: {exc.strerror or exc}") from None
    if not data:
        return "", None
    mime = image_mime_type(data[:16])
    if mime is not None:
        image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)
        return f'<file name="{path}"></file>\n', image
    text = data.decode("utf-8", errors="replace")
    return f'<file name="{path}">\n{text}\n</file>\n', None


def compose_prompt(
    args: list[str], stdin_text: str | None, cwd: str
) -> tuple[str, list[ImageContent], list[str]]:
    """``(first prompt text, images, remaining messages)`` from the positional CLI arguments.

    Raises :class:`InputFileError` for a missing or unreadable ``@file``.
    """
    file_text: list[str] = []
    images: list[ImageContent] = []
    messages: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1:
            text, image = read_file_argument(arg[1:], cwd)
            file_text.append(text)
            if image is not None:
                images.append(image)
        else:
            messages.append(arg)
    first = (stdin_text or "") + "".join(file_text) + (messages[0] if messages else "")
    return first, images, messages[1:]
