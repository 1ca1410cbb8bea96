"""A failing extension is isolated and named: a throwing handler, a load failure, a bridge that
dies or hangs is one line naming the extension and the run goes on; --strict-plugins makes it
fatal; without Node the line says what is missing."""

from __future__ import annotations

import json

import pytest

from tests.e2e.ts_bridge.conftest import write
from tests.support.loopback import PROVIDER, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

MODEL = ("--model", f"{PROVIDER}/loop-1", "--no-session")

BAD = """
export default function (pi: any) {
  pi.on("turn_start", () => { if (process.env.BAD === "throw") throw new Error("boom in turn_start"); });
  pi.on("turn_end", () => {
    if (process.env.BAD === "exit") process.exit(3);
    if (process.env.BAD === "spin") { while (true) {} }
    if (process.env.BAD === "hang") return new Promise(() => {});
  });
}
"""
GOOD = 'export default (pi: any) => pi.on("agent_end", () => console.error("good extension still ran"));'


def _run(isolated_environment, node_env, *args, bad="", timeout_ms=None):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    write(work / "bad.ts", BAD)
    write(work / "good.ts", GOOD)
    if timeout_ms is not None:
        write(agent / "settings.json", json.dumps({"pluginHookTimeoutMs": timeout_ms}))
    with LoopbackServer([Reply.tool("bash", {"command": "echo hi"}), Reply("the answer")]) as server:
        write_models_json(agent, server.url)
        return run_pi(
            "-p", *MODEL, "-e", "bad.ts", "-e", "good.ts", *args, "go", env={**node_env, "BAD": bad}
        )


@pytest.mark.parametrize(
    ("bad", "line"),
    [
        ("throw", "pi: plugin 'bad' failed in turn_start: Error: boom in turn_start"),
        ("exit", "pi: plugin 'bad' failed in bridge: the TypeScript bridge exited (code 3)"),
    ],
)
def test_a_failing_extension_is_named_and_the_run_goes_on(bad, line, isolated_environment, node_env):
    out = _run(isolated_environment, node_env, bad=bad)
    assert out.returncode == 0 and out.stdout == "the answer\n"
    assert line in out.stderr
    if bad == "exit":  # the bridge is gone: each of its extensions is named once, then silent
        assert out.stderr.count("failed in bridge") == 2 and "good' failed in bridge" in out.stderr


@pytest.mark.parametrize("bad", ["hang", "spin"])
def test_a_hung_handler_is_cut_by_the_hook_timeout(bad, isolated_environment, node_env):
    out = _run(isolated_environment, node_env, bad=bad, timeout_ms=1000)
    assert out.returncode == 0 and out.stdout == "the answer\n"
    assert "pi: plugin 'bad' failed in turn_end: timed out after 1 s" in out.stderr
    if bad == "spin":  # Node itself is stuck: the bridge is stopped, in one line
        assert "stopped answering" in out.stderr
    else:
        assert "good extension still ran" in out.stderr


def test_strict_plugins_makes_a_failure_fatal(isolated_environment, node_env):
    out = _run(isolated_environment, node_env, "--strict-plugins", bad="throw")
    assert out.returncode == 1
    assert "boom in turn_start" in out.stderr


def test_load_failures_name_the_file(isolated_environment, node_env):
    work = isolated_environment["work"]
    write(work / "syntax.ts", "export default function (pi: any) {\n  let x = ;\n}\n")
    write(work / "missing.ts", 'import { nothing } from "./nowhere.ts";\nexport default () => {};\n')
    write(work / "nodefault.ts", "export const x = 1;\n")
    with LoopbackServer([Reply("fine")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi(
            "-p", *MODEL, "-e", "syntax.ts", "-e", "missing.ts", "-e", "nodefault.ts", "hi", env=node_env
        )
    assert out.returncode == 0 and out.stdout == "fine\n"
    lines = out.stderr.splitlines()
    assert (
        f"pi: plugin 'syntax' failed in load: ExtensionLoadError: {work}/syntax.ts:2: Expression expected"
        in lines
    )
    assert any(
        line.startswith("pi: plugin 'missing' failed in load:") and "nowhere.ts" in line for line in lines
    )
    assert any("nodefault" in line and "no default export function" in line for line in lines)


def test_without_node_one_line_says_what_is_missing(isolated_environment, tmp_path):
    write(isolated_environment["work"] / "x.ts", "export default () => {}")
    with LoopbackServer([Reply("fine")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi("-p", *MODEL, "-e", "x.ts", "hi", env={"PATH": "/nonexistent", "PI_HOST_NODE": ""})
    assert out.returncode == 0 and out.stdout == "fine\n"
    assert out.stderr.splitlines() == [
        "pi: plugin 'x' failed in load: NodeMissing: TypeScript extensions need Node.js >= 22.19 (none found on PATH); "
        "install it, set PI_HOST_NODE, or run 'pi install --node' to put one in pi-host's folder"
    ]
