"""Model lists fetched for a key, kept between runs in pi 1.6.0's ``models-store.json``.

A provider whose ``ProviderInfo.personalize`` is set (OpenRouter: ``GET /models/user``) has its
model list narrowed to what the key may use, with the key's limits and prices. The fetch happens
on ``pi update models``, after ``pi auth login <provider>``, and in the background when the
interactive mode starts (unless ``PI_OFFLINE`` is set; 15 s at most, failures silent, as pi), and
its result is stored next to models.json (``<agent dir>/models-store.json``) as
``{"<provider>": {"models": [...], "checkedAt": <ms>}}``, pi's file and shape, so pi and pi-host
share it. Every other run (print, JSON and RPC runs, offline ones) reads the stored list and makes
no request; without one the built-in catalog applies.
"""

from __future__ import annotations

import os
import time
from typing import Any

from pi_host.config.json_files import read_json_object, update_json_file
from pi_host.config.paths import agent_dir

FILE_NAME = "models-store.json"
TIMEOUT = 15.0  # pi gives the refresh 15 seconds


def store_path(models_json: str | None = None) -> str:
    """Beside models.json (pi keeps the two together), else in the agent directory."""
    folder = os.path.dirname(models_json) if models_json else agent_dir()
    return os.path.join(folder, FILE_NAME)


def stored_models(info: Any, path: str) -> list[dict[str, Any]] | None:
    """The stored list of ``info``'s provider in the catalog's shape (api and base URL named only
    where they differ from the provider's), or None when nothing usable is stored."""
    if not os.path.exists(path):
        return None
    data, error = read_json_object(path)
    entry = None if error else data.get(info.id)
    models = entry.get("models") if isinstance(entry, dict) else None
    if not isinstance(models, list):
        return None
    out = []
    for model in models:
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            continue
        if model.get("provider", info.id) != info.id or model.get("type", "chat") != "chat":
            continue
        model = {k: v for k, v in model.items() if k not in ("provider", "type")}
        if model.get("api") == info.api:
            del model["api"]
        if model.get("baseUrl") == info.base_url:
            del model["baseUrl"]
        out.append(model)
    return out or None


def _full(info: Any, model: dict[str, Any]) -> dict[str, Any]:
    return {"api": info.api, "baseUrl": info.base_url, **model, "provider": info.id}


def refresh(registry: Any, providers: list[str] | None = None) -> dict[str, str]:
    """Fetch and store the list of every personalized provider (or those named) that has a
    credential; returns ``{provider: error text}`` for the ones that failed. A provider without
    a credential is left as it is."""
    errors = store_lists(registry, providers)
    registry.reload()
    return errors


def refreshable(registry: Any) -> list[str]:
    """The personalized providers that have a credential: what a refresh would fetch."""
    return [
        info.id
        for info in registry.providers.values()
        if info.personalize is not None and registry.has_auth(info.id)
    ]


def store_lists(registry: Any, providers: list[str] | None = None) -> dict[str, str]:
    """The fetching and storing of :func:`refresh`, without the catalog's reload (which the
    caller does: the interactive mode fetches in a thread and reloads on its loop)."""
    errors: dict[str, str] = {}
    path = store_path(registry.models_json_path)
    for info in list(registry.providers.values()):
        if info.personalize is None or (providers is not None and info.id not in providers):
            continue
        key = registry.get_api_key(info.id)
        if not key:
            continue
        base_url = _configured_base_url(registry, info)
        catalog = [_full(info, m) for m in info.model_dicts()]
        try:
            models = info.personalize(catalog, base_url, key)
        except Exception as exc:  # noqa: BLE001 - one provider's failure is reported, not raised
            errors[info.id] = str(exc) or type(exc).__name__
            continue
        entry = {"models": [{**m, "provider": info.id} for m in models], "checkedAt": int(time.time() * 1000)}
        update_json_file(
            path, lambda data, entry=entry, pid=info.id: data.__setitem__(pid, entry), mode=0o600
        )
    return errors


def _configured_base_url(registry: Any, info: Any) -> str:
    # The request goes to the provider's configured base URL (models.json), so a regional
    # endpoint applies its own filtering, as in pi.
    spec = registry.custom.get(info.id) or {}
    return str(spec.get("baseUrl") or info.base_url)


def update_models_command(registry: Any) -> int:
    """``pi update models``: refresh now and say so in pi's words."""
    import sys

    errors = refresh(registry)
    if errors:
        failures = "; ".join(f"{provider}: {text}" for provider, text in errors.items())
        sys.stderr.write(f"Error: Could not refresh model catalogs: {failures}\n")
        return 1
    sys.stdout.write("Model catalogs refreshed\n")
    return 0
