"""What the sandbox tests share: a run of ``pi --mode json`` whose tool results are read back,
small HTTP servers that count the requests they get, and what this machine can sandbox with."""

from __future__ import annotations

import http.server
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.pi import run_pi


def backends() -> dict[str, str | None]:
    """``{backend: None if usable here, else why not}``."""
    from pi_sandbox.probe import capabilities

    caps = capabilities()
    return {
        "landlock": None if caps.landlock_abi else "Landlock is not available on this kernel",
        "bwrap": None if caps.bwrap else "bubblewrap (bwrap) is not installed",
    }


def backend_param(name: str) -> Any:
    why = backends()[name]
    return pytest.param(name, marks=pytest.mark.skipif(why is not None, reason=why or ""), id=name)


@dataclass
class ToolRun:
    name: str
    text: str
    is_error: bool


@dataclass
class JsonRun:
    returncode: int
    stdout: str
    stderr: str
    tools: list[ToolRun] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


def run_json(
    *args: str, script: list[dict[str, Any]], cwd: Any, env: dict[str, str] | None = None, timeout: float = 90
) -> JsonRun:
    """``pi --mode json --no-session --model faux/faux-1 <args> go``: every tool result in order."""
    out = run_pi(
        "--mode",
        "json",
        "--no-session",
        "--model",
        "faux/faux-1",
        *args,
        "go",
        script=script,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )
    run = JsonRun(out.returncode, out.stdout, out.stderr)
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        run.events.append(event)
        if event.get("type") == "tool_execution_end":
            content = (event.get("result") or {}).get("content") or []
            text = "".join(block.get("text", "") for block in content if isinstance(block, dict))
            run.tools.append(ToolRun(event["toolName"], text, bool(event.get("isError"))))
    return run


class CountingServer:
    """An HTTP server on 127.0.0.1 that answers ``ok`` and counts the requests it received."""

    def __init__(self) -> None:
        counter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                counter.hits += 1
                body = b"ok-from-server"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.hits = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> CountingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
