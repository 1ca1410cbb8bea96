"""Keeping credentials out of what leaves the provider layer: error texts, events, session files.

Servers sometimes echo the key they were sent (``"Invalid API key: sk-ant-…"``), and an error
text becomes the assistant's ``errorMessage``: printed on stderr, sent in the JSON stream and
saved in the session file. :class:`Redactor` replaces

* every secret it was given (the request's key, the other keys the catalog knows, every header
  value configured in ``models.json`` whatever its name, the values of the credential headers
  actually sent), also in their JSON-escaped and URL-encoded spellings;
* anything shaped like a provider token (``sk-ant-…``, ``sk-…``, ``AIza…``, ``gsk_…``, JWTs,
  ``Bearer <token>``), so a key nobody configured here is not repeated either.

Secrets shorter than :data:`MIN_SECRET_LENGTH` are not searched for: placeholder keys such as
``"dummy"`` or ``"none"`` (local servers) and header values such as ``"ops"`` would otherwise eat
ordinary words.

A redactor made by :meth:`Redactor.from_options` reads ``options.secrets`` when it is used, not
when it is made: a request's ``!command`` header values are resolved (and added to the list by
:func:`pi_host.lib.llm.http.request_headers`) after the adapter made its ``MessageBuilder``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from pi_host.config.credentials import secret_values

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


def _compile(secrets: Iterable[str | None]) -> re.Pattern[str] | None:
    spellings: set[str] = set()
    for secret in secrets:
        if isinstance(secret, str):
            secret = secret.strip()
            if len(secret) >= MIN_SECRET_LENGTH:
                spellings |= _spellings(secret)
    # Longest first, so a key is not half-replaced by a shorter secret it contains.
    ordered = sorted(spellings, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


class Redactor:
    """Replaces known secrets and token-shaped strings with :data:`REDACTED`."""

    __slots__ = ("_known", "_options", "_extra", "_seen")

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._known = _compile(secrets)
        self._options: Any = None
        self._extra: tuple[str | None, ...] = ()
        self._seen: tuple[Any, ...] | None = None

    @classmethod
    def from_options(cls, options: Any, extra: Iterable[str | None] = ()) -> Redactor:
        """For one request: ``options.api_key``, ``options.secrets`` (as they are when a text is
        redacted) and ``extra``. Compiled on first use: most requests never redact anything."""
        redactor = cls()
        redactor._options = options
        redactor._extra = tuple(extra)
        return redactor

    def _pattern(self) -> re.Pattern[str] | None:
        if self._options is None:
            return self._known
        options = self._options
        current = (
            getattr(options, "api_key", None),
            *(getattr(options, "secrets", None) or ()),
            *self._extra,
        )
        if current != self._seen:
            self._known, self._seen = _compile(current), current
        return self._known

    def __call__(self, text: str) -> str:
        if not text:
            return text
        known = self._pattern()
        if known is not None:
            text = known.sub(REDACTED, text)
        text = _SHAPES.sub(REDACTED, text)
        return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def header_secrets(headers: dict[str, Any]) -> list[str]:
    """The credential values among request headers (a ``Bearer`` value also without its scheme)."""
    found: list[str] = []
    for name, value in headers.items():
        if CREDENTIAL_HEADER.search(name):
            found += secret_values(value)
    return found


PATTERNS_ONLY = Redactor()
"""Token shapes only, for callers that know no secrets."""
