"""Which models exist, which API streams each, and which key to send.

Provider plugins contribute APIs (``register_providers``) and catalog entries
(``register_models``); this registry joins them and resolves ``--model`` patterns and keys.
"""

from __future__ import annotations

import os
from typing import Any

from pi_host.plugin_host import PluginHost
from pi_host.registrations import ProviderApi, ProviderInfo


class ModelNotFound(LookupError):
    pass


class ModelRegistry:
    def __init__(self, host: PluginHost) -> None:
        from pi_host.protocol import Model

        self.apis: dict[str, Any] = {}
        for item in host.collect("register_providers"):
            if isinstance(item, ProviderApi):
                self.apis[item.api] = item.stream
        self.providers: dict[str, ProviderInfo] = {}
        self._models: list[Model] = []
        for info in host.collect("register_models"):
            if not isinstance(info, ProviderInfo):
                continue
            self.providers[info.id] = info
            for raw in info.models:
                data = {"api": info.api, "provider": info.id, "baseUrl": info.base_url, **raw}
                if not data.get("name"):
                    data["name"] = data["id"]
                self._models = [m for m in self._models if not (m.provider == info.id and m.id == data["id"])]
                self._models.append(Model.model_validate(data))
        self.runtime_keys: dict[str, str] = {}

    def models(self) -> list[Any]:
        return list(self._models)

    def find(self, provider: str, model_id: str) -> Any | None:
        for model in self._models:
            if model.provider == provider and model.id == model_id:
                return model
        return None

    def resolve(self, pattern: str, provider: str | None = None) -> Any:
        """``provider/id``, an exact id or name, then a case-insensitive substring match."""
        candidates = [m for m in self._models if provider is None or m.provider == provider]
        if provider is None and "/" in pattern:
            head, _, tail = pattern.partition("/")
            exact = self.find(head, tail)
            if exact is not None:
                return exact
        for model in candidates:
            if pattern in (model.id, model.name):
                return model
        lowered = pattern.lower()
        for model in candidates:
            if lowered in model.id.lower() or lowered in model.name.lower():
                return model
        raise ModelNotFound(f"Model not found: {pattern}" if provider is None else f"Model not found: {provider}/{pattern}")

    def stream_fn(self, model: Any) -> Any:
        fn = self.apis.get(model.api)
        if fn is None:
            raise LookupError(f"No provider plugin implements API {model.api!r} (model {model.key})")
        return fn

    def needs_key(self, provider: str) -> bool:
        info = self.providers.get(provider)
        return True if info is None else info.needs_key

    def key_hint(self, provider: str) -> str:
        info = self.providers.get(provider)
        names = info.env_keys if info else []
        if names:
            return f"set {' or '.join(names)}, or pass --api-key"
        return "pass --api-key or add it to auth.json"

    def get_api_key(self, provider: str) -> str | None:
        if provider in self.runtime_keys:
            return self.runtime_keys[provider]
        info = self.providers.get(provider)
        for name in info.env_keys if info else ():
            value = os.environ.get(name)
            if value:
                return value
        return None
