"""The session picker of ``/resume`` and ``pi -r`` in a real terminal (tmux), against the loopback
server: rows, search (listed fields at once, message text in the background), preview, scope,
rename and delete, resuming (the old conversation shown, the next message appended to its file),
and a session written by pi 1.6.0. Query parsing and ages are checked without a terminal."""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pi_session_jsonl.paths import default_session_dir, session_file_name

from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal, pi_env, tmux_available

PROMPT_READY = "ctrl+d exit"
PICKER = "Resume a session (this project)"
tmux_only = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


# --- without a terminal ------------------------------------------------------------------------


# --- in tmux -------------------------------------------------------------------------------------


@pytest.fixture
def world(isolated_environment):
    agent, work, home = (isolated_environment[k] for k in ("agent", "work", "home"))
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    return {"agent": agent, "work": work, "env": pi_env(home, agent, PI_OFFLINE="1")}


def start(world, server, *args, ready=PROMPT_READY) -> Terminal:
    write_models_json(world["agent"], server.url)
    argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1", *args]
    terminal = Terminal(argv, env=world["env"], cwd=world["work"], width=100, height=34)
    terminal.wait_for(ready, timeout=20)
    return terminal


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def write_session(agent, cwd, turns, minutes_ago, name=None, session_id=None) -> Path:
    """A session file as pi writes it: ``turns`` of (prompt, answer), the last one
    ``minutes_ago`` minutes ago."""
    session_id = session_id or f"0190{minutes_ago:04d}-aaaa-7bbb-8ccc-{abs(hash(cwd)) % 10**12:012d}"
    clock = datetime.now(UTC) - timedelta(minutes=minutes_ago, seconds=10 * len(turns) + 5)
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": iso(clock), "cwd": str(cwd)}]
    parent = None

    def put(kind, **fields):
        nonlocal parent, clock
        clock += timedelta(seconds=5)
        entry = {
            "type": kind,
            "id": f"{len(lines):08x}",
            "parentId": parent,
            "timestamp": iso(clock),
            **fields,
        }
        lines.append(entry)
        parent = entry["id"]

    put("model_change", provider="loop", modelId="loop-1")
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip
    for index, (prompt, answer) in enumerate(turns):
        stamp = int(clock.timestamp() * 1000)
        put(
            "message",
            message={"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": stamp},
        )
        if index == 0 and name:
            put("session_info", name=name)
        put(
            "message",
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": answer}],
                "api": "openai-completions",
                "provider": "loop",
                "model": "loop-1",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": stamp + 1000,
            },
        )
    directory = Path(default_session_dir(str(agent), str(cwd)))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / session_file_name(lines[0]["timestamp"], session_id)
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def user_texts(body) -> list[str]:
    return [
        m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
        for m in body["messages"]
        if m["role"] == "user"
    ]


ROW = re.compile(r"^(› |  )\S.*\s\d+ (now|\d+(m|h|d|w|mo|y))$")


def picker_rows(screen: str) -> list[str]:
    """The list's rows: the lines under the search line that end with a count and an age."""
    lines = screen.split("\n")
    top = next(i for i, line in enumerate(lines) if line.startswith("> ") or line == ">")
    rows = []
    for line in lines[top + 1 :]:
        if not ROW.match(line):
            break
        rows.append(line)
    return rows


@pytest.fixture
def sessions(world):
    """Three sessions of this project (one named, one whose answer holds a rare word), one of
    another project and a damaged file."""
    work = world["work"]
    older = write_session(world["agent"], work, [("fix the login bug", "the token had expired")], 300)
    named = write_session(
        world["agent"], work, [("prepare the release", "done"), ("and the notes?", "notes written")], 5,
        name="release checklist",
    )  # fmt: skip
    cache = write_session(
        world["agent"],
        work,
        [("tune the cache sizes", "try the zanzibar setting"), ("more", "ok more")],
        60 * 24 * 3,
    )
    elsewhere = world["work"].parent / "elsewhere"
    other = write_session(world["agent"], elsewhere, [("other project task", "fine")], 2)
    (named.parent / "broken.jsonl").write_bytes(b"\x00 not a session\n")
    return {"older": older, "named": named, "cache": cache, "other": other, "elsewhere": elsewhere}


@tmux_only
def test_resume_lists_searches_previews_and_resumes_a_session(world, sessions):
    with LoopbackServer([Reply("continued answer")]) as server:
        with start(world, server) as term:
            term.send("/resume")
            term.press("Enter")
            term.wait_for(PICKER)
            screen = term.wait_for("1 damaged file skipped", scrollback=False)
            rows = picker_rows(screen)
            assert len(rows) == 3, screen  # this project's only; the new current session is not listed
            assert re.match(r"› release checklist\s+4 5m$", rows[0]), rows
            assert re.match(r"  fix the login bug\s+2 5h$", rows[1]), rows
            assert re.match(r"  tune the cache sizes\s+4 3d$", rows[2]), rows
            assert "other project task" not in screen
            term.wait_for("pi  notes written", scrollback=False)  # the preview of the selected row
            assert "you and the notes?" in term.screen()

            term.send("login")  # a listed field: at once
            term.wait_until(
                lambda s: [r[:19] for r in picker_rows(s)] == ["› fix the login bug"], what="one row"
            )
            term.press(*["BSpace"] * 5)
            term.wait_until(lambda s: len(picker_rows(s)) == 3, what="every row again")
            term.send("zanzibar")  # only in an answer: found by the text search
            screen = term.wait_until(
                lambda s: [r[:22] for r in picker_rows(s)] == ["› tune the cache sizes"],
                what="the text match",
            )
            term.wait_for("pi  ok more", scrollback=False)
            term.press("Enter")
            term.wait_for("Session resumed")
            term.wait_for("try the zanzibar setting")  # the old conversation is shown
            term.send("go on")
            term.press("Enter")
            term.wait_for("continued answer")
            term.wait_gone("esc to interrupt")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0]) == ["tune the cache sizes", "more", "go on"]
    written = entries(sessions["cache"])
    appended = [e for e in written if e.get("type") == "message"][-2:]
    assert [e["message"]["role"] for e in appended] == ["user", "assistant"]
    assert appended[0]["message"]["content"][0]["text"] == "go on"
    assert appended[0]["parentId"] == [e for e in written if e.get("type") == "message"][-3]["id"]


@tmux_only
def test_tab_shows_every_projects_sessions_with_their_folder(world, sessions):
    with LoopbackServer([]) as server:
        with start(world, server) as term:
            term.send("/resume")
            term.press("Enter")
            term.wait_for("release checklist", scrollback=False)
            term.press("Tab")
            screen = term.wait_for("Resume a session (all projects)", scrollback=False)
            screen = term.wait_for("other project task", scrollback=False)
            rows = picker_rows(screen)
            assert len(rows) == 4, screen
            assert "other project task" in rows[0] and str(sessions["elsewhere"]).split("/")[-1] in rows[0]
            term.press("Tab")
            term.wait_for(PICKER, scrollback=False)
            term.wait_gone("other project task")
            term.press("Escape")
            term.wait_gone("Resume a session")
            term.press("C-d")
            assert term.wait_exit() == 0


@tmux_only
def test_pi_r_opens_the_picker_and_escape_exits(world, sessions):
    with LoopbackServer([]) as server:
        with start(world, server, "-r", ready=PICKER) as term:
            term.wait_for("release checklist", scrollback=False)
            term.press("Escape")
            assert term.wait_exit() == 0
        assert server.requests == []
    assert len(list((world["agent"] / "sessions").rglob("*.jsonl"))) == 5  # no new session file


@tmux_only
def test_pi_r_resumes_the_chosen_session(world, sessions):
    with LoopbackServer([Reply("answer after pi -r")]) as server:
        with start(world, server, "-r", ready=PICKER) as term:
            term.wait_for("fix the login bug", scrollback=False)
            term.press("Down")
            term.wait_for("› fix the login bug", scrollback=False)
            term.press("Enter")
            term.wait_for("the token had expired")
            # The picker's own application has handed over to the main one (its footer shows the
            # resumed session's tokens): from now on typing reaches the editor.
            term.wait_for("Session resumed")
            term.wait_for("↑10 ↓5", scrollback=False)
            term.send("thanks")
            term.press("Enter")
            term.wait_for("answer after pi -r")
            term.wait_gone("esc to interrupt")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0]) == ["fix the login bug", "thanks"]


@tmux_only
def test_rename_and_delete_from_the_picker(world, sessions):
    with LoopbackServer([]) as server:
        with start(world, server) as term:
            term.send("/resume")
            term.press("Enter")
            term.wait_for("release checklist", scrollback=False)
            term.press("Down")
            term.wait_for("› fix the login bug", scrollback=False)
            term.press("C-r")
            term.wait_for(re.compile(r"^name:", re.M), scrollback=False)
            term.send("login work")
            term.press("Enter")
            term.wait_for("Renamed to login work", scrollback=False)
            term.wait_for("› login work", scrollback=False)
            term.press("C-d")
            term.wait_for("Delete this session?", scrollback=False)
            term.press("Escape")  # leaves the confirmation, not the picker
            term.wait_gone("Delete this session?")
            assert sessions["older"].exists()
            term.press("C-d")
            term.wait_for("Delete this session?", scrollback=False)
            term.press("Enter")
            term.wait_for(re.compile(r"Session (deleted|moved to the trash)"), scrollback=False)
            term.wait_gone("login work")
            assert len(picker_rows(term.screen())) == 2
            term.press("Escape")
            term.wait_gone("Resume a session")
            term.press("C-d")
            assert term.wait_exit() == 0
    assert not sessions["older"].exists()
    [named] = [e for e in entries(sessions["named"]) if e.get("type") == "session_info"]
    assert named["name"] == "release checklist"  # the other rows are untouched


@tmux_only
def test_resume_a_session_written_by_pi_1_6_0(world, isolated_environment):
    from tests.support.pi_node import find_pi, run_print

    pi = find_pi()
    if pi is None:
        pytest.skip("pi 1.6.0 (node) is not installed under .tools/")
    with LoopbackServer([Reply("pi one six answered"), Reply("pi-host answered too")]) as server:
        write_models_json(world["agent"], server.url)
        done = run_print(
            pi,
            ["--model", "loop/loop-1", "--no-extensions", "-p", "hello from pi one six"],
            str(world["work"]),
            str(world["agent"]),
        )
        assert done.returncode == 0, done.stderr
        [path] = list((world["agent"] / "sessions").rglob("*.jsonl"))
        before = entries(path)
        with start(world, server) as term:
            term.send("/resume")
            term.press("Enter")
            term.wait_for("› hello from pi one six", scrollback=False)
            term.wait_for("pi  pi one six answered", scrollback=False)
            term.press("Enter")
            term.wait_for("Session resumed")
            term.wait_for("pi one six answered")
            term.send("and now pi-host")
            term.press("Enter")
            term.wait_for("pi-host answered too")
            deadline = time.monotonic() + 10
            while len(entries(path)) < len(before) + 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[-1]) == ["hello from pi one six", "and now pi-host"]
    after = entries(path)
    assert after[: len(before)] == before
    added = [e for e in after[len(before) :] if e.get("type") == "message"]
    # (pi-host records its own system prompt first: it differs from pi's)
    assert [e["message"]["role"] for e in added if e["message"]["role"] != "system"] == ["user", "assistant"]
    assert after[len(before)]["parentId"] == before[-1]["id"]  # the conversation goes on from pi's leaf
