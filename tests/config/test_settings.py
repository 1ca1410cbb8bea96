"""settings.json: validation, merging, resource paths, foreign-key preservation, atomic writes."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from pi_host.config import json_files
from pi_host.config import settings as st


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_project_wins_and_objects_merge_recursively(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(agent / "settings.json", {"compaction": {"enabled": False, "reserveTokens": 1000}, "theme": "dark"})
    write(work / ".pi" / "settings.json", {"compaction": {"reserveTokens": 2000}, "enabledModels": ["a"]})
    merged, problems = st.load_settings(str(work))
    assert problems == []
    assert merged["compaction"] == {"enabled": False, "reserveTokens": 2000}
    assert merged["theme"] == "dark"
    assert merged["enabledModels"] == ["a"]


def test_arrays_replace(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(agent / "settings.json", {"enabledModels": ["a", "b"], "defaultTools": ["read"]})
    write(work / ".pi" / "settings.json", {"enabledModels": ["c"], "defaultTools": ["bash", "edit"]})
    merged, _ = st.load_settings(str(work))
    assert merged["enabledModels"] == ["c"]
    assert merged["defaultTools"] == ["bash", "edit"]


def test_default_tools_modifiers_edit_the_inherited_list(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(agent / "settings.json", {"defaultTools": ["read", "bash", "write"]})
    write(work / ".pi" / "settings.json", {"defaultTools": ["+grep", "-bash", "+read"]})
    merged, _ = st.load_settings(str(work))
    assert merged["defaultTools"] == ["read", "write", "grep"]


def test_default_tools_modifiers_apply_to_pi_defaults_without_user_list(isolated_environment):
    work = isolated_environment["work"]
    write(work / ".pi" / "settings.json", {"defaultTools": ["-write", "+ls"]})
    merged, _ = st.load_settings(str(work))
    assert merged["defaultTools"] == ["read", "bash", "edit", "ls"]


def test_untrusted_project_file_is_not_read(isolated_environment):
    work = isolated_environment["work"]
    write(work / ".pi" / "settings.json", {"theme": "project"})
    merged, problems = st.load_settings(str(work), project_trusted=False)
    assert "theme" not in merged and problems == []


def test_invalid_values_are_reported_with_file_and_key_and_dropped(isolated_environment):
    agent = isolated_environment["agent"]
    path = agent / "settings.json"
    write(
        path,
        {
            "defaultThinkingLevel": "enormous",
            "compaction": {"reserveTokens": "lots", "enabled": True},
            "retry": {"maxRetries": -1},
            "skills": ["./a", 5],
            "steeringMode": "all",
            "someOtherProgram": {"x": [1, 2]},
        },
    )
    merged, problems = st.load_settings(str(isolated_environment["work"]))
    joined = "\n".join(problems)
    assert f"{path}: defaultThinkingLevel:" in joined
    assert f"{path}: compaction.reserveTokens:" in joined
    assert f"{path}: retry.maxRetries:" in joined
    assert f"{path}: skills[1]:" in joined
    assert len(problems) == 4
    assert "defaultThinkingLevel" not in merged
    assert merged["compaction"] == {"enabled": True}
    assert merged["steeringMode"] == "all"
    assert merged["someOtherProgram"] == {"x": [1, 2]}  # unknown keys are kept
    assert merged["skills"] == [str(agent / "a")]


def test_invalid_json_is_one_problem_not_a_crash(isolated_environment):
    agent = isolated_environment["agent"]
    write(agent / "settings.json", "{not json")
    merged, problems = st.load_settings(str(isolated_environment["work"]))
    assert merged == {} or set(merged) <= {"packages", "extensions", "skills", "prompts", "themes"}
    assert len(problems) == 1 and "invalid JSON" in problems[0] and str(agent) in problems[0]


def test_non_object_file_is_reported(isolated_environment):
    write(isolated_environment["agent"] / "settings.json", "[1, 2]")
    _merged, problems = st.load_settings(str(isolated_environment["work"]))
    assert problems and "expected a JSON object" in problems[0]


def test_default_project_trust_is_only_read_from_the_user_file(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(agent / "settings.json", {"defaultProjectTrust": "never"})
    write(work / ".pi" / "settings.json", {"defaultProjectTrust": "always"})
    merged, problems = st.load_settings(str(work))
    assert merged["defaultProjectTrust"] == "never"
    assert any("defaultProjectTrust" in p and "user settings" in p for p in problems)


def test_resource_lists_from_both_files_load_relative_to_their_own_file(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(agent / "settings.json", {"skills": ["my-skills", "~/shared", "!*.draft"], "prompts": ["p"]})
    write(work / ".pi" / "settings.json", {"skills": ["../team-skills", "-/abs/x", "+extra"]})
    merged, _ = st.load_settings(str(work))
    home = os.path.expanduser("~")
    assert merged["skills"] == [
        str(agent / "my-skills"),
        os.path.join(home, "shared"),
        "!*.draft",
        str(work / "team-skills"),
        "-/abs/x",
        "+" + str(work / ".pi" / "extra"),
    ]
    assert merged["prompts"] == [str(agent / "p")]


def test_get_and_defaults():
    data = {"compaction": {"reserveTokens": 5}}
    assert st.get(data, "compaction.reserveTokens") == 5
    assert st.get(data, "compaction.keepRecentTokens", 7) == 7
    assert st.get_or_default(data, "compaction.keepRecentTokens") == 20000
    assert st.get_or_default({}, "defaultProjectTrust") == "ask"


def test_update_preserves_foreign_keys_and_order(tmp_path):
    path = tmp_path / "settings.json"
    original = {"zeta": 1, "piOnly": {"nested": True, "keep": [1]}, "theme": "dark"}
    write(path, original)
    st.update_settings_file(str(path), {"defaultModel": "faux/faux-1", "piOnly.extra": 2, "theme": st.DELETE})
    data = json.loads(path.read_text())
    assert list(data) == ["zeta", "piOnly", "defaultModel"]
    assert data["piOnly"] == {"nested": True, "keep": [1], "extra": 2}
    assert data["defaultModel"] == "faux/faux-1"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_update_creates_missing_file_and_directory(tmp_path):
    path = tmp_path / "deep" / "settings.json"
    st.update_settings_file(str(path), {"compaction.enabled": False})
    assert json.loads(path.read_text()) == {"compaction": {"enabled": False}}


def test_update_refuses_to_overwrite_a_broken_file(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("{broken")
    with pytest.raises(ValueError, match="not overwriting"):
        st.update_settings_file(str(path), {"theme": "x"})
    assert path.read_text() == "{broken"


def test_concurrent_updates_lose_nothing(tmp_path):
    path = str(tmp_path / "settings.json")
    errors = []

    def worker(index):
        try:
            for j in range(10):
                st.update_settings_file(path, {f"k{index}_{j}": j})
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(json.loads(open(path).read())) == 40


def test_atomic_write_keeps_file_mode(tmp_path):
    path = tmp_path / "settings.json"
    write(path, {"a": 1})
    os.chmod(path, 0o600)
    st.update_settings_file(str(path), {"b": 2})
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_user_and_project_update_helpers(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    st.update_user_settings({"defaultModel": "faux/faux-1"})
    st.update_project_settings(str(work), {"compaction.reserveTokens": 1000})
    merged, problems = st.load_settings(str(work))
    assert problems == []
    assert merged["defaultModel"] == "faux/faux-1" and merged["compaction"] == {"reserveTokens": 1000}
    assert json.loads((agent / "settings.json").read_text()) == {"defaultModel": "faux/faux-1"}


def test_values_written_by_update_are_validated_on_next_load(isolated_environment):
    st.update_user_settings({"steeringMode": "sometimes"})
    merged, problems = st.load_settings(str(isolated_environment["work"]))
    assert "steeringMode" not in merged and "steeringMode" in problems[0]


def test_lock_is_a_directory_removed_after_the_write(tmp_path):
    path = tmp_path / "settings.json"
    st.update_settings_file(str(path), {"a": 1})
    assert not (tmp_path / "settings.json.lock").exists()


def test_a_held_lock_blocks_and_a_stale_lock_is_taken_over(tmp_path):
    path = tmp_path / "settings.json"
    lock = tmp_path / "settings.json.lock"
    lock.mkdir()  # another writer (pi) holds it
    with pytest.raises(TimeoutError):
        with json_files.file_lock(str(path), timeout=0.05):
            pass
    old = os.stat(lock).st_mtime - json_files.STALE_LOCK_SECONDS - 5
    os.utime(lock, (old, old))
    st.update_settings_file(str(path), {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1} and not lock.exists()


def test_pi_documented_enums(isolated_environment):
    agent = isolated_environment["agent"]
    write(
        agent / "settings.json",
        {
            "transport": "websocket-cached",
            "cacheWarming": "streaming",
            "doubleEscapeAction": "fork",
            "theme": "x",
        },
    )
    merged, problems = st.load_settings(str(isolated_environment["work"]))
    assert problems == [] and merged["transport"] == "websocket-cached"
    write(agent / "settings.json", {"cacheWarming": "always", "doubleEscapeAction": "explode"})
    _merged, problems = st.load_settings(str(isolated_environment["work"]))
    assert len(problems) == 2


def test_project_session_dir_is_read_without_trust(isolated_environment):
    work = isolated_environment["work"]
    assert st.project_session_dir(str(work)) is None
    write(work / ".pi" / "settings.json", {"sessionDir": ".pi/sessions", "theme": "x"})
    assert st.project_session_dir(str(work)) == str(work / ".pi" / "sessions")
    merged, _ = st.load_settings(str(work), project_trusted=False)
    assert "sessionDir" not in merged


def test_a_lock_pi_may_still_hold_is_not_taken_over_and_a_held_lock_stays_fresh(tmp_path, monkeypatch):
    """pi refreshes a held auth.json lock every 15 s (stale after 30 s): a lock 20 s old may be a
    live pi waiting on a provider, so it is waited for, not taken; a lock pi-host holds is touched
    while held, so nobody takes it over during a slow OAuth refresh."""
    path = tmp_path / "auth.json"
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()
    twenty = time.time() - 20
    os.utime(lock, (twenty, twenty))
    with pytest.raises(TimeoutError):
        with json_files.file_lock(str(path), timeout=0.05):
            pass
    assert lock.exists()
    lock.rmdir()

    monkeypatch.setattr(json_files, "LOCK_REFRESH_SECONDS", 0.02)
    with json_files.file_lock(str(path)):
        old = time.time() - 100
        os.utime(lock, (old, old))
        deadline = time.monotonic() + 5
        while os.stat(lock).st_mtime < time.time() - 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert os.stat(lock).st_mtime > time.time() - 50  # touched again while held
    assert not lock.exists()
