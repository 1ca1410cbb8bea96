"""Compaction and branch-summary settings (reference §7.1, §7.9, §8.6).

``compaction.enabled`` (true), ``compaction.reserveTokens`` (16384),
``compaction.keepRecentTokens`` (20000), ``compaction.modelOverrides["provider/id"]`` with its own
``reserveTokens`` / ``keepRecentTokens`` (each falls back on its own: override, then the ordinary
setting, then the default), ``compaction.strategy`` (a strategy name), and
``branchSummary.reserveTokens`` (16384) / ``branchSummary.skipPrompt`` (false).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
DEFAULT_BRANCH_RESERVE_TOKENS = 16384
DEFAULT_CONTEXT_WINDOW = 128000
MAX_SAFE_INTEGER = 2**53 - 1


class CompactionSettingsError(ValueError):
    """A compaction setting has an unusable value (the message names the key)."""


@dataclass(frozen=True)
class CompactionSettings:
    """The ``compaction`` settings, checked: whether it runs automatically and its token
    budgets."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    strategy: str | None = None
    """The strategy named by ``compaction.strategy``; None lets the host pick (see Compactor)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True)
class BranchSummarySettings:
    """The ``branchSummary`` settings, checked: the summary's token reserve and whether to skip
    its prompt."""

    reserve_tokens: int = DEFAULT_BRANCH_RESERVE_TOKENS
    skip_prompt: bool = False


def _count(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SAFE_INTEGER:
        raise CompactionSettingsError(f"{key} must be a non-negative integer, got {value!r}")
    return value


def _section(settings: dict[str, Any], name: str) -> dict[str, Any]:
    value = settings.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CompactionSettingsError(f"{name} must be an object, got {value!r}")
    return value


def resolve_settings(settings: dict[str, Any], model: Any = None) -> CompactionSettings:
    """The effective compaction settings for ``model`` (``provider``/``id`` attributes)."""
    section = _section(settings, "compaction")
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise CompactionSettingsError(f"compaction.enabled must be true or false, got {enabled!r}")
    reserve = DEFAULT_RESERVE_TOKENS
    keep = DEFAULT_KEEP_RECENT_TOKENS
    if "reserveTokens" in section:
        reserve = _count(section["reserveTokens"], "compaction.reserveTokens")
    if "keepRecentTokens" in section:
        keep = _count(section["keepRecentTokens"], "compaction.keepRecentTokens")
    overrides = section.get("modelOverrides") or {}
    if not isinstance(overrides, dict):
        raise CompactionSettingsError("compaction.modelOverrides must be an object")
    if model is not None:
        key = f"{getattr(model, 'provider', '')}/{getattr(model, 'id', '')}"
        override = overrides.get(key)  # exact, case-sensitive (§7.1)
        if override is not None:
            if not isinstance(override, dict):
                raise CompactionSettingsError(f"compaction.modelOverrides[{key!r}] must be an object")
            where = f"compaction.modelOverrides[{key!r}]"
            if "reserveTokens" in override:
                reserve = _count(override["reserveTokens"], f"{where}.reserveTokens")
            if "keepRecentTokens" in override:
                keep = _count(override["keepRecentTokens"], f"{where}.keepRecentTokens")
    strategy = section.get("strategy")
    if strategy is not None and not isinstance(strategy, str):
        raise CompactionSettingsError(f"compaction.strategy must be a string, got {strategy!r}")
    return CompactionSettings(enabled, reserve, keep, strategy or None)


def resolve_branch_settings(settings: dict[str, Any]) -> BranchSummarySettings:
    section = _section(settings, "branchSummary")
    reserve = DEFAULT_BRANCH_RESERVE_TOKENS
    if "reserveTokens" in section:
        reserve = _count(section["reserveTokens"], "branchSummary.reserveTokens")
    skip = section.get("skipPrompt", False)
    if not isinstance(skip, bool):
        raise CompactionSettingsError(f"branchSummary.skipPrompt must be true or false, got {skip!r}")
    return BranchSummarySettings(reserve, skip)


def should_compact(context_tokens: int, context_window: int | None, settings: CompactionSettings) -> bool:
    """The threshold (§7.1): ``contextTokens > contextWindow - reserveTokens``."""
    if not settings.enabled or not context_window:
        return False
    return context_tokens > context_window - settings.reserve_tokens
