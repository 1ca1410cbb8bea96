"""``ctx.register_provider`` / ``ctx.unregister_provider``: models.json-shaped providers added to
the session's model catalog while pi-host runs (pi's ``pi.registerProvider``)."""

from __future__ import annotations

import copy
from typing import Any


def register_provider(session: Any, name: str, config: dict[str, Any]) -> list[str]:
    """Apply ``config`` as provider ``name``; returns the ``provider/id`` keys it now has. A config
    the catalog refuses raises ValueError and leaves the catalog as it was."""
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ValueError(f"A provider name is a non-empty string without '/', not {name!r}")
    if not isinstance(config, dict):
        raise ValueError("A provider config is a dict in models.json's provider shape")
    registry = session.registry
    apis = {config.get("api"), *(m.get("api") for m in config.get("models") or () if isinstance(m, dict))}
    unknown = sorted(api for api in apis if api and api not in registry.apis)
    if unknown:
        known = ", ".join(sorted(registry.apis)) or "none"
        raise ValueError(f"No provider plugin implements API {unknown[0]!r} (installed: {known})")
    previous = registry.runtime_providers.get(name)
    registry.runtime_providers[name] = copy.deepcopy(config)
    before = len(registry.problems)
    registry.reload()
    problems = [
        line.replace(f"{registry.models_json_path}: ", "")
        for line in registry.problems[before:]
        if repr(name) in line or f"{name}/" in line
    ]
    if problems:
        if previous is None:
            del registry.runtime_providers[name]
        else:
            registry.runtime_providers[name] = previous
        registry.reload()
        raise ValueError("; ".join(problems))
    _refresh_current(session)
    return [f"{m.provider}/{m.id}" for m in registry.models() if m.provider == name]


def unregister_provider(session: Any, name: str) -> bool:
    """Remove a runtime provider; False when none of that name was registered. Refused while the
    session's model belongs to it."""
    registry = session.registry
    if name not in registry.runtime_providers:
        return False
    model = session.model
    if model is not None and model.provider == name:
        raise ValueError(
            f"Provider {name!r} is in use by the current model {name}/{model.id}: "
            "switch to another model before unregistering it"
        )
    del registry.runtime_providers[name]
    registry.reload()
    _refresh_current(session)
    return True


def _refresh_current(session: Any) -> None:
    """The current model as the catalog now has it (a redirected base URL applies at once)."""
    model = session.model
    if model is None:
        return
    fresh = session.registry.find(model.provider, model.id)
    if fresh is not None and fresh != model:
        session.model = fresh
