"""Fixtures shared by the provider tests (``sse_server``: a live loopback server)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sse_server import SSEServer  # noqa: E402


@pytest.fixture
def sse_server():
    server = SSEServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def demo():
    """The tool-round-trip demo server for the three OpenAI/Google APIs (one per test module)."""
    from demo_server_openai_google import DemoServer

    server = DemoServer().start()
    try:
        yield server
    finally:
        server.stop()
