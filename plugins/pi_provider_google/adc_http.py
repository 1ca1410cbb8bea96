"""The HTTP calls of application default credentials (token exchanges, subject-token sources,
AWS metadata): each failure is one line naming the URL and what the endpoint said."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

TIMEOUT_S = 30

Fail = Callable[[str], Exception]
"""Makes the caller's error (``adc.CredentialsError``) from a message."""


def fetch(request: urllib.request.Request, what: str, fail: Fail, timeout: float = TIMEOUT_S) -> bytes:
    """The body of ``request``; a failure is ``fail("<what> at <url> failed: ...")`` with the
    status and the endpoint's error (``{"error", "error_description"}``, Google APIs'
    ``{"error": {...}}``, or the start of the body)."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (the credentials file's URLs)
            return response.read()
    except urllib.error.HTTPError as exc:
        raise fail(f"{what} at {request.full_url} failed: {exc.code} {_detail(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise fail(f"{what} at {request.full_url} failed: {getattr(exc, 'reason', exc)}") from None


def call(request: urllib.request.Request, what: str, fail: Fail) -> dict[str, Any]:
    """The JSON answer of ``request`` (failures as :func:`fetch`'s)."""
    raw = fetch(request, what, fail)
    try:
        return json.loads(raw or b"{}")
    except ValueError as exc:
        raise fail(f"{what} at {request.full_url} failed: {exc}") from None


def _detail(exc: urllib.error.HTTPError) -> str:
    raw = exc.read().decode("utf-8", "replace")
    try:
        body = json.loads(raw)
        error = body.get("error")
    except (ValueError, AttributeError):
        return raw[:200].strip() or str(exc.reason)
    if isinstance(error, dict):  # Google APIs: {"error": {"code", "message", "status"}}
        return f"{error.get('status', '')}: {error.get('message', '')}".strip(": ")
    return f"{error or ''}: {body.get('error_description', '')}".strip(": ")
