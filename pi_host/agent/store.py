"""An agent's optional persistence: anything with ``append(message)`` (and ``load()`` to start
from what it holds). :class:`JsonlStore` is a small one: one message per line, pi's JSON."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pi_host.protocol.messages import dump_message, parse_message

__all__ = ["JsonlStore", "MessageStore"]


@runtime_checkable
class MessageStore(Protocol):
    """Where an agent writes each finished message (at ``message_end``)."""

    def append(self, message: Any) -> None: ...


class JsonlStore:
    """Messages as JSON lines in ``path``. ``decoders`` rebuild custom message types by role
    (other unknown roles load as :class:`pi_host.protocol.UnknownMessage`, kept verbatim)."""

    def __init__(
        self, path: str | os.PathLike[str], decoders: dict[str, Callable[[dict], Any]] | None = None
    ):
        self.path = os.fspath(path)
        self.decoders = dict(decoders or {})

    def append(self, message: Any) -> None:
        data = message.to_json() if hasattr(message, "to_json") else dump_message(message)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(data, ensure_ascii=False) + "\n")

    def load(self) -> list[Any]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                lines = [line for line in handle if line.strip()]
        except FileNotFoundError:
            return []
        messages = []
        for line in lines:
            data = json.loads(line)
            decoder = self.decoders.get(data.get("role"))
            messages.append(decoder(data) if decoder is not None else parse_message(data))
        return messages
