"""OAuth for streamable-HTTP MCP servers, end to end: an SDK server (MCPServer with the SDK's
authorization-server support and an auto-approving provider) in a thread on 127.0.0.1, and the real
``pi`` command: a run that needs sign-in, ``pi mcp login`` through a scripted browser, a tool call
with the token, a refresh after the server revoked it, ``pi mcp logout``, ``/mcp login|logout`` in a
session; plus ``pi mcp add``'s oauth flags, config errors and pi's mcp-auth.json keys."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pi_mcp.credentials import CredentialStore, normalize_url, store_keys

from tests.e2e.mcp.helpers import write_config


def _entries(agent: Path) -> dict:
    return json.loads((agent / "mcp-auth.json").read_text())


def test_cli_refusals(isolated_environment, capsys):
    from pi_mcp.cli import main

    cases = [
        (
            ["--oauth-client-registration", "cimd", "--oauth-client-id", "x"],
            'server "x": oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName',
        ),
        (
            ["--oauth-client-registration", "magic"],
            'server "x": oauth.clientRegistration must be "auto", "dcr", or "cimd"',
        ),
        (["--oauth-callback-port", "99999"], 'server "x": oauth.callbackPort must be a port number'),
        (["--oauth-callback-port", "abc"], 'server "x": oauth.callbackPort must be a port number'),
    ]
    for flags, message in cases:
        assert main(["add", "x", "--url", "http://127.0.0.1:9/mcp", *flags]) == 1
        assert capsys.readouterr().err.splitlines() == [message]
    assert main(["add", "x", "--oauth-client-id", "a", "--", "cmd"]) == 1
    assert capsys.readouterr().err.strip() == "--oauth-client-id only applies to HTTP servers (--url)."
    assert not (isolated_environment["agent"] / "mcp.json").exists()
    config = isolated_environment["agent"] / "mcp.json"
    write_config(
        config,
        {
            "web": {"url": "http://127.0.0.1:9/mcp"},
            "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"authorization": "Bearer k"}},
        },
    )
    refusals = [
        (
            ["login", "web", "-l"],
            f'MCP server "web" is defined in {config}, not in the project; omit --local.',
        ),
        (
            ["logout", "keyed"],
            'MCP server "keyed" does not use OAuth. Only HTTP servers without an Authorization header do.',
        ),
        (["login", "wbe"], 'No MCP server named "wbe". Configured: web, keyed.'),
        (["login", "web", "--timeout", "0"], "--timeout must be a positive number of seconds."),
        (["login"], 'Usage: pi mcp login <server> [-l]\nUse "pi mcp --help" for usage.'),
    ]
    for argv, message in refusals:
        assert main(argv) == 1
        assert capsys.readouterr().err.strip() == message


def test_urls_are_normalised_like_javascript():
    assert normalize_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/"
    assert normalize_url("HTTPS://Example.COM:443/a/./b/../c") == "https://example.com/a/c"
    assert normalize_url("http://example.com:80/mcp?x=1#top") == "http://example.com/mcp?x=1#top"
    assert normalize_url("http://[0:0:0:0:0:0:0:1]:8080/a b") == "http://[::1]:8080/a%20b"
    assert normalize_url("https://bücher.example/é") == "https://xn--bcher-kva.example/%C3%A9"
    assert normalize_url("https://mcp.example.com/mcp/") == "https://mcp.example.com/mcp/"
    assert store_keys("my-docs", "http://127.0.0.1:8000") == (
        "mcp__my_docs|http://127.0.0.1:8000/",
        "http://127.0.0.1:8000/",
    )


def test_a_legacy_entry_is_taken_over_by_the_first_server(isolated_environment):
    agent = isolated_environment["agent"]
    url = "http://127.0.0.1:8000"
    legacy = {"serverUrl": "http://127.0.0.1:8000/", "tokens": {"access_token": "a", "token_type": "Bearer"}}
    (agent / "mcp-auth.json").write_text(
        json.dumps({"http://127.0.0.1:8000/": legacy, "other|x": {"serverUrl": "x"}})
    )
    store = CredentialStore("docs", url)
    assert store.peek() == legacy  # reading alone moves nothing
    assert list(_entries(agent)) == ["http://127.0.0.1:8000/", "other|x"]
    assert store.load() == legacy
    assert _entries(agent) == {"other|x": {"serverUrl": "x"}, "mcp__docs|http://127.0.0.1:8000/": legacy}
    assert stat.S_IMODE((agent / "mcp-auth.json").stat().st_mode) == 0o600
    assert CredentialStore("docs-2", url).load() == {"serverUrl": "http://127.0.0.1:8000/"}  # signs in anew
    assert CredentialStore("docs", "http://127.0.0.1:8001").load() == {"serverUrl": "http://127.0.0.1:8001/"}
    store.update(lambda state: state.update(tokens={"access_token": "b"}))
    assert _entries(agent)["mcp__docs|http://127.0.0.1:8000/"]["tokens"] == {"access_token": "b"}
    assert store.remove() and not store.remove()
    assert _entries(agent) == {"other|x": {"serverUrl": "x"}}
    (agent / "mcp-auth.json").write_text(json.dumps({"http://127.0.0.1:8000/": legacy}))
    assert store.remove() and _entries(agent) == {}  # logout removes a legacy entry it would take over
