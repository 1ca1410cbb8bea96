"""Which files a stretch of conversation read and changed (reference §7.4 "file lists").

Paths come from the ``path`` argument of ``read``, ``write`` and ``edit`` tool calls (and of such
calls recorded as nested calls on tool results), plus the lists a previous host-made summary
stored in its ``details``. ``modifiedFiles`` = edited ∪ written; ``readFiles`` = read − modified;
both sorted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_KINDS = {"read": "read", "write": "written", "edit": "edited"}


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_call(self, name: Any, arguments: Any) -> None:
        kind = _KINDS.get(name) if isinstance(name, str) else None
        if kind is None or not isinstance(arguments, dict):
            return
        path = arguments.get("path")
        if isinstance(path, str) and path:
            getattr(self, kind).add(path)

    def add_message(self, message: Any) -> None:
        role = getattr(message, "role", None)
        if role == "assistant":
            for block in message.content:
                if getattr(block, "type", None) == "toolCall":
                    self.add_call(block.name, block.arguments)
        elif role == "toolResult":
            for call in getattr(message, "nested_calls", None) or ():
                if isinstance(call, dict):
                    self.add_call(
                        call.get("name") or call.get("toolName"), call.get("arguments") or call.get("args")
                    )

    def add_messages(self, messages: list[Any]) -> FileOps:
        for message in messages:
            self.add_message(message)
        return self

    def add_details(self, details: Any) -> None:
        """Merge the ``{readFiles, modifiedFiles}`` of an earlier host-made summary."""
        if not isinstance(details, dict):
            return
        for path in details.get("readFiles") or ():
            if isinstance(path, str):
                self.read.add(path)
        for path in details.get("modifiedFiles") or ():
            if isinstance(path, str):
                self.edited.add(path)

    def lists(self) -> tuple[list[str], list[str]]:
        """``(readFiles, modifiedFiles)``, sorted."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)

    def details(self) -> dict[str, list[str]]:
        read, modified = self.lists()
        return {"readFiles": read, "modifiedFiles": modified}

    def format(self) -> str:
        """The blocks appended to a summary (empty lists are left out)."""
        read, modified = self.lists()
        out = ""
        if read:
            out += "\n\n<read-files>\n" + "\n".join(read) + "\n</read-files>"
        if modified:
            out += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
        return out
