"""A loopback server that answers by prompt (tasks run in any order), and the `pi batch` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from typing import Any

from tests.support.loopback import LoopbackServer, Reply, write_models_json

_current = threading.local()


class _Tracked(list):
    """The server's exchange list: remembers, per handler thread, the exchange it just added."""

    def append(self, item: Any) -> None:
        super().append(item)
        _current.exchange = item


def prompt_of(body: Any) -> str:
    """The first user message's text of a chat-completions request body."""
    for message in (body or {}).get("messages", []) if isinstance(body, dict) else []:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content)
    return ""


class RoutingServer(LoopbackServer):
    """Replies chosen by the task's prompt (``routes``: prompt -> a Reply, or a list of them for
    the first, second... request of that prompt), the default otherwise; counts requests per
    prompt (``counts``), keeps their bodies (``bodies``) and the most exchanges open at once."""

    def __init__(self, routes: dict[str, Reply | list[Reply]], default: Reply | None = None) -> None:
        super().__init__()
        self.exchanges = _Tracked()
        self.routes = routes
        self.default = default or Reply("done")
        self.counts: Counter[str] = Counter()
        self.bodies: dict[str, list[Any]] = {}
        self.open = 0
        self.max_open = 0

    def _next_reply(self) -> Reply:
        prompt = prompt_of(_current.exchange.body)
        with self._lock:
            index = self.counts[prompt]
            self.counts[prompt] += 1
            self.bodies.setdefault(prompt, []).append(_current.exchange.body)
        route = self.routes.get(prompt, self.default)
        if isinstance(route, list):
            return route[min(index, len(route) - 1)]
        return route

    def _chat(self, handler: Any) -> None:
        with self._lock:
            self.open += 1
            self.max_open = max(self.max_open, self.open)
        try:
            super()._chat(handler)
        finally:
            with self._lock:
                self.open -= 1


def write_priced_models(agent_dir: str, url: str, input_per_million: float = 1.0) -> None:
    """models.json for the server, with a price so costs show up."""
    path = write_models_json(agent_dir, url)
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    config["providers"]["loop"]["models"][0]["cost"] = {
        "input": input_per_million,
        "output": input_per_million,
        "cacheRead": 0,
        "cacheWrite": 0,
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)


def write_tasks(path: str, tasks: list[dict[str, Any] | str]) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        for task in tasks:
            handle.write((task if isinstance(task, str) else json.dumps(task)) + "\n")
    return path


def batch_argv(tasks: str, out: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pi_host", "batch", tasks, "--out", out, *extra]


def run_batch(tasks: str, out: str, *extra: str, timeout: float = 90, **kwargs: Any):
    return subprocess.run(
        batch_argv(tasks, out, *extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
        **kwargs,
    )


def read_results(out: str) -> list[dict[str, Any]]:
    with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def progress_lines(stderr: str) -> list[dict[str, Any]]:
    lines = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


# --- the 20-task batch with every outcome -------------------------------------------------------

MODEL = "loop/loop-1"
HUGE_USAGE = {"prompt_tokens": 10_000_000, "completion_tokens": 1, "total_tokens": 10_000_001}
TIMEOUT = "5"
MAX_COST = "1"


def _git(cwd: str, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repos(root: str) -> tuple[str, str, str]:
    """A plain folder and a git repository with two commits; (folder, repo, first commit)."""
    folder = os.path.join(root, "src-folder")
    os.makedirs(folder)
    with open(os.path.join(folder, "notes.txt"), "w") as handle:
        handle.write("folder-content\n")
    repo = os.path.join(root, "src-repo")
    os.makedirs(repo)
    _git(repo, "init", "-q")
    identity = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    with open(os.path.join(repo, "notes.txt"), "w") as handle:
        handle.write("first-commit\n")
    _git(repo, "add", "notes.txt")
    _git(repo, *identity, "commit", "-q", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    with open(os.path.join(repo, "notes.txt"), "w") as handle:
        handle.write("second-commit\n")
    _git(repo, *identity, "commit", "-q", "-am", "two")
    return folder, repo, first


def mixed_batch(root: str) -> tuple[str, dict[str, Any]]:
    """tasks.jsonl with 20 runnable tasks (14 plain; one timing out, one failing, one over the
    cost limit; one using tools and env, one on a copied folder, one on a git ref) plus a line
    that is not JSON, one without a prompt and an unknown field; and the server routes."""
    folder, repo, first = make_repos(root)
    read = lambda: Reply.tool("read", {"path": "notes.txt"})  # noqa: E731
    routes: dict[str, Any] = {
        "hang": Reply(before=60),
        "fail": Reply(status=500),
        "pricey": Reply.tool("bash", {"command": "sleep 8"}, usage=HUGE_USAGE),
        "use env": [Reply.tool("bash", {"command": "echo value=$BATCH_VAR"}), Reply("env done")],
        "read folder": [read(), Reply("folder done")],
        "read repo": [read(), Reply("repo done")],
    }
    tasks: list[Any] = [
        {"id": "hang", "prompt": "hang", "model": MODEL},
        {"id": "fail", "prompt": "fail", "model": MODEL, "settings": {"retry": {"enabled": False}}},
        {"id": "pricey", "prompt": "pricey", "model": MODEL, "colour": "blue"},
        {"id": "env", "prompt": "use env", "model": MODEL, "tools": ["bash"], "env": {"BATCH_VAR": "xyz"}},
        {"id": "folder", "prompt": "read folder", "model": MODEL, "repo": folder, "tools": "read"},
        "this is not json",
        {"id": "git", "prompt": "read repo", "model": MODEL, "repo": repo, "ref": first},
        {"id": "no-prompt", "model": MODEL},
    ]
    tasks += [{"id": f"t{n:02d}", "prompt": f"plain task {n}", "model": MODEL} for n in range(14)]
    return write_tasks(os.path.join(root, "tasks.jsonl"), tasks), routes


def check_mixed(out: str, server: RoutingServer, stderr: str) -> list[dict[str, Any]]:
    """What a finished mixed batch must show, whatever the executor."""
    records = read_results(out)
    by_id = {record["id"]: record for record in records}
    assert len(records) == 20 == len(by_id), sorted(by_id)
    statuses = {key: by_id[key]["status"] for key in ("hang", "fail", "pricey")}
    assert statuses == {"hang": "timeout", "fail": "error", "pricey": "cost-limit"}, statuses
    plain = [by_id[f"t{n:02d}"] for n in range(14)]
    assert all(r["status"] == "ok" and r["text"] == "done" and r["exit_code"] == 0 for r in plain)
    assert all(r["tokens"]["input"] > 0 and 0 < r["cost"] < 0.01 and r["wall"] > 0 for r in plain)
    assert 4.5 < by_id["hang"]["wall"] < 15
    assert "500" in by_id["fail"]["error"]
    assert by_id["pricey"]["cost"] >= 10 and by_id["pricey"]["wall"] < 7  # stopped, not after sleep 8
    # problems reported with their line numbers; the rest ran
    assert ":6: not JSON" in stderr and ":8: 'prompt' must be" in stderr
    assert ":3: unknown field 'colour'" in stderr
    # each task asked once (the error once: the task's own settings turned retries off)
    assert all(server.counts[f"plain task {n}"] == 1 for n in range(14))
    assert server.counts["fail"] == 1 and server.counts["pricey"] == 1
    # tools and env: only bash declared; the command saw the task's variable
    env_bodies = server.bodies["use env"]
    assert [t["function"]["name"] for t in env_bodies[0]["tools"]] == ["bash"]
    assert "value=xyz" in json.dumps(env_bodies[1]["messages"])
    assert by_id["env"]["status"] == "ok" and by_id["env"]["text"] == "env done"
    # a copied folder and a git checkout at the task's ref
    assert "folder-content" in json.dumps(server.bodies["read folder"][1]["messages"])
    assert "first-commit" in json.dumps(server.bodies["read repo"][1]["messages"])
    assert by_id["git"]["status"] == by_id["folder"]["status"] == "ok"
    # per task: its event stream and its session file
    for record in records:
        events = os.path.join(out, record["events"])
        with open(events, encoding="utf-8") as handle:
            first = json.loads(handle.readline())
        assert first["type"] == "session"
        session = os.path.join(out, record["session"])
        assert session.startswith(os.path.join(out, "sessions", record["id"], ""))
        with open(session, encoding="utf-8") as handle:
            assert json.loads(handle.readline())["id"] == first["id"]
    return records
