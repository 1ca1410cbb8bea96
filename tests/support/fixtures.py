"""Fixtures any test may ask for (registered by the root conftest through ``pytest_plugins``)."""

from __future__ import annotations

import pytest

from tests.support.interactive import world  # noqa: F401 (a fixture for terminal tests)


@pytest.fixture
def project(tmp_path):
    """A small tree with nested .gitignore files, hidden files and a nested repository.

    Not a git repository itself: the ignore files must apply anyway.
    """
    root = tmp_path / "proj"
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        ".hidden/secret.txt": "needle in hidden\n",
        ".env": "NEEDLE=1\n",
        "README.md": "Project readme with needle\n",
        "keep.log": "needle kept log\n",
        "debug.log": "needle ignored log\n",
        "build/out.txt": "needle in build\n",
        "src/main.py": "import os\n\ndef main():\n    return 'needle'\n\nmain()\n",
        "src/util.py": "NEEDLE = 2\n",
        "src/.gitignore": "generated/\n*.tmp\n",
        "src/generated/gen.py": "needle generated\n",
        "src/cache.tmp": "needle tmp\n",
        "src/deep/nested/file.py": "needle deep\n",
        "pkg/src/other.py": "needle other\n",
        "vendor/.git/HEAD": "ref: refs/heads/main\n",
        "vendor/lib.log": "needle in nested repo log\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def sse_server():
    """A live loopback server replaying queued vendor byte streams (``support.providers.sse``)."""
    from tests.support.providers.sse import SSEServer

    server = SSEServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def demo():
    """The tool-round-trip demo server for the three OpenAI/Google APIs (one per test module)."""
    from tests.support.providers.demo import DemoServer

    server = DemoServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """A cache folder of this test's own, empty (for the tests about the cache)."""
    folder = tmp_path / "cold-cache"
    monkeypatch.setenv("PI_HOST_CACHE_DIR", str(folder))
    return folder
