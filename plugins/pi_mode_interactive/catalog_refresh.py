"""The model lists fetched per key (OpenRouter's ``/models/user``), refreshed in the background
when the interactive mode starts, as pi 1.6.0 does: unless ``PI_OFFLINE`` is set, for the
providers that have a credential, at most 15 s, failures silent. The fetch runs in a thread; the
catalog is reloaded on the event loop, so pickers opened afterwards offer the key's models."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

TIMEOUT_S = 15.0


async def refresh_in_background(app: Any) -> None:
    if os.environ.get("PI_OFFLINE"):
        return
    from pi_host.config import model_store

    registry = app.session.registry
    providers = model_store.refreshable(registry)
    if not providers:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.to_thread(model_store.store_lists, registry, providers), TIMEOUT_S)
        registry.reload()
        app.invalidate()
