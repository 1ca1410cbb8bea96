"""pi-event-logger: one JSON line per session event, in order, small, and without secrets; an I/O
error is reported once and never fails the run. Installed by the real ``pi install``, used by a
print run and by the interactive mode in a real terminal."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.examples import example_module
from tests.support.pi import run_pi

LOGGER = example_module("pi-event-logger", "pi_event_logger")


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


# --- unit: what a record may hold -----------------------------------------------------------


def test_the_flag_beats_the_environment_which_beats_the_default(tmp_path, isolated_environment):
    flag_log, env_log = tmp_path / "flag.jsonl", tmp_path / "env.jsonl"
    env = {"PI_EVENT_LOG": str(env_log)}
    args = ["-p", "--model", "faux/faux-1", "-e", LOGGER]
    out = run_pi(*args, "--event-log", str(flag_log), "hello", env=env)
    assert out.returncode == 0, out.stderr
    assert outline(read_log(flag_log))[0] == "session_start" and not env_log.exists()
    assert run_pi(*args, "again", env=env).returncode == 0
    assert outline(read_log(env_log))[-1] == "session_shutdown"
    assert run_pi(*args, "third").returncode == 0
    [default] = (isolated_environment["agent"] / "logs").glob("events-*.jsonl")
    assert read_log(default)[0]["mode"] == "print"
    help_text = run_pi("-e", LOGGER, "--help").stdout
    assert "--event-log" in help_text
