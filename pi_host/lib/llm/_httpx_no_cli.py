"""Import httpx without its command-line client (issue 16: start-up cost).

``httpx/__init__`` imports ``httpx._main`` (click, rich, pygments: ~50 ms) whenever those are
installed, and typer installs them. Importing this module first imports httpx with a stand-in
``httpx._main`` whose ``main`` loads the real client on its first call, so ``httpx.main`` still
works; nothing else in httpx uses ``httpx._main``.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def _import_httpx() -> None:
    if "httpx" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main")

    def main(*args: Any, **kwargs: Any) -> Any:
        if sys.modules.get("httpx._main") is stand_in:
            del sys.modules["httpx._main"]
        from httpx._main import main as real_main

        return real_main(*args, **kwargs)

    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in
    try:
        import httpx  # noqa: F401
    finally:
        if sys.modules.get("httpx._main") is stand_in:
            del sys.modules["httpx._main"]


_import_httpx()
