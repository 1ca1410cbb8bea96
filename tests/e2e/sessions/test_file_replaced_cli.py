"""A session file deleted, truncated or replaced while ``pi --mode rpc`` runs (hardening item 9).

Sync tools, ``git checkout`` and editors swap files under a running session. Before each append
pi-host checks that the path still names the file it writes, and that the file still holds what
it wrote; if not it says so in one line and writes the whole session back at the path (whatever
else was there is kept beside it). Afterwards ``pi --session <path>`` resumes with every message.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.support.faux import text
from tests.support.pi import run_pi, start_pi
from tests.support.recorder import FAUX, conversation, recorded, recorder, recording


class RpcSession:
    """``pi --mode rpc`` on the faux model: prompts, and the session file it writes."""

    def __init__(self, cwd: Path, script: list[dict[str, Any]]) -> None:
        self.proc = start_pi("--mode", "rpc", *FAUX, cwd=cwd, script=script)
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.records.put(json.loads(line))

    def _send(self, record: dict[str, Any]) -> str:
        self._next += 1
        ident = f"r{self._next}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": ident, **record}) + "\n")
        self.proc.stdin.flush()
        return ident

    def _until(self, predicate, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            record = self.records.get(timeout=max(0.1, deadline - time.monotonic()))
            if predicate(record):
                return record

    def prompt(self, message: str) -> None:
        ident = self._send({"type": "prompt", "message": message})
        answer = self._until(lambda r: r.get("type") == "response" and r.get("id") == ident)
        assert answer["success"] is True, answer
        self._until(lambda r: r.get("type") == "agent_settled")

    def session_file(self) -> Path:
        ident = self._send({"type": "get_state"})
        answer = self._until(lambda r: r.get("type") == "response" and r.get("id") == ident)
        return Path(answer["data"]["sessionFile"])

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        return code, self.proc.stderr.read()


def _delete(path: Path, tmp: Path) -> None:
    path.unlink()


def _truncate_empty(path: Path, tmp: Path) -> None:
    os.truncate(path, 0)  # in place, as `: > file` or an editor writing in place does


def _truncate_half(path: Path, tmp: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _replace_with_copy(path: Path, tmp: Path) -> None:
    copy = tmp / "synced.jsonl"
    shutil.copyfile(path, copy)
    os.replace(copy, path)  # a sync tool or `git checkout` writes a new file over the name


def _replace_with_older_copy(path: Path, tmp: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    older = tmp / "older.jsonl"
    older.write_bytes(b"".join(lines[:-2]))
    os.replace(older, path)


OTHER = b'{"type":"session","version":3,"id":"other","timestamp":"2026-12-02T09:14:03.512Z","cwd":"/x"}\n'


def _replace_with_other(path: Path, tmp: Path) -> None:
    other = tmp / "other.jsonl"
    other.write_bytes(OTHER)
    os.replace(other, path)


CHANGES = {
    "deleted": _delete,
    "truncated to empty": _truncate_empty,
    "truncated half-way": _truncate_half,
    "replaced by a copy": _replace_with_copy,
    "replaced by an older copy": _replace_with_older_copy,
    "replaced by another file": _replace_with_other,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_swapped_session_file_keeps_every_message(isolated_environment, tmp_path, change):
    work = isolated_environment["work"]
    rpc = RpcSession(work, [text("answer one"), text("answer two")])
    try:
        rpc.prompt("one")
        path = rpc.session_file()
        assert path.exists()
        CHANGES[change](path, tmp_path)
        rpc.prompt("two")
    finally:
        code, err = rpc.close()
    assert code == 0, err
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == 1 and str(path) in said[0], err
    assert "Traceback" not in err
    aside = sorted(path.parent.glob(path.name + ".*"))
    if change == "replaced by another file":
        assert [p.read_bytes() for p in aside] == [OTHER]
        assert str(aside[0]) in said[0]
    else:
        assert aside == []

    requests = tmp_path / "requests.jsonl"
    out = run_pi(
        *FAUX, "-e", str(recorder(tmp_path)), "--session", str(path), "-p", "three",
        cwd=work, script=[text("answer three")], env=recording(requests),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr
    [sent] = recorded(requests)
    assert conversation(sent) == ["one", "answer one", "two", "answer two", "three"]


def test_a_session_file_deleted_with_its_folder_is_written_again(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    rpc = RpcSession(work, [text("answer one"), text("answer two")])
    try:
        rpc.prompt("one")
        path = rpc.session_file()
        shutil.rmtree(path.parent)
        rpc.prompt("two")
    finally:
        code, err = rpc.close()
    assert code == 0, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    pi = partial(run_pi, *FAUX, cwd=work, script=[text("answer three")])
    out = pi("-e", str(recorder(tmp_path)), "--session", str(path), "-p", "three",
             env=recording(tmp_path / "requests.jsonl"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    [sent] = recorded(tmp_path / "requests.jsonl")
    assert conversation(sent) == ["one", "answer one", "two", "answer two", "three"]


def test_untouched_session_file_says_nothing(isolated_environment):
    work = isolated_environment["work"]
    rpc = RpcSession(work, [text("answer one"), text("answer two")])
    try:
        rpc.prompt("one")
        path = rpc.session_file()
        before = path.read_bytes()
        rpc.prompt("two")
    finally:
        code, err = rpc.close()
    assert code == 0 and err == "", err
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
