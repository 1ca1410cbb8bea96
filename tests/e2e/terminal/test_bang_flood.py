"""``!yes`` typed in the interactive mode: pi-host's memory stays bounded while the command floods
the live view, Escape stops it at once, and the full-output log stops at ``shellOutputLogMaxBytes``
(the same treatment as RPC ``bash``, ``tests/e2e/rpc/test_bash_flood.py``)."""

from __future__ import annotations

import json
import os
import re
import time

from tests.support.interactive import entries, requires_tmux, session_files, terminal_pi
from tests.support.loopback import LoopbackServer, Reply

pytestmark = requires_tmux

CAP = 8 * 1024 * 1024


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def test_bang_yes_stays_bounded_and_escape_stops_it(world, tmp_path):
    settings = world["agent"] / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "shellOutputLogMaxBytes": CAP}))
    temp = tmp_path / "tmp"
    temp.mkdir()
    world["env"]["TMPDIR"] = str(temp)
    with LoopbackServer([Reply("hello")]) as server:
        with terminal_pi(world, server) as term:
            term.send("hi")  # pi writes a session file once there is an answer
            term.press("Enter")
            term.wait_for("hello")
            term.wait_gone("esc to interrupt")
            term.send("!yes")
            term.press("Enter")
            term.wait_for(re.compile(r"^\s*y\s*$", re.M), scrollback=False)  # the live view floods
            started = time.monotonic()
            samples: list[tuple[float, float]] = []
            while time.monotonic() - started < 4:
                samples.append((time.monotonic() - started, rss_mb(term.pid)))
                time.sleep(0.05)
            term.press("Escape")
            asked = time.monotonic()
            term.wait_for("(cancelled)", timeout=30, scrollback=False)
            answered = time.monotonic() - asked
            # the editor takes the next command (typed only now: Escape then "!" at once is Alt-!)
            term.send("!echo after-the-flood")
            term.press("Enter")
            term.wait_for(re.compile(r"^\s*after-the-flood\s*$", re.M), timeout=30, scrollback=False)
            term.press("C-d")
            assert term.wait_exit() == 0
    peak = max(rss for _, rss in samples)
    settled = max(rss for at, rss in samples if at <= 1)
    assert peak < 200, f"pi-host grew to {peak:.0f} MB"
    assert peak - settled < 25, f"pi-host grew by {peak - settled:.0f} MB in 3 s of output"
    assert answered < 10, f"the command was shown cancelled {answered:.1f} s after Escape"
    [path] = session_files(world)
    runs = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "bashExecution"]
    # (the second may be stored first: it can start while the first is still being stopped)
    assert sorted(run["command"] for run in runs) == ["echo after-the-flood", "yes"]
    [flood] = [run for run in runs if run["command"] == "yes"]
    assert flood["cancelled"] is True and flood["truncated"] is True
    assert flood["output"].rstrip("\n").endswith("y")
    log = flood["fullOutputPath"]
    assert os.path.dirname(log) == str(temp)
    assert 0 < os.path.getsize(log) <= CAP
