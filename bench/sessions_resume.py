"""Resuming a large session: pi-host vs pi 1.6.0 on the same file, in the same run.

    .venv/bin/python bench/sessions_resume.py [--entries 20000] [--mib 50] [--runs 5]

Figures (median of ``--runs``; wall time and peak RSS of each process):

* ``store``: a child process that only opens the file with the JSONL store and rebuilds the
  context (what the session store owns);
* ``pi-host -p``: ``pi --model faux/faux-1 --session <copy> -p hi`` with a scripted faux answer;
* ``pi-host -p (no session)``: the same command with ``--no-session``: the start-up cost that has
  nothing to do with the session;
* ``pi 1.6.0 -p``: ``pi --session <copy> -p hi`` against a loopback chat-completions server that
  discards the request and answers ``ok`` (measured when pi is installed, see
  ``tests/sessions/pi_node.py``), and its ``--no-session`` start-up cost.

Every run gets a fresh copy of the file (the copy is not timed): ``-p`` appends to it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "sessions"))

from sessions_generate import generate  # noqa: E402

STORE_SNIPPET = """
import sys
from pi_session_jsonl.store import JsonlStore
store = JsonlStore.open_file(sys.argv[1])
context = store.build_context()
assert len(context.messages) > 1000, len(context.messages)
store.close()
"""


def run(
    cmd: list[str], cwd: str, env: dict[str, str]
) -> tuple[float, float, subprocess.CompletedProcess | None]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]}... exited {proc.returncode}: {err[-1500:]}")
    return wall, usage.ru_maxrss / 1024, subprocess.CompletedProcess(cmd, proc.returncode, out, err)


class DiscardServer:
    """Reads the request, ignores it, streams ``ok``."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                remaining = int(self.headers.get("Content-Length") or 0)
                while remaining > 0:
                    remaining -= len(self.rfile.read(min(remaining, 1 << 20)))
                chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "loop-1"}
                body = (
                    b"".join(
                        b"data: " + json.dumps({**chunk, "choices": choices}).encode() + b"\n\n"
                        for choices in (
                            [
                                {
                                    "index": 0,
                                    "delta": {"role": "assistant", "content": "ok"},
                                    "finish_reason": None,
                                }
                            ],
                            [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                        )
                    )
                    + b"data: [DONE]\n\n"
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def measure(
    label: str, runs: int, make_cmd, cwd: str, env: dict[str, str], source: str, scratch: str
) -> dict:
    walls, peaks = [], []
    warm = os.path.join(scratch, "warm-up.jsonl")  # fills the page and bytecode caches; not counted
    shutil.copyfile(source, warm)
    run(make_cmd(warm), cwd, env)
    os.unlink(warm)
    for index in range(runs):
        copy = os.path.join(scratch, f"run-{index}.jsonl")
        shutil.copyfile(source, copy)
        wall, peak, _ = run(make_cmd(copy), cwd, env)
        walls.append(wall)
        peaks.append(peak)
        os.unlink(copy)
    result = {"label": label, "wall": statistics.median(walls), "rss": statistics.median(peaks)}
    print(
        f"{label:28s} wall {result['wall']:.3f} s   peak RSS {result['rss']:.0f} MiB   (runs: {', '.join(f'{w:.3f}' for w in walls)})"
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="pi-bench-")
    work = os.path.join(scratch, "work")
    agent = os.path.join(scratch, "agent")
    os.makedirs(work)
    os.makedirs(agent)
    source = os.path.join(scratch, "big.jsonl")
    generate(source, args.entries, args.mib, work)
    print(
        f"session: {args.entries} entries, {os.path.getsize(source) / 2**20:.1f} MiB; {os.cpu_count()} CPUs"
    )

    # Both harnesses would (rightly) compact a 50 MiB history before answering; this measures
    # resuming, so automatic compaction is off for both (same settings.json shape).
    no_compaction = json.dumps({"compaction": {"enabled": False}})
    Path(agent, "settings.json").write_text(no_compaction)
    # As installed packages run: with the bytecode cache (some sandboxes set
    # PYTHONDONTWRITEBYTECODE, which would make every run recompile pi-host from source).
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        PI_CODING_AGENT_DIR=agent, PI_FAUX_SCRIPT='[{"text":"ok"}]', PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1"
    )
    python = sys.executable
    pi_host = str(Path(python).with_name("pi"))
    results = [
        measure(
            "store open + context",
            args.runs,
            lambda f: [python, "-c", STORE_SNIPPET, f],
            work,
            env,
            source,
            scratch,
        ),
        measure(
            "pi-host -p (no session)",
            args.runs,
            lambda f: [pi_host, "--model", "faux/faux-1", "--no-session", "-p", "hi"],
            work,
            env,
            source,
            scratch,
        ),
        measure(
            "pi-host --session -p",
            args.runs,
            lambda f: [pi_host, "--model", "faux/faux-1", "--session", f, "-p", "hi"],
            work,
            env,
            source,
            scratch,
        ),
    ]
    from pi_node import find_pi

    pi = find_pi()
    if pi is None:
        print("pi 1.6.0 not installed: no baseline (see tests/sessions/pi_node.py)")
    else:
        server = DiscardServer()
        pi_agent = os.path.join(scratch, "pi-agent")
        os.makedirs(pi_agent)
        config = {
            "providers": {
                "loop": {
                    "baseUrl": server.url,
                    "api": "openai-completions",
                    "apiKey": "unused",
                    "models": [{"id": "loop-1", "contextWindow": 100_000_000, "maxTokens": 4096}],
                }
            }
        }
        Path(pi_agent, "models.json").write_text(json.dumps(config))
        Path(pi_agent, "settings.json").write_text(no_compaction)
        pi_env = {**env, "PI_CODING_AGENT_DIR": pi_agent, "PI_TELEMETRY": "0"}
        node, cli = pi
        measure(
            "pi 1.6.0 -p (no session)",
            args.runs,
            lambda f: [node, cli, "--model", "loop/loop-1", "--no-extensions", "--no-session", "-p", "hi"],
            work,
            pi_env,
            source,
            scratch,
        )
        baseline = measure(
            "pi 1.6.0 --session -p",
            args.runs,
            lambda f: [node, cli, "--model", "loop/loop-1", "--no-extensions", "--session", f, "-p", "hi"],
            work,
            pi_env,
            source,
            scratch,
        )
        ours = results[-1]
        print(
            f"pi-host / pi 1.6.0: time {ours['wall'] / baseline['wall']:.2f}x (target <= 0.5), "
            f"memory {ours['rss'] / baseline['rss']:.2f}x (target < 1)"
        )
        server.httpd.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
