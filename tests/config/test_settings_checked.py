"""Settings contents that passed the schema once are not checked again (no pydantic import on
an ordinary start); contents with a problem are checked, and reported, every time."""

from __future__ import annotations

import os
import sys

import pytest

from pi_host.config import settings_checked
from pi_host.config.settings import validate_settings


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_HOST_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _schema_unimportable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pi_host.config.settings_schema", None)  # import raises


def test_valid_contents_are_checked_once(own_cache, monkeypatch):
    data = {"defaultModel": "gpt-x", "compaction": {"enabled": False}}
    assert validate_settings(data, "s.json") == (data, [])
    assert (own_cache / settings_checked.FILE_NAME).read_text().split() == [settings_checked.digest(data)]
    _schema_unimportable(monkeypatch)
    cleaned, problems = validate_settings(dict(data), "s.json")
    assert cleaned == data and problems == []
    cleaned["compaction"]["enabled"] = True  # a copy: the caller may change it
    assert data["compaction"]["enabled"] is False
    with pytest.raises(ImportError):  # other contents are checked with the schema
        validate_settings({"defaultModel": "other"}, "s.json")


def test_contents_with_a_problem_are_reported_every_time(own_cache):
    data = {"defaultModel": "gpt-x", "compaction": {"enabled": "yes please"}}
    for _ in range(2):
        cleaned, problems = validate_settings(data, "s.json")
        assert cleaned == {"defaultModel": "gpt-x", "compaction": {}}
        assert len(problems) == 1 and "compaction.enabled" in problems[0]
    assert not (own_cache / settings_checked.FILE_NAME).exists()


def test_a_changed_schema_checks_again(own_cache, monkeypatch):
    data = {"theme": "dark"}
    validate_settings(data, "s.json")
    before = settings_checked.digest(data)
    schema = os.path.join(os.path.dirname(settings_checked.__file__), "settings_schema.py")
    real_stat = os.stat
    monkeypatch.setattr(
        settings_checked.os,
        "stat",
        lambda p, *a, **k: os.stat_result((0,) * 8 + (1, 1)) if p == schema else real_stat(p, *a, **k),
    )
    assert settings_checked.digest(data) != before
    assert not settings_checked.was_valid(settings_checked.digest(data))


def test_only_the_last_entries_are_kept(own_cache):
    for index in range(settings_checked.KEEP + 5):
        settings_checked.remember_valid(f"k{index}")
    kept = (own_cache / settings_checked.FILE_NAME).read_text().split()
    assert len(kept) == settings_checked.KEEP and kept[-1] == f"k{settings_checked.KEEP + 4}"
