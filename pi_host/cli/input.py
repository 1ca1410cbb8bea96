"""Composing the first prompt from CLI arguments (reference §8.8).

``pi [options] [@files...] [messages...]``: each ``@path`` argument is read. Text files are inlined
as ``<file name="<abs path>">`` blocks; images are attached and get a block naming them (saying
so when ``images.autoResize`` shrank them to model limits); empty files are skipped; a missing file is an error (the CLI prints it and exits 1). The first
prompt is piped stdin text + file blocks + the first message, with no separator; later messages
are sent as separate prompts, in order.

What is read is capped at :data:`MAX_INPUT_BYTES` per source (piped stdin, each ``@file``): a
bigger input is refused in one line before it fills memory (``pi -p < /dev/zero``, ``@/dev/zero``,
a multi-GB log). No model takes a prompt anywhere near that size, and every line the session
file then holds stays well under the reader's line limit.
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any

from pi_host.protocol import ImageContent

MAX_INPUT_BYTES = 64 * 1024 * 1024
_PIECE = 1024 * 1024


class InputFileError(Exception):
    """An ``@file`` argument that cannot be read; ``str(error)`` is the line to print."""


def image_mime_type(data: bytes) -> str | None:
    """The image type of a file from its bytes (names are not trusted)."""
    from pi_host.lib.toolkit.images import file_image_mime

    return file_image_mime(data)


def _image_block(path: str, data: bytes, mime: str, auto_resize: bool) -> tuple[str, ImageContent | None]:
    from pi_host.lib.toolkit.images import prepare_image

    prepared = prepare_image(data, mime, auto_resize=auto_resize)
    if prepared.data is None:
        reason = prepared.note or "it could not be prepared"
        return f'<file name="{path}">[The image was not attached: {reason}.]</file>\n', None
    hint = ""
    if prepared.scale is not None and prepared.original_size and prepared.final_size:
        (ow, oh), (fw, fh) = prepared.original_size, prepared.final_size
        hint = (
            f"[Image resized from {ow}x{oh} to {fw}x{fh}; multiply coordinates by "
            f"{prepared.scale:.2f} to map them to the original.]"
        )
    image = ImageContent(data=prepared.base64, mime_type=prepared.mime_type)
    return f'<file name="{path}">{hint}</file>\n', image


def resolve_path(arg: str, cwd: str) -> str:
    path = os.path.expanduser(arg)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def _limit() -> str:
    return f"{MAX_INPUT_BYTES // (1024 * 1024)} MiB"


def read_at_most(stream: IO[bytes], limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream`` (fewer at its end), read a piece at a time."""
    data = bytearray()
    while len(data) < limit:
        piece = stream.read(min(_PIECE, limit - len(data)))
        if not piece:
            break
        data += piece
    return bytes(data)


def read_stdin(stream: Any) -> str | None:
    """Piped standard input as the prompt's start (trimmed at both ends, as pi does), decoded
    as the text stream would; raises :class:`InputFileError` beyond :data:`MAX_INPUT_BYTES`."""
    raw = getattr(stream, "buffer", None)
    if raw is None:  # a text stream without bytes underneath
        text = stream.read(MAX_INPUT_BYTES + 1)
        too_big = len(text) > MAX_INPUT_BYTES
    else:
        data = read_at_most(raw, MAX_INPUT_BYTES + 1)
        too_big = len(data) > MAX_INPUT_BYTES
        text = "" if too_big else data.decode(stream.encoding or "utf-8", stream.errors or "replace")
    if too_big:
        raise InputFileError(
            f"Piped stdin holds more than {_limit()}: pi-host reads at most {_limit()} of input "
            "(save it to a file and ask the agent to read it)"
        )
    return text.strip() or None


def read_file_argument(arg: str, cwd: str, auto_resize: bool = True) -> tuple[str, ImageContent | None]:
    """The text block for one ``@file`` argument (without the ``@``) and its image, if any."""
    path = resolve_path(arg, cwd)
    too_big = InputFileError(
        f"{path} holds more than {_limit()}: an @file is read whole into the prompt, up to {_limit()}"
    )
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_INPUT_BYTES:
                raise too_big  # refused before reading
            # (a device, a pipe or a /proc file says nothing of its size: read no more than allowed)
            data = read_at_most(handle, MAX_INPUT_BYTES + 1)
    except InputFileError:
        raise
    except FileNotFoundError:
        raise InputFileError(f"File not found: {path}") from None
    except IsADirectoryError:
        raise InputFileError(f"Not a file: {path}") from None
    except OSError as exc:
        raise InputFileError(f"Cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise too_big
    if not data:
        return "", None
    mime = image_mime_type(data)
    if mime is not None:
        return _image_block(path, data, mime, auto_resize)
    text = data.decode("utf-8", errors="replace")
    return f'<file name="{path}">\n{text}\n</file>\n', None


def compose_prompt(
    args: list[str], stdin_text: str | None, cwd: str, auto_resize: bool = True
) -> tuple[str, list[ImageContent], list[str]]:
    """``(first prompt text, images, remaining messages)`` from the positional CLI arguments.

    ``auto_resize`` is the setting ``images.autoResize``: large images are shrunk to fit model
    limits (with Pillow) and the file block says so. Raises :class:`InputFileError` for a
    missing or unreadable ``@file``.
    """
    file_text: list[str] = []
    images: list[ImageContent] = []
    messages: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1:
            text, image = read_file_argument(arg[1:], cwd, auto_resize)
            file_text.append(text)
            if image is not None:
                images.append(image)
        else:
            messages.append(arg)
    first = (stdin_text or "") + "".join(file_text) + (messages[0] if messages else "")
    return first, images, messages[1:]
