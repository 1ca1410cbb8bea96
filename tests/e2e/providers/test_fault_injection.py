"""Fault injection through the real ``pi`` command, for every provider API, in print and JSON mode.

Each case is one ``pi`` run against its own loopback server, which plays a script of replies, one
per request: a 401 that echoes the key, 429 with a short and a long ``Retry-After``, 500, 503, a
connection dropped mid-stream, a malformed chunk, a stream that stalls, a server that never
answers, a same-origin and a cross-origin redirect, and plain answers. A JSON-mode run sends one
prompt per fault and is checked prompt by prompt; print-mode runs check the exit code and that
stderr is empty (a clean run, recoveries included) or exactly one ``pi: `` line.

The key is distinctive, not shaped like any provider's token, and comes from the provider's
environment variable, ``auth.json`` or ``--api-key``; it must appear nowhere: not on stdout or
stderr, not in any file under the agent dir (session files included; ``auth.json`` excepted,
where the user put it). The runs are independent processes, so the module starts them all at
once (the wall time is about the slowest run plus start-up, not the sum).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.providers.sse import Reply, SSEServer
from tests.support.providers.wire import (
    APIS,
    SHAPED,
    Api,
    answer,
    dropped,
    malformed,
    silent,
    stalled,
    status,
    unauthorized,
)

PI = [sys.executable, "-m", "pi_host"]
# A stall is a second without data: at 300 ms a run starved of CPU by the suite's other workers
# timed out on its first answer, and the retry got the next step's reply.
IDLE_MS = 1000
SETTINGS = {"retry": {"maxRetries": 2, "baseDelayMs": 10}, "httpIdleTimeoutMs": IDLE_MS}
SOURCES = ("env", "auth", "flag")


@dataclass(frozen=True)
class Step:
    """One prompt: the replies its requests get and what the user should see."""

    name: str
    replies: Callable[[Api, str, str, str], list[Reply]]
    """``(api, key, server url, other server url) -> replies``."""
    answer: str | None = None
    error: str | None = None
    requests: int = 1
    retry_note: str | None = None
    """Text of the session's ``auto_retry_start`` errorMessage, when it retries (then every
    request after the first is a session retry)."""


def _same_origin(api: Api, key: str, url: str, other: str) -> list[Reply]:
    return [Reply.redirect(f"{url}/moved{api.prefix}/anything"), answer(api.name, "Redirected fine")]


STEPS = {
    step.name: step
    for step in [
        Step("ok", lambda a, k, u, o: [answer(a.name, "All good")], answer="All good"),
        Step("unauthorized", lambda a, k, u, o: [unauthorized(a.name, k)], error="401"),
        Step(
            "retry_after_short",
            lambda a, k, u, o: [
                status(a.name, 429, {"retry-after-ms": "300"}),
                answer(a.name, "Waited enough"),
            ],
            answer="Waited enough",
            requests=2,
            retry_note="the server asked to retry after 0.3s",
        ),
        Step(
            "retry_after_long",
            lambda a, k, u, o: [status(a.name, 429, {"retry-after": "120"})],
            error="the server asked to retry after 120s, longer than the 60s limit",
        ),
        Step(
            "server_error",
            lambda a, k, u, o: [status(a.name, 500), answer(a.name, "Second try")],
            answer="Second try",
            requests=2,
            retry_note="500",
        ),
        Step(
            "unavailable",
            lambda a, k, u, o: [status(a.name, 503)] * 3,
            error="503",
            requests=3,
            retry_note="503",
        ),
        Step(
            "drop",
            lambda a, k, u, o: [dropped(a.name), answer(a.name, "After the drop")],
            answer="After the drop",
            requests=2,
            retry_note="Connection lost",
        ),
        Step("malformed", lambda a, k, u, o: [malformed(a.name)], error="Malformed stream data"),
        Step(
            "stall",
            lambda a, k, u, o: [stalled(a.name), answer(a.name, "After the stall")],
            answer="After the stall",
            requests=2,
            retry_note=f"the stream sent no data for {IDLE_MS / 1000:g}s",
        ),
        Step(
            "silent",
            lambda a, k, u, o: [silent(), answer(a.name, "After the silence")],
            answer="After the silence",
            requests=2,
            retry_note=f"no response from the provider within {IDLE_MS / 1000:g}s",
        ),
        Step("redirect_same", _same_origin, answer="Redirected fine", requests=2),
        Step(
            "never_answers",
            lambda a, k, u, o: [silent()] * 3,
            error=f"Request timed out: no response from the provider within {IDLE_MS / 1000:g}s",
            requests=3,
            retry_note="no response from the provider",
        ),
        Step(
            "slow_answer",
            lambda a, k, u, o: [Reply(before=0.5, parts=answer(a.name, "Slow but sure").parts)],
            answer="Slow but sure",
        ),
        Step(
            "redirect_cross",
            lambda a, k, u, o: [Reply.redirect(f"{o}{a.prefix}/elsewhere")],
            error="redirect refused",
        ),
    ]
}
EXTRA = ("slow_answer",)
"""Not in the JSON chain: print-mode cases of their own."""
RECOVERIES = ["retry_after_short", "server_error", "drop", "stall", "silent", "redirect_same"]


@dataclass(frozen=True)
class Case:
    mode: str
    api: str
    source: str
    steps: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=lambda: SETTINGS, hash=False, compare=False)
    label: str = ""

    @property
    def id(self) -> str:
        return f"{self.mode}-{self.api}-{self.source}" + (f"-{self.label}" if self.label else "")


def _cases() -> list[Case]:
    """Every API gets every fault in JSON mode, a clean print run that recovers from the
    transient ones, and a print run of the 401 echoing the key; the three runs of an API take
    the key from the three sources (and each mode sees every source)."""
    cases = []
    for index, api in enumerate(APIS):
        sources = SOURCES[index % 3 :] + SOURCES[: index % 3]
        cases.append(Case("json", api, sources[0], tuple(n for n in STEPS if n not in EXTRA)))
        cases.append(Case("print", api, sources[1], (*RECOVERIES, "ok"), label="clean"))
        cases.append(Case("print", api, sources[2], ("unauthorized",), label="unauthorized"))
    # httpIdleTimeoutMs "disabled" really waits (a server that never answers fails in seconds:
    # ``never_answers`` in the JSON runs).
    disabled = {**SETTINGS, "httpIdleTimeoutMs": "disabled"}
    cases.append(Case("print", "anthropic-messages", "env", ("slow_answer",), disabled, label="disabled"))
    # Provider-level retries on: the HTTP layer waits out a short Retry-After itself, refuses a
    # long one at once, and the session does not retry what it refused.
    provider = {"maxRetries": 2, "baseDelayMs": 10}
    settings = {**SETTINGS, "retry": {**SETTINGS["retry"], "provider": provider}}
    steps = ("retry_after_short", "retry_after_long")
    cases.append(Case("json", "anthropic-messages", "flag", steps, settings, label="provider-retries"))
    return cases


CASES = _cases()


@dataclass
class Run:
    case: Case
    key: str
    returncode: int
    stdout: str
    stderr: str
    agent: Path
    requests: list[Any]
    other_requests: list[Any]


def _run(case: Case, root: Path) -> Run:
    api = APIS[case.api]
    key = f"pifault{case.source}{len(case.id)}x7d3e91c4a2b8f605"
    agent, home, work = root / "agent", root / "home", root / "work"
    for directory in (agent, home, work):
        directory.mkdir(parents=True)
    server, other = SSEServer().start(), SSEServer().start()
    try:
        for name in case.steps:
            server.enqueue(*STEPS[name].replies(api, key, server.url, other.url))
        other.default = Reply.json(500, {"error": {"message": "the other origin must not be asked"}})
        (agent / "models.json").write_text(
            json.dumps({"providers": {api.provider: {"baseUrl": server.url + api.prefix}}})
        )
        (agent / "settings.json").write_text(json.dumps(case.settings))
        env = {
            k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN", "_AUTH_TOKEN"))
        }
        env.update(
            HOME=str(home),
            PI_CODING_AGENT_DIR=str(agent),
            PI_HOST_CACHE_DIR=os.environ.get("PI_HOST_CACHE_DIR") or str(root / "cache"),
            XDG_CACHE_HOME=str(root / "xdg"),
        )
        args = ["--model", f"{api.provider}/{api.model}"]
        if case.source == "env":
            env[api.env] = key
        elif case.source == "auth":
            (agent / "auth.json").write_text(json.dumps({api.provider: {"type": "api_key", "key": key}}))
        else:
            args += ["--api-key", key]
        args += ["-p"] if case.mode == "print" else ["--mode", "json"]
        prompts = [f"step {index}: {name}" for index, name in enumerate(case.steps)]
        done = subprocess.run(
            [*PI, *args, *prompts], cwd=work, env=env, capture_output=True, text=True, timeout=90
        )
        return Run(
            case, key, done.returncode, done.stdout, done.stderr, agent, server.requests, other.requests
        )
    finally:
        server.stop()
        other.stop()


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory) -> dict[str, Run]:
    """Every case selected in this module, run concurrently."""
    wanted = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.module is request.module and "case" in getattr(getattr(item, "callspec", None), "params", {})
    ]
    chosen = {case.id: case for case in wanted}
    root = tmp_path_factory.mktemp("faults")
    with ThreadPoolExecutor(max_workers=min(8, max(1, len(chosen)))) as pool:
        futures = {cid: pool.submit(_run, case, root / cid) for cid, case in chosen.items()}
        return {cid: future.result() for cid, future in futures.items()}


def assert_key_nowhere(run: Run) -> None:
    for secret in (run.key, SHAPED):
        assert secret not in run.stdout
        assert secret not in run.stderr
        for path in run.agent.rglob("*"):
            if path.is_file() and path.name != "auth.json":
                assert secret.encode() not in path.read_bytes(), path
    assert list(run.agent.rglob("*.jsonl")), "the run saved a session file"


def prompts_of(stdout: str) -> list[list[dict]]:
    """JSON-mode records split per prompt (each prompt ends with ``agent_settled``)."""
    groups: list[list[dict]] = [[]]
    for line in stdout.splitlines():
        groups[-1].append(json.loads(line))
        if groups[-1][-1]["type"] == "agent_settled":
            groups.append([])
    return [group for group in groups if group]


def final_assistant(group: list[dict]) -> dict:
    return [
        r["message"] for r in group if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ][-1]


def expected_requests(case: Case) -> int:
    return sum(STEPS[name].requests for name in case.steps)


@pytest.mark.parametrize("case", [c for c in CASES if c.mode == "json"], ids=lambda c: c.id)
def test_json_mode(runs, case):
    run = runs[case.id]
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert_key_nowhere(run)
    groups = prompts_of(run.stdout)
    assert len(groups) == len(case.steps), [g[-1]["type"] for g in groups]
    provider_retries = "provider" in case.settings["retry"]
    for name, group in zip(case.steps, groups, strict=True):
        step = STEPS[name]
        message = final_assistant(group)
        retries = [r for r in group if r["type"] == "auto_retry_start"]
        if step.answer is not None:
            assert message["stopReason"] == "stop", (name, message.get("errorMessage"))
            assert message["content"][0]["text"] == step.answer
        else:
            assert message["stopReason"] == "error", name
            assert step.error in message["errorMessage"], (name, message["errorMessage"])
            assert "\n" not in message["errorMessage"]
        if name == "unauthorized":
            assert "[redacted]" in message["errorMessage"]
        expected = step.requests - 1 if step.retry_note is not None and not provider_retries else 0
        assert len(retries) == expected, (name, retries)  # with provider retries, the HTTP layer did
        assert all(step.retry_note in r["errorMessage"] for r in retries), (name, retries)
        if name == "retry_after_short" and not provider_retries:
            assert retries[0]["delayMs"] >= 300  # the server's delay, not the 10 ms backoff
    assert len(run.requests) == expected_requests(case)
    assert not run.other_requests  # a cross-origin redirect sends nothing to the other server
    for recorded in run.requests:
        assert run.key in json.dumps(recorded.headers)  # the key went where it belongs


@pytest.mark.parametrize("case", [c for c in CASES if c.mode == "print"], ids=lambda c: c.id)
def test_print_mode(runs, case):
    run = runs[case.id]
    assert_key_nowhere(run)
    last = STEPS[case.steps[-1]]
    if last.answer is not None:
        assert (run.returncode, run.stderr) == (0, ""), run.stderr  # recoveries print nothing
        assert run.stdout == last.answer + "\n"
    else:
        assert run.returncode == 1
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("pi: "), run.stderr
        assert last.error in lines[0]
        assert run.stdout == ""
        if last.name == "unauthorized":
            assert "[redacted]" in lines[0]
    assert len(run.requests) == expected_requests(case)
    assert not run.other_requests
