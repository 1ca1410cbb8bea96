"""One pi extension run in pi-host and in pi 1.6.0 against the same scripted loopback model.

A :class:`Scenario` says how to run the extension (print, JSON or RPC mode; the prompts or RPC
commands; the model's replies; how to answer dialogs) and what to look at (``observe``: a function
of a :class:`Run` giving a comparable value). :func:`run_both` runs it in both programs, each
with its own agent dir, home, working directory and server, and returns both runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_host.rpc import RpcClient
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.pi_node import find_pi

EXAMPLES = Path(
    os.environ.get(
        "PI_EXAMPLES",
        Path(__file__).resolve().parents[4]
        / ".tools/pi/node_modules/@earendil-works/pi-coding-agent/examples/extensions",
    )
)
PI = find_pi()
DEFAULT_PLACEMENT = ("widgetPlacement", "aboveEditor")
"""pi leaves the default placement out of ``setWidget`` records; pi-host's RPC mode writes it."""


def node_dir() -> str | None:
    return os.path.dirname(PI[0]) if PI else None


@dataclass
class Run:
    program: str
    exit: int | None = None
    stdout: str = ""
    stderr: str = ""
    requests: list[Any] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    """JSON mode's lines, or every RPC record (events, responses, extension UI requests)."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """The session file's entries (when the scenario keeps a session)."""
    work: Path | None = None
    observed: Any = None
    """What the scenario's ``observe`` saw (taken before the run's folders are removed)."""

    def ui(self, *methods: str) -> list[dict[str, Any]]:
        """The extension UI requests (of ``methods``), without their ids."""
        return [
            {k: v for k, v in r.items() if k not in ("id", "type") and (k, v) != DEFAULT_PLACEMENT}
            for r in self.records
            if r.get("type") == "extension_ui_request" and (not methods or r.get("method") in methods)
        ]

    def events(self, *types: str) -> list[str]:
        return [r["type"] for r in self.records if not types or r.get("type") in types]


@dataclass
class Scenario:
    name: str
    """The example's file (or folder) under pi's examples/extensions."""
    observe: Callable[[Run], Any]
    mode: str = "print"
    args: list[str] = field(default_factory=list)
    """Messages / flags after the fixed ones (print and JSON modes)."""
    rpc: list[dict[str, Any]] = field(default_factory=list)
    """RPC commands, in order (a ``prompt`` waits for its run to settle)."""
    replies: list[Reply | str] = field(default_factory=lambda: ["ok"])
    answer: Callable[[dict[str, Any]], Any] | None = None
    """How the RPC client answers dialogs (default: cancel)."""
    session: bool = False
    prepare: Callable[[Path], None] | None = None
    """Called with the working directory before the run (files, a git repository...)."""
    extra_models: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    tools: str | None = None
    status: str = "same"
    """``same``: the observations must be equal; ``differs``/``unsupported``: the reason says why."""
    reason: str = ""


def _environment(root: Path, program: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and not k.startswith(("PI_", "PYTEST_"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        HOME=str(root / "home"),
        PI_CODING_AGENT_DIR=str(root / "agent"),
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        XDG_CACHE_HOME=str(root / "xdg"),
    )
    if program == "pi-host" and os.environ.get("PI_HOST_CACHE_DIR"):
        env["PI_HOST_CACHE_DIR"] = os.environ["PI_HOST_CACHE_DIR"]
    if node_dir():
        env["PATH"] = f"{node_dir()}{os.pathsep}{env.get('PATH', '')}"
    return env


def _argv(program: str) -> list[str]:
    if program == "pi-host":
        return [sys.executable, "-m", "pi_host"]
    assert PI is not None
    return [PI[0], PI[1]]


def _models(agent: Path, url: str, extra: dict[str, Any]) -> None:
    write_models_json(agent, url)
    if extra:
        path = agent / "models.json"
        data = json.loads(path.read_text())
        for provider, config in extra.items():
            data["providers"][provider] = {
                "baseUrl": url,
                "api": "openai-completions",
                "apiKey": "unused",
                **config,
            }
        path.write_text(json.dumps(data))


def run_one(scenario: Scenario, program: str, root: Path, timeout: float = 60) -> Run:
    for sub in ("home", "agent", "work", "xdg", "sessions"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "agent" / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    work = root / "work"
    if scenario.prepare is not None:
        scenario.prepare(work)
    extension = EXAMPLES / scenario.name
    run = Run(program, work=work)
    env = {**_environment(root, program), **scenario.env}
    common = ["--model", "loop/loop-1", "-e", str(extension)]
    common += ["--session-dir", str(root / "sessions")] if scenario.session else ["--no-session"]
    if scenario.tools is not None:
        common += ["--tools", scenario.tools]
    with LoopbackServer(scenario.replies) as server:
        _models(root / "agent", server.url, scenario.extra_models)
        if scenario.mode == "rpc":
            _run_rpc(scenario, program, common, env, work, run, timeout)
        else:
            mode = ["--mode", "json"] if scenario.mode == "json" else ["-p"]
            done = subprocess.run(
                [*_argv(program), *mode, *common, *scenario.args],
                cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
            run.exit, run.stdout, run.stderr = done.returncode, done.stdout, done.stderr
            if scenario.mode == "json":
                run.records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        run.requests = list(server.requests)
    for file in sorted((root / "sessions").rglob("*.jsonl")):
        run.entries += [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    try:
        run.observed = scenario.observe(run)  # while the working directory still exists
    except Exception as exc:  # noqa: BLE001 - an observation that cannot be made is a difference
        run.observed = f"cannot observe: {type(exc).__name__}: {exc}"
    return run


def _run_rpc(
    scenario: Scenario,
    program: str,
    common: list[str],
    env: dict[str, str],
    work: Path,
    run: Run,
    timeout: float,
) -> None:
    argv = [*_argv(program), "--mode", "rpc"]
    client = RpcClient(argv, args=common, cwd=work, env=env, timeout=timeout)
    client.on_event(run.records.append)
    client.on_ui_request(scenario.answer or (lambda record: None))
    try:
        for command in scenario.rpc:
            if command.get("type") == "sleep":  # let a run a command started settle (pi has no event for it)
                time.sleep(command["seconds"])
                client.wait_for_idle(timeout)
            elif command.get("type") == "prompt":
                try:
                    client.prompt_and_wait(command["message"], timeout=timeout)
                except Exception as exc:  # noqa: BLE001 - recorded, compared like the rest
                    run.records.append({"type": "prompt_error", "error": str(exc)})
            else:
                fields = {k: v for k, v in command.items() if k != "type"}
                response = client.request(command["type"], fields, timeout=timeout)
                run.records.append(
                    {"type": "response", "command": command["type"], "success": response.get("success")}
                )
                client.wait_for_idle(timeout)
    finally:
        run.exit = client.close()
        run.stderr = client.stderr


def run_both(scenario: Scenario, timeout: float = 60) -> dict[str, Run]:
    root = Path(tempfile.mkdtemp(prefix="ts-example-"))
    try:
        return {
            program: run_one(scenario, program, root / program.replace(" ", "-"), timeout)
            for program in ("pi-host", "pi")
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- what scenarios look at ---------------------------------------------------------------------


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def tool_results(run: Run) -> list[str]:
    """The text of every tool result the model was sent, in order (each once)."""
    seen: list[str] = []
    for request in run.requests:
        for message in request.get("messages", []):
            if message.get("role") == "tool":
                text = text_of(message.get("content"))
                if text not in seen:
                    seen.append(text)
    return seen


def user_texts(run: Run) -> list[str]:
    """The user messages of the last request."""
    if not run.requests:
        return []
    return [
        text_of(m.get("content")) for m in run.requests[-1].get("messages", []) if m.get("role") == "user"
    ]


def offered_tools(run: Run, index: int = -1) -> list[str]:
    if not run.requests:
        return []
    return sorted(t["function"]["name"] for t in run.requests[index].get("tools") or [])


def system_prompt(run: Run, index: int = -1) -> str:
    messages = run.requests[index].get("messages", []) if run.requests else []
    return "\n".join(text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))


def custom_entries(run: Run) -> list[tuple[str, Any]]:
    return [(e.get("customType"), e.get("data")) for e in run.entries if e.get("type") == "custom"]
