"""The tasks file, the results file and the progress line, without running pi."""

from __future__ import annotations

import io
import json

from pi_batch.progress import Progress
from pi_batch.results import ResultsLog, finished_ids, read_records
from pi_batch.runner import StreamWatch, pi_argv
from pi_batch.tasks import read_tasks


def test_bad_lines_are_reported_with_their_numbers_and_the_rest_kept(tmp_path):
    path = tmp_path / "tasks.jsonl"
    lines = [
        json.dumps({"id": "a", "prompt": "one", "tools": "read, bash", "env": {"N": 1}}),
        "{broken",
        "",
        json.dumps({"id": "b", "prompt": "two", "extra": True}),
        json.dumps({"id": "a", "prompt": "again"}),
        json.dumps({"id": "../x", "prompt": "escape"}),
        json.dumps({"id": "c", "prompt": "p", "cwd": ".", "repo": "r"}),
        json.dumps(["a list"]),
        json.dumps({"id": 7, "prompt": "numbered", "ref": "main"}),
        json.dumps({"id": 8, "prompt": "numbered", "repo": "https://example.com/r.git", "ref": "v1"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    tasks, problems = read_tasks(str(path))
    assert [task.id for task in tasks] == ["a", "b", "8"]
    assert tasks[0].tools == ["read", "bash"] and tasks[0].env == {"N": "1"}
    assert tasks[2].repo.startswith("https://") and tasks[2].ref == "v1"
    numbers = [problem.split(":")[1] for problem in problems]
    assert numbers == ["2", "4", "5", "6", "7", "8", "9"]
    assert "unknown field 'extra' ignored" in problems[1]
    assert "already used on line 1" in problems[2]


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path):
    path = str(tmp_path / "results.jsonl")
    log = ResultsLog(path)
    log.append({"id": "a", "status": "ok"})
    log.append({"id": "b", "status": "cancelled"})
    log.close()
    with open(path, "ab") as handle:
        handle.write(b'{"id": "c", "sta')
    records, problems = read_records(path)
    assert [r["id"] for r in records] == ["a", "b"] and "torn last line" in problems[0]
    assert finished_ids(records) == {"a"}  # a cancelled task runs again
    read_records(path, repair=True)
    log = ResultsLog(path)
    log.append({"id": "c", "status": "error"})
    log.close()
    assert [json.loads(line)["id"] for line in open(path)] == ["a", "b", "c"]


def test_the_stream_watch_adds_up_answers_and_the_running_cost():
    watch = StreamWatch()

    def usage(total_cost, tokens=10):
        return {"input": tokens, "output": 1, "totalTokens": tokens + 1, "cost": {"total": total_cost}}

    for event in (
        {"type": "session", "id": "s1"},
        {"type": "message_end", "message": {"role": "user", "content": "hi"}},
        {
            "type": "message_end",
            "message": {"role": "assistant", "content": [], "usage": usage(0.5), "stopReason": "toolUse"},
        },
        {"type": "message_update", "usage": usage(0.25)},
    ):
        watch.feed(json.dumps(event).encode())
    assert watch.session_id == "s1" and watch.cost == 0.75
    end = {"role": "assistant", "content": [{"type": "text", "text": "fin"}], "usage": usage(0.3)}
    watch.feed(json.dumps({"type": "message_end", "message": {**end, "stopReason": "stop"}}).encode())
    assert watch.cost == 0.8 and watch.text == "fin" and watch.tokens["input"] == 20
    watch.feed(b"not json")
    assert watch.answers == 2


def test_the_child_command_line_keeps_a_dash_prompt_a_prompt(tmp_path):
    from pi_batch.tasks import Task

    argv = pi_argv(Task(id="a", prompt="--help me", model="loop/loop-1", tools=[]), "S", "py")
    assert argv == ["py", "-m", "pi_host", "--mode", "json", "--session-dir", "S"] + [
        "--model",
        "loop/loop-1",
        "--no-tools",
        "--",
        "--help me",
    ]


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_one_redrawn_bar_and_a_pipe_json_lines():
    tty = _Tty()
    bar = Progress(4, stream=tty)
    bar.started("a")
    bar.started("b")
    bar.cost_update("a", 0.5)
    bar.finished_task({"id": "a", "status": "ok", "cost": 0.5})
    bar.finished_task({"id": "b", "status": "timeout", "cost": 0.25})
    line = bar.line(100)
    assert line.startswith("[") and "2/4 done 1 failed 1 running 0 $0.7500" in line and "ETA 0:0" in line
    bar.close()
    text = tty.getvalue()
    assert text.count("\r") >= 4 and "\n" not in text[:-1] and "{" not in text
    pipe = io.StringIO()
    quiet = Progress(2, stream=pipe)
    quiet.started("a")
    quiet.finished_task({"id": "a", "status": "error", "cost": 0})
    quiet.close(interrupted=True)
    kinds = [json.loads(line)["type"] for line in pipe.getvalue().splitlines()]
    assert kinds == ["batch_start", "progress", "batch_end"]
    assert json.loads(pipe.getvalue().splitlines()[1])["failed"] == 1
