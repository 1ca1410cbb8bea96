"""``/tree``, ``/fork``, ``/clone``, ``/model`` and ``/import`` in a real terminal (tmux), on a
session file written by pi 1.6.0 (``tests/fixtures/sessions/pi_basic.jsonl``, recorded from the
real pi by ``make_fixtures.py``), against the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.support.interactive import LOOP_THINK, entries, session_files, user_texts
from tests.support.interactive import terminal_pi as e2e_pi
from tests.support.loopback import LoopbackServer, Reply
from tests.support.paths import SESSION_FIXTURES
from tests.support.terminal import Terminal, tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

FIXTURE = SESSION_FIXTURES / "pi_basic.jsonl"


def pi_written_session(world) -> Path:
    """pi 1.6.0's session file, moved to this project: its header cwd is the test's project, and
    it sits where both pi and pi-host keep this project's sessions."""
    from pi_session_jsonl.paths import default_session_dir

    lines = FIXTURE.read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(world["work"])
    directory = Path(default_session_dir(str(world["agent"]), str(world["work"])))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FIXTURE.name
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return path


def terminal_pi(world, server, *args) -> Terminal:
    return e2e_pi(world, server, *args, width=110, height=34)


def by_id(path: Path) -> dict[str, dict]:
    return {e["id"]: e for e in entries(path)[1:]}


def parent_skipping_system(found: dict[str, dict], entry: dict) -> dict:
    """The entry's parent, past a system-prompt message (pi-host records its own prompt when it
    differs from the one on the branch)."""
    parent = found[entry["parentId"]]
    if parent["type"] == "message" and parent["message"]["role"] == "system":
        parent = found[parent["parentId"]]
    return parent


def test_tree_navigates_to_an_earlier_answer_with_a_branch_summary(world):
    path = pi_written_session(world)
    before = path.read_text()
    replies = [Reply("## Goal\nTHE-BRANCH-SUMMARY of the abandoned work"), Reply("answer on the new branch")]
    with LoopbackServer(replies) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/tree")
            term.press("Enter")
            term.wait_for("Session tree")
            term.wait_for("← current", scrollback=False)
            term.send("Answer 1")  # search the rows
            term.wait_for(re.compile(r"›.*assistant: Answer 1: Hello"), scrollback=False)
            term.press("Enter")
            term.wait_for("Summarize branch?")
            term.press("Down")
            term.press("Enter")  # "Summarize"
            term.wait_for("Navigated to the selected point (branch summarized)", timeout=20)
            term.send("continue from here")
            term.press("Enter")
            term.wait_for("answer on the new branch")
            term.press("C-d")
            assert term.wait_exit() == 0
        summary_request, next_request = server.requests
        assert "Thanks, what did the commands print?" in json.dumps(summary_request["messages"])
        sent = json.dumps(next_request["messages"])
        assert "THE-BRANCH-SUMMARY" in sent  # the summary replaces the abandoned branch
        assert "Thanks, what did the commands print?" not in sent
        assert user_texts(next_request)[-1] == "continue from here"
    assert path.read_text().startswith(before)  # nothing already saved was rewritten
    found = by_id(path)
    [summary] = [e for e in found.values() if e["type"] == "branch_summary"]
    assert summary["parentId"] == "ee852afd"  # pi's "Answer 1" entry
    assert summary["fromId"] == "d73cd16f"  # the old leaf (the session_info entry)
    assert "THE-BRANCH-SUMMARY" in summary["summary"]
    [new_user] = [
        e
        for e in found.values()
        if e["type"] == "message" and e["message"].get("content") == "continue from here"
    ] or [
        e
        for e in found.values()
        if e["type"] == "message" and "continue from here" in json.dumps(e["message"].get("content"))
    ]
    assert parent_skipping_system(found, new_user)["id"] == summary["id"]


def test_tree_labels_and_filters_and_selecting_a_user_message_puts_it_in_the_editor(world):
    path = pi_written_session(world)
    with LoopbackServer([Reply("re-asked answer")]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/tree")
            term.press("Enter")
            term.wait_for("Session tree")
            term.press("C-u")  # user messages only
            screen = term.wait_for("filter: user-only", scrollback=False)
            assert "Answer 1" not in screen
            term.press("Up")  # from the last user message to the one before it
            term.wait_for(re.compile(r"›.*user: Please use bash"), scrollback=False)
            term.press("L")  # Shift+L: label it
            term.wait_for("Label (empty clears it)")
            term.send("checkpoint-one")
            term.press("Enter")
            term.wait_for("[checkpoint-one]", scrollback=False)
            term.press("C-l")  # labelled only
            screen = term.wait_for("filter: labeled-only", scrollback=False)
            assert "Hello, who are you" not in screen
            term.press("Enter")
            term.wait_for("Summarize branch?")
            term.press("Enter")  # No summary
            term.wait_for("Navigated to the selected point")
            term.wait_for(re.compile(r"Please use bash to print something\s*$", re.M), scrollback=False)
            term.press("Enter")  # send the message put back in the editor again
            term.wait_for("re-asked answer")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0]) == ["Hello, who are you?", "Please use bash to print something"]
    found = by_id(path)
    [label] = [e for e in found.values() if e["type"] == "label"]
    assert (label["targetId"], label["label"]) == ("197e57e1", "checkpoint-one")
    [asked] = [
        e
        for e in found.values()
        if e["type"] == "message" and e["message"]["role"] == "user" and e["id"] != "197e57e1"
        and "Please use bash" in json.dumps(e["message"]["content"])
    ]  # fmt: skip
    assert parent_skipping_system(found, asked)["id"] == "ee852afd"  # a new branch beside the old one


def test_double_escape_opens_the_tree(world):
    path = pi_written_session(world)
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.press("Escape")
            time.sleep(0.15)  # two presses, as a hand makes them
            term.press("Escape")
            term.wait_for("Session tree")
            term.press("Escape")
            term.wait_gone("Session tree")
            term.press("C-d")
            assert term.wait_exit() == 0


def test_fork_from_an_earlier_message_starts_a_new_file_and_keeps_the_old_one(world):
    path = pi_written_session(world)
    before = path.read_text()
    with LoopbackServer([Reply("forked answer")]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/fork")
            term.press("Enter")
            term.wait_for("Fork from a message")
            term.press("Up")  # oldest first, the newest highlighted: up to the one before it
            term.wait_for(re.compile(r"›.*Please use bash"), scrollback=False)
            term.press("Enter")
            term.wait_for("Forked to a new session")
            term.wait_for(re.compile(r"Please use bash to print something\s*$", re.M), scrollback=False)
            term.send(" again")
            term.press("Enter")
            term.wait_for("forked answer")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0]) == [
            "Hello, who are you?",
            "Please use bash to print something again",
        ]
    assert path.read_text() == before  # the original is untouched
    [forked] = [p for p in session_files(world) if p != path]
    header, *rest = entries(forked)
    assert header["parentSession"] == str(path)
    assert header["id"] != json.loads(before.splitlines()[0])["id"]
    texts = [json.dumps(e["message"].get("content")) for e in rest if e["type"] == "message"]
    assert any("Hello, who are you?" in t for t in texts)
    assert not any("Thanks, what did the commands print?" in t for t in texts)


def branched_session(world) -> Path:
    """A session with two branches after the first answer: the abandoned one, then the one the
    leaf is on (the file's last entries)."""
    from pi_session_jsonl.paths import default_session_dir

    from tests.support.session_files import assistant, header, user, write_jsonl

    directory = Path(default_session_dir(str(world["agent"]), str(world["work"])))
    return write_jsonl(
        directory / "branched.jsonl",
        [
            header(cwd=str(world["work"])),
            user("u1", None, "first question"),
            assistant("a1", "u1", "first answer"),
            user("u2", "a1", "abandoned branch question"),
            assistant("a2", "u2", "abandoned answer"),
            user("u3", "a1", "current branch question"),
            assistant("a3", "u3", "current answer"),
        ],
    )


def test_fork_offers_every_user_message_also_those_of_another_branch(world):
    path = branched_session(world)
    before = path.read_text()
    with LoopbackServer([Reply("answer on the revived branch")]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("current answer")
            assert "abandoned branch question" not in term.scrollback()  # not on the shown branch
            term.send("/fork")
            term.press("Enter")
            term.wait_for("Fork from a message")
            # as pi: every user message of the file, oldest first, the newest highlighted
            screen = term.wait_for(
                re.compile(r"› current branch question\s+Message 3 of 3"), scrollback=False
            )
            rows = [line for line in screen.splitlines() if "Message " in line]
            assert [row.split("Message")[0].strip(" ›") for row in rows] == [
                "first question",
                "abandoned branch question",
                "current branch question",
            ], screen
            term.press("Up")
            term.wait_for(re.compile(r"› abandoned branch question"), scrollback=False)
            term.press("Enter")
            term.wait_for("Forked to a new session")
            term.wait_for(re.compile(r"abandoned branch question\s*$", re.M), scrollback=False)
            term.send(" revived")
            term.press("Enter")
            term.wait_for("answer on the revived branch")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0]) == ["first question", "abandoned branch question revived"]
    assert path.read_text() == before
    [forked] = [p for p in session_files(world) if p != path]
    header, *rest = entries(forked)
    assert header["parentSession"] == str(path)
    assert [e["id"] for e in rest[:2]] == ["u1", "a1"]  # the path up to the chosen message's parent
    assert not any(e["id"] in ("u2", "u3", "a3") for e in rest)


def test_clone_copies_the_branch_and_a_plugin_can_refuse_a_fork(world):
    path = pi_written_session(world)
    plugin = world["agent"] / "extensions" / "guard.py"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(
        "from pi_host import hookimpl\n"
        "seen = []\n"
        "@hookimpl\n"
        "def on_session_before_fork(event, ctx):\n"
        "    seen.append(event)\n"
        "    if len(seen) == 1:\n"
        "        ctx.ui.notify(f\"guard saw {event['position']} {event['entryId']}\")\n"
        "        return {'cancel': True}\n"
    )
    with LoopbackServer([Reply("cloned answer")]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/clone")
            term.press("Enter")
            term.wait_for("guard saw at d73cd16f")
            term.wait_for("A plugin kept the current session")
            term.send("/clone")
            term.press("Enter")
            term.wait_for("Cloned to a new session")
            term.send("after the clone")
            term.press("Enter")
            term.wait_for("cloned answer")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0])[-2:] == [
            "Thanks, what did the commands print?",
            "after the clone",
        ]
    [cloned] = [p for p in session_files(world) if p != path]
    header, *rest = entries(cloned)
    assert header["parentSession"] == str(path)
    original = [e for e in entries(path)[1:] if e["type"] == "message"]
    copied = [e for e in rest if e["type"] == "message"]
    assert [e["message"] for e in copied[: len(original)]] == [e["message"] for e in original]
    assert "after the clone" in json.dumps(copied[-2]["message"]["content"])


def test_model_picker_on_a_pi_session_records_pis_model_change_entry(world):
    path = pi_written_session(world)
    with LoopbackServer([]) as server:
        with e2e_pi(world, server, "--session", str(path), width=110, height=34, models=[LOOP_THINK]) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/model")
            term.press("Enter")
            term.wait_for("Select a model")
            term.send("loop-think")
            term.wait_for("(1/1)")
            term.press("Enter")
            term.wait_for("Model: loop/loop-think")
            term.wait_gone("Select a model")
            term.press("C-d")
            assert term.wait_exit() == 0
    last = entries(path)[-1]
    assert {k: last[k] for k in ("type", "provider", "modelId", "parentId")} == {
        "type": "model_change",
        "provider": "loop",
        "modelId": "loop-think",
        "parentId": "d73cd16f",
    }


def test_import_opens_a_session_file_from_elsewhere(world, tmp_path):
    elsewhere = tmp_path / "exported" / "copy.jsonl"
    elsewhere.parent.mkdir()
    lines = FIXTURE.read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(world["work"])
    elsewhere.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with LoopbackServer([Reply("imported answer")]) as server:
        with terminal_pi(world, server) as term:
            term.send(f"/import {elsewhere}")
            term.press("Enter")
            term.wait_for(f"Imported {elsewhere}")
            term.wait_for("Answer 3: Thanks")
            term.send("one more")
            term.press("Enter")
            term.wait_for("imported answer")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0])[0] == "Hello, who are you?"
    assert "one more" in elsewhere.read_text()


def test_export_writes_html_and_a_jsonl_copy_of_the_session(world):
    path = pi_written_session(world)
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            term.send("/export")
            term.press("Enter")
            default = world["work"] / f"pi-session-{path.stem}.html"
            # the path may wrap at the terminal's width: compare with the lines joined
            expected = f"Exported to {default}"
            term.wait_until(
                lambda text: expected.replace(" ", "") in "".join(text.split()),
                what=repr(expected),
                scrollback=True,
            )
            term.send("/export copy.jsonl")
            term.press("Enter")
            term.wait_for("copy.jsonl")
            term.press("C-d")
            assert term.wait_exit() == 0
    page = default.read_text()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "Answer 3: Thanks, what did the commands print?" in page and "Fixture basic session" in page
    assert "<script src=" not in page and "<link" not in page  # nothing fetched: it opens offline
    copied = entries(world["work"] / "copy.jsonl")
    assert [e.get("id") for e in copied[1:]] == [e.get("id") for e in entries(path)[1:]]
    assert copied[0]["id"] == entries(path)[0]["id"]


def test_after_tree_navigation_the_redrawn_conversation_shows_the_tool_calls(world):
    path = pi_written_session(world)
    with LoopbackServer([Reply("ok")]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("Answer 3: Thanks")
            drawn = term.scrollback().count("echo fixture-output")
            assert drawn >= 1  # the resumed history shows pi's bash call
            term.send("/tree")
            term.press("Enter")
            term.wait_for("Session tree")
            term.send("command printed")
            term.wait_for(re.compile(r"›.*assistant: The command printed"), scrollback=False)
            term.press("Enter")
            term.wait_for("Summarize branch?")
            term.press("Enter")  # no summary
            term.wait_for("Navigated to the selected point", timeout=20)
            redrawn = term.scrollback()
            assert "echo fixture-output" in redrawn[redrawn.rindex("Please use bash") :]
            assert redrawn.count("echo fixture-output") > drawn, redrawn[-3000:]
            term.press("C-d")
            assert term.wait_exit() == 0


def test_tree_opens_and_folds_on_a_20000_entry_session(world):
    """(each row used to walk its whole branch up looking for folds: minutes for this session)"""
    from pi_session_jsonl.paths import default_session_dir

    from tests.support.session_files import assistant, header, user

    directory = Path(default_session_dir(str(world["agent"]), str(world["work"])))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "long.jsonl"
    records, parent = [header(cwd=str(world["work"]))], None
    for index in range(10_000):
        records.append(user(f"u{index}", parent, f"question {index}"))
        records.append(assistant(f"a{index}", f"u{index}", f"answer {index}"))
        parent = f"a{index}"
    path.write_text("".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records))
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "--session", str(path)) as term:
            term.wait_for("answer 9999", timeout=30)
            term.send("/tree")
            term.press("Enter")
            term.wait_for("(20000/20000)", timeout=30)
            term.press("Up")
            term.press("C-Left")
            term.wait_for("1 folded", timeout=30)
            term.press("Escape")
            term.wait_gone("Session tree")
            term.press("C-d")
            assert term.wait_exit() == 0
