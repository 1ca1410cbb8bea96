"""The JSONL file: lazy creation, appends, crash recovery, bad headers, migration, locking,
permissions (reference §6.6, §6.7, §6.9; §11 items 41-45)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from pi_session_jsonl.store import JsonlStore

from pi_host.lib.sessions.store import SessionOpenError
from tests.support.session_files import (
    header,
    user,
    write_jsonl,
)


def test_second_writer_is_refused_with_a_clear_message(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [header(), user("u1", None, "one")])
    first = JsonlStore.open_file(str(path))
    with pytest.raises(SessionOpenError, match="in use by another"):
        JsonlStore.open_file(str(path))
    code = textwrap.dedent(
        f"""
        from pi_session_jsonl.store import JsonlStore
        from pi_host.lib.sessions.store import SessionOpenError
        try:
            JsonlStore.open_file({str(path)!r})
        except SessionOpenError as exc:
            print("refused:", exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert "refused: Session file is in use" in out.stdout
    first.close()
    second = JsonlStore.open_file(str(path))  # free again once the first writer closed
    second.close()


def test_concurrent_processes_never_interleave_lines(tmp_path):
    """Writers racing for one session: each either owns the file or is refused; every line parses."""
    path = write_jsonl(tmp_path / "s.jsonl", [header(), user("u1", None, "start")])
    code = textwrap.dedent(
        f"""
        import sys, time
        from pi_session_jsonl.store import JsonlStore
        from pi_host.lib.sessions.store import SessionOpenError
        deadline = time.time() + 40
        while time.time() < deadline:
            try:
                store = JsonlStore.open_file({str(path)!r})
            except SessionOpenError:
                time.sleep(0.005)
                continue
            for i in range(20):
                store.append({{"type": "custom", "customType": sys.argv[1], "data": {{"i": i, "pad": "x" * 5000}}}})
            store.close()
            print("wrote")
            break
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, f"w{n}"], stdout=subprocess.PIPE, text=True)
        for n in range(3)
    ]
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert all("wrote" in out for out in outputs)
    lines = path.read_text().splitlines()
    parsed = [json.loads(line) for line in lines]
    assert len(parsed) == 2 + 60
    store = JsonlStore.open_file(str(path))
    # each writer continued from the previous writer's leaf: one linear chain
    assert len(store.path()) == 61
    store.close()
