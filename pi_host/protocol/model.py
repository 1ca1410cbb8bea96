"""What a provider needs to answer: the model descriptor, the context and the stream options."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_host._record import Field
from pi_host.protocol.abort import AbortSignal
from pi_host.protocol.messages import Number, PiModel, ToolDecl


class ModelCost(PiModel):
    """Prices in USD per million tokens."""

    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    tiers: list[dict[str, Any]] | None = None


class Model(PiModel):
    """A model as the catalog and models.json describe it (reference §3.11)."""

    id: str
    name: str = ""
    api: str = ""
    provider: str = ""
    base_url: str = ""
    reasoning: bool = False
    thinking_level_map: dict[str, str | None] | None = None
    input: list[str] = Field(default_factory=lambda: ["text"])
    input_limits: dict[str, Any] | None = None
    cost: ModelCost = Field(default_factory=ModelCost)
    prompt_cache: dict[str, Any] | None = None
    context_window: int = 128000
    max_tokens: int = 16384
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    sampling_params: dict[str, Any] | None = None
    sampling_params_by_thinking_level: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.id}"

    def supports_images(self) -> bool:
        return "image" in self.input


@dataclass
class LlmContext:
    """The transcript a provider converts: system messages included (reference §1.2)."""

    messages: list[Any]
    tools: list[ToolDecl] = field(default_factory=list)
    """The current tool list, for APIs that take tools at the top level."""


@dataclass
class StreamOptions:
    """What one provider request may use beyond the model and the context.

    The ``on_*`` callbacks are how the session's plugin hooks reach the provider's HTTP layer
    (``pi_host.lib.llm.http`` calls them); each is None when no plugin listens, and may be sync
    or async.
    """

    signal: AbortSignal | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    thinking_level: str | None = None
    """pi level (off/minimal/low/medium/high/xhigh/max); None means off."""
    temperature: float | None = None
    session_id: str | None = None
    cache_retention: str = "short"
    headers: dict[str, str] = field(default_factory=dict)
    thinking_budgets: dict[str, int] | None = None
    retry: dict[str, Any] | None = None
    """Provider-level retries: pi's ``retry.provider`` settings (``maxRetries`` defaults to 0)."""
    idle_timeout_ms: int | str | None = None
    """``httpIdleTimeoutMs``: the wait for the response headers, then for each piece of the body;
    None is pi's default (300000), 0 or ``"disabled"`` waits forever."""
    secrets: list[str] = field(default_factory=list)
    """Every credential the catalog knows (other providers' keys too): the provider layer keeps
    them, and ``api_key``, out of error texts, events and session entries."""
    client: Any = None
    """An ``httpx.AsyncClient`` to use instead of the shared one."""
    on_payload: Callable[[dict[str, Any]], Any] | None = None
    """``before_provider_request``: called with the request body; a non-None return replaces it."""
    on_headers: Callable[[dict[str, Any]], Any] | None = None
    """``before_provider_headers``: mutate the dict; a value set to None drops that header."""
    on_response: Callable[[int, dict[str, Any]], Any] | None = None
    """``after_provider_response``: status and headers, before the body is read."""
    on_stream_event: Callable[[Any], Any] | None = None
    """``provider_stream_event``: each decoded stream chunk."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Options of a provider plugin's own; the host sets nothing here."""


class StreamFn(Protocol):
    """A provider API: turns a context into a stream of AssistantMessageEvents.

    Once called it must not raise: failures end the stream with an ``error`` event.
    """

    def __call__(self, model: Model, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]: ...
