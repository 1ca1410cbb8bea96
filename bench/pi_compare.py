"""Side-by-side runs of pi-host and pi 1.6.0 against one loopback server (not a bench itself).

``bench/vs_pi.py`` (every case) and ``bench/sessions_resume.py`` (the resume case) use it. The
server runs in its own process and answers, whatever the request says,

* ``POST …/chat/completions`` with a chat-completions stream of ``WORDS`` words (one word per
  delta, a finish chunk, a usage chunk, ``[DONE]``), as api.openai.com streams it;
* ``POST …/messages`` with the same answer as an Anthropic Messages stream (``message_start``,
  one ``content_block_delta`` per word, ``message_delta`` with usage, ``message_stop``);

both as HTTP/1.1 chunked ``text/event-stream`` in 16 KiB chunks, after reading the whole request.
Both harnesses get their own agent dir with the same ``models.json`` (providers ``bench-oa`` and
``bench-an``) and default settings. Runs of one case alternate between the two harnesses so
machine load hits both alike; each figure is the median wall time and peak RSS of a run.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.pi_node import find_pi  # noqa: E402

WORDS = 2000
VOCABULARY = (
    "the session parser keeps every entry of the branch and streams each answer to the terminal".split()
)
OPENAI = ("bench-oa", "oa-1")
ANTHROPIC = ("bench-an", "claude-bench-1")


def installed_entry(cli: str) -> str:
    """The script the installed ``pi`` command runs (package.json ``bin``: the bundled
    ``dist/bundle/cli.js``, which starts about twice as fast as the unbundled ``dist/cli.js``)."""
    package = Path(cli).resolve().parents[1]
    try:
        target = json.loads((package / "package.json").read_text())["bin"]["pi"]
    except (OSError, ValueError, KeyError, TypeError):
        return cli
    entry = package / target
    return str(entry) if entry.is_file() else cli


def answer_words(count: int = WORDS) -> list[str]:
    return [VOCABULARY[i % len(VOCABULARY)] + " " for i in range(count)]


def openai_stream(words: list[str]) -> bytes:
    head = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": OPENAI[1],
    }

    def event(choices: list, **extra) -> bytes:
        return b"data: " + json.dumps({**head, "choices": choices, **extra}).encode() + b"\n\n"

    out = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    out += [event([{"index": 0, "delta": {"content": w}, "finish_reason": None}]) for w in words]
    out.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    usage = {"prompt_tokens": 50, "completion_tokens": len(words), "total_tokens": 50 + len(words)}
    out.append(event([], usage=usage))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def anthropic_stream(words: list[str]) -> bytes:
    def event(name: str, data: dict) -> bytes:
        return f"event: {name}\ndata: ".encode() + json.dumps(data).encode() + b"\n\n"

    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC[1],
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 1},
    }
    out = [event("message_start", {"type": "message_start", "message": message})]
    out.append(
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
    )
    out.append(event("ping", {"type": "ping"}))
    out += [
        event(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
        )
        for w in words
    ]
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(words)},
            },
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def _serve(ready, stop) -> None:
    bodies = {"completions": openai_stream(answer_words()), "messages": anthropic_stream(answer_words())}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            remaining = int(self.headers.get("Content-Length") or 0)
            while remaining > 0:
                remaining -= len(self.rfile.read(min(remaining, 1 << 20)))
            path = self.path.split("?", 1)[0].rstrip("/")
            body = bodies["messages" if path.endswith("/messages") else "completions"]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 16384):
                piece = body[start : start + 16384]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    import threading

    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    ready.put(f"http://127.0.0.1:{httpd.server_address[1]}")
    stop.wait()
    httpd.shutdown()


LAUNCHER = """
import os, sys, time
report = int(sys.argv[1])
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_pid, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
os.write(report, f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""
"""Runs one measured program (``python -S -I``, ~8 MiB): its wall time from fork to exit, its
peak RSS in KiB (``wait4``) and its exit status, written to the file descriptor given first."""


class BenchServer:
    """The loopback server, in a child process so it never competes for the measuring process's GIL."""

    def __enter__(self) -> BenchServer:
        context = multiprocessing.get_context("fork")
        ready, self._stop = context.Queue(), context.Event()
        self._process = context.Process(target=_serve, args=(ready, self._stop), daemon=True)
        self._process.start()
        self.url = ready.get(timeout=30)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._process.join(timeout=10)


def models_json(url: str) -> dict:
    return {
        "providers": {
            OPENAI[0]: {
                "baseUrl": f"{url}/v1",
                "api": "openai-completions",
                "apiKey": "bench-key",
                "models": [{"id": OPENAI[1], "contextWindow": 200_000, "maxTokens": 8192}],
            },
            ANTHROPIC[0]: {
                "baseUrl": url,
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [{"id": ANTHROPIC[1], "contextWindow": 200_000, "maxTokens": 8192}],
            },
        }
    }


@dataclass
class Harness:
    """One of the two programs: how to start it and the environment it runs in."""

    name: str
    argv: list[str]
    env: dict[str, str]


@dataclass
class Figures:
    walls: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def rss(self) -> float:
        return statistics.median(self.peaks)


@dataclass
class Case:
    """``args(scratch_file)`` gives the command-line arguments; ``prepare`` (if any) makes the
    scratch file before each run (not timed); ``check`` looks at the output of one run."""

    label: str
    args: Callable[[str | None], list[str]]
    target: float
    prepare: Callable[[str], None] | None = None
    check: Callable[[str], bool] = lambda out: True
    rss_target: float | None = None
    wall_max: float | None = None
    """Absolute limits on pi-host's own median, in seconds and MiB (checked with or without pi)."""
    rss_max: float | None = None


class Comparison:
    """Two agent dirs, a work dir and the two harnesses, for the lifetime of a ``with`` block."""

    def __init__(self, server_url: str) -> None:
        self.scratch = tempfile.mkdtemp(prefix="pi-compare-")
        self.work = os.path.join(self.scratch, "work")
        os.makedirs(self.work)
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
        }
        base.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0")
        self.harnesses: list[Harness] = []
        for name, argv in self._programs():
            agent = os.path.join(self.scratch, f"agent-{name.split()[0]}")
            os.makedirs(agent)
            Path(agent, "models.json").write_text(json.dumps(models_json(server_url)))
            home = os.path.join(self.scratch, f"home-{name.split()[0]}")
            os.makedirs(home)
            self.harnesses.append(Harness(name, argv, {**base, "PI_CODING_AGENT_DIR": agent, "HOME": home}))

    @staticmethod
    def _programs() -> list[tuple[str, list[str]]]:
        programs = [("pi-host", [str(Path(sys.executable).with_name("pi"))])]
        pi = find_pi()
        if pi is not None:
            programs.append(("pi 1.6.0", [pi[0], installed_entry(pi[1])]))
        return programs

    @property
    def has_reference(self) -> bool:
        return len(self.harnesses) == 2

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def run_once(self, harness: Harness, case: Case, index: int) -> tuple[float, float]:
        scratch_file = None
        if case.prepare is not None:
            scratch_file = os.path.join(self.scratch, f"run-{index}.jsonl")
            case.prepare(scratch_file)
        command = harness.argv + case.args(scratch_file)
        # Output goes to files, no pipe limits. The child is started and reaped by a small
        # launcher: a process's peak RSS counts the memory of the process it was forked from,
        # so forking from this (grown) one would read as at least this one's size.
        with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
            read_end, write_end = os.pipe()
            process = subprocess.Popen(
                [sys.executable, "-S", "-I", "-c", LAUNCHER, str(write_end), *command],
                cwd=self.work,
                env=harness.env,
                stdout=out_file,
                stderr=err_file,
                pass_fds=(write_end,),
            )
            os.close(write_end)
            with os.fdopen(read_end, "rb") as report:
                figures = report.read().split()
            process.wait()
            out_file.seek(0)
            err_file.seek(0)
            text, err = out_file.read().decode(errors="replace"), err_file.read().decode(errors="replace")
        wall, peak_kib, code = (
            (float(figures[0]), int(figures[1]), int(figures[2])) if figures else (0, 0, -1)
        )
        if code != 0 or not case.check(text):
            raise RuntimeError(f"{harness.name} {case.label}: exit {code}\n{text[-800:]}\n{err[-1500:]}")
        if scratch_file and os.path.exists(scratch_file):
            os.unlink(scratch_file)
        return wall, peak_kib / 1024

    def compare(self, cases: list[Case], runs: int) -> dict[str, dict[str, Figures]]:
        results = {case.label: {h.name: Figures() for h in self.harnesses} for case in cases}
        for case in cases:  # warm page and bytecode caches; not counted
            for harness in self.harnesses:
                self.run_once(harness, case, -1)
        for index in range(runs):
            for case in cases:
                order = self.harnesses if index % 2 == 0 else list(reversed(self.harnesses))
                for harness in order:
                    wall, peak = self.run_once(harness, case, index)
                    results[case.label][harness.name].walls.append(wall)
                    results[case.label][harness.name].peaks.append(peak)
        return results


def report(results: dict[str, dict[str, Figures]], cases: list[Case], runs: int) -> list[str]:
    """Print one line per case and harness, and the ratio line; return the failed targets."""
    failed = []
    by_label = {case.label: case for case in cases}
    for label, figures in results.items():
        case = by_label[label]
        for name, fig in figures.items():
            walls = ", ".join(f"{w * 1000:.0f}" for w in fig.walls)
            print(f"  {label:44s} {name:9s} {fig.wall * 1000:7.0f} ms  {fig.rss:6.0f} MiB   ({walls})")
        if len(figures) == 2:
            ours, theirs = figures["pi-host"], figures["pi 1.6.0"]
            ratio = ours.wall / theirs.wall
            verdict = "ok" if ratio <= case.target else "OVER"
            line = f"  -> ratio {ratio:.2f}x (target <= {case.target}x) {verdict}"
            if case.rss_target is not None:
                memory = ours.rss / theirs.rss
                line += f"; memory {memory:.2f}x (target <= {case.rss_target}x)"
                if memory > case.rss_target:
                    failed.append(f"{label} memory")
            print(line)
            if ratio > case.target:
                failed.append(label)
        failed += _absolute_limits(label, case, figures["pi-host"])
    return failed


def _absolute_limits(label: str, case: Case, ours: Figures) -> list[str]:
    failed, parts = [], []
    if case.wall_max is not None:
        ok = ours.wall <= case.wall_max
        parts.append(f"pi-host {ours.wall:.2f} s (target <= {case.wall_max:g} s) {'ok' if ok else 'OVER'}")
        failed += [] if ok else [f"{label} time"]
    if case.rss_max is not None:
        ok = ours.rss <= case.rss_max
        parts.append(f"pi-host {ours.rss:.0f} MiB (target <= {case.rss_max:g} MiB) {'ok' if ok else 'OVER'}")
        failed += [] if ok else [f"{label} RSS"]
    if parts:
        print("  -> " + "; ".join(parts))
    return failed
