"""pi's TypeScript extensions run unchanged in pi-host: tools, commands, events, messages, the UI
in print and RPC mode, and where extensions are found (``-e``, the agent dir, a trusted
project, the settings)."""

from __future__ import annotations

import json
import os

from pi_host.rpc import RpcClient
from tests.e2e.ts_bridge.conftest import write
from tests.support.loopback import PROVIDER, LoopbackServer, Reply, write_models_json
from tests.support.pi import PI, run_pi

MODEL = ("--model", f"{PROVIDER}/loop-1", "--no-session")

GREETER = """
import { Type } from "typebox";
import { defineTool, type ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerTool(defineTool({
    name: "greet",
    label: "Greet",
    description: "Greet someone",
    parameters: Type.Object({ name: Type.String(), loud: Type.Optional(Type.Boolean()) }),
    async execute(_id, params, _signal, onUpdate) {
      onUpdate?.({ content: [{ type: "text", text: "working" }], details: {} });
      return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: { who: params.name } };
    },
  }));
  pi.registerCommand("note", {
    description: "Store a note",
    handler: async (args, ctx) => {
      pi.appendEntry("note", { text: args });
      ctx.ui.notify(`noted ${ctx.sessionManager.getEntries().filter((e: any) => e.type === "custom").length}`, "info");
    },
  });
  pi.on("tool_call", (event) => {
    if (event.toolName === "bash" && String(event.input.command).includes("forbidden")) {
      return { block: true, reason: "not here" };
    }
    if (event.toolName === "bash") event.input.command = "echo rewritten";
  });
  pi.on("input", (event) => (event.text.startsWith("?") ? { action: "transform", text: `Briefly: ${event.text.slice(1)}` } : undefined));
  pi.on("session_start", (_e, ctx) => ctx.ui.setStatus("greeter", `mode ${ctx.mode} ui ${ctx.hasUI}`));
}
"""


def _tool_texts(requests):
    return [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for r in requests
        for m in r["messages"]
        if m["role"] == "tool"
    ]


def test_tool_input_transform_and_tool_call_gate(node_env, isolated_environment):
    extension = write(isolated_environment["work"] / "greeter.ts", GREETER)
    replies = [
        Reply.tool("greet", {"name": "Ada"}),
        Reply.tool("bash", {"command": "echo forbidden"}),
        Reply.tool("bash", {"command": "echo original"}),
        Reply("all done"),
    ]
    with LoopbackServer(replies) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi("-p", *MODEL, "-e", str(extension), "?say hi", env=node_env)
        requests = list(server.requests)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "all done\n"
    first_user = requests[0]["messages"][-1]["content"]
    assert "Briefly: say hi" in json.dumps(first_user)
    assert _tool_texts(requests[-1:]) == ["Hello, Ada!", "not here", "rewritten\n"]
    assert out.stderr == ""


def test_extension_folders_trust_and_settings(node_env, isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    write(
        agent / "extensions" / "global-one" / "index.ts",
        'export default (pi: any) => pi.registerCommand("g1", { handler: async () => {} });',
    )
    write(
        work / ".pi" / "extensions" / "local.ts",
        'export default (pi: any) => pi.registerCommand("p1", { handler: async () => {} });',
    )
    write(
        work / "tools" / "set.js",
        'export default function (pi) { pi.registerCommand("s1", { handler: async () => {} }); }',
    )
    write(agent / "settings.json", json.dumps({"extensions": [str(work / "tools" / "set.js")]}))
    listing = run_pi("plugins", env=node_env)
    assert "global-one" in listing.stdout and "set" in listing.stdout
    assert "local" in listing.stdout and "project not trusted" in listing.stdout

    def commands(*args):
        with LoopbackServer() as server:
            write_models_json(agent, server.url)
            client = RpcClient(args=[*MODEL, *args], cwd=work, env={**os.environ, **node_env})
            try:
                return {c["name"] for c in client.call("get_commands")["commands"]}
            finally:
                client.close()

    assert {"g1", "s1"} <= commands() and "p1" not in commands()  # untrusted: never run
    assert {"g1", "s1", "p1"} <= commands("-a")


def test_rpc_mode_ui_and_entries(node_env, isolated_environment):
    extension = write(isolated_environment["work"] / "greeter.ts", GREETER)
    with LoopbackServer() as server:
        write_models_json(isolated_environment["agent"], server.url)
        client = RpcClient(
            args=["--model", f"{PROVIDER}/loop-1", "-e", str(extension)], env={**os.environ, **node_env}
        )
        seen = []
        client.on_ui_request(lambda record: seen.append(record))
        try:
            client.prompt_and_wait("/note remember the milk")
            client.prompt_and_wait("/note and eggs")
            client.wait_for_idle()
            entries = client.call("get_entries")["entries"]
        finally:
            client.close()
    statuses = [r.get("statusText") for r in seen if r.get("method") == "setStatus"]
    notices = [r.get("message") for r in seen if r.get("method") == "notify"]
    assert statuses == ["mode rpc ui true"]  # session_start's call, shown once the RPC UI is there
    assert notices == ["noted 1", "noted 2"]
    assert [e["data"]["text"] for e in entries if e.get("type") == "custom"] == [
        "remember the milk",
        "and eggs",
    ]


def test_help_and_version_start_no_node(isolated_environment, tmp_path):
    marker = tmp_path / "node-ran"
    fake = write(tmp_path / "bin" / "node", f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    extension = write(isolated_environment["work"] / "x.ts", "export default () => {}")
    env = {"PATH": f"{fake.parent}:/usr/bin:/bin"}
    assert run_pi("--version", "-e", str(extension), env=env).returncode == 0
    assert run_pi("--help", "-e", str(extension), env=env).returncode == 0
    assert not marker.exists()
    assert PI  # the harness command the tests above ran
