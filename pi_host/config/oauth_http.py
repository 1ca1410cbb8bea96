"""The HTTP pieces the subscription sign-ins and token refreshes share (reference §3.10).

Stdlib only (``urllib``), since a refresh runs on the request path of every provider that has an
OAuth login and a login runs once: no client library is worth its import time here.

Test hooks (pi has neither; both point the flows at a loopback authorization server):

* ``PI_HOST_OAUTH_ORIGIN`` (``http://127.0.0.1:<port>``) replaces the scheme and host of every
  OAuth endpoint, keeping the path: authorize, token, device, Copilot token and models, Meta key
  mint. Authorize URLs shown to the user are rewritten too.
* ``PI_HOST_OAUTH_TOKEN_URL`` replaces every token endpoint used by a *refresh* (older hook,
  kept for the tests that use it).

Secrets: nothing here logs; error texts carry the HTTP status and the server's ``error`` /
``error_description`` fields, never a request body, and never a token the server echoed back
(:func:`safe_detail` cuts texts that look like one).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

ORIGIN_ENV = "PI_HOST_OAUTH_ORIGIN"
TOKEN_URL_ENV = "PI_HOST_OAUTH_TOKEN_URL"
DEFAULT_TIMEOUT_S = 15.0  # pi bounds a refresh at 15 s; the auth.json lock is held meanwhile


class OAuthError(Exception):
    """A sign-in or refresh failed; the message is one line, safe to show (no token in it)."""


def endpoint(url: str, *, token: bool = False) -> str:
    """``url`` as the test hooks redirect it (see the module doc)."""
    if token and os.environ.get(TOKEN_URL_ENV):
        return os.environ[TOKEN_URL_ENV]
    origin = os.environ.get(ORIGIN_ENV)
    if not origin:
        return url
    parts = urllib.parse.urlsplit(url)
    target = urllib.parse.urlsplit(origin)
    return urllib.parse.urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))


_TOKENISH = re.compile(r"[A-Za-z0-9_\-\.]{24,}")


def safe_detail(text: str, limit: int = 200) -> str:
    """A server's error text cut to one short line, long token-like runs replaced: an
    authorization server may echo the refresh token it refused."""
    line = " ".join(str(text).split())
    return _TOKENISH.sub("…", line)[:limit]


def request(
    method: str,
    url: str,
    *,
    form: dict[str, str] | None = None,
    json_body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> tuple[int, Any, str]:
    """``(status, parsed JSON or None, raw text)``; HTTP errors are answers, not exceptions;
    a connection failure is an :class:`OAuthError` naming the host only."""
    data: bytes | None = None
    sent = {"accept": "application/json", **(headers or {})}
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        sent.setdefault("content-type", "application/x-www-form-urlencoded")
    elif json_body is not None:
        data = json.dumps(json_body).encode()
        sent.setdefault("content-type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:  # noqa: S310 (https or loopback)
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (OSError, ValueError) as exc:
        host = urllib.parse.urlsplit(url).netloc
        reason = getattr(exc, "reason", None) or exc
        raise OAuthError(f"could not reach {host}: {reason}") from None
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    return status, body, text


def error_fields(body: Any) -> str:
    """``error: description`` from an OAuth error answer (RFC 6749 §5.2), or ``""``."""
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    if isinstance(error, dict):  # OpenAI's {"error": {"code", "message"}}
        error = error.get("code") or error.get("message")
    parts = [
        p for p in (error, body.get("error_description") or body.get("message")) if isinstance(p, str) and p
    ]
    return safe_detail(": ".join(parts))


def failure(action: str, status: int, body: Any, text: str = "") -> OAuthError:
    detail = error_fields(body) or (safe_detail(text) if not isinstance(body, dict) else "")
    return OAuthError(f"{action} failed (HTTP {status})" + (f": {detail}" if detail else ""))


def pkce() -> tuple[str, str]:
    """``(verifier, S256 challenge)``: 32 random bytes, base64url without padding (RFC 7636)."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWT (not verified: only read for the account id the server put there)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def trusted_http_url(value: Any, *, https_only: bool = False) -> str | None:
    """``value`` when it is an http(s) URL (a login opens server-supplied URLs in the browser,
    which would also launch ``file:`` or custom-scheme URLs), else None."""
    if not isinstance(value, str) or not value:
        return None
    scheme = urllib.parse.urlsplit(value).scheme.lower()
    allowed = ("https",) if https_only else ("http", "https")
    return value if scheme in allowed else None


def string_field(body: Any, name: str, action: str) -> str:
    value = body.get(name) if isinstance(body, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise OAuthError(f"{action}: the answer has no valid {name}")
    return value


def positive_number(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return float(value)
