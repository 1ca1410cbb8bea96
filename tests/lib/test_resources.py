"""pi_host.lib.resources: the pieces the skills and prompt-template sources share."""

import gc
import os

from pi_host.lib import lazy, resources


def test_setting_entries_split_into_paths_and_exclusions(tmp_path):
    (tmp_path / "t").mkdir()
    for name in ("b.md", "a.md"):
        (tmp_path / "t" / name).write_text("x")
    parsed = resources.parse_setting_entries(
        ["t/*.md", "+plain", "-gone", "!draft-*", "", 7, "~/in-home"], str(tmp_path)
    )
    assert parsed.paths == [
        str(tmp_path / "t" / "a.md"),
        str(tmp_path / "t" / "b.md"),
        str(tmp_path / "plain"),
        os.path.join(os.path.expanduser("~"), "in-home"),
    ]
    assert parsed.excluded_paths == {str(tmp_path / "gone")}
    assert parsed.excluded_globs == ["draft-*"]


def test_agents_skill_dirs_stop_at_the_git_root(tmp_path):
    repo = tmp_path / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    assert resources.agents_skill_dirs(str(deep)) == [
        str(deep / ".agents" / "skills"),
        str(repo / "a" / ".agents" / "skills"),
        str(repo / ".agents" / "skills"),
    ]
    assert resources.git_root(str(deep)) == str(repo)


def test_agents_skill_dirs_outside_git_is_cwd_only(tmp_path):
    assert resources.agents_skill_dirs(str(tmp_path)) == [str(tmp_path / ".agents" / "skills")]


def test_per_session_values_are_forgotten_and_held_weakly():
    class Session:
        pass

    memo: resources.PerSession[list[str]] = resources.PerSession()
    session = Session()
    assert memo.get(session) is None
    assert memo.put(session, ["x"]) == ["x"] and memo.get(session) == ["x"]
    memo.forget(session)
    assert memo.get(session) is None
    memo.put(session, ["y"])
    del session
    gc.collect()
    assert len(memo._values) == 0  # sessions are held weakly


def test_source_info_scopes_and_extra_fields():
    assert resources.source_info("/p/x.md", "cli") == {
        "path": "/p/x.md",
        "source": "local",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert resources.source_info("/p/SKILL.md", "project", baseDir="/p")["scope"] == "project"
    assert resources.source_info("/p/SKILL.md", "unknown", baseDir="/p")["baseDir"] == "/p"
    assert resources.string_list(None) == [] and resources.string_list("a") == ["a"]
    assert resources.string_list(["a", 2]) == ["a", "2"]


def test_walk_up_reaches_the_filesystem_root():
    root = os.path.abspath(os.sep)
    deep = os.path.join(root, "a", "b")
    assert list(resources.walk_up(deep)) == [deep, os.path.join(root, "a"), root]


def test_lazy_imports_on_first_call_and_forget_on_reload(tmp_path, monkeypatch):
    import sys

    (tmp_path / "lazy_probe_mod.py").write_text(
        "forgotten = []\ndef forget(session):\n    forgotten.append(session)\n    return 'done'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    call = lazy.lazy("lazy_probe_mod:forget")
    assert "lazy_probe_mod" not in sys.modules
    assert call("s1") == "done" and sys.modules["lazy_probe_mod"].forgotten == ["s1"]

    class Ctx:
        session = "s2"

    hook = lazy.forget_on_reload("lazy_probe_mod:forget")
    hook({"reason": "startup"}, Ctx())
    hook({"reason": "reload"}, Ctx())
    assert sys.modules["lazy_probe_mod"].forgotten == ["s1", "s2"]
    monkeypatch.delitem(sys.modules, "lazy_probe_mod")
