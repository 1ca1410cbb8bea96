"""The queue of scripted responses.

A response is a dict (or a callable ``(context) -> dict``):

``text``        answer text (``{{lastToolResult}}`` is replaced by the last tool result's text,
                ``{{userMessages}}`` by the text of every user message sent, joined by `` | ``)
``thinking``    thinking text, streamed before the answer
``toolCalls``   ``[{"name", "arguments", "id"?}]``
``error``       end the stream with this error message (after any text already streamed)
``stopReason``  override (``length``, ``stop``...)
``delayMs``     pause before each chunk (an abort ends the pause at once)
``chunkSize``   characters per delta (default 8)
``usage``       usage fields to report instead of the chars/4 estimate
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any

_queue: deque[Any] = deque()
_env_loaded = False
requests: list[dict[str, Any]] = []
"""Every request the faux provider received (``{"model", "messages", "tools", "options"}``)."""


def set_responses(responses: list[Any]) -> None:
    """Replace the queue (and the recorded requests)."""
    global _env_loaded
    _queue.clear()
    _queue.extend(responses)
    requests.clear()
    _env_loaded = True


def add_responses(responses: list[Any]) -> None:
    _queue.extend(responses)


def clear() -> None:
    global _env_loaded
    _queue.clear()
    requests.clear()
    _env_loaded = False


def _load_env() -> None:
    global _env_loaded
    if _env_loaded:
        return
    _env_loaded = True
    raw = os.environ.get("PI_FAUX_SCRIPT")
    if not raw:
        return
    if not raw.lstrip().startswith(("[", "{")):
        with open(raw, encoding="utf-8") as handle:
            raw = handle.read()
    data = json.loads(raw)
    if isinstance(data, dict):
        data = data.get("responses", [data])
    _queue.extend(data)


def next_response(context: Any) -> dict[str, Any] | None:
    _load_env()
    if not _queue:
        return None
    item = _queue.popleft()
    return item(context) if callable(item) else item
