"""`pi batch` with the local executor, through the real CLI against the loopback server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from tests.e2e.batch.helpers import (
    MAX_COST,
    MODEL,
    TIMEOUT,
    RoutingServer,
    batch_argv,
    check_mixed,
    mixed_batch,
    progress_lines,
    read_results,
    run_batch,
    write_priced_models,
    write_tasks,
)
from tests.support.loopback import Reply


def test_twenty_tasks_four_at_a_time(isolated_environment, tmp_path):
    tasks, routes = mixed_batch(str(tmp_path))
    out = str(tmp_path / "out")
    with RoutingServer(routes, default=Reply("done", before=0.3)) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        done = run_batch(tasks, out, "-j", "4", "--timeout", TIMEOUT, "--max-cost", MAX_COST)
    assert done.returncode == 1, done.stderr  # some tasks failed (on purpose)
    check_mixed(out, server, done.stderr)
    assert 2 <= server.max_open <= 4  # in parallel, never more than -j
    assert open(tmp_path / "out" / "work" / "folder" / "notes.txt").read() == "folder-content\n"
    # not a terminal: JSON progress lines, one per finished task, costs adding up
    lines = progress_lines(done.stderr)
    assert lines[0] == {"type": "batch_start", "total": 20, "skipped": 0}
    steps = [line for line in lines if line["type"] == "progress"]
    assert len(steps) == 20 and all(step["running"] <= 4 for step in steps)
    assert lines[-1]["type"] == "batch_end" and lines[-1]["done"] == 17 and lines[-1]["failed"] == 3
    assert lines[-1]["cost"] >= 10
    # without --resume a second run refuses to mix into the results
    again = run_batch(tasks, out, "-j", "4")
    assert again.returncode == 2 and "--resume" in again.stderr
    # with it, nothing is left to do
    with RoutingServer({}) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        resumed = run_batch(tasks, out, "--resume")
    assert resumed.returncode == 1  # the bad lines are still bad
    assert "20 task(s) already finished, 0 to run" in resumed.stderr
    assert sum(server.counts.values()) == 0 and len(read_results(out)) == 20


def _start_and_stop(tmp_path, agent, count: int, sig: int):
    """A batch of ``count`` slow-ish tasks, stopped by ``sig`` once a few finished; then resumed.
    (records before the stop, records after the resume, requests per prompt, both stderrs)"""
    tasks = write_tasks(
        str(tmp_path / "tasks.jsonl"),
        [{"id": f"k{n:02d}", "prompt": f"kill task {n}", "model": MODEL} for n in range(count)],
    )
    out = str(tmp_path / "out")
    results = tmp_path / "out" / "results.jsonl"
    with RoutingServer({}, default=Reply("done", before=0.8)) as server:
        write_priced_models(agent, server.url)
        proc = subprocess.Popen(
            batch_argv(tasks, out, "-j", "4"), stderr=subprocess.PIPE, text=True, env=dict(os.environ)
        )
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            if results.exists() and len(results.read_bytes().splitlines()) >= count // 3:
                break
            time.sleep(0.05)
        proc.send_signal(sig)
        first_stderr = proc.communicate(timeout=30)[1]
        code = proc.returncode
        before = read_results(out) if sig != signal.SIGKILL else None
        if sig == signal.SIGKILL:  # as if the kill had landed in the middle of a write
            with open(results, "ab") as handle:
                handle.write(b'{"id":"k99","status":"ok","te')
            before = [json.loads(line) for line in results.read_bytes().splitlines()[:-1]]
        asked_before = _settled_counts(server)
        resumed = run_batch(tasks, out, "-j", "4", "--resume")
    return code, first_stderr, before, asked_before, resumed, read_results(out), server.counts


def _settled_counts(server, quiet: float = 0.8, limit: float = 8.0) -> dict:
    """The server's request counts once no request has arrived for ``quiet`` seconds: a request a
    stopped task sent just before it died may still be in the server's hands."""
    deadline = time.monotonic() + limit
    counts = dict(server.counts)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = dict(server.counts)
        if now == counts:
            break
        counts = now
    return counts


def _check_resumed(count, before, asked_before, resumed, after, counts):
    assert resumed.returncode == 0, resumed.stderr
    final = [record for record in after if record["status"] == "ok"]
    assert sorted(record["id"] for record in final) == [f"k{n:02d}" for n in range(count)]  # none lost
    finished_first = {record["id"] for record in before if record["status"] == "ok"}
    assert 0 < len(finished_first) < count
    for n in range(count):
        task_id, prompt = f"k{n:02d}", f"kill task {n}"
        if task_id in finished_first:
            assert counts[prompt] == 1, (task_id, counts[prompt])  # not run again
        else:  # started at most once before the stop (then cancelled or killed), once after
            assert counts[prompt] - asked_before.get(prompt, 0) == 1
            assert counts[prompt] <= 2
    assert f"{len(finished_first)} task(s) already finished" in resumed.stderr


def test_ctrl_c_cancels_running_tasks_and_resume_finishes_the_rest(isolated_environment, tmp_path):
    count = 20
    code, stderr, before, asked, resumed, after, counts = _start_and_stop(
        tmp_path, str(isolated_environment["agent"]), count, signal.SIGINT
    )
    assert code == 130, stderr
    cancelled = [record for record in before if record["status"] == "cancelled"]
    assert 1 <= len(cancelled) <= 4 and all(record["exit_code"] != 0 for record in cancelled)
    assert len({record["id"] for record in before}) == len(before)  # one record a task
    assert json.loads(stderr.strip().splitlines()[-2])["interrupted"] is True
    _check_resumed(count, before, asked, resumed, after, counts)
    # the resumed run recorded each cancelled task again, now finished
    assert len(after) == len(before) + (count - len(before)) + len(cancelled)


def test_killed_batch_resumes_without_redoing_finished_work(isolated_environment, tmp_path):
    count = 12
    code, _stderr, before, asked, resumed, after, counts = _start_and_stop(
        tmp_path, str(isolated_environment["agent"]), count, signal.SIGKILL
    )
    assert code == -signal.SIGKILL
    assert "torn last line" in resumed.stderr
    raw = (tmp_path / "out" / "results.jsonl").read_bytes()
    assert raw.endswith(b"\n") and b'"k99"' not in raw  # the torn line was cut off, not glued to
    _check_resumed(count, before, asked, resumed, after, counts)
