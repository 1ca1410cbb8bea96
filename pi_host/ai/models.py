"""The model catalog and the calls through it: :class:`Models`, and module-level shortcuts over
the catalog the installed provider plugins build (:func:`default_models`).

The catalog is the CLI's (:class:`pi_host.config.models.ModelRegistry`) without the agent dir:
no models.json, no auth.json. A key comes from the call (``api_key=``), from
:meth:`Models.set_api_key`, or from the provider's environment variables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from pi_host.ai.context import Context, to_llm_context
from pi_host.ai.response import AssistantMessageStream, error_stream
from pi_host.config.models import ModelRegistry, ProviderApi, ProviderInfo
from pi_host.protocol.messages import AssistantMessage
from pi_host.protocol.model import LlmContext, Model, StreamOptions

__all__ = [
    "Models",
    "builtin_models",
    "complete",
    "complete_simple",
    "create_models",
    "default_models",
    "get_model",
    "get_models",
    "stream",
    "stream_simple",
]

ContextLike = Context | LlmContext | list[Any]
_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(StreamOptions))


class Models:
    """Providers (their APIs and models) and the stream functions that serve them."""

    def __init__(
        self,
        apis: Iterable[ProviderApi] = (),
        providers: Iterable[ProviderInfo] = (),
        *,
        api_keys: dict[str, str] | None = None,
    ) -> None:
        self._apis = list(apis)
        self._providers = list(providers)
        self._keys = dict(api_keys or {})
        self._build()

    def _build(self) -> None:
        self.registry = ModelRegistry(self._apis, self._providers, agent_dir_files=False)
        """The underlying catalog (what the coding agent's sessions use too)."""
        self.registry.runtime_keys.update(self._keys)

    # --- the catalog -------------------------------------------------------------------------

    def set_provider(self, info: ProviderInfo, api: ProviderApi | None = None) -> None:
        """Add or replace a provider (and the API implementation it needs, when new)."""
        self._providers = [p for p in self._providers if p.id != info.id] + [info]
        if api is not None:
            self._apis = [a for a in self._apis if a.api != api.api] + [api]
        self._build()

    def get_providers(self) -> list[str]:
        return list(self.registry.providers)

    def get_models(self, provider: str | None = None) -> list[Model]:
        return [m for m in self.registry.models() if provider is None or m.provider == provider]

    def get_model(self, provider: str, model_id: str) -> Model | None:
        """The model, or None when the catalog has no such provider or id."""
        return self.registry.find(provider, model_id)

    def find(self, pattern: str) -> Model:
        """``provider/id``, an exact id or name, else a substring match (``--model``'s rules)."""
        return self.registry.resolve(pattern)

    # --- keys --------------------------------------------------------------------------------

    def set_api_key(self, provider: str, key: str) -> None:
        self._keys[provider] = key
        self.registry.runtime_keys[provider] = key

    def get_api_key(self, provider: str) -> str | None:
        """A key set here, else the provider's environment variables."""
        return self.registry.get_api_key(provider)

    # --- requests ----------------------------------------------------------------------------

    def stream(
        self,
        model: Model,
        context: ContextLike,
        options: StreamOptions | None = None,
        **fields: Any,
    ) -> AssistantMessageStream:
        """Start a request: the unified events of the model's answer (never raises).
        ``fields`` set :class:`StreamOptions` fields (``api_key=``, ``signal=``, ``max_tokens=``...)."""
        options = dataclasses.replace(options) if options is not None else StreamOptions()
        unknown = set(fields) - _OPTION_NAMES
        if unknown:
            raise TypeError(f"unknown stream option(s): {', '.join(sorted(unknown))}")
        for name, value in fields.items():
            setattr(options, name, value)
        return AssistantMessageStream(self._events(model, to_llm_context(context), options))

    def stream_simple(
        self,
        model: Model,
        context: ContextLike,
        options: StreamOptions | None = None,
        *,
        reasoning: str | None = None,
        **fields: Any,
    ) -> AssistantMessageStream:
        """:meth:`stream` with one thinking level for every provider (``minimal`` ... ``max``;
        None or ``off`` asks for none; a model without reasoning ignores it)."""
        return self.stream(model, context, options, thinking_level=reasoning or "off", **fields)

    async def complete(
        self, model: Model, context: ContextLike, options: StreamOptions | None = None, **fields: Any
    ) -> AssistantMessage:
        """The final message of :meth:`stream` (``stop_reason`` says whether it failed)."""
        return await self.stream(model, context, options, **fields).result()

    async def complete_simple(
        self,
        model: Model,
        context: ContextLike,
        options: StreamOptions | None = None,
        *,
        reasoning: str | None = None,
        **fields: Any,
    ) -> AssistantMessage:
        return await self.stream_simple(model, context, options, reasoning=reasoning, **fields).result()

    async def _events(self, model: Model, context: LlmContext, options: StreamOptions) -> Any:
        try:
            stream_fn = self.registry.stream_fn(model)
        except LookupError as exc:
            yield await anext(error_stream(model, str(exc)))
            return
        if not options.api_key:
            options.api_key = self.get_api_key(model.provider)
        if not options.api_key and self.registry.needs_key(model.provider):
            info = self.registry.providers.get(model.provider)
            names = sorted(
                info.env_keys if info is not None else (), key=lambda n: not n.endswith("_API_KEY")
            )
            where = f"set {' or '.join(names)} or pass api_key=" if names else "pass api_key="
            yield await anext(error_stream(model, f"No API key for provider {model.provider}: {where}"))
            return
        # keys stay out of error texts and events (the provider layer redacts these)
        options.secrets = list(dict.fromkeys([*options.secrets, *self.registry.secrets()]))
        events = stream_fn(model, context, options)
        try:
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()


def create_models(
    apis: Iterable[ProviderApi] = (),
    providers: Iterable[ProviderInfo] = (),
    *,
    api_keys: dict[str, str] | None = None,
) -> Models:
    """A catalog of exactly the providers given (nothing is loaded)."""
    return Models(apis, providers, api_keys=api_keys)


def builtin_models(*, api_keys: dict[str, str] | None = None) -> Models:
    """A catalog of every installed provider plugin (the built-in ones and third-party packages;
    ``PI_HOST_DISABLE_PLUGINS`` is honoured). No agent dir, settings or project files are read."""
    from pi_host.ai.plugins import provider_registrations

    apis, providers = provider_registrations()
    return Models(apis, providers, api_keys=api_keys)


_default: list[Models] = []


def default_models() -> Models:
    """The catalog the module-level functions use: :func:`builtin_models`, built on first use."""
    if not _default:
        _default.append(builtin_models())
    return _default[0]


def get_model(provider: str, model_id: str) -> Model | None:
    return default_models().get_model(provider, model_id)


def get_models(provider: str | None = None) -> list[Model]:
    return default_models().get_models(provider)


def stream(
    model: Model, context: ContextLike, options: StreamOptions | None = None, **fields: Any
) -> AssistantMessageStream:
    return default_models().stream(model, context, options, **fields)


def stream_simple(
    model: Model,
    context: ContextLike,
    options: StreamOptions | None = None,
    *,
    reasoning: str | None = None,
    **fields: Any,
) -> AssistantMessageStream:
    return default_models().stream_simple(model, context, options, reasoning=reasoning, **fields)


async def complete(
    model: Model, context: ContextLike, options: StreamOptions | None = None, **fields: Any
) -> AssistantMessage:
    return await default_models().complete(model, context, options, **fields)


async def complete_simple(
    model: Model,
    context: ContextLike,
    options: StreamOptions | None = None,
    *,
    reasoning: str | None = None,
    **fields: Any,
) -> AssistantMessage:
    return await default_models().complete_simple(model, context, options, reasoning=reasoning, **fields)
