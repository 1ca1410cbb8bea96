"""Keeping credentials out of what leaves the provider layer: error texts, events, session files.

Servers sometimes echo the key they were sent (``"Invalid API key: sk-ant-…"``), and an error
text becomes the assistant's ``errorMessage``: printed on stderr, sent in the JSON stream and
saved in the session file. :class:`Redactor` replaces

* every secret it was given (the request's key, the other keys the catalog knows, the values of
  the credential headers actually sent), also in their JSON-escaped and URL-encoded spellings;
* anything shaped like a provider token (``sk-ant-…``, ``sk-…``, ``AIza…``, ``gsk_…``, JWTs,
  ``Bearer <token>``), so a key nobody configured here is not repeated either.

Secrets shorter than :data:`MIN_SECRET_LENGTH` are not searched for: placeholder keys such as
``"dummy"`` or ``"none"`` (local servers) would otherwise eat ordinary words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8

_SHAPES = re.compile(
    "|".join(
        [
            r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{8,}",  # Anthropic keys and OAuth tokens
            r"(?<![\w-])sk-[A-Za-z0-9_-]{20,}",  # OpenAI (sk-proj-…) and compatible (sk-or-…)
            r"(?<![\w-])AIza[0-9A-Za-z_-]{30,}",  # Google API keys
            r"(?<![\w-])(?:gsk|xai|hf|ghp|gho|ghu|ghs|github_pat)[_-][A-Za-z0-9_]{20,}",
            r"(?<![\w-])eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}",  # JWTs (OAuth access tokens)
        ]
    )
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")

CREDENTIAL_HEADER = re.compile(r"(?i)^(authorization|proxy-authorization|cookie|api-key)$|key|token|secret")
"""Request header names whose values are credentials (``x-api-key``, ``x-goog-api-key``…)."""


def _spellings(secret: str) -> set[str]:
    """The secret as it may appear in a body: raw, JSON-escaped, URL-encoded."""
    return {secret, json.dumps(secret)[1:-1], quote(secret, safe=""), quote(secret)}


class Redactor:
    """Replaces known secrets and token-shaped strings with :data:`REDACTED`."""

    __slots__ = ("_known",)

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        spellings: set[str] = set()
        for secret in secrets:
            if isinstance(secret, str):
                secret = secret.strip()
                if len(secret) >= MIN_SECRET_LENGTH:
                    spellings |= _spellings(secret)
        # Longest first, so a key is not half-replaced by a shorter secret it contains.
        ordered = sorted(spellings, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @classmethod
    def from_options(cls, options: Any, extra: Iterable[str | None] = ()) -> Redactor:
        """For one request: ``options.api_key``, ``options.secrets`` and ``extra``."""
        secrets = [getattr(options, "api_key", None), *(getattr(options, "secrets", None) or ()), *extra]
        return cls(secrets)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        text = _SHAPES.sub(REDACTED, text)
        return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def header_secrets(headers: dict[str, Any]) -> list[str]:
    """The credential values among request headers (a ``Bearer`` value also without its scheme)."""
    found: list[str] = []
    for name, value in headers.items():
        if isinstance(value, str) and CREDENTIAL_HEADER.search(name):
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    return found


PATTERNS_ONLY = Redactor()
"""Token shapes only, for callers that know no secrets."""
