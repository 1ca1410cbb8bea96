"""`pi batch` against hostile input and a hostile disk, without running pi: deeply nested JSON
lines, a results file that cannot be written (``/dev/full``), and the lock on ``--out``."""

from __future__ import annotations

import errno
import io
import json

import pytest
from pi_batch.cli import Batch
from pi_batch.progress import Progress
from pi_batch.results import ResultsLog, read_records
from pi_batch.runner import StreamWatch
from pi_batch.tasks import Task, read_tasks

DEEP = "[" * 100_000


def test_a_deeply_nested_task_line_is_reported_and_the_rest_kept(tmp_path):
    path = tmp_path / "tasks.jsonl"
    lines = [
        json.dumps({"id": "a", "prompt": "one"}),
        DEEP,
        '{"id": "b", "prompt": "two", "settings": ' + "[" * 50_000 + "]" * 50_000 + "}",
        json.dumps({"id": "c", "prompt": "three"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    tasks, problems = read_tasks(str(path))
    assert [task.id for task in tasks] == ["a", "c"]
    assert [problem.split(":")[1] for problem in problems] == ["2", "3"]
    assert all("nested too deeply" in problem and "skipped" in problem for problem in problems)


def test_a_deeply_nested_results_line_is_ignored(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"id": "a", "status": "ok"}) + "\n" + DEEP + "\n")
    records, problems = read_records(str(path))
    assert [record["id"] for record in records] == ["a"]
    assert problems == [f"{path}:2: not JSON; ignored"]


def test_a_deeply_nested_event_line_is_skipped_by_the_watch():
    watch = StreamWatch()
    watch.feed(DEEP.encode())
    watch.feed(json.dumps({"type": "session", "id": "s1"}).encode())
    assert watch.session_id == "s1"


def test_a_results_file_on_a_full_device_raises_an_os_error():
    log = ResultsLog("/dev/full")  # every write: ENOSPC
    with pytest.raises(OSError) as failure:
        log.append({"id": "a", "status": "ok"})
    assert failure.value.errno == errno.ENOSPC
    log.close()


def test_a_record_that_cannot_be_written_stops_the_batch_in_one_line(tmp_path):
    log = ResultsLog("/dev/full")
    progress = Progress(2, 0, io.StringIO(), "json")
    batch = Batch(str(tmp_path), log, progress)
    batch.finished(Task("a", "one", line=1), {"status": "ok"})
    assert batch.stop.is_set()  # no more tasks start; the running ones are cancelled
    assert batch.failure is not None and "No space left on device" in batch.failure
    assert "/dev/full" in batch.failure and "\n" not in batch.failure
    batch.finished(Task("b", "two", line=2), {"status": "cancelled"})  # a second failure: no raise
    log.close()


def test_a_task_that_could_not_write_its_files_stops_the_batch(tmp_path):
    log = ResultsLog(str(tmp_path / "results.jsonl"))
    batch = Batch(str(tmp_path), log, Progress(1, 0, io.StringIO(), "json"))
    record = {"status": "cancelled", "error": "cannot write", "stop_batch": "cannot write x: No space"}
    batch.finished(Task("a", "one", line=1), record)
    assert batch.stop.is_set() and batch.failure == "cannot write x: No space"
    log.close()
    written = json.loads((tmp_path / "results.jsonl").read_text())
    assert written["status"] == "cancelled" and "stop_batch" not in written


def test_the_out_dir_lock_is_held_once(tmp_path):
    from pi_batch.lock import OutLocked, lock_out_dir

    first = lock_out_dir(str(tmp_path))
    with pytest.raises(OutLocked) as refused:
        lock_out_dir(str(tmp_path))  # another open of the lock file: refused, as for a process
    assert str(tmp_path) in str(refused.value) and "another pi batch" in str(refused.value)
    first.release()
    again = lock_out_dir(str(tmp_path))  # free once released
    again.release()


def test_a_line_the_disk_takes_only_in_part_is_cut_back_off(tmp_path, monkeypatch):
    """A disk that fills up in the middle of a line takes its first bytes, then refuses (ENOSPC).
    Played by ``os.write`` on the results file's descriptor alone, so nothing else in this process
    meets a limit (the real thing, RLIMIT_FSIZE on a ``pi batch`` child, is in
    tests/e2e/batch/test_hardening.py)."""
    import os

    path = tmp_path / "results.jsonl"
    log = ResultsLog(str(path))
    log.append({"id": "a", "status": "ok"})
    before = path.read_bytes()
    real_write = os.write
    room = [20]

    def write(fd: int, data) -> int:
        if fd != log._fd:
            return real_write(fd, data)
        if room[0] == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = real_write(fd, bytes(data[: room[0]]))
        room[0] -= taken
        return taken

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(OSError) as failure:
        log.append({"id": "b", "status": "ok", "text": "x" * 200})
    assert failure.value.errno == errno.ENOSPC
    assert path.read_bytes() == before  # not a torn line after it
    monkeypatch.setattr(os, "write", real_write)
    log.append({"id": "c", "status": "ok"})
    log.close()
    assert [r["id"] for r in read_records(str(path))[0]] == ["a", "c"]
