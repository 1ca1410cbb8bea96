"""The host's own options, as a typer app (imported only to parse a run's arguments or print
``--help``: typer and click cost start-up time that ``pi plugins`` does not need to pay)."""

from __future__ import annotations

from typing import Any

import typer

from pi_host.cli.quick_args import RunArgs
from pi_host.plugins.registrations import CliFlag

__all__ = ["RunArgs", "build_app"]


EXAMPLES = (
    ("pi", "start the terminal interface in this folder"),
    ('pi "explain src/app.py"', "start it with a first prompt"),
    ('pi -p "list the TODOs" @notes.md', "print one answer, with a file attached, and exit"),
    ("pi -c", "continue the newest session of this folder"),
    ("pi -r", "pick a session to resume"),
    ("pi --model anthropic/claude-sonnet-4-5:high", "a model, with a thinking level"),
    ("pi --mode rpc", "serve JSON commands on stdin (docs/rpc.md)"),
    ("pi install ./my-plugin", "add a plugin package (docs/packages.md)"),
)
"""``--help``'s examples: a first run, print mode, resuming, models, RPC and plugins."""


def _block(title: str, rows: list[tuple[str, str]]) -> str:
    # "\b" keeps click from joining the lines of this paragraph into one
    width = max(len(left) for left, _ in rows) + 2
    return f"{title}:\n\n\b\n" + "\n".join(f"  {left.ljust(width)}{right}" for left, right in rows)


def build_app(result: Any, plugin_flags: list[CliFlag], subcommands: list[Any] = ()) -> typer.Typer:
    """The app; parsing sets the options' values as attributes of ``result`` (a ``RunArgs``);
    ``subcommands`` (``pi <name> ...``, with a ``description``) are listed in the help."""
    parts = []
    if subcommands:
        parts.append(_block("Commands", [(f"pi {c.name}", c.description or "") for c in subcommands]))
    parts.append(_block("Examples", list(EXAMPLES)))
    if plugin_flags:
        lines = [
            f"  --{f.name}{' ' + ', '.join(f.aliases) if f.aliases else ''}  {f.description}"
            for f in plugin_flags
        ]
        parts.append("Plugin flags:\n\n" + "\n\n".join(lines))
    epilog = "\n\n".join(parts)
    app = typer.Typer(add_completion=False, rich_markup_mode=None)

    @app.command(
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": False,
            "help_option_names": ["-h", "--help"],
        },
        epilog=epilog,
        help="pi-host: a plugin-first coding agent. Runs the messages as prompts (pi [options] [@files...] [messages...]).",
    )
    def run(
        ctx: typer.Context,
        provider: str = typer.Option(None, "--provider", help="Provider id (with --model)."),
        model: str = typer.Option(None, "--model", help="provider/id[:thinking], an id or a name fragment."),
        api_key: str = typer.Option(None, "--api-key", help="Key for this run only (never stored)."),
        thinking: str = typer.Option(None, "--thinking", help="off|minimal|low|medium|high|xhigh|max"),
        models: str = typer.Option(None, "--models", help="Models to cycle through (comma list)."),
        list_models: bool = typer.Option(False, "--list-models", help="List models (optional search term)."),
        export: str = typer.Option(
            None,
            "--export",
            help="Write a session file as HTML and exit: --export <session.jsonl> [out.html].",
        ),
        print_mode: bool = typer.Option(False, "--print", "-p", help="Print the final answer and exit."),
        mode: str = typer.Option(
            None, "--mode", help="A run mode by name: text (print), json, or one a plugin adds."
        ),
        continue_recent: bool = typer.Option(False, "--continue", "-c", help="Continue the newest session."),
        resume: bool = typer.Option(False, "--resume", "-r", help="Pick a session to resume."),
        session: str = typer.Option(None, "--session", help="Session file path or id prefix."),
        session_id: str = typer.Option(None, "--session-id", help="Open or create the session with this id."),
        fork: str = typer.Option(None, "--fork", help="Fork a session (path or id) into a new one."),
        session_dir: str = typer.Option(None, "--session-dir", help="Directory for session files."),
        no_session: bool = typer.Option(False, "--no-session", help="Keep the session in memory only."),
        name: str = typer.Option(None, "--name", "-n", help="Name the session."),
        tools: str = typer.Option(
            None, "--tools", "-t", help="Comma list of tools (allowlist, +name/-name)."
        ),
        exclude_tools: str = typer.Option(
            None, "--exclude-tools", "-xt", help="Comma list of tools to drop."
        ),
        no_builtin_tools: bool = typer.Option(False, "--no-builtin-tools", "-nbt", help="No built-in tools."),
        no_tools: bool = typer.Option(False, "--no-tools", "-nt", help="No tools at all."),
        extensions: list[str] = typer.Option(
            [], "--extension", "-e", help="Load a plugin file (repeatable)."
        ),
        no_extensions: bool = typer.Option(False, "--no-extensions", "-ne", help="Only built-in plugins."),
        approve: bool = typer.Option(False, "--approve", "-a", help="Trust this project's resources."),
        no_approve: bool = typer.Option(False, "--no-approve", "-na", help="Do not trust this project."),
        strict_plugins: bool = typer.Option(False, "--strict-plugins", help="A failing plugin is fatal."),
        offline: bool = typer.Option(False, "--offline", help="No network beyond configured providers."),
        no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not connect MCP servers in this run."),
        version: bool = typer.Option(False, "--version", "-v", help="Show the version number."),
        verbose: bool = typer.Option(False, "--verbose", help="More diagnostics on stderr."),
        max_turns: str = typer.Option(None, "--max-turns", help="Stop before a request past N turns."),
        max_cost: str = typer.Option(None, "--max-cost", help="Stop before a request that would cross USD."),
        max_tokens: str = typer.Option(None, "--max-tokens", help="Stop before a request past N tokens."),
        max_time: str = typer.Option(None, "--max-time", help="Stop requesting after 90, 90s, 5m, 1h."),
    ) -> None:
        values = dict(locals())
        values.pop("ctx")
        for key, value in values.items():
            setattr(result, key, value)
        result.messages = list(ctx.args)

    return app
