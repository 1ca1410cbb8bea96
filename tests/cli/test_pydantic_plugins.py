"""pydantic's plugin scan is skipped only when no installed distribution declares a pydantic
plugin (issue 16), and the real loader comes back for anything else asked of it."""

from __future__ import annotations

import sys


def test_the_answer_is_kept_and_a_new_distribution_changes_it(tmp_path):
    from pi_host.cli.pydantic_plugins import _declares_pydantic_plugins

    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    sys.path.insert(0, str(site))
    try:
        assert _declares_pydantic_plugins(str(cache)) is False
        recorded = (cache / "pydantic-plugins.txt").read_text()
        assert recorded.endswith("\n\nno") and str(site) in recorded
        assert _declares_pydantic_plugins(str(cache)) is False  # from the file
        dist = site / "late_plugin-1.0.dist-info"
        dist.mkdir()  # a new folder changes the site folder's modification time
        (dist / "entry_points.txt").write_text("[pydantic]\nmine = late_plugin:plugin\n")
        assert _declares_pydantic_plugins(str(cache)) is True
        assert (cache / "pydantic-plugins.txt").read_text().endswith("\n\nyes")
    finally:
        sys.path.remove(str(site))
