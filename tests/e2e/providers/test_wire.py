"""Provider requests over asyncio streams and h11 (``pi_host.lib.llm.wire``), not httpx: one
connection kept alive across the turns of a run, a stale kept-alive connection replaced, bodies
in every HTTP/1.1 framing and in gzip, proxies from the environment still honoured (through
httpx), and failures described in httpx's words."""

from __future__ import annotations

from tests.support.loopback import PRINT, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi


def proxy_setting(name: str) -> bool:
    """The variables left out of pi's environment: only a test's own proxy settings count."""
    return name.lower().endswith("_proxy")


def count_connections(server: LoopbackServer) -> list[object]:
    accepted: list[object] = []
    original = server.httpd.get_request

    def get_request():
        pair = original()
        accepted.append(pair[1])
        return pair

    server.httpd.get_request = get_request
    return accepted


# --- at the command line --------------------------------------------------------------------------


def test_the_turns_of_a_run_share_one_kept_alive_connection(isolated_environment):
    (isolated_environment["work"] / "notes.txt").write_text("wire notes\n")
    server = LoopbackServer([Reply.tool("read", {"path": "notes.txt"}), Reply("read it")])
    accepted = count_connections(server)
    with server.start():
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi(*PRINT, "read notes.txt", drop=proxy_setting)
    assert out.returncode == 0, out.stderr
    assert "read it" in out.stdout
    assert len(server.requests) == 2
    assert "wire notes" in str(server.requests[1]["messages"])  # the tool result went back
    assert len(accepted) == 1, accepted


def test_a_proxy_in_the_environment_carries_the_request(isolated_environment):
    with LoopbackServer([Reply("through the proxy")]) as proxy:
        # The configured server does not exist: only the proxy can answer.
        write_models_json(isolated_environment["agent"], "http://127.0.0.1:9/v1")
        out = run_pi(*PRINT, "hi", env={"HTTP_PROXY": proxy.url, "NO_PROXY": ""}, drop=proxy_setting)
    assert out.returncode == 0, out.stderr
    assert "through the proxy" in out.stdout
    assert proxy.exchanges[0].path == "http://127.0.0.1:9/v1/chat/completions"  # absolute form


def test_a_refused_connection_is_one_clear_line(isolated_environment):
    write_models_json(isolated_environment["agent"], "http://127.0.0.1:9/v1")
    (isolated_environment["agent"] / "settings.json").write_text('{"retry": {"enabled": false}}')
    out = run_pi(*PRINT, "hi", drop=proxy_setting)
    assert out.returncode != 0
    lines = [line for line in (out.stdout + out.stderr).splitlines() if "Connection error" in line]
    assert len(lines) == 1, out
    assert "Connection error: Connection refused (127.0.0.1:9)" in lines[0]
    assert "Traceback" not in out.stderr
