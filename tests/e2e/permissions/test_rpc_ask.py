"""``--permission-mode default`` over RPC: the question is an ``extension_ui_request`` (select)
the client answers; "always for this session" holds for the session and again once it is
resumed, not in a new one; "always for this project" holds in every later process (it is kept in
``<agent dir>/permissions.json``); "Deny" and a cancelled dialog refuse the call in one line."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from pi_host.rpc import RpcClient
from tests.support.faux import text, tool_call


class Answers:
    """Answers select dialogs from a list, in order, and records every question."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def __call__(self, record: dict[str, Any]) -> Any:
        if record.get("method") != "select":
            return None
        self.asked.append(record)
        choice = self.answers.pop(0)
        if choice is None:
            return None
        return next(option for option in record["options"] if option.startswith(choice))


def client(work, script, *args: str) -> RpcClient:
    env = dict(os.environ, PI_FAUX_SCRIPT=json.dumps(script))
    argv = [
        sys.executable,
        "-m",
        "pi_host",
        "--mode",
        "rpc",
        "--model",
        "faux/faux-1",
        "--permission-mode",
        "default",
    ]
    return RpcClient(argv, args=args, cwd=work, env=env, timeout=60)


def results(records) -> list[tuple[str, bool]]:
    found = []
    for record in records:
        if record.get("type") == "tool_execution_end":
            content = record["result"]["content"]
            found.append(("".join(block.get("text", "") for block in content), record["isError"]))
    return found


def bash(command: str) -> list[dict[str, Any]]:
    return [tool_call("bash", command=command), text("ok")]


def test_questions_over_rpc_and_remembered_answers(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    one, two, three = "touch one.txt", "touch two.txt", "touch three.txt"

    answers = Answers("Allow always for this session", "Allow always for this project", "Deny")
    with client(work, bash(one) + bash(one) + bash(two) + bash(three)) as rpc:
        rpc.on_ui_request(answers)
        rpc.prompt_and_wait("first")
        assert answers.asked[0]["options"] == [
            "Allow once",
            f"Allow always for this session: bash({one})",
            f"Allow always for this project: bash({one})",
            "Deny",
        ]
        assert answers.asked[0]["title"] == f"Allow bash: {one}"
        again = rpc.prompt_and_wait("same again")
        assert len(answers.asked) == 1 and results(again) == [("(no output)", False)]
        rpc.prompt_and_wait("second")
        denied = rpc.prompt_and_wait("third")
    assert results(denied) == [("pi-permissions: the user denied this bash call", True)]
    assert (work / "one.txt").exists() and (work / "two.txt").exists() and not (work / "three.txt").exists()
    saved = json.loads((agent / "permissions.json").read_text())
    assert saved == {"projects": {str(work.resolve()): {"allow": [f"bash({two})"]}}}
    (work / "one.txt").unlink()
    (work / "two.txt").unlink()

    # The session resumed: its own answer and the project's hold; a cancelled dialog denies.
    answers = Answers(None)
    with client(work, bash(one) + bash(two) + bash(three), "-c") as rpc:
        rpc.on_ui_request(answers)
        ran = [results(rpc.prompt_and_wait(p)) for p in ("a", "b", "c")]
    assert [r[0][1] for r in ran] == [False, False, True]
    assert [q["title"] for q in answers.asked] == [f"Allow bash: {three}"]
    assert (work / "one.txt").exists() and (work / "two.txt").exists() and not (work / "three.txt").exists()

    # A new session: only the project's answer holds.
    answers = Answers("Allow once")
    with client(work, bash(one) + bash(two)) as rpc:
        rpc.on_ui_request(answers)
        rpc.prompt_and_wait("a")
        rpc.prompt_and_wait("b")
    assert [q["title"] for q in answers.asked] == [f"Allow bash: {one}"]


def test_an_unanswered_question_denies_after_the_timeout_set(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"permissions": {"askTimeoutSeconds": 0.5}}))
    with client(work, bash("touch late.txt")) as rpc:  # no UI handler: nobody answers
        records = rpc.prompt_and_wait("go", timeout=30)
    assert results(records) == [
        ("pi-permissions: nobody answered the question about this bash call within 0.5 s", True)
    ]
    assert not (work / "late.txt").exists()
