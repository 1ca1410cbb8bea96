"""Claude Code / Codex hook files: reading them, the names and arguments as the hooks see them,
and running commands (exit codes, JSON answers, timeouts that kill)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from pi_agent_hooks import mapping
from pi_agent_hooks.config import Hook, HookConfig, _add, load
from pi_agent_hooks.runner import run_all, run_one


def config_of(data, path="settings.json"):
    config = HookConfig()
    _add(config, data, path)
    return config


def test_claude_shape_matchers_and_duplicates():
    config = config_of(
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "a"}],
                    },
                    {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b", "timeout": 5}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": "c"}]},
                    {"hooks": [{"type": "prompt", "prompt": "x"}]},
                ]
            }
        }
    )

    def commands(tool, args):
        return [h.command for h in config.matching("PreToolUse", mapping.names(tool, args))]

    assert commands("bash", {}) == ["a", "c"]
    assert commands("write", {}) == ["b", "c"]
    assert commands("edit", {"edits": [{}, {}]}) == ["c"]  # MultiEdit: "Edit|Write" is a full match
    assert config.matching("PreToolUse", ["Write"])[0].timeout == 5
    assert any("type 'prompt' are not supported" in p for p in config.problems)


def test_codex_shapes_snake_case_and_disabled_files():
    config = config_of(
        {
            "hooks": {
                "pre_tool_use": [{"command": "x", "timeout_ms": 2500}],
                "PreToolUse": [{"matcher": "apply_patch", "hooks": [{"command": "y"}]}],
            }
        }
    )
    assert [(h.command, h.timeout) for h in config.matching("PreToolUse", mapping.names("edit", {}))] == [
        ("x", 2.5),
        ("y", 60.0),
    ]
    assert (
        config_of({"disableAllHooks": True, "hooks": {"Stop": [{"hooks": [{"command": "z"}]}]}}).events == {}
    )
    assert "unknown event 'Whatever'" in config_of({"hooks": {"Whatever": []}}).problems[0]


def test_project_files_need_a_trust_decision(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "proj"
    for folder in (home / ".claude", project / ".claude", home / ".codex"):
        folder.mkdir(parents=True)
    hook = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo"}]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(hook))
    (project / ".claude" / "settings.json").write_text(json.dumps(hook))
    (home / ".codex" / "config.toml").write_text(
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "echo toml"\n'
    )
    monkeypatch.setattr("sys.argv", ["pi", "-p", "x"])
    ctx = SimpleNamespace(
        cwd=str(project), is_project_trusted=lambda: True
    )  # trusted only for lack of .pi resources
    assert load(ctx, str(home)).files == [
        str(home / ".claude" / "settings.json"),
        str(home / ".codex" / "config.toml"),
    ]
    monkeypatch.setattr("sys.argv", ["pi", "-a", "-p", "x"])
    assert str(project / ".claude" / "settings.json") in load(ctx, str(home)).files
    ctx.is_project_trusted = lambda: False
    assert str(project / ".claude" / "settings.json") not in load(ctx, str(home)).files


def test_arguments_both_ways():
    cwd = "/p"
    assert mapping.to_claude("bash", {"command": "ls", "timeout": 2}, cwd) == {
        "command": "ls",
        "timeout": 2000,
    }
    assert mapping.to_claude("write", {"path": "a.txt", "content": "x"}, cwd) == {
        "file_path": "/p/a.txt",
        "content": "x",
    }
    edit = {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}]}
    assert mapping.to_claude("edit", edit, cwd) == {
        "file_path": "/p/a.py",
        "old_string": "a",
        "new_string": "b",
        "replace_all": False,
    }
    assert mapping.from_claude("edit", {"file_path": "/p/b.py", "new_string": "c"}, edit) == {
        "path": "/p/b.py",
        "edits": [{"oldText": "a", "newText": "c"}],
    }
    assert mapping.from_claude("bash", {"command": "ls -la", "timeout": 1500}, {"command": "ls"}) == {
        "command": "ls -la",
        "timeout": 1.5,
    }
    assert mapping.to_claude("mcp__s__t", {"q": 1}, cwd) == {"q": 1}
    assert mapping.names("find", {}) == ["Glob", "find"]


def hook(command, timeout=10.0):
    return Hook(command, timeout, "test")


async def test_exit_codes_stdin_and_json(tmp_path):
    payload = {"tool_input": {"command": "rm -rf x"}}
    ok = await run_one(
        hook("""read line; echo "$line" | grep -q 'rm -rf' && echo '{"decision": "block"}'"""),
        payload,
        str(tmp_path),
        {},
    )
    assert ok.code == 0 and ok.json == {"decision": "block"} and ok.plain == ""
    blocked = await run_one(hook("echo nope >&2; exit 2"), payload, str(tmp_path), {})
    assert (blocked.code, blocked.stderr.strip(), blocked.failure()) == (2, "nope", None)
    failed = await run_one(hook("echo broken >&2; exit 3"), payload, str(tmp_path), {})
    assert failed.failure() == "hook 'echo broken >&2; exit 3' exited with code 3: broken"
    plain = await run_one(hook("echo 'some context'"), payload, str(tmp_path), {})
    assert plain.plain == "some context" and plain.json is None


async def test_a_hook_that_hangs_is_killed_at_its_timeout(tmp_path):
    started = time.monotonic()
    [outcome] = await run_all([hook("sleep 30 & sleep 30", timeout=0.5)], {}, str(tmp_path))
    assert time.monotonic() - started < 5
    assert outcome.failure() == "hook 'sleep 30 & sleep 30' (test): timed out after 0.5 s (killed)"


async def test_hooks_of_one_event_run_at_the_same_time(tmp_path):
    started = time.monotonic()
    outcomes = await run_all([hook("sleep 0.6; echo a"), hook("sleep 0.6; echo b")], {}, str(tmp_path))
    assert [o.stdout.strip() for o in outcomes] == ["a", "b"]
    assert time.monotonic() - started < 1.1


@pytest.mark.parametrize("variable", ["CLAUDE_PROJECT_DIR"])
async def test_the_project_dir_variable(tmp_path, variable):
    [outcome] = await run_all([hook(f'echo "${variable}"')], {}, str(tmp_path))
    assert outcome.stdout.strip() == str(tmp_path)
