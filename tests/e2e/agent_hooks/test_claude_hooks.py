"""Claude Code and Codex hook files, run unchanged by the real ``pi`` (``--agent-hooks``).

The first test uses the blocking hook of Claude Code's hooks reference as it is written there: a
``PreToolUse`` group matching ``Bash`` whose command is ``"$CLAUDE_PROJECT_DIR"/.claude/hooks/
block-rm.sh``, a script that reads ``.tool_input.command`` with ``jq`` and answers
``permissionDecision: "deny"`` for ``rm -rf``. The others cover input rewriting, exit codes,
timeouts, the other events, trust, Codex's file and the permission decisions."""

from __future__ import annotations

import json
import os
import shutil
import stat
import textwrap
from pathlib import Path

import pytest

from tests.e2e.sandbox.helpers import run_json
from tests.support.faux import text, tool_call
from tests.support.loopback import PRINT, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

needs_jq = pytest.mark.skipif(
    shutil.which("jq") is None, reason="jq is not installed (Claude Code's example uses it)"
)

BLOCK_RM_SETTINGS = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh'}],
            }
        ]
    }
}
BLOCK_RM_SCRIPT = """\
#!/bin/bash
COMMAND=$(jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  jq -n '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Destructive command blocked by hook"
    }
  }'
else
  exit 0  # allow the command
fi
"""


def script_file(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def hooks_file(path: Path, hooks: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def group(command: str, matcher: str = "", timeout: float | None = None) -> list[dict]:
    hook = {"type": "command", "command": command, **({"timeout": timeout} if timeout else {})}
    return [{"matcher": matcher, "hooks": [hook]}]


@needs_jq
def test_claude_codes_documented_hook_blocks_rm_rf_unchanged(isolated_environment):
    work = isolated_environment["work"]
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps(BLOCK_RM_SETTINGS, indent=2))
    script_file(work / ".claude" / "hooks" / "block-rm.sh", BLOCK_RM_SCRIPT)
    (work / "junk").mkdir()
    script = [tool_call("bash", command="rm -rf junk"), tool_call("bash", command="ls"), text("done")]
    run = run_json("-a", "--agent-hooks", "--tools", "bash", script=script, cwd=work)
    assert run.returncode == 0, run.stderr
    assert [(t.text, t.is_error) for t in run.tools] == [
        ("blocked by a PreToolUse hook: Destructive command blocked by hook", True),
        ("junk\n", False),
    ]
    assert (work / "junk").is_dir()
    # Off by default, and a project's hook file runs only in a project the user trusted.
    assert (
        run_json("-a", "--tools", "bash", script=script[:1] + [text("x")], cwd=work).tools[0].is_error
        is False
    )
    (work / "junk").mkdir()
    untrusted = run_json(
        "--no-approve", "--agent-hooks", "--tools", "bash", script=script[:1] + [text("x")], cwd=work
    )
    assert untrusted.tools[0].is_error is False and not (work / "junk").exists()


def test_a_hook_rewrites_the_input(isolated_environment):
    work, home = isolated_environment["work"], isolated_environment["home"]
    rewrite = script_file(
        home / "hooks" / "rewrite.py",
        f"""\
        #!{shutil.which("python3") or "/usr/bin/python3"}
        import json, sys
        event = json.load(sys.stdin)
        data = event["tool_input"]
        if event["tool_name"] == "Bash":
            data = {{"command": "echo rewritten: " + data["command"]}}
        else:
            data = {{"file_path": data["file_path"].replace("draft", "final")}}
        print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "updatedInput": data}}}}))
    """,
    )
    hooks_file(home / ".claude" / "settings.json", {"PreToolUse": group(rewrite, "Bash|Write")})
    script = [
        tool_call("bash", command="npm test"),
        tool_call("write", path="draft.txt", content="hi"),
        text("done"),
    ]
    run = run_json("--agent-hooks", "--tools", "bash,write", script=script, cwd=work)
    assert run.tools[0].text.strip() == "rewritten: npm test"
    assert (work / "final.txt").read_text() == "hi" and not (work / "draft.txt").exists()


def test_exit_codes_timeouts_and_tool_results(isolated_environment):
    work, home = isolated_environment["work"], isolated_environment["home"]
    hooks_file(
        home / ".claude" / "settings.json",
        {
            "PreToolUse": group("echo 'no pushing today' >&2; exit 2", "Bash")[:0]
            + [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "grep -q 'git push' && { echo 'no pushing today' >&2; exit 2; }; exit 0",
                        }
                    ],
                },
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo broken >&2; exit 1"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]},
            ],
            "PostToolUse": group(
                """echo '{"decision": "block", "reason": "the output mentions a secret"}'""", "Bash"
            ),
        },
    )
    script = [tool_call("bash", command="git push"), tool_call("bash", command="echo ok"), text("done")]
    run = run_json("--agent-hooks", "--tools", "bash", script=script, cwd=work, timeout=60)
    assert run.returncode == 0
    assert (run.tools[0].text, run.tools[0].is_error) == (
        "blocked by a PreToolUse hook: no pushing today",
        True,
    )
    assert run.tools[1].text == "ok\n\n\n[PostToolUse hook] the output mentions a secret"
    lines = run.stderr.splitlines()
    assert "pi: hook 'echo broken >&2; exit 1' exited with code 1: broken" in lines
    assert any(
        line.startswith("pi: hook 'sleep 30' (") and line.endswith("timed out after 1 s (killed)")
        for line in lines
    )


def test_prompt_session_start_and_stop_hooks_reach_the_model(isolated_environment):
    work, home, agent = (
        isolated_environment["work"],
        isolated_environment["home"],
        isolated_environment["agent"],
    )
    hooks_file(
        home / ".claude" / "settings.json",
        {
            "SessionStart": group("echo 'Build with make, not npm.'", "startup"),
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "grep -q secret && { echo 'prompt mentions a secret' >&2; exit 2; }; echo 'Today is a holiday.'",
                        }
                    ]
                }
            ],
            "Stop": group(
                """grep -q '"stop_hook_active": false' && echo '{"decision": "block", "reason": "Run the tests first."}'; exit 0"""
            ),
        },
    )
    with LoopbackServer([Reply("first"), Reply("tests run")]) as server:
        write_models_json(agent, server.url)
        blocked = run_pi(*PRINT, "--agent-hooks", "my secret plan", cwd=work)
        assert "pi: prompt blocked by a UserPromptSubmit hook: prompt mentions a secret" in blocked.stderr
        assert server.requests == []
        out = run_pi(*PRINT, "--agent-hooks", "hello", cwd=work)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "tests run"
    first, second = (json.dumps(r["messages"]) for r in server.requests)
    assert "Build with make, not npm." in first and "Today is a holiday." in first
    assert "Run the tests first." in second


def test_codex_hook_files_and_permission_decisions(isolated_environment):
    work, home = isolated_environment["work"], isolated_environment["home"]
    (home / ".codex").mkdir()
    (home / ".codex" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": """input=$(cat); echo "$input" | grep -q '"rm ' && echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "codex says no"}}'; echo "$input" | grep -q 'touch ok' && echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'; exit 0""",
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    script = [
        tool_call("bash", command="rm x"),
        tool_call("bash", command="touch ok.txt"),
        tool_call("bash", command="touch asked.txt"),
        text("done"),
    ]
    run = run_json(
        "--agent-hooks", "--permission-mode", "default", "--tools", "bash", script=script, cwd=work
    )
    assert run.tools[0].text == "blocked by a PreToolUse hook: codex says no"
    assert not run.tools[1].is_error and (work / "ok.txt").exists()  # the hook's allow: no question
    assert "there is no user to ask" in run.tools[2].text and not (work / "asked.txt").exists()
    assert os.path.exists(home / ".codex" / "hooks.json")
