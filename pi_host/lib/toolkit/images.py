"""Recognising images by their bytes and fitting them to model limits (reference §5.2).

Detection never trusts the file name. Resizing needs Pillow (the optional ``images`` extra);
without it images are passed through when they are within the size limit and omitted otherwise.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

MAX_DIMENSION = 2000
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
DEFAULT_JPEG_QUALITY = 80
_FALLBACK_QUALITIES = (70, 55, 40)
_SCALE_STEPS = (0.75, 0.5, 0.35, 0.25)


def detect_image_mime(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes (16 are enough), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and len(head) >= 14:
        return "image/bmp"
    return None


def file_image_mime(data: bytes) -> str | None:
    """The image type of a whole file from its bytes (names are not trusted); ``BM`` also starts
    ordinary text, so a BMP counts only when its header repeats the file's size."""
    mime = detect_image_mime(data[:16])
    if mime == "image/bmp" and int.from_bytes(data[2:6], "little") != len(data):
        return None
    return mime


def pillow_available() -> bool:
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class PreparedImage:
    """An image made ready for a model: the bytes to send, their type, and how it was resized."""

    data: bytes | None
    """The bytes to send, or None when no acceptable encoding exists."""
    mime_type: str
    original_size: tuple[int, int] | None = None
    final_size: tuple[int, int] | None = None
    note: str | None = None
    """Why the image was changed or omitted, for the model."""

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data or b"").decode("ascii")

    @property
    def scale(self) -> float | None:
        """Original width divided by sent width, when the image was shrunk."""
        if not self.original_size or not self.final_size or self.final_size[0] == 0:
            return None
        if self.original_size == self.final_size:
            return None
        return self.original_size[0] / self.final_size[0]


def _b64_len(size: int) -> int:
    return 4 * ((size + 2) // 3)


def prepare_image(
    data: bytes,
    mime_type: str,
    *,
    auto_resize: bool = True,
    max_dimension: int = MAX_DIMENSION,
    max_base64_bytes: int = MAX_BASE64_BYTES,
    jpeg_quality: int = DEFAULT_JPEG_QUALITY,
) -> PreparedImage:
    """Fit an image within ``max_dimension`` square and ``max_base64_bytes`` of base64.

    Order of attempts: the original (when it already fits), the smaller of PNG and JPEG at
    ``jpeg_quality``, lower JPEG qualities, then smaller dimensions. BMP always becomes PNG.
    """
    if not pillow_available():
        if mime_type == "image/bmp" or _b64_len(len(data)) > max_base64_bytes:
            return PreparedImage(
                None, mime_type, note="Pillow is not installed, so the image could not be converted or shrunk"
            )
        return PreparedImage(data, mime_type)
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # corrupt or unsupported file: say so instead of failing the read
        if _b64_len(len(data)) <= max_base64_bytes and mime_type != "image/bmp":
            return PreparedImage(data, mime_type, note=f"could not decode image ({exc})")
        return PreparedImage(None, mime_type, note=f"could not decode image ({exc})")
    original = image.size
    fits_dims = max(original) <= max_dimension
    if mime_type != "image/bmp" and (
        not auto_resize or (fits_dims and _b64_len(len(data)) <= max_base64_bytes)
    ):
        if _b64_len(len(data)) <= max_base64_bytes:
            return PreparedImage(data, mime_type, original, original)
        return PreparedImage(None, mime_type, original, None, note="image is larger than the size limit")
    if not auto_resize and mime_type == "image/bmp":
        encoded = _encode(image, "PNG")
        if _b64_len(len(encoded)) <= max_base64_bytes:
            return PreparedImage(encoded, "image/png", original, original)
        return PreparedImage(None, mime_type, original, None, note="image is larger than the size limit")

    working = image
    if not fits_dims:
        ratio = max_dimension / max(original)
        working = image.resize(_scaled(original, ratio), Image.LANCZOS)
    for scale in (1.0, *_SCALE_STEPS):
        candidate = working if scale == 1.0 else working.resize(_scaled(working.size, scale), Image.LANCZOS)
        png = _encode(candidate, "PNG")
        jpeg = _encode(candidate, "JPEG", jpeg_quality)
        best, best_mime = (png, "image/png") if len(png) <= len(jpeg) else (jpeg, "image/jpeg")
        if _b64_len(len(best)) <= max_base64_bytes:
            return PreparedImage(best, best_mime, original, candidate.size)
        for quality in _FALLBACK_QUALITIES:
            jpeg = _encode(candidate, "JPEG", quality)
            if _b64_len(len(jpeg)) <= max_base64_bytes:
                return PreparedImage(jpeg, "image/jpeg", original, candidate.size)
    return PreparedImage(None, mime_type, original, None, note="no encoding of the image fits the size limit")


def _scaled(size: tuple[int, int], ratio: float) -> tuple[int, int]:
    return max(1, round(size[0] * ratio)), max(1, round(size[1] * ratio))


def _encode(image, fmt: str, quality: int | None = None) -> bytes:  # type: ignore[no-untyped-def]
    buffer = io.BytesIO()
    if fmt == "JPEG":
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        image.save(buffer, "JPEG", quality=quality or DEFAULT_JPEG_QUALITY)
    else:
        if image.mode not in ("RGB", "RGBA", "L", "LA", "P", "1", "I", "I;16"):
            image = image.convert("RGBA")
        image.save(buffer, "PNG", optimize=False)
    return buffer.getvalue()
