"""`pi batch` under hostile conditions, through the real CLI against the loopback server: a deeply
nested line in the tasks file, a full disk at ``--out`` (a file-size limit on the batch process,
and ``/dev/full`` as a task's file), and two batches on one ``--out`` at once."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time

from tests.e2e.batch.helpers import (
    MODEL,
    RoutingServer,
    batch_argv,
    read_results,
    run_batch,
    write_priced_models,
    write_tasks,
)
from tests.support.loopback import Reply


def test_a_deeply_nested_line_is_reported_and_the_other_tasks_run(isolated_environment, tmp_path):
    tasks = write_tasks(
        str(tmp_path / "tasks.jsonl"),
        [
            {"id": "first", "prompt": "first task", "model": MODEL},
            "[" * 100_000,
            {"id": "second", "prompt": "second task", "model": MODEL},
        ],
    )
    out = str(tmp_path / "out")
    with RoutingServer({}) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        done = run_batch(tasks, out, "-j", "2")
    assert done.returncode == 1, done.stderr  # a line was skipped
    assert "Traceback" not in done.stderr
    assert "tasks.jsonl:2: not JSON (nested too deeply); line skipped" in done.stderr
    assert sorted((r["id"], r["status"]) for r in read_results(out)) == [("first", "ok"), ("second", "ok")]
    assert server.counts["first task"] == server.counts["second task"] == 1


# --- a full disk ---------------------------------------------------------------------------------
#
# Two bounded stand-ins for a disk that fills up, which touch nothing outside the test: the
# kernel's file-size limit (RLIMIT_FSIZE) set on the `pi batch` child alone, and /dev/full (every
# write: ENOSPC) in place of one task's event file. No file system is mounted or filled.

PADDING = 4 * 1024 * 1024
"""``results.jsonl`` starts this big (one record of another task), so the file-size limit just
above it is reached by that file alone: every other file the batch and its tasks write is far
smaller."""


def _file_size_limit(limit: int):
    def apply() -> None:  # in the child, before exec: this process and the test's are untouched
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_results_file_the_disk_refuses_stops_the_batch_in_one_line(isolated_environment, tmp_path):
    count = 6
    tasks = write_tasks(
        str(tmp_path / "tasks.jsonl"),
        [{"id": f"d{n}", "prompt": f"disk task {n}", "model": MODEL} for n in range(count)],
    )
    out = tmp_path / "out"
    out.mkdir()
    results = out / "results.jsonl"
    padding = {"id": "other", "status": "ok", "text": "p" * PADDING}
    results.write_text(json.dumps(padding) + "\n")
    limit = results.stat().st_size + 4000  # room for two short records, not for a long one
    long_answer = "x" * 8000  # its record is over 8 KB
    routes = {f"disk task {n}": Reply(long_answer) for n in range(2, count)}
    with RoutingServer(routes, default=Reply("done")) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        done = run_batch(tasks, str(out), "-j", "1", "--resume", preexec_fn=_file_size_limit(limit))
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"pi batch: cannot write {results}: File too large"), done.stderr
        assert "stopped with 3 result(s) kept" in last and "--resume" in last, last
        raw = results.read_bytes()
        assert raw.endswith(b"\n") and len(raw) <= limit  # the part of a line written is cut off
        kept = [r["id"] for r in read_results(str(out))]  # every line whole
        assert kept == ["other", "d0", "d1"]
        assert server.counts["disk task 2"] == 1 and server.counts["disk task 3"] == 0  # stopped
        # room again: --resume runs what is left, and only that
        resumed = run_batch(tasks, str(out), "-j", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    final = {r["id"]: r["status"] for r in read_results(str(out))}
    assert final == {"other": "ok", **{f"d{n}": "ok" for n in range(count)}}
    assert all(server.counts[f"disk task {n}"] == (1 if n != 2 else 2) for n in range(count)), server.counts


def test_a_task_file_on_a_full_device_stops_the_batch_and_resume_runs_the_rest(
    isolated_environment, tmp_path
):
    count = 6
    tasks = write_tasks(
        str(tmp_path / "tasks.jsonl"),
        [{"id": f"f{n}", "prompt": f"full task {n}", "model": MODEL} for n in range(count)],
    )
    out = tmp_path / "out"
    (out / "events").mkdir(parents=True)
    events = out / "events" / "f2.jsonl"
    events.symlink_to("/dev/full")  # the third task's event stream meets a full device
    with RoutingServer({}) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        done = run_batch(tasks, str(out), "-j", "1")
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"pi batch: cannot write {events}: No space left on device"), done.stderr
        assert "stopped with 3 result(s) kept" in last and "--resume" in last, last
        records = {r["id"]: r for r in read_results(str(out))}
        assert {key: r["status"] for key, r in records.items()} == {"f0": "ok", "f1": "ok", "f2": "cancelled"}
        assert "No space left on device" in records["f2"]["error"]
        assert all(server.counts[f"full task {n}"] == 0 for n in range(3, count))  # none started
        events.unlink()  # room again
        resumed = run_batch(tasks, str(out), "-j", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 2 task(s) already finished, 4 to run" in resumed.stderr
    final = {}
    for record in read_results(str(out)):
        final[record["id"]] = record["status"]  # the last record of a task wins
    assert final == {f"f{n}": "ok" for n in range(count)}
    assert server.counts["full task 0"] == server.counts["full task 1"] == 1  # not run again


# --- two batches on one --out ---------------------------------------------------------------------


def test_a_second_batch_on_the_same_out_refuses_while_the_first_runs(isolated_environment, tmp_path):
    count = 6
    tasks = write_tasks(
        str(tmp_path / "tasks.jsonl"),
        [{"id": f"c{n}", "prompt": f"shared task {n}", "model": MODEL} for n in range(count)],
    )
    out = str(tmp_path / "out")
    with RoutingServer({}, default=Reply("done", before=0.6)) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        first = subprocess.Popen(
            batch_argv(tasks, out, "-j", "2", "--resume"),
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        deadline = time.monotonic() + 60
        while sum(server.counts.values()) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        second = run_batch(tasks, out, "-j", "2", "--resume")
        first_stderr = first.communicate(timeout=90)[1]
    assert first.returncode == 0, first_stderr
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pi batch: "), second.stderr
    assert out in lines[0] and "another pi batch" in lines[0]
    assert all(server.counts[f"shared task {n}"] == 1 for n in range(count)), server.counts  # none twice
    records = read_results(out)
    assert sorted(r["id"] for r in records) == [f"c{n}" for n in range(count)]
    for record in records:  # no session dir deleted under a running task
        session = os.path.join(out, record["session"])
        assert os.path.isfile(session), record
        with open(session, encoding="utf-8") as handle:
            assert json.loads(handle.readline())["type"] == "session"
