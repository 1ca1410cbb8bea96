"""Where the repository's parts are, for tests in any folder."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DOCS = REPO / "docs"
EXAMPLES = REPO / "extension_examples"
FIXTURES = TESTS / "fixtures"
SESSION_FIXTURES = FIXTURES / "sessions"
"""Session files written by pi 1.6.0 (``make_fixtures.py`` regenerates them)."""
PROVIDER_FIXTURES = FIXTURES / "providers"
"""Recorded vendor SSE streams, one folder per vendor."""
SUPPORT = TESTS / "support"
