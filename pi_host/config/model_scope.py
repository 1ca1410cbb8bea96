"""Which models ``--models`` and ``enabledModels`` name (pi's scoped models for Ctrl+P)."""

from __future__ import annotations

import fnmatch
from typing import Any

from pi_host.config.models import THINKING_LEVELS


def scope_patterns(value: Any) -> list[str]:
    """The model patterns of ``--models`` (a comma list) or ``enabledModels`` (a list)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(part).strip() for part in value if str(part).strip()]
    return []


def scoped_models(models: list[Any], patterns: list[str]) -> list[tuple[Any, str | None]]:
    """The models the patterns name, in pattern order: ``provider/id`` or ``id``, globs allowed,
    an optional ``:level`` pinning the thinking level (pi's ``--models`` / ``enabledModels``)."""
    scoped: list[tuple[Any, str | None]] = []
    seen: set[str] = set()
    for pattern in patterns:
        level = None
        head, _, suffix = pattern.rpartition(":")
        if head and suffix in THINKING_LEVELS:
            pattern, level = head, suffix
        wanted = pattern.lower()
        for model in models:
            key = f"{model.provider}/{model.id}"
            if key in seen:
                continue
            if fnmatch.fnmatchcase(key.lower(), wanted) or fnmatch.fnmatchcase(model.id.lower(), wanted):
                seen.add(key)
                scoped.append((model, level))
    return scoped
