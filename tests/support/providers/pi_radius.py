"""pi 1.6.0's Radius (``pi-messages``) requests, recorded against the loopback gateway
(:mod:`tests.support.providers.radius`), so pi-host's can be compared with them
(``tests/plugins/pi_provider_radius/test_pi_request.py``).

``python -m tests.support.providers.pi_radius`` runs ``pi -p`` once per :data:`CASES` entry with
``RADIUS_API_KEY`` set and radius's ``baseUrl`` pointed at the gateway through models.json, the
first answer a streamed ``ls`` call and the second a text, and writes :data:`RECORDED`: every
``/v1/messages`` request with the values that change per run or belong to the prompt replaced
(see :func:`normalize`). pi's system prompt and tool descriptions differ from pi-host's by
design; what the comparison checks is the wire shape: path, headers, ``options``, and the
messages in pi's JSON. No key is real and nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.paths import REPO
from tests.support.providers.radius import KEY, RadiusGateway, text_turn, tool_call_turn

RECORDED = REPO / "tests/plugins/pi_provider_radius/pi_radius_requests_1.6.0.json"

CASES: list[dict[str, Any]] = [
    {"name": "tool-round-trip", "model": "kimi-k3", "thinking": "high", "tools": True},
    {"name": "thinking-off-clamped", "model": "kimi-k3", "thinking": "off"},
    {"name": "thinking-off", "model": "cheap", "thinking": "off"},
    {"name": "level-clamped-down", "model": "recursive/flint", "thinking": "high"},
    {"name": "max-and-long-cache", "model": "claude-opus-4-8", "thinking": "max",
     "env": {"PI_CACHE_RETENTION": "long"}},
]  # fmt: skip
HEADERS = ("authorization", "accept", "content-type")
PROMPT = "List files"


def turns(case: dict[str, Any]) -> list[Any]:
    if case.get("tools"):
        return [tool_call_turn("ls", {"path": "."}), text_turn("Done: main.py")]
    return [text_turn("Hello from Radius")]


def arguments(case: dict[str, Any]) -> list[str]:
    tools = ["--tools", "ls"] if case.get("tools") else ["--no-tools"]
    return ["-p", "--no-session", "--model", f"radius/{case['model']}", "--thinking", case["thinking"],
            *tools, PROMPT]  # fmt: skip


def prepare(agent: Path, work: Path, gateway: RadiusGateway) -> None:
    (work / "main.py").write_text("print(1)\n")
    models = {"providers": {"radius": {"baseUrl": gateway.url + "/v1"}}}
    (agent / "models.json").write_text(json.dumps(models))


def normalize(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    """The request with per-run values (session id, timestamps, durations) and prompt text (the
    system message's section texts, tool declarations) replaced by placeholders."""
    body = json.loads(json.dumps(body))
    options = body.get("options") or {}
    if "sessionId" in options:
        options["sessionId"] = "<session>"
    for message in body.get("context", {}).get("messages", []):
        for name in ("timestamp", "durationMs"):
            if name in message:
                message[name] = 0
        if message.get("role") == "system":
            message["content"] = "<prompt>" if message.get("content") else ""
            if isinstance(message.get("sections"), dict):
                message["sections"] = sorted(message["sections"])
            if isinstance(message.get("toolsAdded"), list):
                message["toolsAdded"] = [tool.get("name") for tool in message["toolsAdded"]]
    return {
        "method": method,
        "path": path,
        "headers": {name: headers[name] for name in HEADERS if name in headers},
        "body": body,
    }


def record() -> dict[str, Any]:
    from tests.support.pi_node import find_pi, pi_env

    pi = find_pi()
    assert pi, "pi 1.6.0 is not installed (tests/support/pi_node.py)"
    node, cli = pi
    results: dict[str, Any] = {}
    for case in CASES:
        with RadiusGateway() as gateway, tempfile.TemporaryDirectory() as tmp:
            gateway.turns = turns(case)
            agent, work = Path(tmp, "agent"), Path(tmp, "work")
            agent.mkdir()
            work.mkdir()
            prepare(agent, work, gateway)
            env = pi_env(str(agent))
            env.update(RADIUS_API_KEY=KEY, HOME=str(agent), **case.get("env", {}))
            done = subprocess.run(
                [node, cli, *arguments(case)],
                cwd=str(work),
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            print(case["name"], done.returncode, done.stdout.strip(), file=sys.stderr)
            results[case["name"]] = [
                normalize(r.method, r.path, r.headers, r.json()) for r in gateway.messages()
            ]
    return results


if __name__ == "__main__":
    os.environ.pop("PI_CODING_AGENT_DIR", None)
    data = record()
    RECORDED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("recorded", sum(len(v) for v in data.values()), "requests to", RECORDED)
