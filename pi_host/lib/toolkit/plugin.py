"""The ``__init__`` of a one-tool plugin package, in one line.

    create_tool, register_tools = tool_plugin("my_tools.tool:WordCount")

``create_tool(**options)`` builds the tool (the options go to its class: ``fs=``, ``shell=``...,
so a tool can run against another machine); ``register_tools`` is the hook that gives each session
one default instance. The tool's module is imported only when a session asks for it: ``pi --help``
and ``pi plugins`` import every plugin package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from pi_host.plugins.dispatch import hookimpl


def tool_plugin(target: str) -> tuple[Callable[..., Any], Callable[..., list[Any]]]:
    """``"package.module:ToolClass"`` -> ``(create_tool, register_tools)``."""
    module_name, _, class_name = target.partition(":")

    def create_tool(**options: Any) -> Any:
        return getattr(importlib.import_module(module_name), class_name)(**options)

    @hookimpl
    def register_tools(ctx: Any) -> list[Any]:
        return [create_tool()]

    create_tool.__doc__ = f"A new ``{class_name}``; keyword options go to its constructor."
    return create_tool, register_tools
