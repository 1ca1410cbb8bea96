"""RPC ``bash`` on a command that never stops printing (``yes``): pi-host's memory stays bounded,
the full-output log stops at ``shellOutputLogMaxBytes``, updates come at most ten a second and
``abort_bash`` answers at once."""

from __future__ import annotations

import json
import os
import threading
import time

from pi_host.rpc import RpcClient

CAP = 16 * 1024 * 1024


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def test_yes_over_rpc_bash_is_bounded_and_aborts_promptly(isolated_environment, tmp_path):
    (isolated_environment["agent"] / "settings.json").write_text(json.dumps({"shellOutputLogMaxBytes": CAP}))
    temp = tmp_path / "tmp"
    temp.mkdir()
    updates: list[tuple[float, int]] = []
    pi = RpcClient(
        args=["--model", "faux/faux-1", "--no-session"],
        cwd=isolated_environment["work"],
        env={**os.environ, "TMPDIR": str(temp)},
        timeout=60,
    )
    try:
        pi.on_event(
            lambda r: (
                updates.append((time.monotonic(), len(r["delta"])))
                if r.get("type") == "bash_execution_update"
                else None
            )
        )
        outcome: dict[str, object] = {}

        def run() -> None:
            outcome["result"] = pi.bash("yes")
            outcome["at"] = time.monotonic()

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        while not updates:
            time.sleep(0.01)
        started = time.monotonic()
        samples: list[tuple[float, float]] = []
        while time.monotonic() - started < 4:
            samples.append((time.monotonic() - started, rss_mb(pi.process.pid)))
            time.sleep(0.05)
        peak = max(rss for _, rss in samples)
        settled = max(rss for at, rss in samples if at <= 1)
        asked = time.monotonic()
        pi.abort_bash()
        abort_answered = time.monotonic() - asked
        runner.join(timeout=30)
        bash_answered = outcome["at"] - asked
        result = outcome["result"]
        assert abort_answered < 2, f"abort_bash took {abort_answered:.1f} s"
        assert bash_answered < 3, f"the bash response came {bash_answered:.1f} s after the abort"
        assert result["cancelled"] is True and result["truncated"] is True
        assert peak < 200, f"pi-host grew to {peak:.0f} MB"
        assert peak - settled < 25, f"pi-host grew by {peak - settled:.0f} MB in 3 s of output"
        log = result["fullOutputPath"]
        assert os.path.dirname(log) == str(temp)
        assert 0 < os.path.getsize(log) <= CAP
        running = [n for t, n in updates if started <= t <= asked]
        assert len(running) <= 4 * 15, f"{len(running)} updates in 4 s"
        assert max(n for _, n in updates) <= 300 * 1024
        # the server is responsive and the command was recorded
        assert pi.get_state()["isStreaming"] is False
        messages = pi.get_messages()["messages"]
        recorded = [m for m in messages if m["role"] == "bashExecution"]
        assert recorded and recorded[-1]["cancelled"] is True and recorded[-1]["fullOutputPath"] == log
    finally:
        assert pi.close() == 0
