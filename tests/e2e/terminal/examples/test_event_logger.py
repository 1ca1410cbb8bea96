"""pi-event-logger: one JSON line per session event, in order, small, and without secrets; an I/O
error is reported once and never fails the run. Installed by the real ``pi install``, used by a
print run and by the interactive mode in a real terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.interactive import PROMPT_READY
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal, tmux_available
from tests.support.venv import make_venv, pi_install_example

LOOP_SECRET = "fake-loop-modelsjson-24680"


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


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_an_interactive_session_is_logged_and_the_models_key_is_not(world, tmp_path):
    venv = make_venv(tmp_path / "venv")
    pi_install_example("pi-event-logger", venv)
    env = {k: v for k, v in world["env"].items() if k != "PYTHONPATH"}
    command = f"tr , '\\n' < {world['agent'] / 'models.json'} | grep apiKey; echo from-the-terminal"
    replies = [Reply.tool("bash", {"command": command}), Reply("all done here")]
    with LoopbackServer(replies) as server:
        models = Path(write_models_json(world["agent"], server.url))
        config = json.loads(models.read_text())
        config["providers"]["loop"]["apiKey"] = LOOP_SECRET
        models.write_text(json.dumps(config))
        argv = [str(venv / "bin" / "pi"), "--model", "loop/loop-1"]
        with Terminal(argv, env=env, cwd=world["work"]) as term:
            term.wait_for(PROMPT_READY, timeout=20)
            term.send("run the tool")
            term.press("Enter")
            term.wait_for("all done here")
            term.wait_gone("esc to interrupt")
            assert LOOP_SECRET in term.scrollback(joined=True)  # the tool printed the key
            term.send("/name logged-session")
            term.press("Enter")
            term.press("C-d")
            assert term.wait_exit() == 0
            assert "pi-event-logger" not in term.scrollback()  # nothing to report
        assert server.exchanges[0].headers.get("authorization") == f"Bearer {LOOP_SECRET}"
    [log] = (world["agent"] / "logs").glob("events-*.jsonl")
    records = read_log(log)
    assert outline(records) == [*TOOL_RUN, "session_info_changed", "session_shutdown"]
    assert records[0]["mode"] == "interactive" and records[0]["model"] == "loop/loop-1"
    assert next(r for r in records if r["type"] == "session_info_changed")["name"] == "logged-session"
    assert LOOP_SECRET not in log.read_text()
    tool_end = next(r for r in records if r["type"] == "tool_execution_end")
    assert tool_end["result"]["content"][0]["preview"] == ' "apiKey": "[redacted]"\nfrom-the-terminal\n'
