"""The session picker of ``pi -r`` on thousands of sessions: pi-host and pi 1.6.0 on the same files.

    .venv/bin/python bench/resume_picker_bench.py [--sessions 5000] [--mib 1200] [--runs 5]
        [--only pi|pi-host] [--data DIR]

The data: ``--sessions`` pi v3 session files of one project (``<agent dir>/sessions/--<cwd>--/``,
the folder both programs read), plus ``--others`` sessions spread over three other projects and
two damaged files (no header, garbage). Sessions are built like real ones: header, model and
thinking-level changes, the system message, then turns of user prompt → assistant text and tool
call → tool result → assistant answer. The number of turns is skewed (most sessions have a few, a
tenth have a hundred or more entries) and so are tool outputs (most a few KiB, some hundreds), and
the outputs are scaled so that all files together are about ``--mib`` MiB. One session in ten has a
name. Entry times are spread over the last 60 days and each file's mtime is its last entry's time;
the newest session is named ``bench newest session``. Generation is deterministic (seeded) and
takes some seconds per GiB; ``--data DIR`` keeps the files in ``DIR`` and reuses them on the next
run (the argument values are checked against ``DIR/params.json``).

One run, one process: ``pi -r --model loop/loop-1`` in a 100x30 tmux pane
(``tests/support/terminal.py``) with ``PI_CODING_AGENT_DIR`` on the generated agent dir and the
project folder as the working directory (pi-host: ``.venv/bin/pi``; pi: ``node dist/cli.js``, see
``tests/support/pi_node.py``). The clock starts just before ``tmux new-session``:

* **first screen**: the picker is on the screen with its first row, the newest session
  (polled every 5 ms);
* **all loaded**: the picker no longer says it is loading (both show ``Loading n/N`` until every
  file is read): the whole list is sorted and searchable;
* **peak RSS**: ``VmHWM`` of the program's process once it is loaded, and again after typing a
  search that matches message text only (pi-host's full-text search reads the files again, in
  the background);

then Escape ends the run (``pi -r`` exits when its picker is cancelled). One uncounted warm-up run
per side fills the page cache; figures are medians over ``--runs``. ``PYTHONDONTWRITEBYTECODE`` is
unset for pi-host, as it runs once installed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "plugins"))

from pi_session_jsonl.paths import default_session_dir, session_file_name  # noqa: E402

WIDTH, HEIGHT = 100, 30
NEWEST = "bench newest session"
SEARCH = "zebracrossing"  # a word that only some sessions' assistant texts hold
WORDS = (
    "alpha beta gamma delta parser module import return value config path file test build error "
    "result output function class method string number list dict async await yield cache index "
    "branch commit merge token stream buffer socket thread lock queue worker retry timeout"
).split()
TOPICS = (
    "fix the flaky test in",
    "refactor the cache layer of",
    "add a progress bar to",
    "explain the error from",
    "speed up the parser in",
    "write docs for",
    "review the diff of",
    "port the build script of",
)
MODULES = ("auth.py", "store.ts", "the CLI", "index.js", "server.go", "main.rs", "the picker", "utils")


def _pool(rng: random.Random, size: int) -> str:
    """A long text of words and line breaks; session texts are slices of it."""
    out, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)


class _Texts:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = _pool(rng, 4 * 1024 * 1024)

    def take(self, size: int) -> str:
        size = max(1, min(size, len(self.pool) - 1))
        start = self.rng.randrange(0, len(self.pool) - size)
        return self.pool[start : start + size]


def _usage(rng: random.Random) -> dict:
    inp, out = rng.randint(1000, 90000), rng.randint(10, 900)
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": inp + out,
        "cost": cost,
    }


def _plan(rng: random.Random, count: int) -> list[tuple[int, float]]:
    """(turns, tool output weight) per session: most sessions short, a tenth long, outputs skewed."""
    plans = []
    for _ in range(count):
        pick = rng.random()
        turns = (
            rng.randint(1, 6) if pick < 0.55 else rng.randint(6, 30) if pick < 0.9 else rng.randint(30, 120)
        )
        plans.append((turns, rng.lognormvariate(0, 1.2)))
    return plans


def write_session(
    path: str,
    cwd: str,
    start: datetime,
    turns: int,
    output_sizes: list[int],
    texts: _Texts,
    rng: random.Random,
    name: str | None,
    search_word: bool,
) -> datetime:
    """One session file; returns its last entry's time."""
    clock = [start]

    def iso() -> str:
        clock[0] += timedelta(milliseconds=rng.randint(20, 4000))
        return clock[0].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def ms() -> int:
        return int(clock[0].timestamp() * 1000)

    session_id = os.path.basename(path).split("_", 1)[1].removesuffix(".jsonl")
    lines = [
        orjson.dumps({"type": "session", "version": 3, "id": session_id, "timestamp": iso(), "cwd": cwd})
    ]
    parent = [None]

    def put(kind: str, **fields) -> None:
        entry_id = f"{rng.getrandbits(32):08x}"
        lines.append(
            orjson.dumps({"type": kind, "id": entry_id, "parentId": parent[0], "timestamp": iso(), **fields})
        )
        parent[0] = entry_id

    put("model_change", provider="loop", modelId="loop-1")
    put("thinking_level_change", thinkingLevel="off")
    put(
        "message",
        message={
            "role": "system",
            "content": "",
            "sections": {"preamble": "You are a coding assistant.", "cwd": f"<cwd>\n{cwd}\n</cwd>"},
            "timestamp": ms(),
        },
    )
    for turn in range(turns):
        if turn == 0:
            prompt = f"{rng.choice(TOPICS)} {rng.choice(MODULES)}: {texts.take(rng.randint(20, 300))}"
        else:
            prompt = texts.take(rng.randint(10, 400))
        put(
            "message",
            message={"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": ms()},
        )
        if turn == 0 and name:
            put("session_info", name=name)
        call = f"call_{turn:04d}"
        said = texts.take(rng.randint(50, 600))
        if search_word and turn == turns - 1:
            said += f" {SEARCH}"
        put(
            "message",
            message={
                "role": "assistant",
                "content": [
                    {"type": "text", "text": said},
                    {
                        "type": "toolCall",
                        "id": call,
                        "name": "bash",
                        "arguments": {"command": f"cat f{turn}"},
                    },
                ],
                "api": "openai-completions",
                "provider": "loop",
                "model": "loop-1",
                "usage": _usage(rng),
                "stopReason": "toolUse",
                "timestamp": ms(),
            },
        )
        put(
            "message",
            message={
                "role": "toolResult",
                "toolCallId": call,
                "toolName": "bash",
                "content": [{"type": "text", "text": texts.take(output_sizes[turn])}],
                "isError": False,
                "timestamp": ms(),
            },
        )
        put(
            "message",
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": texts.take(rng.randint(50, 1500))}],
                "api": "openai-completions",
                "provider": "loop",
                "model": "loop-1",
                "usage": _usage(rng),
                "stopReason": "stop",
                "timestamp": ms(),
            },
        )
    with open(path, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")
    return clock[0]


def generate(agent: str, cwd: str, sessions: int, others: int, mib: float, seed: int = 11) -> dict:
    """The agent dir's session files; a summary (files, bytes) of what was written."""
    rng = random.Random(seed)
    texts = _Texts(rng)
    now = datetime.now(UTC).replace(microsecond=0)
    other_cwds = [os.path.join(os.path.dirname(cwd), f"other-{index}") for index in range(3)]
    jobs = [cwd] * sessions + [other_cwds[index % 3] for index in range(others)]
    plans = _plan(rng, len(jobs))
    # Fixed overhead per turn is about 3 KiB of prompts and answers; tool outputs fill the rest.
    weight = sum(turns * output for turns, output in plans)
    fixed = sum(turns for turns, _ in plans) * 3000
    scale = max(200.0, (mib * 1024 * 1024 - fixed) / max(weight, 1e-9))
    starts = sorted((now - timedelta(days=60) * rng.random() for _ in jobs), reverse=True)
    newest_index = 0
    total_bytes = with_word = 0
    for index, (project, (turns, output)) in enumerate(zip(jobs, plans, strict=True)):
        directory = default_session_dir(agent, project)
        os.makedirs(directory, exist_ok=True)
        start = starts[index] - timedelta(hours=2) if index else now - timedelta(minutes=30)
        sizes = [max(50, int(scale * output * rng.lognormvariate(0, 0.6) / 1.2)) for _ in range(turns)]
        name = NEWEST if index == newest_index else (f"task {index}" if rng.random() < 0.1 else None)
        stamp = start.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        path = os.path.join(
            directory, session_file_name(stamp, str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        )
        word = rng.random() < 0.05
        last = write_session(path, project, start, turns, sizes, texts, rng, name, word)
        os.utime(path, (last.timestamp(), last.timestamp()))
        total_bytes += os.path.getsize(path)
        if word and project == cwd:
            with_word += 1
    directory = default_session_dir(agent, cwd)
    Path(directory, "zz-not-a-session.jsonl").write_text('{"hello": "world"}\n')
    Path(directory, "zz-garbage.jsonl").write_bytes(b"\x00\xff garbage \n{{{")
    return {
        "files": len(jobs),
        "project files": sessions,
        "bytes": total_bytes,
        "with search word": with_word,
    }


# --- measuring -------------------------------------------------------------------------------------


class SideFailed(Exception):
    pass


def peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def wait_screen(term, test, what: str, timeout: float, poll: float = 0.005) -> float:
    """Poll the visible screen until ``test(screen)``; the perf_counter time it held."""
    deadline = time.perf_counter() + timeout
    while True:
        screen = term.screen()
        if test(screen):
            return time.perf_counter()
        if term.exit_status() is not None:
            raise SideFailed(f"exited with status {term.exit_status()} waiting for {what}:\n{screen}")
        if time.perf_counter() > deadline:
            raise SideFailed(f"no {what} after {timeout:g} s:\n{screen}")
        time.sleep(poll)


def one_run(argv: list[str], env: dict[str, str], cwd: str, hits: int, timeout: float) -> dict[str, float]:
    from tests.support.terminal import Terminal

    start = time.perf_counter()
    term = Terminal(argv, env=env, cwd=cwd, width=WIDTH, height=HEIGHT)
    try:
        first = wait_screen(term, lambda s: NEWEST in s, "first screen", timeout)
        loaded = wait_screen(term, lambda s: NEWEST in s and "Loading" not in s, "complete list", timeout)
        result = {
            "first screen (ms)": (first - start) * 1000,
            "all loaded (ms)": (loaded - start) * 1000,
            "peak RSS loaded (MiB)": peak_rss_mib(term.pid),
        }
        typed = time.perf_counter()
        term.send(SEARCH)
        marker = f"/{hits})"
        found = wait_screen(
            term, lambda s: marker in s and "searching" not in s, f"{hits} search results", timeout * 3
        )
        result["text search (ms)"] = (found - typed) * 1000
        result["peak RSS after search (MiB)"] = peak_rss_mib(term.pid)
        term.press("Escape")
        if SEARCH in term.screen():  # pi: a first Escape may clear the search
            time.sleep(0.2)
            term.press("Escape")
        term.wait_exit(timeout=10)
        return result
    finally:
        term.close()


def measure(side: str, argv: list[str], env: dict[str, str], cwd: str, hits: int, args) -> dict:
    runs = []
    for index in range(args.runs + 1):
        label = "warm-up" if index == 0 else f"run {index}/{args.runs}"
        try:
            result = one_run(argv, env, cwd, hits, args.timeout)
        except SideFailed as failure:
            print(f"{side}: {label} failed: {failure}", flush=True)
            return {"error": str(failure).split("\n", 1)[0]}
        print(f"{side}: {label}: " + ", ".join(f"{k} {v:.0f}" for k, v in result.items()), flush=True)
        if index:
            runs.append(result)
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--others", type=int, default=300, help="sessions of three other projects")
    parser.add_argument("--mib", type=float, default=1200, help="total size of the session files")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("pi", "pi-host"))
    parser.add_argument("--data", help="keep the generated files here and reuse them")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    from tests.support.loopback import write_models_json
    from tests.support.terminal import tmux_available

    if not tmux_available():
        print("tmux >= 3.2 is required")
        return 1
    root = os.path.abspath(args.data) if args.data else tempfile.mkdtemp(prefix="pi-resume-bench-")
    agent, home, cwd = (
        os.path.join(root, name) for name in ("agent", "home", os.path.join("work", "project"))
    )
    params = {"sessions": args.sessions, "others": args.others, "mib": args.mib, "version": 1}
    params_file = os.path.join(root, "params.json")
    try:
        summary = None
        if os.path.exists(params_file):
            saved = json.loads(Path(params_file).read_text())
            if saved.get("params") == params:
                summary = saved["summary"]
        if summary is None:
            shutil.rmtree(os.path.join(root, "agent"), ignore_errors=True)
            for directory in (agent, home, cwd):
                os.makedirs(directory, exist_ok=True)
            started = time.perf_counter()
            summary = generate(agent, cwd, args.sessions, args.others, args.mib)
            print(f"generated in {time.perf_counter() - started:.1f} s", flush=True)
            Path(params_file).write_text(json.dumps({"params": params, "summary": summary}))
        write_models_json(agent, "http://127.0.0.1:9")  # the picker sends nothing
        print(
            f"{summary['files']} session files ({summary['project files']} in the project), "
            f"{summary['bytes'] / 2**20:.0f} MiB, {summary['with search word']} of the project's hold "
            f"{SEARCH!r}; {os.cpu_count()} CPUs; {args.runs} runs + 1 warm-up per side",
            flush=True,
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "LANG": "C.UTF-8",
            "PI_CODING_AGENT_DIR": agent,
            "PI_TELEMETRY": "0",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_OFFLINE": "1",
        }
        from tests.support.pi_node import find_pi

        sides: list[tuple[str, list[str] | None]] = []
        if args.only in (None, "pi"):
            pi = find_pi()
            sides.append(("pi 1.6.0", [*pi, "--no-extensions"] if pi else None))
        if args.only in (None, "pi-host"):
            pi_host = Path(sys.executable).with_name("pi")
            sides.append(("pi-host", [str(pi_host)] if pi_host.exists() else None))
        results = {}
        for name, argv in sides:
            if argv is None:
                print(f"{name}: not installed")
                continue
            results[name] = measure(
                name, [*argv, "--model", "loop/loop-1", "-r"], env, cwd, summary["with search word"], args
            )
        print()
        names = list(results)
        metrics = next((list(r) for r in results.values() if "error" not in r), [])
        header = f"{'':30s}" + "".join(f"{name:>12s}" for name in names)
        if len(names) == 2:
            header += f"{'pi-host/pi':>12s}"
        print(header)
        for metric in metrics:
            values = [results[name].get(metric) for name in names]
            row = f"{metric:30s}" + "".join(f"{v:12.0f}" if v is not None else f"{'-':>12s}" for v in values)
            if len(names) == 2 and all(v is not None for v in values) and values[0]:
                row += f"{values[1] / values[0]:11.2f}x"
            print(row)
        for name in names:
            if "error" in results[name]:
                print(f"{name}: did not finish: {results[name]['error']}")
    finally:
        if not args.data:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
