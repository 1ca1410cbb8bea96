"""pi's documented settings defaults (reference §8.6), readable without pydantic."""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "defaultThinkingLevel": "medium",
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "defaultTools": ["read", "bash", "edit", "write"],
    "compaction.enabled": True,
    "compaction.reserveTokens": 16384,
    "compaction.keepRecentTokens": 20000,
    "branchSummary.reserveTokens": 16384,
    "branchSummary.skipPrompt": False,
    "retry.enabled": True,
    "retry.maxRetries": 3,
    "retry.baseDelayMs": 2000,
    "retry.maxAgentDelayMs": 60000,
    "retry.provider.maxRetries": 0,
    "retry.provider.maxRetryDelayMs": 60000,
    "transport": "auto",
    "httpIdleTimeoutMs": 300000,
    "shellOutputLogMaxBytes": 100 * 1024 * 1024,
    "shellScrubProviderKeys": False,
    "pluginHookTimeoutMs": 120000,
    "images.autoResize": True,
    "images.blockImages": False,
    "enableSkillCommands": True,
    "defaultProjectTrust": "ask",
    "cacheWarming": "idle",
    "doubleEscapeAction": "tree",
    "hideThinkingBlock": False,
    "theme": "system",
    "quietStartup": False,
}
"""pi's documented defaults, by dotted key (what :func:`pi_host.config.settings.get` falls back to)."""

RESOURCE_KEYS = ("packages", "extensions", "skills", "prompts", "themes")
USER_ONLY_KEYS = ("defaultProjectTrust",)
