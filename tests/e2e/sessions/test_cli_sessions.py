"""Session flags through the real ``pi`` command (faux provider)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from tests.support.pi import PI_SCRIPT, run_pi
from tests.support.session_files import read_jsonl

pi = partial(run_pi, "--model", "faux/faux-1", command=PI_SCRIPT, script=[{"text": "ok"}])
"""The ``pi`` console script on the faux model (which answers "ok")."""


def session_files(agent: Path) -> list[Path]:
    return sorted(agent.glob("sessions/*/*.jsonl"))


def user_texts(path: Path) -> list[str]:
    out = []
    for line in read_jsonl(path):
        message = line.get("message") or {}
        if message.get("role") == "user":
            out.append("".join(b.get("text", "") for b in message["content"]))
    return out


def test_continue_resume_and_errors(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    assert pi("-p", "first", cwd=work).returncode == 0
    assert pi("-c", "-p", "first again", cwd=work).returncode == 0
    [only] = session_files(agent)
    assert user_texts(only) == ["first", "first again"]
    assert pi("-p", "second", cwd=work).returncode == 0
    second = next(p for p in session_files(agent) if p != only)
    os.utime(only, (1_000_000_000, 1_000_000_000))  # make "first" the older file by mtime too

    # not interactive: the list goes to stderr, the number comes from stdin
    picked = pi("-r", "-p", "resumed", cwd=work, stdin="2\n")
    assert picked.returncode == 0, picked.stderr
    assert "  1. " in picked.stderr and "second" in picked.stderr
    assert user_texts(only)[-1] == "resumed" and user_texts(second) == ["second"]
    nothing = pi("-r", "-p", "x", cwd=work)
    assert nothing.returncode == 1 and "No session selected" in nothing.stderr

    missing = pi("--session", "zzzz", "-p", "x", cwd=work)
    assert missing.returncode == 1 and "No session found matching 'zzzz'" in missing.stderr
    conflict = pi("--fork", str(only), "--session", str(only), "-p", "x", cwd=work)
    assert conflict.returncode == 1 and "--fork cannot be combined with --session" in conflict.stderr


def test_bad_header_file_is_refused_and_untouched(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"hello":"world"}\n')
    result = pi("--session", str(notes), "-p", "x", cwd=work)
    assert result.returncode == 1
    assert "Not a pi session file" in result.stderr and str(notes) in result.stderr
    assert notes.read_text() == '{"hello":"world"}\n'


def test_fork_and_session_id(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    assert pi("--session-id", "task-1", "-p", "one", cwd=work).returncode == 0
    [original] = session_files(agent)
    assert read_jsonl(original)[0]["id"] == "task-1"
    assert pi("--session-id", "task-1", "-p", "two", cwd=work).returncode == 0
    assert user_texts(original) == ["one", "two"]
    forked = pi("--fork", "task-1", "-p", "three", cwd=work)
    assert forked.returncode == 0, forked.stderr
    [copy] = [p for p in session_files(agent) if p != original]
    assert read_jsonl(copy)[0]["parentSession"] == str(original)
    assert user_texts(copy) == ["one", "two", "three"] and user_texts(original) == ["one", "two"]
