"""OAuth for streamable-HTTP MCP servers, end to end: an SDK server (MCPServer with the SDK's
authorization-server support and an auto-approving provider) in a thread on 127.0.0.1, and the real
``pi`` command: a run that needs sign-in, ``pi mcp login`` through a scripted browser, a tool call
with the token, a refresh after the server revoked it, ``pi mcp logout``, ``/mcp login|logout`` in a
session; plus ``pi mcp add``'s oauth flags, config errors and pi's mcp-auth.json keys."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from pi_mcp.config import load_servers

from tests.e2e.mcp.helpers import faux_prompt, pi, prompt, together, write_config
from tests.support.paths import REPO
from tests.support.pi import PI_SCRIPT, start_pi

TOOL = "mcp__docs__whoami"
CALL = [{"toolCalls": [{"name": TOOL, "arguments": {}}]}, {"text": "result: {{lastToolResult}}"}]

BROWSER = """\
import sys, urllib.request
# a browser that approves at once: follow the authorization server's redirect to pi's callback
with urllib.request.urlopen(sys.argv[1], timeout=10) as response:
    page = response.read().decode()
open(sys.argv[2], "a").write(response.url + "\\n" + page + "\\n")
"""


def serve(port_file: str) -> None:
    """Run in a subprocess (the test process cannot import the SDK: ``tests/mcp`` is ``mcp`` there):
    an MCP server with two tools behind the SDK's OAuth authorization server, whose provider approves
    every authorization request at once and keeps its tokens in memory. ``GET /test/state`` shows
    them, ``POST /test/revoke-access`` forgets the access tokens."""
    from mcp.server.auth.provider import (
        AccessToken,
        AuthorizationCode,
        RefreshToken,
        construct_redirect_uri,
    )
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.auth import OAuthToken
    from starlette.responses import JSONResponse

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    clients: dict = {}
    codes: dict = {}
    access: dict = {}
    refresh: dict = {}
    grants: list[str] = []
    issued: list[str] = []

    def issue(client_id: str, scopes: list[str]) -> OAuthToken:
        access_token, refresh_token = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
        access[access_token] = AccessToken(token=access_token, client_id=client_id, scopes=scopes)
        refresh[refresh_token] = RefreshToken(token=refresh_token, client_id=client_id, scopes=scopes)
        issued.extend([access_token, refresh_token])
        return OAuthToken(
            access_token=access_token, expires_in=3600, refresh_token=refresh_token, scope=" ".join(scopes)
        )

    class Provider:
        async def get_client(self, client_id):
            return clients.get(client_id)

        async def register_client(self, client_info):
            clients[client_info.client_id] = client_info

        async def authorize(self, client, params):
            code = secrets.token_urlsafe(16)
            codes[code] = AuthorizationCode(
                code=code,
                scopes=params.scopes or ["docs"],
                expires_at=time.time() + 300,
                client_id=client.client_id,
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
            )
            return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

        async def load_authorization_code(self, client, authorization_code):
            return codes.get(authorization_code)

        async def exchange_authorization_code(self, client, authorization_code):
            codes.pop(authorization_code.code, None)
            grants.append("authorization_code")
            return issue(client.client_id, authorization_code.scopes)

        async def load_refresh_token(self, client, refresh_token):
            return refresh.get(refresh_token)

        async def exchange_refresh_token(self, client, refresh_token, scopes):
            refresh.pop(refresh_token.token, None)  # rotated: single use
            grants.append("refresh_token")
            return issue(client.client_id, scopes)

        async def load_access_token(self, token):
            return access.get(token)

        async def revoke_token(self, token):
            access.pop(token.token, None)

    server = MCPServer(
        "oauth-docs",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["docs"], default_scopes=["docs"]
            ),
            required_scopes=["docs"],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Which OAuth client called."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"client {token.client_id if token else None} with {token.scopes if token else None}"

    @server.tool()
    def revoke_all() -> str:
        """Forget every access and refresh token (the next request is refused)."""
        access.clear()
        refresh.clear()
        return "revoked"

    @server.custom_route("/test/state", methods=["GET"])
    async def state(request):
        return JSONResponse(
            {
                "clients": list(clients),
                "access": list(access),
                "refresh": list(refresh),
                "grants": grants,
                "issued": issued,
            }
        )

    @server.custom_route("/test/revoke-access", methods=["POST"])
    async def revoke_access(request):
        access.clear()
        return JSONResponse({})

    import uvicorn

    app = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="critical"))
    with open(port_file + ".tmp", "w") as handle:
        handle.write(base)
    os.replace(port_file + ".tmp", port_file)
    asyncio.run(app.serve(sockets=[sock]))


class AuthServer:
    """The test's handle on the :func:`serve` subprocess."""

    def __init__(self, base: str) -> None:
        self.base, self.url = base, f"{base}/mcp"

    def state(self) -> dict:
        with urllib.request.urlopen(f"{self.base}/test/state", timeout=10) as response:
            return json.loads(response.read())

    def revoke_access(self) -> None:
        urllib.request.urlopen(
            urllib.request.Request(f"{self.base}/test/revoke-access", method="POST"), timeout=10
        )


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory):
    port_file = str(tmp_path_factory.mktemp("oauth") / "base")
    repo = str(REPO)
    code = f"import sys; sys.path[:0] = [{repo!r}]; from tests.e2e.mcp.test_oauth import serve; serve({port_file!r})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the OAuth test server did not start: {process.stderr.read().decode()}")
            time.sleep(0.05)
        server = AuthServer(Path(port_file).read_text())
        while True:
            try:
                server.state()
                break
            except OSError:
                assert time.monotonic() < deadline, "the OAuth test server does not answer"
                time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)


def _entries(agent: Path) -> dict:
    return json.loads((agent / "mcp-auth.json").read_text())


def _browser(tmp_path: Path, monkeypatch) -> Path:
    """``BROWSER`` for pi's ``webbrowser``: a script that fetches the authorization URL."""
    script, log = tmp_path / "browser.py", tmp_path / "browser.log"
    script.write_text(BROWSER)
    monkeypatch.setenv("BROWSER", f"{sys.executable} {script} %s {log}")
    return log


def _no_secret(server: AuthServer, *texts: str) -> None:
    for secret in server.state()["issued"]:
        for text in texts:
            assert secret not in text, "a token leaked"


def test_sign_in_use_refresh_and_sign_out(isolated_environment, auth_server, tmp_path, monkeypatch):
    agent, server = isolated_environment["agent"], auth_server
    added = pi("mcp", "add", "docs", "--url", server.url, "--exposure", "direct")
    assert added.returncode == 0, added.stderr
    assert "If it requires sign-in: pi mcp login docs" in added.stdout

    # 1. no credentials: one line, and the run goes on without the server's tools
    first, listed, late = together(
        (faux_prompt("hi"), [{"text": "answered"}]),
        (["mcp", "list"], None),
        (["mcp", "login", "docs", "--timeout", "1"], None, {"BROWSER": "true"}),  # nobody signs in
    )
    assert late.returncode == 1
    assert (
        late.stderr.strip() == 'Sign-in to MCP server "docs" was cancelled or not completed within 1 seconds.'
    )
    assert first.returncode == 0 and first.stdout.strip() == "answered", first.stderr
    assert [line for line in first.stderr.splitlines() if "MCP" in line] == [
        'pi: MCP server "docs" needs sign-in: run pi mcp login docs'
    ]
    assert listed.returncode == 1
    assert "docs: needs sign-in (direct, global)" in listed.stdout
    assert "sign in with: pi mcp login docs" in listed.stdout

    # 2. pi mcp login through the scripted browser
    log = _browser(tmp_path, monkeypatch)
    login = pi("mcp", "login", "docs", "--timeout", "30")
    assert login.returncode == 0, login.stdout + login.stderr
    assert 'Sign in to MCP server "docs" in your browser:\nhttp://127.0.0.1:' in login.stdout
    assert login.stdout.rstrip().endswith('Signed in to MCP server "docs" (2 tools).')
    assert "/callback?code=" in log.read_text() and "Signed in to the MCP server" in log.read_text()
    path = agent / "mcp-auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = _entries(agent)
    assert path.read_text() == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert list(data) == [f"mcp__docs|{server.url}"]
    entry = data[f"mcp__docs|{server.url}"]
    assert entry["serverUrl"] == server.url
    issued = server.state()
    assert entry["clientInformation"]["client_id"] in issued["clients"]
    assert entry["clientInformation"]["client_name"] == "pi"
    assert entry["tokens"]["access_token"] in issued["access"] and entry["tokens"]["token_type"] == "Bearer"
    assert entry["tokens"]["refresh_token"] in issued["refresh"]
    assert abs(entry["tokensExpireAt"] - (time.time() + 3600) * 1000) < 60_000
    assert entry["discovery"]["authorizationServerUrl"] == server.base
    assert "codeVerifier" not in entry and "oauthState" not in entry
    _no_secret(server, login.stdout, login.stderr)

    # 3. the model calls the tool; the server sees the token
    client = entry["clientInformation"]["client_id"]
    again, called = together((["mcp", "login", "docs"], None), (faux_prompt("who?"), CALL))
    assert again.stdout.strip() == 'Already signed in to MCP server "docs" (2 tools).'
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == f"result: client {client} with ['docs']"

    # 4. an access token about to expire is refreshed before it is sent; one the server revokes
    # mid-session is refreshed after the 401 and the call goes through; no browser either time
    log.unlink()
    grants = len(server.state()["grants"])
    expired = _entries(agent)
    expired[f"mcp__docs|{server.url}"]["tokensExpireAt"] = int(time.time() * 1000)
    path.write_text(json.dumps(expired))
    revoke = f"{sys.executable} -c \"import urllib.request as u; u.urlopen(u.Request('{server.base}/test/revoke-access', method='POST'))\""
    script = [
        CALL[0],
        {"toolCalls": [{"name": "bash", "arguments": {"command": revoke}}]},
        CALL[0],
        {"text": "result: {{lastToolResult}}"},
    ]
    refreshed = prompt("who, twice?", script)
    assert refreshed.stdout.strip() == f"result: client {client} with ['docs']", refreshed.stderr
    assert server.state()["grants"][grants:] == ["refresh_token", "refresh_token"] and not log.exists()
    assert _entries(agent)[f"mcp__docs|{server.url}"]["tokens"]["access_token"] in server.state()["access"]
    _no_secret(server, first.stderr, called.stderr, refreshed.stderr, listed.stdout)

    # pi mcp remove keeps the credentials: adding the server back needs no sign-in
    before = path.read_text()
    assert pi("mcp", "remove", "docs").returncode == 0 and path.read_text() == before
    assert pi("mcp", "add", "docs", "--url", server.url, "--exposure", "direct").returncode == 0

    # 5. pi mcp logout deletes them; a run needs sign-in again
    out = pi("mcp", "logout", "docs")
    assert out.returncode == 0 and out.stdout.strip() == 'Signed out of MCP server "docs".'
    assert _entries(agent) == {}
    twice, after = together((["mcp", "logout", "docs"], None), (faux_prompt("who?"), CALL))
    assert twice.stdout.strip() == 'No stored credentials for MCP server "docs".'
    assert 'MCP server "docs" needs sign-in: run pi mcp login docs' in after.stderr
    assert f"Tool {TOOL} not found" in after.stdout


def test_sign_in_and_out_within_a_session(isolated_environment, auth_server, tmp_path, monkeypatch):
    """``/mcp login`` signs in and reconnects; a token revoked mid-session (and its refresh token)
    makes the server need sign-in; ``pi mcp login`` run by the agent is picked up on the next turn;
    ``/mcp logout``. No token reaches the event stream or the session file."""
    agent, server = isolated_environment["agent"], auth_server
    write_config(agent / "mcp.json", {"docs": {"url": server.url, "exposure": "direct"}})
    _browser(tmp_path, monkeypatch)
    script = [
        {"toolCalls": [{"name": TOOL, "arguments": {}}]},
        {"toolCalls": [{"name": "mcp__docs__revoke_all", "arguments": {}}]},
        {"toolCalls": [{"name": TOOL, "arguments": {}}]},
        {"text": "revoked: {{lastToolResult}}"},
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": f"{PI_SCRIPT[0]} mcp login docs < /dev/null"}}
            ]
        },
        {"text": "agent: {{lastToolResult}}"},
        {"toolCalls": [{"name": TOOL, "arguments": {}}]},
        {"text": "back: {{lastToolResult}}"},
    ]
    prompts = ["/mcp login docs", "go", "/mcp", "sign in", "again", "/mcp logout docs"]
    done = pi("--mode", "json", "--model", "faux/faux-1", *prompts, script=script)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'Signed in to MCP server "docs" (2 tools).' in out
    texts = [
        block["text"]
        for line in out.splitlines()
        if line.startswith("{")
        for event in [json.loads(line)]
        if event["type"] == "message_end" and event["message"]["role"] == "assistant"
        for block in event["message"]["content"]
        if block.get("type") == "text"
    ]
    assert texts[0] == 'revoked: MCP server "docs" needs sign-in: run pi mcp login docs'
    assert "docs: needs sign-in (direct, global)" in out
    assert 'agent: Sign in to MCP server "docs"' in texts[1] and 'Signed in to MCP server "docs"' in texts[1]
    assert texts[2].startswith("back: client ")
    assert 'Signed out of MCP server "docs".' in out
    assert _entries(agent) == {}
    sessions = "".join(p.read_text() for p in (agent / "sessions").rglob("*.jsonl"))
    assert "revoked:" in sessions
    _no_secret(server, out, done.stderr, sessions)


PASTE_BROWSER = """\
import sys, urllib.error, urllib.request
# a browser on another machine: it cannot reach pi's callback, so the user pastes where it went
class Stop(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        open(sys.argv[2], "w").write(newurl)
try:
    urllib.request.build_opener(Stop).open(sys.argv[1], timeout=10)
except urllib.error.HTTPError:
    pass
"""


def test_a_pasted_redirect_url_completes_the_sign_in(
    isolated_environment, auth_server, tmp_path, monkeypatch
):
    import pty

    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {"url": auth_server.url}})
    script, landed = tmp_path / "remote_browser.py", tmp_path / "landed"
    script.write_text(PASTE_BROWSER)
    monkeypatch.setenv("BROWSER", f"{sys.executable} {script} %s {landed}")
    master, slave = pty.openpty()
    login = start_pi("mcp", "login", "docs", "--timeout", "20", command=PI_SCRIPT, stdin=slave)
    os.close(slave)
    try:
        deadline = time.monotonic() + 20
        while not landed.exists() or not landed.read_text():
            assert time.monotonic() < deadline and login.poll() is None, login.communicate()
            time.sleep(0.05)
        redirect = landed.read_text()
        assert redirect.startswith("http://127.0.0.1:") and "/callback?code=" in redirect
        os.write(master, (redirect + "\n").encode())
        out, err = login.communicate(timeout=20)
    finally:
        os.close(master)
        login.kill()
    assert login.returncode == 0, out + err
    assert "paste the URL it was redirected to" in err
    assert out.rstrip().endswith('Signed in to MCP server "docs" (2 tools).')
    assert _entries(isolated_environment["agent"])[f"mcp__docs|{auth_server.url}"]["tokens"]["access_token"]


def test_add_writes_the_oauth_object(isolated_environment):
    added = pi(
        "mcp",
        "add",
        "api",
        "--url",
        "https://mcp.example.com/mcp",
        "--oauth-client-id",
        "my-client",
        "--oauth-client-secret",
        "${API_SECRET}",
        "--oauth-callback-port",
        "8765",
        "--oauth-client-name",
        "Claude Code",
        "--oauth-client-registration",
        "dcr",
    )
    assert added.returncode == 0, added.stderr
    assert json.loads((isolated_environment["agent"] / "mcp.json").read_text()) == {
        "mcpServers": {
            "api": {
                "url": "https://mcp.example.com/mcp",
                "oauth": {
                    "clientId": "my-client",
                    "clientSecret": "${API_SECRET}",
                    "callbackPort": 8765,
                    "clientName": "Claude Code",
                    "clientRegistration": "dcr",
                },
            }
        }
    }


def test_bad_oauth_config_is_one_line_per_entry(isolated_environment):
    bad = {
        "a": {"oauth": "yes"},
        "b": {"oauth": {"clientId": 3}},
        "c": {"oauth": {"callbackUrl": "https://example.com/callback"}},
        "d": {"oauth": {"callbackUrl": "http://localhost:8000/callback", "callbackPort": 9000}},
        "e": {"oauth": {"clientName": " "}},
        "f": {"oauth": {"clientRegistration": "cimd", "callbackUrl": "http://[::1]:8000/callback"}},
        "g": {"oauth": {"authServerMetadataUrl": "http://example.com/.well-known/openid-configuration"}},
        "h": {"oauth": {"scope": ["read"]}},
    }
    servers = {n: {"url": "http://127.0.0.1:9/mcp", **v} for n, v in bad.items()}
    ok = {
        "clientId": "c",
        "callbackUrl": "http://localhost/callback",
        "authServerMetadataUrl": "http://[::1]:1/m",
    }
    servers["good"] = {"url": "http://127.0.0.1:9/mcp", "enabled": False, "oauth": ok}
    write_config(isolated_environment["agent"] / "mcp.json", servers)
    found, errors = load_servers(str(isolated_environment["work"]), False)
    assert [s.name for s in found] == ["good"]
    problems = [e.split(": ", 1)[1] for e in errors]
    assert problems == [
        'server "a": oauth must be an object',
        'server "b": oauth.clientId must be a string',
        'server "c": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment',
        'server "d": oauth.callbackUrl and oauth.callbackPort name different ports',
        'server "e": oauth.clientName must be a non-empty string',
        'server "f": oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback',
        'server "g": oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]',
        'server "h": oauth.scope must be a string',
    ]
    listed = pi("mcp", "list", "--json")
    assert listed.returncode == 1
    assert json.loads(listed.stdout)["errors"] == errors
    login = pi("mcp", "login", "a")
    assert login.returncode == 1 and login.stderr.strip() == 'No MCP server named "a". Configured: good.'
