"""Path resolution as pi does it: @ prefix, ~, Unicode spaces, read's retry spellings."""

from __future__ import annotations

import os

from pi_host.lib.toolkit import read_path_candidates, resolve_path


def test_at_prefix_and_relative(tmp_path):
    assert resolve_path("@src/a.py", str(tmp_path)) == str(tmp_path / "src" / "a.py")


def test_home_expansion(tmp_path):
    home = os.path.expanduser("~")
    assert resolve_path("~", str(tmp_path)) == home
    assert resolve_path("~/x.txt", str(tmp_path)) == os.path.join(home, "x.txt")


def test_unicode_spaces_become_ascii(tmp_path):
    for space in ("\u00a0", "\u2003", "\u202f", "\u3000"):
        assert resolve_path(f"my{space}file.txt", str(tmp_path)) == str(tmp_path / "my file.txt")


def test_absolute_path_kept(tmp_path):
    assert resolve_path(str(tmp_path / "a" / ".." / "b"), "/elsewhere") == str(tmp_path / "b")


def test_read_candidates_include_screenshot_and_apostrophe_variants(tmp_path):
    candidates = read_path_candidates("Screenshot 2024 at 10.00.00 AM.png", str(tmp_path))
    assert str(tmp_path / "Screenshot 2024 at 10.00.00\u202fAM.png") in candidates
    quoted = read_path_candidates("Bob's notes.txt", str(tmp_path))
    assert str(tmp_path / "Bob\u2019s notes.txt") in quoted
    assert len(quoted) == len(set(quoted))
