"""Keeping plugin ``__init__`` modules thin (``pi plugins`` and ``pi --help`` import every plugin).

:func:`lazy` registers a function without importing its module; :func:`forget_on_reload` is the
``on_session_start`` hook of sources that keep per-session state. Deliberately tiny: importing
this module must cost next to nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lazy(target: str) -> Callable[..., Any]:
    """``"package.module:function"`` as a function that imports the module on its first call and
    forwards to it, so a plugin's ``__init__`` can register it without importing the module
    (``pi plugins`` and ``pi --help`` import every plugin)."""
    module_name, _, attr = target.partition(":")
    function: Callable[..., Any] | None = None

    def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal function
        if function is None:
            import importlib

            function = getattr(importlib.import_module(module_name), attr)
        return function(*args, **kwargs)

    call.__name__ = attr
    call.__qualname__ = target
    return call


def forget_on_reload(target: str) -> Callable[[dict[str, Any], Any], None]:
    """An ``on_session_start`` hook implementation calling ``target`` (``"module:function"``, see
    :func:`lazy`) with the session when it starts again for a reload. Assign it in the plugin
    module: ``on_session_start = forget_on_reload("my_plugin.source:forget")``."""
    from pi_host.plugins.dispatch import hookimpl

    forget = lazy(target)

    @hookimpl
    def on_session_start(event: dict[str, Any], ctx: Any) -> None:
        if event.get("reason") == "reload":
            forget(ctx.session)

    return on_session_start
