"""Provider variables as pi reads them: the request's provider ``env`` (auth.json's ``env`` for
that provider, put in ``StreamOptions.extra["env"]`` by the model registry, or given by an SDK
caller) first, then the process environment. Cloud providers take their account ids, regions,
projects and endpoints from here (``CLOUDFLARE_ACCOUNT_ID``, ``AWS_REGION``,
``GOOGLE_CLOUD_PROJECT``, ``AZURE_OPENAI_BASE_URL``...)."""

from __future__ import annotations

import os
from typing import Any


def scoped_env(options: Any) -> dict[str, str]:
    """The request's own provider variables (without the process environment)."""
    extra = getattr(options, "extra", None) or {}
    env = extra.get("env") if isinstance(extra, dict) else None
    return env if isinstance(env, dict) else {}


def env_value(options: Any, name: str) -> str | None:
    """``name`` from the request's provider env, else the process environment; empty is unset."""
    return scoped_env(options).get(name) or os.environ.get(name) or None


def is_placeholder_key(key: str | None) -> bool:
    """A stand-in credential (``<authenticated>``: ambient cloud credentials), not a real key."""
    return not key or (key.startswith("<") and key.endswith(">"))
