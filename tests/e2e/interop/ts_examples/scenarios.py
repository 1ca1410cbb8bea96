"""pi 1.6.0's example extensions, each with a run that shows what it does and what to compare.

``SCENARIOS`` covers the examples that work without a terminal (tools, commands, events,
gates, compaction, dynamic tools, input transforms, messages, the event bus, RPC dialogs...);
``NOT_RUN`` names the others with the reason (terminal components, macOS, a network service...).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.e2e.interop.ts_examples.harness import (
    Run,
    Scenario,
    custom_entries,
    offered_tools,
    system_prompt,
    tool_results,
    user_texts,
)
from tests.support.loopback import Reply


def _git(work: Path) -> None:
    for command in (["init", "-q"], ["config", "user.email", "t@example.org"], ["config", "user.name", "t"]):
        subprocess.run(["git", *command], cwd=work, check=True)
    (work / "README.md").write_text("hello\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=work, check=True)


def _ui_answer(answers: dict[str, object]):
    def answer(record: dict) -> object:
        return answers.get(record.get("method", ""))

    return answer


def _notices(run: Run) -> list[str]:
    return [u.get("message", "") for u in run.ui("notify")]


def _compaction(run: Run) -> list[str]:
    return [e.get("summary", "") for e in run.entries if e.get("type") == "compaction"]


SCENARIOS: list[Scenario] = [
    Scenario(
        "hello.ts",
        replies=[Reply.tool("hello", {"name": "Ada"}), "done"],
        args=["greet Ada"],
        observe=lambda r: (tool_results(r), r.stdout),
    ),
    Scenario(
        "permission-gate.ts",
        replies=[Reply.tool("bash", {"command": "rm -rf junk"}), "done"],
        args=["clean up"],
        observe=tool_results,
    ),
    Scenario(
        "permission-gate.ts",
        mode="rpc",
        replies=[Reply.tool("bash", {"command": "sudo ls"}), "done"],
        rpc=[{"type": "prompt", "message": "list"}],
        answer=_ui_answer({"select": "No"}),
        observe=lambda r: (tool_results(r), [u["method"] for u in r.ui("select")]),
    ),
    Scenario(
        "protected-paths.ts",
        mode="rpc",
        replies=[Reply.tool("write", {"path": ".env", "content": "X=1"}), "done"],
        rpc=[{"type": "prompt", "message": "write it"}],
        observe=lambda r: (tool_results(r), _notices(r), (r.work / ".env").exists()),
    ),
    Scenario(
        "dynamic-tools.ts",
        args=["/add-echo-tool shout", "say hi"],
        replies=[Reply.tool("shout", {"message": "hi"}), "done"],
        observe=lambda r: (offered_tools(r, 0), tool_results(r)),
    ),
    Scenario(
        "input-transform.ts",
        mode="rpc",
        rpc=[
            {"type": "prompt", "message": "ping"},
            {"type": "prompt", "message": "?quick What is TypeScript?"},
        ],
        observe=lambda r: (_notices(r), user_texts(r), len(r.requests)),
    ),
    Scenario(
        "send-user-message.ts",
        mode="rpc",
        rpc=[
            {"type": "prompt", "message": "/ask What is 2+2?"},
            {"type": "sleep", "seconds": 2},
            {"type": "prompt", "message": "/askwith Why?"},
            {"type": "sleep", "seconds": 2},
        ],
        replies=["4", "because"],
        observe=lambda r: [user_texts(r)] + [m for m in (_notices(r))],
    ),
    Scenario(
        "event-bus.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "/emit hello there"}],
        observe=_notices,
    ),
    Scenario(
        "rpc-demo.ts",
        mode="rpc",
        replies=[Reply.tool("bash", {"command": "sudo rm -rf /tmp/x"}), "done"],
        rpc=[
            {"type": "prompt", "message": "go"},
            {"type": "prompt", "message": "/rpc-input"},
            {"type": "prompt", "message": "/rpc-editor"},
            {"type": "prompt", "message": "/rpc-prefill"},
        ],
        answer=_ui_answer({"select": "Block", "input": "typed", "editor": "a\nb"}),
        observe=lambda r: r.ui(),
    ),
    Scenario(
        "custom-compaction.ts",
        mode="rpc",
        session=True,
        extra_models={
            "google": {"models": [{"id": "gemini-2.5-flash", "contextWindow": 100000, "maxTokens": 8192}]}
        },
        replies=["first answer", "second answer", "THE SUMMARY"],
        rpc=[
            {"type": "prompt", "message": "one"},
            {"type": "prompt", "message": "two"},
            {"type": "compact"},
        ],
        observe=lambda r: (_compaction(r), user_texts(r)[-1][:60] if r.requests else ""),
    ),
    Scenario(
        "commands.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "/commands extension"}],
        # each program lists its own built-in commands too (pi: /llama, /mcp; pi-host: /mcp, ...)
        observe=lambda r: [[o for o in u.get("options") or [] if "/commands" in o] for u in r.ui("select")],
    ),
    Scenario(
        "session-name.ts",
        mode="rpc",
        session=True,
        rpc=[
            {"type": "prompt", "message": "/session-name My work"},
            {"type": "prompt", "message": "/session-name"},
        ],
        observe=lambda r: (
            _notices(r),
            [e.get("name") for e in r.entries if e.get("type") == "session_info"],
        ),
    ),
    Scenario(
        "pirate.ts",
        args=["/pirate", "hello"],
        observe=lambda r: "pirate" in system_prompt(r).lower(),
    ),
    Scenario(
        "structured-output.ts",
        replies=[
            Reply.tool(
                "structured_output", {"headline": "Done", "summary": "all good", "actionItems": ["ship"]}
            ),
            "never",
        ],
        args=["report"],
        observe=lambda r: (len(r.requests), tool_results(r)),
    ),
    Scenario(
        "todo.ts",
        session=True,
        replies=[Reply.tool("todo", {"action": "add", "text": "write tests"}), "added"],
        args=["add a todo"],
        observe=lambda r: tool_results(r),
    ),
    Scenario(
        "tool-override.ts",
        replies=[Reply.tool("read", {"path": "README.md"}), "done"],
        prepare=lambda w: (w / "README.md").write_text("hello\n"),
        args=["read it"],
        observe=tool_results,
    ),
    Scenario(
        "bookmark.ts",
        mode="rpc",
        session=True,
        rpc=[{"type": "prompt", "message": "hi"}, {"type": "prompt", "message": "/bookmark first"}],
        observe=lambda r: [e.get("label") for e in r.entries if e.get("type") == "label"],
    ),
    Scenario(
        "model-status.ts",
        mode="rpc",
        extra_models={"other": {"models": [{"id": "other-1"}]}},
        rpc=[{"type": "set_model", "provider": "other", "modelId": "other-1"}],
        observe=lambda r: [u.get("statusText") for u in r.ui("setStatus")],
    ),
    Scenario(
        "system-prompt-header.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "hi"}],
        # the prompts differ in length (each program's own prompt): compare that one is reported
        observe=lambda r: [
            bool(re.fullmatch(r"System: [1-9]\d* chars", u.get("statusText") or ""))
            for u in r.ui("setStatus")
        ],
    ),
    Scenario(
        "claude-rules.ts",
        mode="rpc",
        prepare=lambda w: (
            (w / ".claude" / "rules").mkdir(parents=True),
            (w / ".claude" / "rules" / "style.md").write_text("Use tabs.\n"),
        ),
        rpc=[{"type": "prompt", "message": "hi"}],
        observe=lambda r: ("style.md" in system_prompt(r), _notices(r)),
    ),
    Scenario(
        "git-checkpoint.ts",
        mode="rpc",
        prepare=_git,
        replies=[Reply.tool("write", {"path": "a.txt", "content": "A"}), "done"],
        rpc=[{"type": "prompt", "message": "write a"}],
        observe=lambda r: (len(tool_results(r)), "failed" in r.stderr, (r.work / "a.txt").read_text()),
    ),
    Scenario(
        "dirty-repo-guard.ts",
        mode="rpc",
        prepare=lambda w: (_git(w), (w / "README.md").write_text("changed\n")),
        rpc=[{"type": "new_session"}],
        answer=_ui_answer({"select": None}),
        observe=lambda r: ([u.get("title") for u in r.ui("select", "confirm")], r.events("response")),
    ),
    Scenario(
        "confirm-destructive.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "hi"}, {"type": "new_session"}],
        answer=_ui_answer({"confirm": False}),
        observe=lambda r: ([u.get("title") for u in r.ui("confirm")], _notices(r)),
    ),
    Scenario(
        "inline-bash.ts",
        args=["Files: !{echo one two}"],
        observe=user_texts,
    ),
    Scenario(
        "truncated-tool.ts",
        replies=[Reply.tool("rg", {"pattern": "hello"}), "done"],
        prepare=lambda w: (w / "notes.txt").write_text("hello world\n"),
        args=["search"],
        observe=tool_results,
    ),
    Scenario(
        "provider-payload.ts",
        args=["hi"],
        prepare=lambda w: (w / ".pi").mkdir(),
        observe=lambda r: _payload_log(r.work),
    ),
    Scenario(
        "prompt-customizer.ts",
        args=["hi"],
        observe=lambda r: (
            "<tool_guidance>" in system_prompt(r) and "Use `write` to create new files" in system_prompt(r)
        ),
    ),
    Scenario(
        "shutdown-command.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "/quit"}],
        observe=lambda r: r.exit,
    ),
    Scenario(
        "entry-renderer.ts",
        mode="rpc",
        session=True,
        rpc=[{"type": "prompt", "message": "/status-card"}],
        observe=lambda r: [t for t, _ in custom_entries(r)],
    ),
    Scenario(
        "widget-placement.ts",
        mode="rpc",
        rpc=[{"type": "get_state"}],
        observe=lambda r: r.ui("setWidget"),
    ),
    Scenario(
        "timed-confirm.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "/timed"}],
        observe=lambda r: (
            [(u.get("method"), u.get("timeout")) for u in r.ui("confirm", "select")] + _notices(r)
        ),
    ),
]

SCENARIOS += [
    Scenario(
        "status-line.ts",
        mode="rpc",
        rpc=[{"type": "prompt", "message": "hi"}],
        # pi's theme colours the text (ANSI); pi-host shows it plain and themes it itself
        observe=lambda r: [ANSI.sub("", u.get("statusText") or "") for u in r.ui("setStatus")],
    ),
    Scenario(
        "auto-commit-on-exit.ts",
        mode="rpc",
        prepare=_git,
        replies=[Reply.tool("write", {"path": "notes.txt", "content": "N"}), "done"],
        rpc=[{"type": "prompt", "message": "write notes"}],
        observe=lambda r: _git_log(r.work),
    ),
]

SCENARIOS += [
    Scenario(
        "dynamic-resources",
        mode="rpc",
        rpc=[{"type": "get_commands"}, {"type": "prompt", "message": "/dynamic"}],
        # pi-host's template expansion keeps the file's surrounding newlines, pi trims them
        observe=lambda r: [t.strip() for t in user_texts(r)],
    ),
    Scenario(
        "reload-runtime.ts",
        mode="rpc",
        replies=[Reply.tool("reload_runtime", {}), "after reload"],
        rpc=[
            {"type": "prompt", "message": "please reload"},
            {"type": "sleep", "seconds": 2},
            {"type": "prompt", "message": "again"},
        ],
        observe=lambda r: (tool_results(r)[:1], _notices(r)),
    ),
]


def _payload_log(work: Path) -> list[bool]:
    text = (work / ".pi" / "provider-payload.log").read_text()
    return ['"messages"' in text, "[200]" in text]


def _git_log(work: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=work, capture_output=True, text=True).stdout
    return [line.split(":")[0] for line in out.splitlines()]


ANSI = re.compile(r"\x1b\[[0-9;]*m")

NOT_RUN: dict[str, str] = {
    # terminal components: ctx.ui.custom(), overlays, editors, footers, headers, renderers
    "question.ts": "ctx.ui.custom() (a terminal component); in RPC and print pi returns undefined too",
    "questionnaire.ts": "ctx.ui.custom() (a terminal component)",
    "tic-tac-toe.ts": "ctx.ui.custom() (a terminal game)",
    "snake.ts": "ctx.ui.custom() (a terminal game)",
    "space-invaders.ts": "ctx.ui.custom() (a terminal game)",
    "doom-overlay": "ctx.ui.custom() overlay (a terminal game)",
    "overlay-test.ts": "ctx.ui.custom() overlays",
    "overlay-qa-tests.ts": "ctx.ui.custom() overlays",
    "modal-editor.ts": "ctx.ui.setEditorComponent (a terminal editor component)",
    "rainbow-editor.ts": "ctx.ui.setEditorComponent",
    "border-status-editor.ts": "ctx.ui.setEditorComponent",
    "custom-footer.ts": "ctx.ui.setFooter (a terminal component)",
    "custom-header.ts": "ctx.ui.setHeader (a terminal component)",
    "hidden-thinking-label.ts": "ctx.ui.setHiddenThinkingLabel (terminal only; a no-op as in pi's RPC mode)",
    "working-indicator.ts": "ctx.ui.setWorkingIndicator (terminal only; a no-op as in pi's RPC mode)",
    "working-message-test.ts": "ctx.ui.setWorkingMessage (terminal only; a no-op as in pi's RPC mode)",
    "titlebar-spinner.ts": "terminal title animation (setTitle works; the spinner timer is terminal-only)",
    "message-renderer.ts": "registerMessageRenderer (interactive drawing; the messages themselves work)",
    "minimal-mode.ts": "createReadToolDefinition & co. (pi's built-in tool objects are not in the bridge)",
    "built-in-tool-renderer.ts": "createReadToolDefinition & co. (pi's built-in tool objects)",
    "tools.ts": "SettingsList inside ctx.ui.custom()",
    "summarize.ts": "ctx.ui.custom() to show the summary",
    "qna.ts": "ctx.ui.custom()",
    "handoff.ts": "ctx.ui.custom() loader and ctx.newSession({setup})",
    "github-issue-autocomplete.ts": "ctx.ui.addAutocompleteProvider (interactive editor) and the gh CLI",
    "notify.ts": "a terminal notification escape sequence (interactive mode)",
    # not about the bridge
    "mac-system-theme.ts": "macOS only (defaults read) and theme switching",
    "ssh.ts": "pi's built-in tool factories (createReadTool...) with remote operations",
    "bash-spawn-hook.ts": "createBashTool (pi's built-in bash tool object)",
    "interactive-shell.ts": "user_bash with a persistent shell: interactive mode (!command)",
    "gondolin": "a Gondolin micro-VM and pi's built-in tool factories",
    "custom-provider-anthropic": "registerProvider with a custom streamSimple (a TypeScript wire API)",
    "custom-provider-gitlab-duo": "registerProvider with OAuth and a custom stream",
    "jev-router.ts": "registerVirtualModel (virtual models are not in pi-host)",
    "subagent": "runs `pi` itself as a subprocess (here that is pi-host; agents from ~/.pi/agent/agents)",
    "plan-mode": "interactive plan mode: shortcuts, widgets and ctx.ui.custom()",
    "preset.ts": "interactive presets (ctx.ui.custom selector); its flags and setModel/setActiveTools work",
    "debug-provider.ts": "an entry renderer for raw stream events (interactive); the raw events differ per program",
    "trigger-compact.ts": "ctx.compact() from agent_settled on a token threshold (needs a long session)",
    "git-merge-and-resolve.ts": "a git merge with remotes",
    "file-trigger.ts": "a file watcher sending messages (timing-dependent)",
    "project-trust.ts": "project_trust dialogs: needs a mode that asks before start-up",
    "input-transform-streaming.ts": "streamingBehavior routing while a run streams (timing-dependent)",
    "with-deps": "npm dependencies installed by npm (covered by tests/e2e/ts_bridge/test_npm_packages.py)",
}
