"""pi-host's ``--mode rpc`` against pi 1.6.0's: one scripted conversation and command list, run
through both programs (each against its own loopback server with the same replies), compared
step by step. Skipped without pi 1.6.0 (see ``tests/support/pi_node.py``).

The comparison ignores ids, timestamps, paths, token counts and texts. Per step (one command and
the records up to the next command) it checks:

* the response: ``command``, ``success``, whether ``id``/``data``/``error`` are there, and the
  *shape* of ``data``: keys and JSON types recursively, arrays as the set of their elements'
  shapes, ``type`` and ``role`` values kept (they tell entries and messages apart);
* values that depend neither on timing nor on wording (:data:`VALUE_KEYS`: dispositions,
  ``cancelled``, message counts, modes, levels, command sources...), and the kinds of entries,
  tree nodes and messages in order;
* the exact ``error`` strings pi's reference fixes (unknown command, blank session name, prompt
  while streaming, unknown entry cursor, unknown model) and the parse error's form;
* the sequence of event types (``message_update`` refined with its ``assistantMessageEvent.type``;
  runs of one type collapsed; text deltas that race with a command during a stream left out), and
  per event its stable values (role, stopReason, aborted, errorMessage...).

Over the whole run: the shape of every kind of event, and the two fields every assistant message
carries (``usage``, and pi-host's extra ``responseModel``) once, in :func:`test_field_apart`,
rather than in every step that shows a message.

A known difference is a strict xfail of the one check that shows it (see ``KNOWN``), so a fix
turns it into an unexpected pass.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_host.rpc import RpcClient
from tests.e2e.interop.rpc_shapes import (
    APART,
    _data,
    _event_type,
    event_sequence,
    event_shapes,
    event_values,
    find_fields,
    response_summary,
    shape,
    shape_diff,
    values,
)
from tests.support.loopback import LoopbackServer, Reply
from tests.support.rpc import PI, World, node_pi_client, pi_host_client, requires_pi

pytestmark = requires_pi

# --- the scenario -----------------------------------------------------------------------------------

REPLIES: list[Reply | str] = [
    Reply("Hello there, friend."),
    Reply.tool("bash", {"command": "echo from-tool"}),
    Reply("The tool printed from-tool."),
    Reply.slow(4000, delay=0.004),  # aborted while streaming
    Reply("Summary: a greeting, a bash call, an aborted answer."),  # compact: the history
    Reply("Summary of the turn so far."),  # compact: pi summarises the split turn's start too
    Reply("An answer after the shell command."),
]

PROMPT_TEMPLATE = """---
description: Greet someone by name
---
Say hello to $1.
"""

SKILL = """---
name: demo-skill
description: A demonstration skill for the RPC conformance test
---
# Demo

Do nothing in particular.
"""

MALFORMED = '{"id":"bad","type":"get_state"'


@dataclass
class Step:
    label: str
    response: dict[str, Any] | None
    events: list[dict[str, Any]]
    racy: bool = False
    """Events were recorded while a stream was running: text deltas are left out."""


@dataclass
class Transcript:
    steps: dict[str, Step] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    exit_code: int | None = None
    export_exists: bool = False
    requests: list[Any] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """The agent dir's settings.json after the run."""


class Driver:
    """Runs the scenario's commands one at a time, cutting the event stream at each command."""

    def __init__(self, client: RpcClient) -> None:
        self.client = client
        self.transcript = Transcript()
        self.records = self.transcript.records
        client.on_event(self.records.append)

    def _cut(self) -> int:
        return len(self.records)

    def step(
        self,
        label: str,
        command: str,
        fields: dict[str, Any] | None = None,
        *,
        settle: bool = True,
        racy: bool = False,
        until: str | None = None,
    ) -> dict[str, Any]:
        start = self._cut()
        response = self.client.request(command, fields, timeout=30)
        if until is not None:
            self._wait_for(start, until)
        elif settle:
            self.client.wait_for_idle(timeout=30)
            time.sleep(0.15)  # events written just after the response
        self._finish(label, start, response, racy)
        return response

    def raw(self, label: str, line: str) -> None:
        start = self._cut()
        self.client.send_line(line)
        self._wait_for(start, "response")
        time.sleep(0.1)
        self._finish(label, start, None, False)

    def _wait_for(self, start: int, kind: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for record in self.records[start:]:
                if _event_type(record) == kind or record.get("type") == kind:
                    return
            time.sleep(0.01)
        raise AssertionError(f"no {kind} event; got {[_event_type(r) for r in self.records[start:]]}")

    def _finish(self, label: str, start: int, response: dict[str, Any] | None, racy: bool) -> None:
        events = list(self.records[start:])
        if response is None:  # the parse error: a response nobody waited for, seen as an event
            responses = [r for r in events if r.get("type") == "response"]
            response = responses[0] if responses else None
            events = [r for r in events if r.get("type") != "response"]
        assert label not in self.transcript.steps
        self.transcript.steps[label] = Step(label, response, events, racy)


def run_scenario(client: RpcClient, world: World, server: LoopbackServer) -> Transcript:
    d = Driver(client)
    step = d.step
    step("get_state", "get_state")
    step("get_available_models", "get_available_models")
    step("get_available_thinking_levels", "get_available_thinking_levels")
    step("set_thinking_level", "set_thinking_level", {"level": "high"})
    step("cycle_thinking_level", "cycle_thinking_level")
    step("cycle_model", "cycle_model")
    step("set_model", "set_model", {"provider": "loop", "modelId": "loop-1"})
    step("set_model/unknown", "set_model", {"provider": "nope", "modelId": "nothing"})
    step("set_steering_mode", "set_steering_mode", {"mode": "all"})
    step("set_follow_up_mode", "set_follow_up_mode", {"mode": "one-at-a-time"})
    step("set_auto_retry", "set_auto_retry", {"enabled": False})
    step("set_auto_compaction", "set_auto_compaction", {"enabled": False})
    step("get_last_assistant_text/none", "get_last_assistant_text")
    step("compact/empty", "compact")

    step("prompt/plain", "prompt", {"message": "Say hello."})
    step("prompt/tool", "prompt", {"message": "Run echo with bash."})
    step("get_state/after", "get_state")
    step("get_messages", "get_messages")
    step("get_session_stats", "get_session_stats")
    entries = step("get_entries", "get_entries")["data"]["entries"]
    first_user = next(e for e in entries if e.get("type") == "message" and e["message"]["role"] == "user")
    step("get_entries/since", "get_entries", {"since": first_user["id"]})
    step("get_entries/unknown", "get_entries", {"since": "no-such-entry"})
    step("get_tree", "get_tree")
    step("get_fork_messages", "get_fork_messages")
    step("get_last_assistant_text", "get_last_assistant_text")
    step("set_session_name", "set_session_name", {"name": "conformance run"})
    step("set_session_name/blank", "set_session_name", {"name": "   "})
    step("unknown_command", "no_such_command")
    d.raw("malformed_json", MALFORMED)

    # a long answer, interrupted
    step("prompt/slow", "prompt", {"message": "Tell me a long story."}, until="message_update/text_delta")
    step("prompt/while_streaming", "prompt", {"message": "Interrupting."}, settle=False, racy=True)
    step(
        "prompt/steer",
        "prompt",
        {"message": "Steer this way.", "streamingBehavior": "steer"},
        settle=False,
        racy=True,
    )
    step("follow_up", "follow_up", {"message": "Afterwards, do this."}, settle=False, racy=True)
    step("steer", "steer", {"message": "And steer once more."}, settle=False, racy=True)
    step("get_state/streaming", "get_state", settle=False, racy=True)
    step("clear_queue", "clear_queue", settle=False, racy=True)
    step("abort", "abort", racy=True)  # deltas already on their way when the abort lands
    step("get_last_assistant_text/after_abort", "get_last_assistant_text")

    step("compact", "compact", {"customInstructions": "Keep it short."})
    step("bash", "bash", {"command": "printf 'one\\ntwo\\n'"})
    step("bash/excluded", "bash", {"command": "echo hidden", "excludeFromContext": True})
    step("abort_bash", "abort_bash")
    step("abort_retry", "abort_retry")
    step("prompt/after_bash", "prompt", {"message": "What did the shell print?"})
    step("get_commands", "get_commands")
    out = world.root / "export" / "session.html"
    out.parent.mkdir()
    step("export_html", "export_html", {"outputPath": str(out)})
    d.transcript.export_exists = out.is_file()
    state = step("get_state/before_fork", "get_state")["data"]
    original = state["sessionFile"]
    forkable = step("get_fork_messages/before_fork", "get_fork_messages")["data"]["messages"]
    step("fork", "fork", {"entryId": forkable[-1]["entryId"]})
    step("get_state/forked", "get_state")
    step("clone", "clone")
    step("new_session", "new_session", {"parentSession": original})
    step("get_state/new", "get_state")
    step("get_entries/new", "get_entries")
    step("get_messages/new", "get_messages")
    step("switch_session", "switch_session", {"sessionPath": original})
    step("get_state/switched", "get_state")
    d.transcript.exit_code = client.close(timeout=20)
    d.transcript.stderr = client.stderr
    return d.transcript


def _scenario(root: Path, make_client) -> Transcript:
    world = World.make(root)
    settings = {"compaction": {"enabled": False, "keepRecentTokens": 1}}
    (world.agent / "settings.json").write_text(json.dumps(settings))
    (world.agent / "prompts").mkdir()
    (world.agent / "prompts" / "greet.md").write_text(PROMPT_TEMPLATE)
    (world.agent / "skills" / "demo-skill").mkdir(parents=True)
    (world.agent / "skills" / "demo-skill" / "SKILL.md").write_text(SKILL)
    with LoopbackServer(REPLIES) as server:
        client = make_client(world, server, "--session-dir", str(world.sessions), "--no-extensions")
        try:
            transcript = run_scenario(client, world, server)
            transcript.requests = list(server.requests)
            transcript.settings = json.loads((world.agent / "settings.json").read_text())
            return transcript
        finally:
            client.close()


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory) -> dict[str, Transcript]:
    """pi and pi-host run the scenario at the same time (each against its own server): the
    scenario mostly waits for events to settle, so side by side it takes half the wall time."""
    assert PI is not None
    roots = {"pi": tmp_path_factory.mktemp("pi"), "pi-host": tmp_path_factory.mktemp("pi-host")}
    clients = {"pi": node_pi_client, "pi-host": _pi_host_like_pi}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_scenario, roots[name], clients[name]) for name in roots}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def pi_run(both_runs) -> Transcript:
    return both_runs["pi"]


def _pi_host_like_pi(world: World, server: LoopbackServer, *args: str) -> RpcClient:
    """pi-host without its built-in faux provider, which pi does not have (its effect on the
    model list is checked apart: :func:`test_models_with_every_built_in_plugin`)."""
    return pi_host_client(world, server, *args, env={"PI_HOST_DISABLE_PLUGINS": "faux"})


@pytest.fixture(scope="module")
def host_run(both_runs) -> Transcript:
    return both_runs["pi-host"]


# --- normalising --------------------------------------------------------------------------------------


STEPS = [
    "get_state",
    "get_available_models",
    "get_available_thinking_levels",
    "set_thinking_level",
    "cycle_thinking_level",
    "cycle_model",
    "set_model",
    "set_model/unknown",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_auto_retry",
    "set_auto_compaction",
    "get_last_assistant_text/none",
    "compact/empty",
    "prompt/plain",
    "prompt/tool",
    "get_state/after",
    "get_messages",
    "get_session_stats",
    "get_entries",
    "get_entries/since",
    "get_entries/unknown",
    "get_tree",
    "get_fork_messages",
    "get_last_assistant_text",
    "set_session_name",
    "set_session_name/blank",
    "unknown_command",
    "malformed_json",
    "prompt/slow",
    "prompt/while_streaming",
    "prompt/steer",
    "follow_up",
    "steer",
    "get_state/streaming",
    "clear_queue",
    "abort",
    "get_last_assistant_text/after_abort",
    "compact",
    "bash",
    "bash/excluded",
    "abort_bash",
    "abort_retry",
    "prompt/after_bash",
    "get_commands",
    "export_html",
    "get_state/before_fork",
    "get_fork_messages/before_fork",
    "fork",
    "get_state/forked",
    "clone",
    "new_session",
    "get_state/new",
    "get_entries/new",
    "get_messages/new",
    "switch_session",
    "get_state/switched",
]

EXACT_ERRORS = {
    "set_model/unknown": "Model not found: nope/nothing",
    "get_entries/unknown": "Entry not found: no-such-entry",
    "set_session_name/blank": "Session name cannot be empty",
    "unknown_command": "Unknown command: no_such_command",
    "prompt/while_streaming": (
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    ),
}

EVENT_KINDS = [
    "agent_start",
    "agent_end",
    "agent_settled",
    "turn_start",
    "turn_end",
    "message_start",
    "message_end",
    "message_update/text_start",
    "message_update/text_delta",
    "message_update/text_end",
    "message_update/toolcall_start",
    "message_update/toolcall_delta",
    "message_update/toolcall_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "queue_update",
    "session_info_changed",
    "thinking_level_changed",
    "compaction_start",
    "compaction_end",
    "bash_execution_update",
]

KNOWN: dict[tuple[str, str], str] = {
    ("error", "malformed_json"): (
        "the parse error quotes the JSON parser: Python's 'Expecting ',' delimiter: line 1 column 31 "
        "(char 30)' where pi 1.6.0 has V8's 'Expected ',' or '}' after property value in JSON at "
        "position 30 (line 1 column 31)'"
    ),
    ("event shape", "tool_execution_update"): (
        "bash tool_execution_update.partialResult: pi 1.6.0 sends {content: []} first, then "
        "{content: [text], details: {}}; pi-host sends {content: [text]} (an empty text first) and no details"
    ),
    ("apart", "responseModel"): (
        "assistant messages: pi-host adds 'responseModel' (the model the server named); pi 1.6.0 has no such field"
    ),
}
"""(check, step label or event kind) -> how pi-host differs from pi 1.6.0 there."""


def _params(check: str, labels: list[str]) -> list[Any]:
    return [
        pytest.param(label, marks=pytest.mark.xfail(strict=True, reason=KNOWN[check, label]))
        if (check, label) in KNOWN
        else label
        for label in labels
    ]


def _diff_values(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    return [
        f"{key}: pi {expected.get(key)!r} / pi-host {got.get(key)!r}"
        for key in sorted(set(expected) | set(got))
        if expected.get(key) != got.get(key)
    ]


def test_the_scenario_ran_the_same_steps(pi_run, host_run):
    assert list(pi_run.steps) == STEPS
    assert list(host_run.steps) == STEPS
    assert pi_run.exit_code == 0, pi_run.stderr[-2000:]
    assert host_run.exit_code == 0, host_run.stderr[-2000:]


@pytest.mark.parametrize("label", _params("response", STEPS))
def test_response(label, pi_run, host_run):
    expected, got = pi_run.steps[label], host_run.steps[label]
    assert response_summary(got) == response_summary(expected)
    diff = shape_diff(shape(_data(expected)), shape(_data(got)))
    assert not diff, "\n".join(diff)


@pytest.mark.parametrize("label", _params("values", STEPS))
def test_values(label, pi_run, host_run):
    diff = _diff_values(values(_data(pi_run.steps[label])), values(_data(host_run.steps[label])))
    assert not diff, "\n".join(diff)


@pytest.mark.parametrize("label", _params("error", sorted(EXACT_ERRORS)))
def test_error_string(label, pi_run, host_run):
    assert (pi_run.steps[label].response or {}).get("error") == EXACT_ERRORS[label]
    assert (host_run.steps[label].response or {}).get("error") == EXACT_ERRORS[label]


def test_malformed_json_is_a_parse_response_without_id(pi_run, host_run):
    for run in (pi_run, host_run):
        response = run.steps["malformed_json"].response
        assert response is not None
        assert {k: v for k, v in response.items() if k != "error"} == {
            "type": "response",
            "command": "parse",
            "success": False,
        }
        assert response["error"].startswith("Failed to parse command: ")


@pytest.mark.parametrize("label", _params("error", ["malformed_json", "compact/empty"]))
def test_error_string_as_pi_words_it(label, pi_run, host_run):
    """The parser's own message (pi: V8's JSON.parse) and the compaction refusal."""
    assert host_run.steps[label].response["error"] == pi_run.steps[label].response["error"]


@pytest.mark.parametrize("label", _params("events", STEPS))
def test_event_sequence(label, pi_run, host_run):
    assert event_sequence(host_run.steps[label]) == event_sequence(pi_run.steps[label])


@pytest.mark.parametrize("label", _params("event values", STEPS))
def test_event_values(label, pi_run, host_run):
    assert event_values(host_run.steps[label]) == event_values(pi_run.steps[label])


@pytest.mark.parametrize("kind", _params("event shape", EVENT_KINDS))
def test_event_shape(kind, pi_run, host_run):
    expected, got = event_shapes(pi_run).get(kind), event_shapes(host_run).get(kind)
    if expected is None:
        assert got is None, f"pi-host sent {kind}, pi did not"
        return
    assert got is not None, f"pi-host never sent {kind}"
    diff = shape_diff(["array", *expected], ["array", *got], kind)
    assert not diff, "\n".join(diff)


def _everything(run: Transcript) -> list[Any]:
    return [*run.records, *((step.response or {}).get("data") for step in run.steps.values())]


@pytest.mark.parametrize("field_name", _params("apart", list(APART)))
def test_field_apart(field_name, pi_run, host_run):
    """The shapes ``usage`` (``responseModel``) takes anywhere in the run's records and data."""

    def shapes(run: Transcript) -> list[Any]:
        found = {
            json.dumps(shape(v, apart=False), sort_keys=True)
            for v in find_fields(_everything(run), field_name)
        }
        return [json.loads(s) for s in sorted(found)]

    diff = shape_diff(["array", *shapes(pi_run)], ["array", *shapes(host_run)], field_name)
    assert not diff, "\n".join(diff)


def test_export_html_wrote_the_file(pi_run, host_run):
    assert pi_run.export_exists
    assert host_run.export_exists


def test_bash_updates_carry_the_command_id(pi_run, host_run):
    for run in (pi_run, host_run):
        step = run.steps["bash"]
        updates = [e for e in step.events if e.get("type") == "bash_execution_update"]
        assert updates, [e.get("type") for e in step.events]
        assert {e.get("id") for e in updates} == {step.response["id"]}
        assert "".join(e["delta"] for e in updates) == "one\ntwo\n"


def _roles(transcript: Transcript) -> list[list[str]]:
    return [[m.get("role") for m in body.get("messages", [])] for body in transcript.requests]


def test_the_model_saw_the_same_conversation(pi_run, host_run):
    """The roles of the messages each program sent to its loopback server, request by request."""
    assert _roles(host_run) == _roles(pi_run)


def test_models_with_every_built_in_plugin(pi_run, tmp_path):
    """pi-host as shipped (its scripted faux provider loaded): faux is not offered while another
    model is in use, so the model list and cycling are pi's."""
    world = World.make(tmp_path / "default-plugins")
    with LoopbackServer([]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            models = client.call("get_available_models")
            cycled = client.call("cycle_model")
    assert values(models) == values(_data(pi_run.steps["get_available_models"]))
    assert cycled is None


@pytest.mark.parametrize(
    "program",
    [
        "pi",
        "pi-host",
    ],
)
def test_at_file_arguments_are_refused(program, tmp_path):
    world = World.make(tmp_path / "at-file")
    (world.work / "notes.txt").write_text("notes\n")
    with LoopbackServer([]) as server:
        make = node_pi_client if program == "pi" else _pi_host_like_pi
        client = make(world, server, "--no-session", "@notes.txt")
        code = client.close(timeout=20)
    assert code == 1
    assert "@file arguments are not supported in RPC mode" in client.stderr


def test_the_setting_commands_are_saved_like_pi_saves_them(pi_run, host_run):
    assert host_run.settings == pi_run.settings
