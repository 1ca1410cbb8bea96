"""Heavy test-only libraries imported when a test first uses them, not when its module is
collected: every xdist worker collects every module, and ``anthropic``, ``openai`` or
``llm-mock-api`` cost about a second of collection each."""

from __future__ import annotations

from typing import Any

import pytest


class LazyModule:
    """``anthropic = LazyModule("anthropic")`` reads like the module; the first attribute read
    imports it, or skips the test when it is not installed."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            # pytest probes every module global at collection (``_mock_name``, ``__wrapped__``
            # when it looks for fixtures): that must not import the library
            raise AttributeError(attribute)
        return getattr(pytest.importorskip(self._name), attribute)
