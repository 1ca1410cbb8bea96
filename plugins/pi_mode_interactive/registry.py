"""The built-in commands as a registry: each feature adds its own ``/name`` (with its
description for the ``/`` menu), and the application runs them without knowing them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Run = Callable[[Any, str], Awaitable[None]]
"""``run(screen, args)``: the command's work, given the :class:`~.screen_api.Screen`."""


@dataclass
class Builtin:
    run: Run
    description: str


class CommandRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, Builtin] = {}

    def add(self, name: str, run: Run, description: str) -> None:
        self._commands[name] = Builtin(run, description)

    def get(self, name: str) -> Builtin | None:
        return self._commands.get(name)

    def items(self) -> list[tuple[str, Builtin]]:
        return list(self._commands.items())

    def __iter__(self) -> Any:
        return iter(list(self._commands))

    def __contains__(self, name: object) -> bool:
        return name in self._commands

    async def run(self, screen: Any, text: str) -> bool:
        """Run ``/name args`` when it names a built-in; False lets the session have it (built-ins
        come first: no plugin can take /quit away)."""
        name, _, args = text[1:].partition(" ")
        command = self._commands.get(name)
        if command is None:
            return False
        await command.run(screen, args)
        return True
