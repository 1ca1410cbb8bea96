"""pi 1.6.0's own ``RpcClient`` (``dist/modes/rpc/rpc-client.js`` of the installed package, imported
unchanged) drives pi-host and pi 1.6.0 through the same calls; their results and event sequences
are compared call by call. The client always starts ``node <cliPath> --mode rpc``, so pi-host is
reached through ``rpc_client/pi_host_cli.mjs``, which execs pi-host's ``pi``.

Both programs run at once, once per module, each against its own loopback server with the same
replies. Per call, :func:`compare` checks: success or failure (and the error's text), the result's
JSON shape and stable values (``rpc_shapes``), and the sequence of event types (text deltas left
out: they race with the calls made while a stream runs). A call that still differs is listed in
``KNOWN`` with the reason; the test fails on any other difference and on a listed one that went
away, so the list stays true.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.interop.rpc_shapes import flatten_tree, shape, shape_diff, values
from tests.support.loopback import LoopbackServer, Reply
from tests.support.rpc import PI, World, node_pi_env, pi_host_env, requires_pi

pytestmark = requires_pi

HERE = Path(__file__).parent / "rpc_client"
PI_HOST_BIN = str(Path(sys.executable).parent / "pi")

REPLIES: list[Reply | str] = [
    Reply("Hello there, friend."),
    Reply.tool("bash", {"command": "echo from-tool"}),
    Reply("The tool printed from-tool."),
    Reply.slow(150, delay=0.01),  # answered while a follow-up waits
    Reply("Done."),
    Reply.slow(3000, delay=0.004),  # aborted while streaming
    Reply("Summary: a greeting, a bash call, two stories."),  # compact: the history
    Reply("Summary of the turn so far."),  # compact: the split turn's start, when summarised
    Reply("One more answer."),
    Reply("And another."),
]

EXTENSION = """export default function (pi: any) {
  pi.registerCommand("hello-rpc", { description: "Say hello", handler: async () => {} });
}
"""

KNOWN: dict[str, str] = {
    "getCommands": (
        "pi 1.6.0 also lists the commands of its built-in llama.cpp and MCP extensions (/llama, /mcp, "
        "sourceInfo.source 'builtin'); pi-host has no llama.cpp manager and its MCP plugin "
        "(pi_mcp, off by default) registers no command. The -e extension's entry is the same."
    ),
    "promptAndWait/tool": (
        "bash tool_execution_update.partialResult: pi 1.6.0 sends {content: []} first, then "
        "{content: [text], details: {}}; pi-host sends {content: [text]} (as in test_rpc_conformance's KNOWN)"
    ),
}
"""Call label -> why pi-host still answers it differently from pi 1.6.0."""


def _models_json(url: str) -> dict[str, Any]:
    model = {"input": ["text"], "contextWindow": 128000, "maxTokens": 4096}
    return {
        "providers": {
            "loop": {
                "baseUrl": url.rstrip("/") + "/v1",
                "api": "openai-completions",
                "apiKey": "unused",
                "models": [
                    {"id": "loop-1", "name": "Loopback 1", "reasoning": False, **model},
                    {"id": "loop-think", "name": "Loopback Think", "reasoning": True, **model},
                ],
            }
        }
    }


def _prepare(world: World, url: str) -> Path:
    (world.agent / "models.json").write_text(json.dumps(_models_json(url)))
    settings = {"compaction": {"enabled": False, "keepRecentTokens": 1}}
    (world.agent / "settings.json").write_text(json.dumps(settings))
    extension = world.root / "ext" / "hello.ts"
    extension.parent.mkdir()
    extension.write_text(EXTENSION)
    (world.root / "export").mkdir()
    config = {
        "rpcClient": str(Path(PI[1]).parent / "modes/rpc/rpc-client.js"),
        "cwd": str(world.work),
        "args": ["--model", "loop/loop-1", "--session-dir", str(world.sessions), "-e", str(extension)],
        "out": str(world.root / "steps.json"),
        "missingSession": str(world.sessions / "not-there-yet.jsonl"),
        "exportDir": str(world.root / "export"),
    }
    path = world.root / "driver.json"
    path.write_text(json.dumps(config))
    return path


def _drive(world: World, program: str, results: dict[str, Any]) -> None:
    node = PI[0]
    with LoopbackServer(REPLIES) as server:
        config_path = _prepare(world, server.url)
        config = json.loads(config_path.read_text())
        if program == "pi":
            config["cliPath"] = PI[1]
            env = node_pi_env(world)
        else:
            config["cliPath"] = str(HERE / "pi_host_cli.mjs")
            env = {**pi_host_env(world), "PI_HOST_PI_BIN": PI_HOST_BIN}
        config_path.write_text(json.dumps(config))
        env["PATH"] = os.pathsep.join([os.path.dirname(node), env.get("PATH", "")])  # the client runs "node"
        done = subprocess.run(
            [node, str(HERE / "driver.mjs"), str(config_path)],
            cwd=world.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
    out = world.root / "steps.json"
    if not out.is_file():
        raise AssertionError(f"{program}: the driver wrote nothing: {done.stderr[-3000:]}")
    results[program] = {**json.loads(out.read_text()), "world": world, "code": done.returncode}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:
    results: dict[str, Any] = {}
    threads = [
        threading.Thread(target=_drive, args=(World.make(tmp_path_factory.mktemp(p)), p, results))
        for p in ("pi", "pi-host")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) == {"pi", "pi-host"}, "a driver failed (see the captured output)"
    return results


def _events(step: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for event in step["events"]:
        kind = str(event.get("type"))
        if kind == "message_update":
            kind += "/" + str((event.get("assistantMessageEvent") or {}).get("type"))
            if kind.endswith("text_delta"):
                continue
        if kind == "thinking_level_changed":
            kind += f"={event.get('level')}"
        if not out or out[-1] != kind:
            out.append(kind)
    return out


def compare(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """How pi-host's answer to one call differs from pi's (empty: they match)."""
    out: list[str] = []
    if ("error" in expected) != ("error" in got) or expected.get("error") != got.get("error"):
        out.append(f"error: pi {expected.get('error')!r} / pi-host {got.get('error')!r}")
    want_data, have_data = flatten_tree(expected.get("result")), flatten_tree(got.get("result"))
    out += shape_diff(shape(want_data), shape(have_data), "result")
    want, have = values(want_data), values(have_data)
    out += [
        f"{k}: pi {want.get(k)!r} / pi-host {have.get(k)!r}"
        for k in sorted(set(want) | set(have))
        if want.get(k) != have.get(k)
    ]
    if _events(expected) != _events(got):
        out.append(f"events: pi {_events(expected)} / pi-host {_events(got)}")
    return out


def differences(runs: dict[str, Any]) -> dict[str, list[str]]:
    pi_steps = {s["label"]: s for s in runs["pi"]["steps"]}
    host_steps = {s["label"]: s for s in runs["pi-host"]["steps"]}
    return {
        label: compare(step, host_steps.get(label, {"error": "never called", "events": []}))
        for label, step in pi_steps.items()
    }


def test_both_ran_every_call(runs):
    labels = [s["label"] for s in runs["pi"]["steps"]]
    assert len(labels) > 50
    assert [s["label"] for s in runs["pi-host"]["steps"]] == labels
    assert runs["pi"]["code"] == 0 and runs["pi-host"]["code"] == 0, runs["pi-host"]["stderr"][-2000:]


def test_calls_match_pi(runs):
    found = differences(runs)
    report = {label: diff for label, diff in found.items() if diff}
    matching = sum(1 for diff in found.values() if not diff)
    print(f"\nRpcClient calls: {matching} match, {len(report)} differ of {len(found)}")
    unexpected = {k: v for k, v in report.items() if k not in KNOWN}
    gone = sorted(k for k in KNOWN if k not in report)
    short = {k: [line[:240] for line in v[:4]] for k, v in unexpected.items()}
    assert not unexpected, json.dumps(short, indent=1)
    assert not gone, f"fixed, drop from KNOWN: {gone}"
