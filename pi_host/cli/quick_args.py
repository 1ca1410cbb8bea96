"""The common command lines read without typer: start-up of a run must not pay ~50 ms for
typer and click when the argument list is plain. Anything this reader is not sure of (``--help``,
an unknown or clustered option, a missing value) goes to the typer app of
:mod:`pi_host.cli.options`, which gives pi's errors and help; ``tests/host/test_cli.py`` checks
that the two read every option alike."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunArgs:
    """The parsed command line of a run: every built-in option (plugins' flags are kept apart)."""

    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    models: str | None = None
    list_models: bool = False
    export: str | None = None
    print_mode: bool = False
    mode: str | None = None
    continue_recent: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    name: str | None = None
    tools: str | None = None
    exclude_tools: str | None = None
    no_builtin_tools: bool = False
    no_tools: bool = False
    extensions: list[str] = field(default_factory=list)
    no_extensions: bool = False
    approve: bool = False
    no_approve: bool = False
    strict_plugins: bool = False
    offline: bool = False
    no_mcp: bool = False
    version: bool = False
    verbose: bool = False
    max_turns: str | None = None
    max_cost: str | None = None
    max_tokens: str | None = None
    max_time: str | None = None
    messages: list[str] = field(default_factory=list)


OPTIONS: dict[str, tuple[str, str]] = {
    "--provider": ("provider", "value"),
    "--model": ("model", "value"),
    "--api-key": ("api_key", "value"),
    "--thinking": ("thinking", "value"),
    "--models": ("models", "value"),
    "--list-models": ("list_models", "flag"),
    "--export": ("export", "value"),
    "--print": ("print_mode", "flag"),
    "-p": ("print_mode", "flag"),
    "--mode": ("mode", "value"),
    "--continue": ("continue_recent", "flag"),
    "-c": ("continue_recent", "flag"),
    "--resume": ("resume", "flag"),
    "-r": ("resume", "flag"),
    "--session": ("session", "value"),
    "--session-id": ("session_id", "value"),
    "--fork": ("fork", "value"),
    "--session-dir": ("session_dir", "value"),
    "--no-session": ("no_session", "flag"),
    "--name": ("name", "value"),
    "-n": ("name", "value"),
    "--tools": ("tools", "value"),
    "-t": ("tools", "value"),
    "--exclude-tools": ("exclude_tools", "value"),
    "-xt": ("exclude_tools", "value"),
    "--no-builtin-tools": ("no_builtin_tools", "flag"),
    "-nbt": ("no_builtin_tools", "flag"),
    "--no-tools": ("no_tools", "flag"),
    "-nt": ("no_tools", "flag"),
    "--extension": ("extensions", "list"),
    "-e": ("extensions", "list"),
    "--no-extensions": ("no_extensions", "flag"),
    "-ne": ("no_extensions", "flag"),
    "--approve": ("approve", "flag"),
    "-a": ("approve", "flag"),
    "--no-approve": ("no_approve", "flag"),
    "-na": ("no_approve", "flag"),
    "--strict-plugins": ("strict_plugins", "flag"),
    "--offline": ("offline", "flag"),
    "--no-mcp": ("no_mcp", "flag"),
    "--version": ("version", "flag"),
    "-v": ("version", "flag"),
    "--verbose": ("verbose", "flag"),
    "--max-turns": ("max_turns", "value"),
    "--max-cost": ("max_cost", "value"),
    "--max-tokens": ("max_tokens", "value"),
    "--max-time": ("max_time", "value"),
}
"""Every host option: the ``RunArgs`` field it sets and whether it is a flag, takes a value, or
repeats (a list)."""


def quick_parse(argv: list[str]) -> RunArgs | None:
    """``argv`` read as typer would, or None when typer should read it."""
    result = RunArgs()
    messages: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            messages.extend(argv[index + 1 :])
            break
        if not token.startswith("-"):
            messages.append(token)
            index += 1
            continue
        name, eq, inline = token.partition("=")
        spec = OPTIONS.get(name if name.startswith("--") else token)
        if spec is None:
            return None
        dest, kind = spec
        if kind == "flag":
            if eq:
                return None
            setattr(result, dest, True)
            index += 1
            continue
        if eq and name.startswith("--"):
            value, index = inline, index + 1
        elif index + 1 < len(argv) and not argv[index + 1].startswith("-"):
            value, index = argv[index + 1], index + 2
        else:
            return None
        if kind == "list":
            getattr(result, dest).append(value)
        else:
            setattr(result, dest, value)
    result.messages = messages
    return result
