"""pi-event-logger: one JSON line per session event, in order, small, and without secrets; an I/O
error is reported once and never fails the run. Installed by the real ``pi install``, used by a
print run and by the interactive mode in a real terminal."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.venv import make_venv, pi_install_example, venv_pi

# shaped like no known key format, so only the plugin's knowledge of them can redact them
OPENAI_SECRET = "fake-openai-0123456789abcdef"
AUTH_SECRET = "fake-authjson-9876543210"


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def outline(records: list[dict]) -> list[str]:
    """The run's shape: lifecycle, turns, tools and the roles of finished messages."""
    shown = {"session_start", "agent_start", "turn_start", "turn_end", "agent_end", "agent_settled"}
    shown |= {"tool_execution_start", "tool_execution_end", "session_shutdown", "model_select"}
    shown |= {"session_info_changed"}
    out = []
    for record in records:
        if record["type"] == "message_end" and record["message"]["role"] != "system":
            out.append(f"message_end:{record['message']['role']}")
        elif record["type"] in shown:
            out.append(record["type"])
    return out


TOOL_RUN = [
    "session_start",
    "agent_start",
    "turn_start",
    "message_end:user",
    "message_end:assistant",
    "tool_execution_start",
    "tool_execution_end",
    "message_end:toolResult",
    "turn_end",
    "turn_start",
    "message_end:assistant",
    "turn_end",
    "agent_end",
    "agent_settled",
]


def bash(command: str) -> dict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


# --- unit: what a record may hold -----------------------------------------------------------


def session_header(agent: Path) -> dict:
    [path] = (agent / "sessions").rglob("*.jsonl")
    return json.loads(path.read_text().splitlines()[0])


def test_installed_by_pi_install_logs_a_print_run_without_secrets(tmp_path, isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    venv = make_venv(tmp_path / "venv")
    installed = pi_install_example("pi-event-logger", venv)
    assert installed.stdout.splitlines() == ["Installed pi-event-logger 0.1.0 (provides: event-logger)"]
    listed = venv_pi(venv, "list").stdout.splitlines()
    assert listed[0] == "pi-event-logger 0.1.0  [user]"
    assert "    pi_host: event-logger = pi_event_logger" in listed
    rows = {row["name"]: row for row in json.loads(venv_pi(venv, "plugins", "--json").stdout)}
    assert rows["event-logger"]["source"] == "installed"
    assert rows["event-logger"]["origin"] == "pi-event-logger"
    assert {"on_event", "on_session_start", "register_cli_flags"} <= set(rows["event-logger"]["hooks"])

    (agent / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": AUTH_SECRET}}))
    (agent / "auth.json").chmod(0o600)
    script = [
        bash(f'echo "key=$OPENAI_API_KEY"; cat {agent / "auth.json"}; echo visible-marker'),
        {"text": "saw: {{lastToolResult}} " + "z" * 3000},
    ]
    run = venv_pi(
        venv,
        "-p",
        "--model",
        "faux/faux-1",
        "show me the keys",
        cwd=work,
        PI_FAUX_SCRIPT=json.dumps(script),
        OPENAI_API_KEY=OPENAI_SECRET,
    )
    assert run.returncode == 0, run.stderr
    assert OPENAI_SECRET in run.stdout and AUTH_SECRET in run.stdout  # the secrets went through the run

    header = session_header(agent)
    [log] = (agent / "logs").glob("*.jsonl")
    assert log.name == f"events-{header['id']}.jsonl"
    records = read_log(log)
    assert outline(records) == [*TOOL_RUN, "session_shutdown"]
    assert records[0]["mode"] == "print" and records[0]["model"] == "faux/faux-1"
    raw = log.read_text()
    assert OPENAI_SECRET not in raw and AUTH_SECRET not in raw
    tool_end = next(r for r in records if r["type"] == "tool_execution_end")
    preview = tool_end["result"]["content"][0]["preview"]
    assert preview.startswith("key=[redacted]\n") and '"key":"[redacted]"' in preview.replace(" ", "")
    assert "z" * 300 not in raw and len(raw) < 12_000
