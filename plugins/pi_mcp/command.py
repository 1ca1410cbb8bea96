"""``/mcp``: each server's state, tools and errors; ``/mcp restart [server]`` (or ``reconnect``);
``/mcp login <server>`` / ``/mcp logout <server>`` for OAuth servers."""

from __future__ import annotations

from typing import Any

USAGE = "Usage: /mcp [status | restart [server] | login <server> | logout <server>]"


def state_label(state: str) -> str:
    return "needs sign-in" if state == "needs-auth" else state


def status_lines(manager: Any) -> list[str]:
    if manager is None:
        return ["No MCP servers configured (mcp.json), or MCP is off for this run (--no-mcp)."]
    lines = []
    for connection in manager.connections.values():
        config = connection.config
        count = len(connection.tools)
        state = connection.state
        head = f"{config.name}: {state_label(state)}"
        if state == "connected":
            head += f", {count} tool{'s' if count != 1 else ''}"
        lines.append(f"{head} ({config.exposure}, {config.scope})")
        lines.append(f"  {config.transport}")
        if state == "needs-auth":
            lines.append(f"  sign in with: /mcp login {config.name}")
        if connection.tools:
            names = [t.name for t in connection.tools]
            marks = []
            for name in names:
                exposure = config.exposure_of(name)
                marks.append(name if exposure == config.exposure else f"{name} [{exposure}]")
            lines.append(f"  tools: {', '.join(marks)}")
        if connection.error and state != "connected":
            lines.append(f"  {connection.error}")
            lines += [f"  stderr: {line}" for line in connection.stderr_tail()[-5:]]
        if connection.sdk_note:
            lines.append(f"  sdk: {connection.sdk_note}")
    for error in manager.errors:
        lines.append(f"config error: {error}")
    return lines or ["No MCP servers configured."]


def _say(ctx: Any, text: str, level: str = "info") -> None:
    if getattr(ctx, "has_ui", False):
        ctx.ui.notify(text, level)
    else:  # print / JSON runs: pi prints the status
        import sys

        stream = sys.stderr if level == "error" else sys.stdout
        stream.write(text + "\n")
        stream.flush()


def _tools(count: int) -> str:
    return f"{count} tool{'s' if count != 1 else ''}"


async def run(args: str, ctx: Any, manager: Any) -> None:
    words = (args or "").split()
    if words and words[0] in ("restart", "reconnect"):
        if manager is None:
            _say(ctx, "No MCP servers to restart.", "warning")
            return
        name = words[1] if len(words) > 1 else None
        if name is not None and name not in manager.connections:
            _say(ctx, f'No MCP server named "{name}".', "error")
            return
        restarted = await manager.restart(name)
        states = ", ".join(f"{n}: {state_label(manager.connections[n].state)}" for n in restarted)
        _say(ctx, f"Restarted MCP {states}")
        return
    if words and words[0] in ("login", "logout"):
        if len(words) != 2:
            _say(ctx, f"Usage: /mcp {words[0]} <server>", "error")
            return
        connection = manager.connections.get(words[1]) if manager is not None else None
        if connection is None:
            _say(ctx, f'No MCP server named "{words[1]}".', "error")
            return
        if not connection.config.uses_oauth:
            _say(ctx, f'MCP server "{words[1]}" does not use OAuth.', "error")
            return
        await (_login if words[0] == "login" else _logout)(ctx, manager, connection)
        return
    if words and words[0] not in ("status", "list"):
        _say(ctx, USAGE, "error")
        return
    if manager is not None and not getattr(ctx, "has_ui", False):
        await manager.wait_all()  # a script asking for the status wants the outcome, not "connecting"
    _say(ctx, "\n".join(status_lines(manager)))


async def _logout(ctx: Any, manager: Any, connection: Any) -> None:
    from pi_mcp.credentials import CredentialStore

    name = connection.config.name
    try:
        removed = CredentialStore(name, connection.config.raw["url"]).remove()
    except (OSError, ValueError, TimeoutError) as exc:
        _say(ctx, f'Could not sign out of MCP server "{name}": {exc}', "error")
        return
    await manager.restart(name)  # without credentials: needs sign-in (unless the server is open)
    _say(
        ctx,
        f'Signed out of MCP server "{name}".'
        if removed
        else f'No stored credentials for MCP server "{name}".',
    )


async def _login(ctx: Any, manager: Any, connection: Any) -> None:
    from pi_mcp.oauth import LOGIN_TIMEOUT_S, SignInCancelled, SignInError, open_browser, sign_in

    name = connection.config.name
    if connection.state == "connecting":
        await connection.wait(connection.config.timeout)
    if connection.state == "connected":
        _say(ctx, f'Already signed in to MCP server "{name}" ({_tools(len(connection.tools))}).')
        return
    has_ui = bool(getattr(ctx, "has_ui", False))

    def show(url: str) -> None:
        _say(ctx, f'Sign in to MCP server "{name}" in your browser:\n{url}')
        open_browser(url)

    async def paste(signal: Any) -> str | None:
        text = await ctx.ui.input(
            f'Waiting for sign-in to "{name}". If the browser cannot reach this machine, paste the URL '
            "it was redirected to.",
            "http://127.0.0.1:.../callback?code=...",
            signal=signal,
        )
        if text is None and not signal.aborted:
            raise SignInCancelled("cancelled")
        return text

    challenge = getattr(connection.auth, "challenge", None)
    try:
        await sign_in(connection.config, show_url=show, paste=paste if has_ui else None, challenge=challenge)
    except SignInCancelled:
        _say(ctx, "Sign-in cancelled.", "warning")
        return
    except TimeoutError:
        _say(
            ctx,
            f'Sign-in to MCP server "{name}" was cancelled or not completed within {LOGIN_TIMEOUT_S:.0f} seconds.',
            "error",
        )
        return
    except SignInError as exc:
        _say(ctx, f'Sign-in to MCP server "{name}" failed: {exc}', "error")
        return
    await manager.restart(name)
    if connection.state == "connected":
        _say(ctx, f'Signed in to MCP server "{name}" ({_tools(len(connection.tools))}).')
    else:
        reason = f": {connection.error}" if connection.error else ""
        _say(ctx, f'Signed in, but MCP server "{name}" is {state_label(connection.state)}{reason}', "error")
