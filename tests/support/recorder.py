"""Running the real ``pi`` command in session tests, and seeing what it sent to the model.

``recorder(tmp)`` writes a plugin (loaded with ``-e``) that appends the messages of every
provider request to the file named by ``PI_TEST_REQUESTS``, one JSON list a line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

RECORDER = """
import json, os

from pi_host import hookimpl


@hookimpl
def on_before_provider_request(event, ctx):
    payload = event["payload"]
    with open(os.environ["PI_TEST_REQUESTS"], "a", encoding="utf-8") as out:
        out.write(json.dumps(payload.get("messages", [])) + "\\n")
"""


def recorder(directory: Path) -> Path:
    path = directory / "record_requests.py"
    path.write_text(RECORDER)
    return path


def pi_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pi_host", "--model", "faux/faux-1", *args]


def pi_env(script: list[dict[str, Any]] | None = None, requests: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "PI_FAUX_SCRIPT": json.dumps(script or [{"text": "answer"}])}
    if requests is not None:
        env["PI_TEST_REQUESTS"] = str(requests)
    return env


def run_pi(
    *args: str,
    cwd: Path,
    stdin: str = "",
    script: list[dict[str, Any]] | None = None,
    requests: Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    return subprocess.run(
        pi_command(*args),
        cwd=cwd,
        env=pi_env(script, requests),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def recorded(requests: Path) -> list[list[dict[str, Any]]]:
    if not requests.exists():
        return []
    return [json.loads(line) for line in requests.read_text().splitlines() if line.strip()]


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or () if isinstance(b, dict))


def conversation(messages: list[dict[str, Any]]) -> list[str]:
    """The user and assistant texts of a request, in order (system and tool messages left out)."""
    return [message_text(m) for m in messages if m.get("role") in ("user", "assistant")]
