"""Seeing what the real ``pi`` command sent to the model, in session tests.

``recorder(tmp)`` writes a plugin (loaded with ``-e``) that appends the messages of every
provider request to the file named by ``PI_TEST_REQUESTS``, one JSON list a line:

    out = run_pi(*FAUX, "-e", str(recorder(tmp)), "-p", "hi", script=ANSWER, env=recording(requests))
    [sent] = recorded(requests)
    assert conversation(sent) == ["hi"]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FAUX = ("--model", "faux/faux-1")
"""The arguments that put ``pi`` on the built-in faux model."""
ANSWER = [{"text": "answer"}]
"""The faux script of a run that only needs some answer."""

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


def recording(requests: Path) -> dict[str, str]:
    """The environment (for ``run_pi(env=...)``) that has the recorder plugin write to ``requests``."""
    return {"PI_TEST_REQUESTS": str(requests)}


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
