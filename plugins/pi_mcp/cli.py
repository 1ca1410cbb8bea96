"""``pi mcp add | remove | list``: the same mcp.json pi writes, without starting a session."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from pi_mcp.config import EXPOSURES, load_servers, project_file, user_file, validate

USAGE = """Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json (stored sign-ins are kept)
  list                    Show state, tools, and errors (exits 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default), cimd, or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)
"""

HELP_HINT = 'Use "pi mcp --help" for usage.'
HTTP_ONLY = (
    "header",
    "bearer-token-env-var",
    "oauth-client-id",
    "oauth-client-secret",
    "oauth-callback-port",
    "oauth-client-name",
    "oauth-client-registration",
)
STDIO_ONLY = ("env", "cwd")
OAUTH_FLAGS = {
    "oauth-client-id": "clientId",
    "oauth-client-secret": "clientSecret",
    "oauth-callback-port": "callbackPort",
    "oauth-client-name": "clientName",
    "oauth-client-registration": "clientRegistration",
}


def _err(line: str) -> int:
    sys.stderr.write(line + "\n")
    return 1


def _trusted(cwd: str) -> bool:
    from pi_host.config.trust import decide_trust

    return decide_trust(cwd).trusted


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 1
    command, rest = argv[0], argv[1:]
    if command == "add":
        return add(rest)
    if command == "remove":
        return remove(rest)
    if command == "list":
        return list_servers(rest)
    if command in ("login", "logout"):
        return login_logout(command, rest)
    return _err(f'Unknown mcp command "{command}".\nUse "pi mcp --help" for usage.')


def _pairs(values: list[str], what: str) -> dict[str, str]:
    found = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} must be KEY=VALUE: {value}")
        found[key] = rest
    return found


def add(argv: list[str]) -> int:
    command: list[str] = []
    if "--" in argv:
        index = argv.index("--")
        argv, command = argv[:index], argv[index + 1 :]
    name = None
    local = False
    options: dict[str, Any] = {"env": [], "header": []}
    i = 0
    valued = {"--url", "--env", "--cwd", "--header", "--bearer-token-env-var", "--exposure", "--description"}
    valued |= {f"--{flag}" for flag in OAUTH_FLAGS}
    while i < len(argv):
        arg = argv[i]
        if arg in ("-l", "--local"):
            local = True
        elif arg in valued:
            if i + 1 >= len(argv):
                return _err(f"{arg} needs a value")
            key = arg[2:]
            if key in ("env", "header"):
                options[key].append(argv[i + 1])
            else:
                options[key] = argv[i + 1]
            i += 1
        elif arg.startswith("-"):
            return _err(f'Unknown option "{arg}".\nUse "pi mcp --help" for usage.')
        elif name is None:
            name = arg
        else:
            return _err(f'Unexpected argument "{arg}".\nUse "pi mcp --help" for usage.')
        i += 1
    url = options.get("url")
    if name is None or bool(url) == bool(command):
        return _err(
            "Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n"
            'Use "pi mcp --help" for usage.'
        )
    misplaced = next(
        (f for f in (STDIO_ONLY if url else HTTP_ONLY) if options.get(f) not in (None, [])), None
    )
    if misplaced:
        where = "stdio servers" if url else "HTTP servers (--url)"
        return _err(f"--{misplaced} only applies to {where}.")
    try:
        entry: dict[str, Any] = {}
        if url:
            entry["url"] = url
            headers = _pairs(options["header"], "--header")
            if options.get("bearer-token-env-var"):
                headers["Authorization"] = "Bearer ${" + options["bearer-token-env-var"] + "}"
            if headers:
                entry["headers"] = headers
            oauth: dict[str, Any] = {}
            for flag, key in OAUTH_FLAGS.items():
                value = options.get(flag)
                if value is not None:
                    oauth[key] = int(value) if key == "callbackPort" and value.isdigit() else value
            if oauth:
                entry["oauth"] = oauth
        else:
            entry["command"] = command[0]
            if command[1:]:
                entry["args"] = command[1:]
            env = _pairs(options["env"], "--env")
            if env:
                entry["env"] = env
            if options.get("cwd"):
                entry["cwd"] = options["cwd"]
    except ValueError as exc:
        return _err(str(exc))
    if options.get("exposure"):
        if options["exposure"] not in EXPOSURES:
            return _err(f"--exposure must be one of {', '.join(EXPOSURES)}")
        entry["exposure"] = options["exposure"]
    if options.get("description"):
        entry["description"] = options["description"]
    problem = validate(name, entry)
    if problem:
        return _err(problem)
    cwd = os.getcwd()
    path = project_file(cwd) if local else user_file()
    from pi_host.config.json_files import update_json_file

    def change(data: dict[str, Any]) -> None:
        servers = data.get("mcpServers")
        if not isinstance(servers, dict):
            servers = data["mcpServers"] = {}
        servers[name] = entry

    try:
        update_json_file(path, change, mode=0o644 if not os.path.exists(path) else None)
    except (OSError, ValueError) as exc:
        return _err(f"pi mcp add: {exc}")
    scope = "project" if local else "global"
    print(f'Added {scope} MCP server "{name}" in {path}.')
    if local and not _trusted(cwd):
        print(
            f"The project is not trusted, so {path} is ignored until you start pi in the project and trust it."
        )
    from pi_mcp.config import ServerConfig

    if ServerConfig(name, entry, path, scope).uses_oauth:  # it may want a sign-in
        print(f"Check it with: pi mcp list. If it requires sign-in: pi mcp login {name}")
    else:
        print("Check it with: pi mcp list")
    return 0


def remove(argv: list[str]) -> int:
    local = any(a in ("-l", "--local") for a in argv)
    names = [a for a in argv if not a.startswith("-")]
    if len(names) != 1:
        return _err('Usage: pi mcp remove <server> [-l]\nUse "pi mcp --help" for usage.')
    name = names[0]
    path = project_file(os.getcwd()) if local else user_file()
    scope = "project" if local else "global"
    from pi_host.config.json_files import read_json_object, update_json_file

    data, _error = read_json_object(path)
    if not isinstance(data.get("mcpServers"), dict) or name not in data["mcpServers"]:
        return _err(f'No {scope} MCP server named "{name}" in {path}.')
    update_json_file(path, lambda d: d["mcpServers"].pop(name, None))
    print(f'Removed {scope} MCP server "{name}" from {path}.')
    return 0


def list_servers(argv: list[str]) -> int:
    as_json = "--json" in argv
    cwd = os.getcwd()
    servers, errors = load_servers(cwd, _trusted(cwd))
    results = asyncio.run(_probe(servers, cwd)) if any(s.enabled for s in servers) else {}
    records = []
    for server in servers:
        connection = results.get(server.name)
        state = "disabled" if not server.enabled else (connection.state if connection else "failed")
        record: dict[str, Any] = {
            "name": server.name,
            "scope": server.scope,
            "source": server.source,
            "enabled": server.enabled,
            "exposure": server.exposure,
            "transport": server.transport,
            "state": state,
            "tools": [t.name for t in connection.tools] if connection else [],
        }
        differing = {
            t: server.exposure_of(t) for t in record["tools"] if server.exposure_of(t) != server.exposure
        }
        if differing:
            record["toolExposure"] = differing
        if connection is not None and connection.resources:
            record["resources"] = True
        if connection is not None and connection.error and state != "connected":
            record["error"] = connection.error
        records.append(record)
    failed = bool(errors) or any(r["enabled"] and r["state"] != "connected" for r in records)
    if as_json:
        print(json.dumps({"servers": records, "errors": errors}, indent=2))
        return 1 if failed else 0
    if not records and not errors:
        print("No MCP servers configured. Add one with: pi mcp add <server> -- <command> [args...]")
        return 0
    for record in records:
        count = len(record["tools"])
        state = "needs sign-in" if record["state"] == "needs-auth" else record["state"]
        head = f"{record['name']}: {state}"
        if record["state"] == "connected":
            head += f", {count} tool{'s' if count != 1 else ''}"
        print(f"{head} ({record['exposure']}, {record['scope']})")
        print(f"  {record['transport']}")
        if record["state"] == "needs-auth":
            print(f"  sign in with: pi mcp login {record['name']}")
        if record["tools"]:
            marks = [
                t if t not in record.get("toolExposure", {}) else f"{t} [{record['toolExposure'][t]}]"
                for t in record["tools"]
            ]
            print(f"  tools: {', '.join(marks)}")
        if record.get("resources"):
            print("  offers resources")
        if record.get("error"):
            print(f"  {record['error']}")
    for error in errors:
        print(f"config error: {error}")
    return 1 if failed else 0


async def _probe(servers: list[Any], cwd: str) -> dict[str, Any]:
    from pi_mcp.client import Connection

    connections = {s.name: Connection(s, cwd, lambda c: None) for s in servers if s.enabled}
    for connection in connections.values():
        connection.start()
    await asyncio.gather(*(c.wait(c.config.timeout) for c in connections.values()))
    await asyncio.gather(*(c.stop_keep_state() for c in connections.values()), return_exceptions=True)
    return connections


def login_logout(command: str, argv: list[str]) -> int:
    """``pi mcp login <server> [-l] [--timeout S]`` / ``pi mcp logout <server> [-l]``."""
    local, timeout, names = False, "300", []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-l", "--local"):
            local = True
        elif arg == "--timeout" and command == "login":
            if i + 1 >= len(argv):
                return _err("--timeout needs a value.")
            timeout, i = argv[i + 1], i + 1
        elif arg.startswith("-"):
            return _err(f"Unknown option {arg}.\n{HELP_HINT}")
        else:
            names.append(arg)
        i += 1
    if len(names) != 1:
        return _err(f"Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}")
    name = names[0]
    cwd = os.getcwd()
    trusted = _trusted(cwd)
    servers, _errors = load_servers(cwd, trusted)
    server = next((s for s in servers if s.name == name), None)
    if server is None:
        note = ""
        if not trusted and os.path.isfile(project_file(cwd)):
            note = (
                f" {project_file(cwd)} is ignored because the project is not trusted. "
                "Start pi in the project to trust it."
            )
        configured = ", ".join(s.name for s in servers) or "none"
        return _err(f'No MCP server named "{name}".{note} Configured: {configured}.')
    if local and server.scope != "project":
        return _err(f'MCP server "{name}" is defined in {server.source}, not in the project; omit --local.')
    if not server.uses_oauth:
        return _err(
            f'MCP server "{name}" does not use OAuth. Only HTTP servers without an Authorization header do.'
        )
    if command == "logout":
        from pi_mcp.credentials import CredentialStore

        try:
            removed = CredentialStore(name, server.raw["url"]).remove()
        except (OSError, ValueError, TimeoutError) as exc:
            return _err(f"pi mcp logout: {exc}")
        print(
            f'Signed out of MCP server "{name}".'
            if removed
            else f'No stored credentials for MCP server "{name}".'
        )
        return 0
    try:
        seconds = float(timeout)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        return _err("--timeout must be a positive number of seconds.")
    return asyncio.run(_login(server, cwd, seconds))


async def _login(server: Any, cwd: str, timeout: float) -> int:
    from pi_mcp.client import Connection
    from pi_mcp.oauth import SignInError, open_browser, sign_in, terminal_paste

    name = server.name
    connection = Connection(server, cwd, lambda c: None)
    try:
        connection.start()  # connecting first tells whether a sign-in is needed, and how
        await connection.wait(server.timeout)
        if connection.state == "connected":
            count = len(connection.tools)
            print(f'Already signed in to MCP server "{name}" ({count} tool{"s" if count != 1 else ""}).')
            return 0
        if connection.state != "needs-auth":
            return _err(f'MCP server "{name}" failed to connect: {connection.error or "unknown error"}')
        await connection.stop_keep_state()

        def show(url: str) -> None:
            print(f'Sign in to MCP server "{name}" in your browser:\n{url}', flush=True)
            open_browser(url)

        paste = None
        if sys.stdin is not None and sys.stdin.isatty():
            paste = terminal_paste(
                "If the browser cannot reach this machine, paste the URL it was redirected to: "
            )
        try:
            await sign_in(
                server, show_url=show, paste=paste, challenge=connection.auth.challenge, timeout=timeout
            )
        except TimeoutError:
            return _err(
                f'Sign-in to MCP server "{name}" was cancelled or not completed within {timeout:g} seconds.'
            )
        except SignInError as exc:
            return _err(f'Sign-in to MCP server "{name}" failed: {exc}')
        connection.start()
        await connection.wait(server.timeout)
        if connection.state != "connected":
            reason = connection.error or (
                "needs sign-in" if connection.state == "needs-auth" else connection.state
            )
            return _err(f'Signed in, but MCP server "{name}" did not connect: {reason}')
        count = len(connection.tools)
        print(f'Signed in to MCP server "{name}" ({count} tool{"s" if count != 1 else ""}).')
        return 0
    finally:
        await connection.stop()
