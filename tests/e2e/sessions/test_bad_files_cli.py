"""One bad entry or one bad file, through the real ``pi`` command (issue 11, items 4 and 5).

Item 4: a session with one unusable entry opens, names file, line and field once, answers the
prompt with the rest of the history, appends after the right entry, and is not rewritten.
Item 5: ``-r``, ``-c`` and ``--session <prefix>`` skip and name a bad file in the sessions folder
(and never hang on a FIFO); ``--session`` on a FIFO or a device is refused with one line.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import pytest

from tests.support.pi import run_pi
from tests.support.recorder import ANSWER, FAUX, conversation, recorded, recorder, recording
from tests.support.session_files import assistant, entry, header, read_jsonl, user, write_jsonl

pi = partial(run_pi, *FAUX, script=ANSWER)
"""``pi`` on the faux model, which answers "answer" unless a test gives its own script."""


def _content(record: dict, content) -> dict:
    return {**record, "message": {**record["message"], "content": content}}


def _deep_line(parent: str) -> str:
    nested = "[" * 100_000 + "]" * 100_000
    return json.dumps(user("u2", parent, "deep"))[:-1] + f',"extra":{nested}}}'


# name → (the bad line 4, the field the warning names, or None for no warning)
ITEM_4 = {
    "list parentId": ({**user("u2", "a1", "three"), "parentId": ["a1"]}, "field parentId"),
    "dict parentId": ({**user("u2", "a1", "three"), "parentId": {"id": "a1"}}, "field parentId"),
    "int assistant content": (_content(assistant("a2", "a1", "x"), 5), "field message.content"),
    "deep line": (None, "malformed line 4"),
    "int branch summary": (entry("branch_summary", "b1", "a1", fromId="a1", summary=5), "field summary"),
    "int custom_message content": (
        entry("custom_message", "c1", "a1", customType="x", content=5, display=True),
        "field content",
    ),
}


@pytest.mark.parametrize("case", sorted(ITEM_4))
def test_session_with_one_bad_entry_still_answers(isolated_environment, tmp_path, case):
    work = isolated_environment["work"]
    bad, field = ITEM_4[case]
    path = write_jsonl(
        work / "s.jsonl", [header(cwd=str(work)), user("u1", None, "one"), assistant("a1", "u1", "two")]
    )
    with open(path, "a") as handle:
        handle.write((_deep_line("a1") if bad is None else json.dumps(bad)) + "\n")
    original = path.read_bytes()
    requests = tmp_path / "requests.jsonl"
    out = pi(
        "-e",
        str(recorder(tmp_path)),
        "--session",
        str(path),
        "-p",
        "hello",
        cwd=work,
        env=recording(requests),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "answer"
    named = [line for line in out.stderr.splitlines() if str(path) in line]
    assert len(named) == 1 and field in named[0], out.stderr
    assert f"{path}:4: " in named[0] or "line 4" in named[0]
    assert "Traceback" not in out.stderr
    [sent] = recorded(requests)
    assert conversation(sent) == ["one", "two", "hello"]
    after = path.read_bytes()
    assert after.startswith(original)  # only appended to
    appended = [json.loads(line) for line in after[len(original) :].splitlines()]
    assert appended[0]["parentId"] == "a1"  # the last usable entry was the leaf
    assert all(
        later["parentId"] == earlier["id"] for earlier, later in zip(appended, appended[1:], strict=False)
    )
    again = pi("--session", str(path), "-p", "and again", cwd=work, script=[{"text": "second"}])
    assert again.returncode == 0 and again.stdout.strip() == "second", again.stderr


def test_string_version_keeps_the_tree(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    records = [
        {**header(cwd=str(work)), "version": "3"},
        user("u1", None, "one"),
        assistant("a1", "u1", "two"),
        user("u2", "u1", "branch"),  # the user went back and asked again
    ]
    path = write_jsonl(work / "s.jsonl", records)
    original = path.read_bytes()
    requests = tmp_path / "requests.jsonl"
    out = pi(
        "-e",
        str(recorder(tmp_path)),
        "--session",
        str(path),
        "-p",
        "hello",
        cwd=work,
        env=recording(requests),
    )
    assert out.returncode == 0, out.stderr
    assert "migrated" not in out.stderr and not (work / "s.jsonl.v1.bak").exists()
    [sent] = recorded(requests)
    assert conversation(sent) == ["one", "branch", "hello"]  # not flattened into one, two, branch
    assert path.read_bytes().startswith(original)


# --- item 5: bad files in the sessions folder ------------------------------------------------


def _old_session(folder: Path, name: str, session_id: str, cwd: Path, bad: dict) -> Path:
    stamp = "2020-01-01T00:00:00.000Z"
    first = user("u1", None, "old question", ts=stamp)
    path = write_jsonl(
        folder / name,
        [
            {**header(session_id=session_id, cwd=str(cwd)), "timestamp": stamp},
            first,
            {**bad, "timestamp": stamp},
        ],
    )
    os.utime(path, (1_577_836_800, 1_577_836_800))  # old on disk too: --continue goes by mtime
    return path


@pytest.fixture
def folder_with_bad_files(isolated_environment):
    """A sessions folder with one good session (the newest), two with a bad entry, and a FIFO."""
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    first = pi("-p", "first", cwd=work)
    assert first.returncode == 0, first.stderr
    [good] = list(agent.glob("sessions/*/*.jsonl"))
    folder = good.parent
    huge_stamp = {
        **user("u2", "u1", "far future"),
        "message": {**user("u2", "u1", "x")["message"], "timestamp": 1e20},
    }
    list_text = _content(user("u2", "u1", "x"), [{"type": "text", "text": ["not", "text"]}])
    _old_session(
        folder, "2020-01-01_aaaa1111.jsonl", "aaaa1111-0000-7000-8000-000000000001", work, huge_stamp
    )
    _old_session(folder, "2020-01-01_aaaa2222.jsonl", "aaaa2222-0000-7000-8000-000000000002", work, list_text)
    fifo = folder / "9999-newest.jsonl"
    os.mkfifo(fifo)  # newest by mtime: --continue looks at it first
    return {"work": work, "good": good, "fifo": fifo, "folder": folder}


def _user_texts(path: Path) -> list[str]:
    return [
        "".join(b["text"] for b in line["message"]["content"])
        for line in read_jsonl(path)
        if line.get("type") == "message" and line["message"]["role"] == "user"
    ]


def test_resume_lists_past_bad_files_and_reads_the_choice_from_stdin(folder_with_bad_files):
    work, good, fifo = (folder_with_bad_files[k] for k in ("work", "good", "fifo"))
    out = pi("-r", "-p", "again", cwd=work, stdin="1\n", timeout=30)
    assert out.returncode == 0, out.stderr
    assert f"skipped {fifo}: it is a FIFO (named pipe), not a regular file" in out.stderr
    assert "aaaa1111.jsonl:3: field message.timestamp: out of range" in out.stderr
    assert "aaaa2222.jsonl:3: field message.content.0.text: expected a string" in out.stderr
    listed = [line for line in out.stderr.splitlines() if line.lstrip()[:2] in ("1.", "2.", "3.")]
    assert len(listed) == 3 and "first" in listed[0], out.stderr
    assert _user_texts(good) == ["first", "again"]


def test_continue_and_id_prefix_skip_a_fifo(folder_with_bad_files):
    work, good, fifo = (folder_with_bad_files[k] for k in ("work", "good", "fifo"))
    out = pi("-c", "-p", "continued", cwd=work, timeout=30)
    assert out.returncode == 0, out.stderr
    assert str(fifo) in out.stderr and "FIFO" in out.stderr
    prefix = read_jsonl(good)[0]["id"][:8]
    by_prefix = pi("--session", prefix, "-p", "by prefix", cwd=work, timeout=30)
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert _user_texts(good) == ["first", "continued", "by prefix"]
    old = pi("--session", "aaaa1111", "-p", "old one", cwd=work, timeout=30)
    assert old.returncode == 0, old.stderr  # a file with a bad entry still opens by id


def test_session_on_a_fifo_or_a_device_is_refused_in_one_line(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    fifo = work / "pipe.jsonl"
    os.mkfifo(fifo)
    out = pi("--session", str(fifo), "-p", "x", cwd=work, timeout=30)
    assert out.returncode == 1
    assert (
        out.stderr.strip()
        .splitlines()[-1]
        .endswith(f"Cannot open session {fifo}: it is a FIFO (named pipe), not a regular file")
    )
    device = work / "null.jsonl"
    device.symlink_to("/dev/null")
    out = pi("--session", str(device), "-p", "x", cwd=work, timeout=30)
    assert out.returncode == 1
    assert f"Cannot open session {device}: it is a character device, not a regular file" in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1, out.stderr
    broken = work / "gone.jsonl"
    broken.symlink_to(tmp_path / "nowhere.jsonl")
    out = pi("--session", str(broken), "-p", "x", cwd=work, timeout=30)
    assert out.returncode == 1 and "broken symbolic link" in out.stderr
