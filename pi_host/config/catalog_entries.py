"""The catalog's raw model entries, built per provider when first needed (issue 36).

pi's catalog has ~1,700 models in 42 providers. Building every entry at each start took ~10 ms
(parsing 850 KB of JSON into dicts), and a run that names its model uses one provider's.
:class:`CatalogEntries` maps ``(provider, model id)`` to the raw dict in catalog order. The
keys of a lazy provider (:attr:`ProviderInfo.model_ids`) are known from the start; its dicts are
built the first time one of them is read. Looking at keys (``in``, iteration) builds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Key = tuple[str, str]


class CatalogEntries:
    def __init__(self) -> None:
        self._order: dict[Key, None] = {}
        self._data: dict[Key, dict[str, Any]] = {}
        self._pending: dict[str, Callable[[], list[dict[str, Any]]]] = {}

    def add_lazy(self, provider: str, ids: list[str], build: Callable[[], list[dict[str, Any]]]) -> None:
        """A provider whose entries ``build()`` returns (each with an ``id``), in ``ids`` order."""
        for model_id in ids:
            self._order[(provider, model_id)] = None
        self._pending[provider] = build

    def _load(self, provider: str) -> None:
        build = self._pending.pop(provider, None)
        if build is None:
            return
        for data in build():
            key = (provider, data["id"])
            self._order.setdefault(key, None)
            self._data.setdefault(key, data)
        for key in [k for k in self._order if k[0] == provider and k not in self._data]:
            del self._order[key]  # named by ``ids`` but not built: not an entry after all

    def __contains__(self, key: object) -> bool:
        return key in self._order

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[Key]:
        return iter(list(self._order))

    def __getitem__(self, key: Key) -> dict[str, Any]:
        self._load(key[0])
        return self._data[key]

    def __setitem__(self, key: Key, data: dict[str, Any]) -> None:
        self._load(key[0])  # a lazy provider's own entry must not overwrite this one later
        self._order.setdefault(key, None)
        self._data[key] = data

    def provider_items(self, provider: str) -> list[tuple[Key, dict[str, Any]]]:
        """One provider's entries (built now if they were not)."""
        self._load(provider)
        return [(key, data) for key, data in self._data.items() if key[0] == provider]

    def values(self) -> list[dict[str, Any]]:
        """Every entry, in catalog order (builds the lazy providers)."""
        for provider in list(self._pending):
            self._load(provider)
        return [self._data[key] for key in self._order if key in self._data]

    def built_values(self) -> list[dict[str, Any]]:
        """The entries built so far: the others are the catalog's data, untouched."""
        return list(self._data.values())

    def pending(self) -> set[str]:
        return set(self._pending)


def provider_entries(info: Any, models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A provider's catalog entries: each model with the provider's api, base URL, headers and
    compat filled in. A shallow copy: nothing changes an entry's nested values in place, and
    the entry is copied whole when (and if) it is validated (``ModelRegistry._model``)."""
    out = []
    for raw in models:
        data = {"api": info.api, "provider": info.id, "baseUrl": info.base_url, **raw}
        if info.headers:  # the model's own headers win, name by name
            data["headers"] = {**info.headers, **(raw.get("headers") or {})}
        if info.compat:
            data["compat"] = {**info.compat, **(raw.get("compat") or {})}
        out.append(data)
    return out


def copy_json(value: Any) -> Any:
    """A private copy of catalog data. Catalog entries are JSON-shaped, so a JSON round trip
    through orjson copies them; ``copy.deepcopy`` took most of a (re)load of pi's ~1,700
    models. Anything else a plugin put in its catalog falls back to ``copy.deepcopy``."""
    import orjson

    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        import copy

        return copy.deepcopy(value)


def merge_fields(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Object fields merge field by field; other values replace."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out
