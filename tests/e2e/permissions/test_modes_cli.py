"""Permission modes and rules through the real ``pi``: plan mode refuses a third-party tool that
does not declare itself read-only, whatever its name; without a UI a call that needs a question
is refused in one line; rules of the user's and a trusted project's settings; the model is told
about plan mode."""

from __future__ import annotations

import json

from tests.e2e.sandbox.helpers import run_json
from tests.support.faux import text, tool_call, tool_calls
from tests.support.loopback import PRINT, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi, write_plugin

THIRD_PARTY = """
from pi_host import Tool, ToolResult, hookimpl


class ReadNotes(Tool):
    name = "read_notes"  # its name says read; it writes, and declares nothing
    description = "Notes"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        open("notes.txt", "w").write(args.get("text", ""))
        return ToolResult.text("saved")


class CountWords(Tool):
    name = "count_words"
    description = "Count words"
    capability = "read"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        return ToolResult.text(str(len(args.get("text", "").split())))


@hookimpl
def register_tools():
    return [ReadNotes(), CountWords()]
"""


def settings(agent, **values):
    (agent / "settings.json").write_text(json.dumps(values))


def test_plan_mode_runs_only_read_only_tools(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    (work / "a.txt").write_text("hello")
    plugin = write_plugin(tmp_path, "third_party", THIRD_PARTY)
    calls = tool_calls(
        ("read_notes", {"text": "x"}),
        ("count_words", {"text": "a b c"}),
        ("read", {"path": "a.txt"}),
        ("bash", {"command": "touch made.txt"}),
        ("write", {"path": "w.txt", "content": "x"}),
    )
    run = run_json(
        "-e",
        plugin,
        "--permission-mode",
        "plan",
        "--tools",
        "read,bash,write,read_notes,count_words",
        script=[calls, text("done")],
        cwd=work,
    )
    assert run.returncode == 0, run.stderr
    by_name = {t.name: t for t in run.tools}
    assert by_name["read_notes"].is_error and by_name["read_notes"].text == (
        "pi-permissions: plan mode: read_notes is not a read-only tool (capability: unknown), so it does not run; "
        "present the plan, and the user leaves plan mode to carry it out"
    )
    assert "(capability: exec)" in by_name["bash"].text and "(capability: write)" in by_name["write"].text
    assert by_name["count_words"].text == "3" and by_name["read"].text == "hello"
    assert not any((work / name).exists() for name in ("notes.txt", "made.txt", "w.txt"))


def test_without_a_ui_a_question_is_a_one_line_denial(isolated_environment):
    work = isolated_environment["work"]
    out = run_pi(
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "--permission-mode",
        "default",
        "go",
        script=[tool_call("bash", command="touch made.txt"), text("{{lastToolResult}}")],
        cwd=work,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "pi-permissions: bash needs approval in permission mode default and there is no user to ask (print mode); "
        "add an allow rule to the settings (permissions.allow) or use --permission-mode auto"
    )
    assert not (work / "made.txt").exists()


def test_rules_from_the_user_and_a_trusted_project(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    settings(
        agent,
        permissions={
            "defaultMode": "default",
            "allow": ["Bash(touch allowed.txt)", "bash(echo:*)"],
            "deny": ["bash(rm:*)"],
        },
    )
    (work / ".pi").mkdir()
    (work / ".pi" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["bash(touch project.txt)"]}})
    )
    script = [
        tool_call("bash", command=c)
        for c in (
            "touch allowed.txt",
            "echo hi; touch sneaky.txt",
            "touch project.txt",
            "echo ok && rm -rf x",
        )
    ] + [text("done")]
    trusted = run_json("-a", "--tools", "bash", script=script, cwd=work)
    assert [t.is_error for t in trusted.tools] == [False, True, False, True], trusted.stdout
    assert "there is no user to ask" in trusted.tools[1].text  # a prefix rule never covers a compound command
    assert trusted.tools[3].text == "pi-permissions: permission denied by the rule bash(rm:*) (user settings)"
    assert (
        (work / "allowed.txt").exists()
        and (work / "project.txt").exists()
        and not (work / "sneaky.txt").exists()
    )
    (work / "project.txt").unlink()
    untrusted = run_json("--no-approve", "--tools", "bash", script=script[2:3] + [text("done")], cwd=work)
    assert untrusted.tools[0].is_error and not (work / "project.txt").exists()


def test_deny_rules_apply_in_auto_mode_too(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    settings(agent, permissions={"deny": ["write(*.env)"]})
    script = [
        tool_calls(
            ("write", {"path": "config/.env", "content": "x"}), ("write", {"path": "a.txt", "content": "x"})
        ),
        text("done"),
    ]
    run = run_json("--tools", "write", script=script, cwd=work)
    assert [t.is_error for t in run.tools] == [True, False]
    assert run.tools[0].text == "pi-permissions: permission denied by the rule write(*.env) (user settings)"


def test_the_model_is_told_about_plan_mode(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    with LoopbackServer([Reply("planned"), Reply("done")]) as server:
        write_models_json(agent, server.url)
        out = run_pi(*PRINT, "--permission-mode", "plan", "make a plan", cwd=work)
        assert out.returncode == 0, out.stderr
        normal = run_pi(*PRINT, "hello", cwd=work)
        assert normal.returncode == 0, normal.stderr
    system = [json.dumps(r["messages"][0]) for r in server.requests]
    assert "Plan mode is on: only read-only tools run" in system[0]
    assert "Plan mode" not in system[1]
