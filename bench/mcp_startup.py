"""``-p`` wall time with one stdio MCP server configured (mcp-server-time), pi-host vs pi 1.6.0.

Both harnesses get the same ``mcp.json`` (one server, run as ``python -m mcp_server_time``) and the
loopback model of :mod:`pi_compare`; runs alternate between the two, the figure is the median of 7.
Cases: the server with pi's default exposure (``codemode``: the prompt does not wait for it) and
with ``direct`` exposure (the first prompt waits for the server's tools, in both harnesses).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_compare import OPENAI, BenchServer, Case, Comparison, report  # noqa: E402

RUNS = 7


def main() -> int:
    failed: list[str] = []
    with BenchServer() as server:
        for exposure in ("codemode", "direct"):
            comparison = Comparison(server.url)
            try:
                for harness in comparison.harnesses:
                    agent = harness.env["PI_CODING_AGENT_DIR"]
                    entry = {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time"],
                        "exposure": exposure,
                    }
                    Path(agent, "mcp.json").write_text(json.dumps({"mcpServers": {"time": entry}}))
                case = Case(
                    label=f"-p, one stdio MCP server ({exposure})",
                    args=lambda _f: ["-p", "hi", "--model", f"{OPENAI[0]}/{OPENAI[1]}", "--no-session"],
                    target=1.0,
                    check=lambda out: "session" in out,
                )
                results = comparison.compare([case], RUNS)
                failed += report(results, [case], RUNS)
            finally:
                comparison.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
