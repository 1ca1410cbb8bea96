"""pi-event-logger: one JSON line per session event, in order, small, and without secrets; an I/O
error is reported once and never fails the run. Installed by the real ``pi install``, used by a
print run and by the interactive mode in a real terminal."""

from __future__ import annotations

import importlib
import json
import os
import stat
from pathlib import Path

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.support.examples import example_module

LOGGER = example_module("pi-event-logger", "pi_event_logger")
# shaped like no known key format, so only the plugin's knowledge of them can redact them
OPENAI_SECRET = "fake-openai-0123456789abcdef"
AUTH_SECRET = "fake-authjson-9876543210"
LOOP_SECRET = "fake-loop-modelsjson-24680"


def load_logger():
    """A fresh copy of the plugin (its state is per module) and its ``records`` module."""
    plugin = load_file_plugin(LOGGER)
    return plugin, importlib.import_module(plugin.__name__ + ".records")


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


def test_secret_fields_are_redacted_and_counts_kept():
    _plugin, records = load_logger()
    cleaner = records.Cleaner([OPENAI_SECRET])
    cleaned = cleaner.clean(
        {
            "apiKey": "abc",
            "headers": {"Authorization": "Bearer abcdefgh", "Accept": "text/plain"},
            "usage": {"totalTokens": 1234, "input": 1000},
            "accessTokens": ["t1", "t2"],
            "note": f"the key is {OPENAI_SECRET}; curl -H 'Authorization: Bearer zzzzzzzzzz'",
            "long": "y" * 1000,
        }
    )
    assert cleaned["apiKey"] == "[redacted]"
    assert cleaned["headers"] == {"Authorization": "[redacted]", "Accept": "text/plain"}
    assert cleaned["usage"] == {"totalTokens": 1234, "input": 1000}  # numbers are not secrets
    assert cleaned["accessTokens"] == ["[redacted]", "[redacted]"]
    assert cleaned["note"] == "the key is [redacted]; curl -H 'Authorization: Bearer [redacted]'"
    assert len(cleaned["long"]) < 220 and cleaned["long"].endswith("[1000 chars]")
    assert records.Cleaner().scrub(f"{OPENAI_SECRET} is unknown here") == f"{OPENAI_SECRET} is unknown here"
    assert records.Cleaner().scrub(
        "token=hunter2hunter2 ghp_abcdefghijklmnopqrst1234 sk-proj-abcdefghij"
    ) == ("token=[redacted] [redacted] [redacted]")


def test_known_secrets_come_from_the_environment_auth_json_and_models_json(tmp_path):
    _plugin, records = load_logger()
    (tmp_path / "auth.json").write_text(
        json.dumps({"anthropic": {"type": "api_key", "key": AUTH_SECRET}, "x": {"type": "oauth"}})
    )
    providers = {
        "loop": {"baseUrl": "http://127.0.0.1:1/v1", "apiKey": LOOP_SECRET},
        "env": {"apiKey": "MY_PROVIDER_KEY", "headers": {"X-Token": "!pass show token"}},
    }
    (tmp_path / "models.json").write_text(json.dumps({"providers": providers}))
    environ = {"OPENAI_API_KEY": OPENAI_SECRET, "HOME": "/home/someone", "SSH_AUTH_SOCK": "/tmp/agent.1"}
    found = records.known_secrets(environ, str(tmp_path))
    # not paths, plain values, environment variable names or commands
    assert sorted(found) == sorted([OPENAI_SECRET, AUTH_SECRET, LOOP_SECRET])


def test_messages_are_summarised_not_copied():
    _plugin, records = load_logger()
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "secret plan " * 100},
            {"type": "text", "text": "word " * 500},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
        ],
        "usage": {"input": 10, "output": 2500},
        "stopReason": "toolUse",
    }
    summary = records.Cleaner().message(message)
    thinking, text, call = summary["content"]
    assert thinking == {"type": "thinking", "chars": 1200}  # no thinking text at all
    assert text["chars"] == 2500 and len(text["preview"]) < 110
    assert call == {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    assert summary["usage"] == {"input": 10, "output": 2500} and summary["stopReason"] == "toolUse"


# --- in process: an SDK session -------------------------------------------------------------


async def test_a_session_logs_every_event_in_order(tmp_path, monkeypatch):
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("PI_EVENT_LOG", str(log))
    plugin, _records = load_logger()
    faux.set_responses([bash("echo logged-output"), {"text": "long answer " * 400}])
    session = await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings={})
    await session.prompt("run something")
    await session.ctx.set_model("faux/faux-small")
    await session.set_session_name("audit me")
    await session.close()

    records = read_log(log)
    assert outline(records) == [
        *TOOL_RUN,
        "model_select",
        "session_info_changed",
        "session_shutdown",
    ]
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert {r["session"] for r in records} == {session.session_id}
    assert "message_update" not in {r["type"] for r in records}
    final = [r for r in records if r["type"] == "message_end"][-1]
    assert final["updates"]["text_delta"] > 10 and final["deltaChars"] == len("long answer " * 400)
    assert final["message"]["content"][0]["chars"] == len("long answer " * 400)
    tool_end = next(r for r in records if r["type"] == "tool_execution_end")
    assert tool_end["toolName"] == "bash" and tool_end["isError"] is False
    assert "logged-output" in tool_end["result"]["content"][0]["preview"]
    change = next(r for r in records if r["type"] == "model_select")
    assert (change["model"], change["previousModel"]) == ("faux/faux-small", "faux/faux-1")
    assert next(r for r in records if r["type"] == "turn_end")["durationMs"] >= 0
    assert log.stat().st_size < 12_000  # the 4,800-character answer is not in it
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize("where", ["under-a-file", "full-disk"])
async def test_a_write_error_is_reported_once_and_the_run_goes_on(tmp_path, monkeypatch, capsys, where):
    if where == "full-disk":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        target = "/dev/full"  # opens fine, every write fails with ENOSPC
    else:
        (tmp_path / "plain-file").write_text("")
        target = str(tmp_path / "plain-file" / "events.jsonl")
    monkeypatch.setenv("PI_EVENT_LOG", target)
    plugin, _records = load_logger()
    faux.set_responses([bash("echo one"), {"text": "first done"}, {"text": "second done"}])
    session = await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings={})
    await session.prompt("one")
    await session.prompt("two")
    assert session.last_assistant().text() == "second done"
    await session.close()
    lines = [line for line in capsys.readouterr().err.splitlines() if "pi-event-logger" in line]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"pi-event-logger: cannot write {target}: ")
    assert lines[0].endswith("event logging is off")
    assert plugin._logger.stopped == lines[0]


# --- the CLI: a flag, the environment, the default place --------------------------------------


# --- the user's boundary: pi install, pi list / plugins, a run --------------------------------


# --- the interactive mode, in a real terminal -------------------------------------------------
