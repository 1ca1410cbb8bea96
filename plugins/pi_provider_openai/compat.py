"""Compat flags for OpenAI-compatible chat-completions servers (reference §3.4, §3.12).

Servers that speak "the OpenAI API" differ in small ways: which token-cap field they accept,
whether they know ``store`` or the ``developer`` role, how reasoning is switched on. The defaults
are detected from the provider id first, then the base URL; a ``compat`` dict from the catalog or
models.json (provider level, then model level) wins field by field.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "supportsStore": True,
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": True,
    "supportsUsageInStreaming": True,
    "supportsFinishReason": True,
    "supportsStrictMode": False,
    "supportsMidConvoSystemMessages": False,
    "supportsMidConvoToolAdditions": False,
    "supportsOpenAIGrammarTools": False,
    "maxTokensField": "max_completion_tokens",
    "thinkingFormat": "openai",
    "thinkingTokenBudgetField": None,
    "chatTemplateKwargs": None,
    "requiresToolResultName": False,
    "requiresAssistantAfterToolResult": False,
    "requiresThinkingAsText": False,
    "requiresNonNullAssistantContent": False,
    "requiresToolsWithToolHistory": False,
    "requiresReasoningContentOnAssistantMessages": False,
    "requiresMistralToolIds": False,
    "promptCacheKeyMode": "auto",
    "cacheControlFormat": None,
    "sessionAffinityHeader": None,
    "vllmPriority": None,
}

# Host families, each recognised by provider id or by a fragment of the base URL.
_FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # family: (provider ids, base-URL fragments)
    "openai": (("openai",), ("api.openai.com",)),
    "openrouter": (("openrouter",), ("openrouter.ai",)),
    "cerebras": (("cerebras",), ("cerebras.ai",)),
    "xai": (("xai",), ("api.x.ai",)),
    "together": (("together",), ("together.xyz", "together.ai")),
    "deepseek": (("deepseek",), ("deepseek.com",)),
    "zai": (("zai", "z.ai", "zai-coding"), ("api.z.ai", "bigmodel.cn")),
    "moonshot": (("moonshot", "moonshotai", "kimi"), ("moonshot.ai", "moonshot.cn")),
    "nvidia": (("nvidia",), ("nvidia.com",)),
    "opencode": (("opencode",), ("opencode.ai",)),
    "cloudflare-gateway": (("cloudflare-ai-gateway",), ("gateway.ai.cloudflare.com",)),
    "cloudflare": (("cloudflare", "cloudflare-workers-ai"), ("cloudflare.com",)),
    "chutes": (("chutes",), ("chutes.ai",)),
    "ant-ling": (("ant-ling", "antling", "ling"), ("ant-ling", "antling")),
    "mistral": (("mistral",), ("mistral.ai",)),
    "groq": (("groq",), ("groq.com",)),
}

_NO_STORE = {
    "cerebras",
    "xai",
    "together",
    "deepseek",
    "zai",
    "moonshot",
    "nvidia",
    "opencode",
    "cloudflare",
    "cloudflare-gateway",
    "chutes",
    "ant-ling",
    "mistral",
}
_NO_REASONING_EFFORT = {"xai", "zai", "moonshot", "together", "cloudflare-gateway", "nvidia", "ant-ling"}
_MAX_TOKENS_FIELD = {
    "chutes",
    "deepseek",
    "moonshot",
    "cloudflare-gateway",
    "together",
    "nvidia",
    "ant-ling",
    "zai",
    "mistral",
}
_THINKING_FORMATS = {
    "deepseek": "deepseek",
    "zai": "zai",
    "together": "together",
    "ant-ling": "ant-ling",
    "openrouter": "openrouter",
}


def host_family(provider: str, base_url: str) -> str | None:
    """The known host family of a provider: by id first, then by base URL."""
    provider = (provider or "").lower()
    for family, (ids, _fragments) in _FAMILIES.items():
        if provider in ids:
            return family
    url = (base_url or "").lower()
    for family, (_ids, fragments) in _FAMILIES.items():
        if any(fragment in url for fragment in fragments):
            return family
    return None


def detect(provider: str, base_url: str, model_id: str = "") -> dict[str, Any]:
    """The compat defaults for a provider/base URL/model, before any explicit ``compat``."""
    flags = dict(DEFAULTS)
    family = host_family(provider, base_url)
    if family in _NO_STORE:
        flags["supportsStore"] = False
    if family == "openai":
        flags["supportsDeveloperRole"] = True
    if family in _NO_REASONING_EFFORT:
        flags["supportsReasoningEffort"] = False
    if family in _MAX_TOKENS_FIELD:
        flags["maxTokensField"] = "max_tokens"
    if family in _THINKING_FORMATS:
        flags["thinkingFormat"] = _THINKING_FORMATS[family]
    if family == "deepseek":
        flags["requiresReasoningContentOnAssistantMessages"] = True
    if family == "mistral":
        # Mistral's endpoint validates strictly: 9-character tool ids, named tool results, no
        # reasoning_effort or stream_options (usage comes in the last chunk anyway), thinking
        # replayed as text.
        flags.update(
            requiresMistralToolIds=True,
            requiresToolResultName=True,
            requiresThinkingAsText=True,
            supportsReasoningEffort=False,
            supportsUsageInStreaming=False,
            # pi's Mistral SDK request carries the session as its prompt-cache key
            promptCacheKeyMode="enabled",
        )
    if family == "openrouter":
        flags["sessionAffinityHeader"] = "x-session-id"
        if (model_id or "").startswith("anthropic/"):
            flags["cacheControlFormat"] = "anthropic"
    return flags


def resolve(model: Any) -> dict[str, Any]:
    """Detected defaults overlaid with the model's explicit ``compat`` (already merged
    provider-then-model by the registry), field by field. Unknown keys are kept."""
    flags = detect(getattr(model, "provider", ""), getattr(model, "base_url", ""), getattr(model, "id", ""))
    explicit = getattr(model, "compat", None) or {}
    for key, value in explicit.items():
        flags[key] = value
    return flags
