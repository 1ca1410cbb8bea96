"""Composing the first prompt from CLI arguments (reference §8.8).

``pi [options] [@files...] [messages...]``: each ``@path`` argument is read. Text files are inlined
as ``<file name="<abs path>">`` blocks; images are attached and get a block naming them (saying
so when ``images.autoResize`` shrank them to model limits); empty files are skipped; a missing file is an error (the CLI prints it and exits 1). The first
prompt is piped stdin text + file blocks + the first message, with no separator; later messages
are sent as separate prompts, in order.
"""

from __future__ import annotations

import os

from pi_host.protocol import ImageContent


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


def read_file_argument(arg: str, cwd: str, auto_resize: bool = True) -> tuple[str, ImageContent | None]:
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
