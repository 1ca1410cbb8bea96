"""The escape battery, at the user's boundary: one real ``pi`` run whose model tries every escape
in turn through the bash tool (and pi-host's own write/edit tools), in ``workspace-write``.

Each escape is checked on the world afterwards (the file outside the project, the counting server,
the process table, the settings files), never on the model's text. The same battery with
``--sandbox off`` is the control: there every escape must succeed, so a "blocked" means something.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.sandbox.helpers import CountingServer, backend_param, run_json
from tests.support.faux import text, tool_call

ORIGINAL = "original\n"
pytestmark = pytest.mark.skipif(
    shutil.which("curl") is None, reason="curl is not installed (the network escapes use it)"
)


@dataclass
class Escape:
    name: str
    call: dict
    escaped: Callable[[], bool]
    """True when the world shows the escape worked."""
    applicable: bool = True


@dataclass
class World:
    work: Path
    outside: Path
    agent: Path
    marker: str
    allowed: CountingServer
    denied: CountingServer


def marker_alive(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def battery(w: World) -> list[Escape]:
    """The escapes; each file escape aims at a file of its own outside the project."""

    def target(name: str) -> Path:
        path = w.outside / f"{name}.txt"
        path.write_text(ORIGINAL)
        return path

    def changed(path: Path) -> Callable[[], bool]:
        return lambda: path.read_text() != ORIGINAL

    def created(path: Path) -> Callable[[], bool]:
        return path.exists

    def bash(command: str) -> dict:
        return tool_call("bash", command=command)

    absolute, dotdot, sym, hard, proc, edited = (
        target(n) for n in ("abs", "dotdot", "sym", "hard", "proc", "edit")
    )
    (w.work / "edit-link").symlink_to(edited)  # a link the repository came with
    same_fs = os.stat(w.work).st_dev == os.stat(w.outside).st_dev
    agent_settings = w.agent / "settings.json"
    before = agent_settings.read_text()
    project_settings = w.work / ".pi" / "settings.json"
    return [
        Escape("absolute path", bash(f"echo pwned > {absolute}"), changed(absolute)),
        Escape("new file outside", bash(f"echo pwned > {w.outside}/new.txt"), created(w.outside / "new.txt")),
        Escape("'..' path", bash(f"echo pwned > {os.path.relpath(dotdot, w.work)}"), changed(dotdot)),
        Escape("symlink", bash(f"ln -s {sym} link && echo pwned > link"), changed(sym)),
        Escape("hard link", bash(f"ln {hard} hard && echo pwned > hard"), changed(hard), applicable=same_fs),
        Escape("/proc/self/root", bash(f"echo pwned > /proc/self/root{proc}"), changed(proc)),
        Escape(
            "write tool, absolute path",
            tool_call("write", path=str(w.outside / "by-write.txt"), content="pwned"),
            created(w.outside / "by-write.txt"),
        ),
        Escape(
            "edit tool through a symlink",
            tool_call("edit", path="edit-link", edits=[{"oldText": "original", "newText": "pwned"}]),
            changed(edited),
        ),
        Escape(
            "curl to a loopback port not on the allowlist",
            bash(f"curl -sS -m 5 http://127.0.0.1:{w.denied.port}/"),
            lambda: w.denied.hits > 0,
        ),
        Escape(
            "a child process that outlives the tool",
            bash(
                f"setsid nohup bash -c 'exec -a {w.marker} sleep 300' > /dev/null 2>&1 < /dev/null & echo started"
            ),
            lambda: bool(marker_alive(w.marker)),
        ),
        Escape(
            "sandbox settings: the project's .pi/settings.json",
            bash("""mkdir -p .pi && echo '{"sandbox": {"mode": "off"}}' > .pi/settings.json"""),
            lambda: project_settings.exists() and "off" in project_settings.read_text(),
        ),
        Escape(
            "sandbox settings: the user's settings.json",
            bash("""echo '{"sandbox": {"mode": "off"}}' > "$PI_CODING_AGENT_DIR/settings.json" """),
            lambda: agent_settings.read_text() != before,
        ),
        Escape(
            "a hook file: .claude/settings.json",
            bash("""mkdir -p .claude && echo '{"hooks": {}}' > .claude/settings.json"""),
            created(w.work / ".claude" / "settings.json"),
        ),
    ]


@pytest.fixture
def world(isolated_environment) -> Iterator[World]:
    work = isolated_environment["work"]
    outside = Path("/var/tmp") / f"pi-sandbox-test-{uuid.uuid4().hex[:12]}"
    outside.mkdir()
    agent = isolated_environment["agent"]
    marker = f"pi-escape-{uuid.uuid4().hex[:12]}"
    with CountingServer() as allowed, CountingServer() as denied:
        (agent / "settings.json").write_text(json.dumps({"sandbox": {"network": [allowed.port]}}))
        yield World(work, outside, agent, marker, allowed, denied)
    for pid in marker_alive(marker):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(outside, ignore_errors=True)


def run_battery(w: World, *args: str) -> tuple[list[Escape], list[str], list]:
    escapes = battery(w)
    calls = [e.call for e in escapes]
    run = run_json(*args, "--tools", "bash,write,edit", script=[*calls, text("done")], cwd=w.work)
    assert run.returncode == 0, run.stderr
    assert len(run.tools) == len(escapes), run.stdout[-2000:]
    lines = [
        f"{e.name}: {t.text.strip().splitlines()[0] if t.text.strip() else '(no output)'}"
        for e, t in zip(escapes, run.tools, strict=True)
    ]
    return escapes, lines, run.tools


@pytest.mark.parametrize("backend", [backend_param("landlock"), backend_param("bwrap")])
def test_every_escape_is_blocked_in_workspace_write(world, backend):
    settings = json.loads((world.agent / "settings.json").read_text())
    settings["sandbox"]["backend"] = backend
    (world.agent / "settings.json").write_text(json.dumps(settings))
    escapes, lines, results = run_battery(world, "--sandbox", "workspace-write")
    escaped = [e.name for e in escapes if e.escaped()]
    tried = len(escapes)
    print(f"\nsandbox escape battery ({backend}): tried {tried}, blocked {tried - len(escaped)}")
    for line in lines:
        print("  " + line)
    assert escaped == []
    # Each blocked call failed with its reason on the first line of its result; the process that
    # would have outlived the tool is reported as stopped (bubblewrap stops it silently).
    outlive = next(i for i, e in enumerate(escapes) if e.name.startswith("a child process"))
    assert all(r.is_error for i, r in enumerate(results) if i != outlive), lines
    if backend == "landlock":
        assert "[sandbox: stopped 1 process the command left running" in results[outlive].text


def test_the_allowlisted_port_and_the_project_still_work(world):
    script = [
        tool_call(
            "bash", command=f"curl -s -m 5 http://127.0.0.1:{world.allowed.port}/ && echo made > made.txt"
        ),
        text("done"),
    ]
    run = run_json("--sandbox", "workspace-write", "--tools", "bash", script=script, cwd=world.work)
    assert run.returncode == 0, run.stderr
    assert "ok-from-server" in run.tools[0].text
    assert world.allowed.hits == 1 and (world.work / "made.txt").read_text() == "made\n"


def test_without_the_sandbox_every_escape_works(world):
    """The control: the battery is real (an escape that cannot work here is not counted)."""
    escapes, _lines, _results = run_battery(world, "--sandbox", "off")
    failed = [e.name for e in escapes if e.applicable and not e.escaped()]
    assert failed == []
