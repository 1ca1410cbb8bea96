"""``pi [options] [@files...] [messages...]``: parse, load plugins, open a session, run a mode.

Order of work: a pre-scan finds what plugin loading needs (``-e``, trust, strictness); plugins load;
flags that plugins registered are taken out of argv; typer parses the host's own options; the mode
plugin chosen by ``-p`` / ``--mode`` runs the prompts.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

import typer

from pi_host.config import paths
from pi_host.plugins.registrations import CliFlag, Mode, Subcommand

HOST_OPTIONS_WITH_VALUE = {"-e", "--extension"}


@dataclass
class RunArgs:
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    models: str | None = None
    list_models: bool = False
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
    verbose: bool = False
    messages: list[str] = field(default_factory=list)


@dataclass
class RunRequest:
    """What a mode plugin receives: the open session and the prompts to run."""

    session: Any
    prompts: list[str]
    images: list[Any]
    args: RunArgs
    host: Any
    stdout: Any = field(default_factory=lambda: sys.stdout)
    stderr: Any = field(default_factory=lambda: sys.stderr)
    load_errors: list[dict[str, Any]] = field(default_factory=list)
    header: dict[str, Any] | None = None


def _build_app(result: RunArgs, plugin_flags: list[CliFlag]) -> typer.Typer:
    epilog = ""
    if plugin_flags:
        lines = [
            f"  --{f.name}{' ' + ', '.join(f.aliases) if f.aliases else ''}  {f.description}"
            for f in plugin_flags
        ]
        epilog = "Plugin flags:\n\n" + "\n\n".join(lines)
    app = typer.Typer(add_completion=False, rich_markup_mode=None)

    @app.command(
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "help_option_names": ["-h", "--help"],
        },
        epilog=epilog,
        help="pi-host: a plugin-first coding agent. Runs the messages as prompts; `pi plugins` lists plugins.",
    )
    def run(
        ctx: typer.Context,
        provider: str = typer.Option(None, "--provider", help="Provider id (with --model)."),
        model: str = typer.Option(None, "--model", help="provider/id[:thinking], an id or a name fragment."),
        api_key: str = typer.Option(None, "--api-key", help="Key for this run only (never stored)."),
        thinking: str = typer.Option(None, "--thinking", help="off|minimal|low|medium|high|xhigh|max"),
        models: str = typer.Option(None, "--models", help="Models to cycle through (comma list)."),
        list_models: bool = typer.Option(False, "--list-models", help="List models (optional search term)."),
        print_mode: bool = typer.Option(False, "--print", "-p", help="Print the final answer and exit."),
        mode: str = typer.Option(None, "--mode", help="text|json|rpc"),
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
        verbose: bool = typer.Option(False, "--verbose", help="More diagnostics on stderr."),
    ) -> None:
        values = dict(locals())
        values.pop("ctx")
        for key, value in values.items():
            setattr(result, key, value)
        result.messages = list(ctx.args)

    return app


def _prescan(argv: list[str]) -> dict[str, Any]:
    """What plugin loading needs before the full parse."""
    found: dict[str, Any] = {"extensions": [], "approve": None, "strict": False, "no_extensions": False}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            break
        if token in HOST_OPTIONS_WITH_VALUE and index + 1 < len(argv):
            found["extensions"].append(argv[index + 1])
            index += 1
        elif token.startswith("--extension="):
            found["extensions"].append(token.split("=", 1)[1])
        elif token in ("-a", "--approve"):
            found["approve"] = True
        elif token in ("-na", "--no-approve"):
            found["approve"] = False
        elif token == "--strict-plugins":
            found["strict"] = True
        elif token in ("-ne", "--no-extensions"):
            found["no_extensions"] = True
        index += 1
    return found


def extract_plugin_flags(
    argv: list[str], flags: list[CliFlag]
) -> tuple[list[str], dict[str, Any], list[str]]:
    """Take registered plugin flags out of argv. Returns (rest, values, unknown-short-flag errors)."""
    by_token: dict[str, CliFlag] = {}
    for flag in flags:
        by_token[f"--{flag.name}"] = flag
        for alias in flag.aliases:
            by_token[alias] = flag
    values: dict[str, Any] = {f.name: ([] if f.type == "list" else f.default) for f in flags}
    rest: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            rest.extend(argv[index:])
            break
        key, eq, inline = token.partition("=")
        flag = by_token.get(key if eq and key.startswith("--") else token)
        if flag is None:
            rest.append(token)
            index += 1
            continue
        if flag.type == "boolean":
            values[flag.name] = True
            index += 1
            continue
        if eq and key.startswith("--"):
            value, index = inline, index + 1
        elif index + 1 < len(argv):
            value, index = argv[index + 1], index + 2
        else:
            raise typer.BadParameter(f"{token} needs a value")
        if flag.type == "list":
            values[flag.name].append(value)
        else:
            values[flag.name] = value
    return rest, values, []


def _stderr(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


def _decide_trust(cwd: str, approve: bool | None, mode: str) -> tuple[bool, str | None]:
    try:
        from pi_host.config import trust
    except ImportError:
        return True, None
    decision = trust.decide_trust(cwd, approve, mode)
    message = None
    if not decision.trusted and decision.skipped:
        message = f"pi: project not trusted ({decision.reason}); skipped: {', '.join(decision.skipped)}"
    return decision.trusted, message


def run_cli(argv: list[str]) -> int:
    from pi_host.plugins.dispatch import PluginError
    from pi_host.plugins.selection import build_host

    if argv and not argv[0].startswith("-"):
        pass  # subcommands registered by plugins are resolved below, after loading
    pre = _prescan(argv)
    cwd = os.getcwd()
    wants_help = any(a in ("-h", "--help") for a in argv)
    mode_hint = "json" if "json" in argv else ("rpc" if "rpc" in argv else "print")
    if wants_help:  # help lists plugin flags but needs no settings, trust or session
        trusted, trust_line, settings, problems = True, None, {}, []
    else:
        from pi_host.config.settings import load_settings

        trusted, trust_line = _decide_trust(cwd, pre["approve"], mode_hint)
        settings, problems = load_settings(cwd, project_trusted=trusted)
    load_errors: list[dict[str, Any]] = []

    def on_plugin_error(payload: dict[str, Any]) -> None:
        load_errors.append(payload)
        _stderr(f"pi: plugin {payload['plugin']!r} failed in {payload['event']}: {payload['error']}")

    try:
        host = build_host(
            cwd,
            settings,
            extension_paths=tuple(pre["extensions"]),
            builtins_only=True if pre["no_extensions"] else None,
            strict=pre["strict"],
            on_error=on_plugin_error,
        )
    except PluginError as exc:
        _stderr(f"pi: {exc}")
        return 1
    if argv and not argv[0].startswith("-"):
        for sub in host.collect("register_subcommands"):
            if isinstance(sub, Subcommand) and sub.name == argv[0]:
                return int(sub.run(argv[1:]) or 0)
    plugin_flags = [f for f in host.collect("register_cli_flags") if isinstance(f, CliFlag)]
    rest, flag_values, _ = extract_plugin_flags(argv, plugin_flags)
    args = RunArgs()
    app = _build_app(args, plugin_flags)
    try:
        app(rest, prog_name="pi", standalone_mode=False)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except Exception as exc:  # click usage errors
        _stderr(f"pi: {exc}")
        return 2
    if wants_help:
        return 0
    for line in problems:
        _stderr(f"pi: settings: {line}")
    if trust_line:
        _stderr(trust_line)
    flag_values["project-trusted"] = trusted
    import asyncio

    return asyncio.run(_run(args, host, settings, flag_values, load_errors, cwd))


def _choose_mode(args: RunArgs) -> str:
    if args.mode in ("json", "rpc"):
        return args.mode
    if args.print_mode or args.mode == "text":
        return "print"
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        return "print"
    return "interactive"


async def _run(
    args: RunArgs,
    host: Any,
    settings: dict[str, Any],
    flag_values: dict[str, Any],
    load_errors: list[dict[str, Any]],
    cwd: str,
) -> int:
    import asyncio
    import signal

    from pi_host.config.models import ModelNotFound, ModelRegistry
    from pi_host.sdk import SessionOptions, create_session
    from pi_host.session import SessionError

    mode_name = _choose_mode(args)
    registry = ModelRegistry(host)
    if args.list_models:
        search = args.messages[0] if args.messages else None
        lister = getattr(registry, "format_model_list", None)
        if lister is not None:
            sys.stdout.write(lister(search).rstrip("\n") + "\n")
        else:
            for model in registry.models():
                if search is None or search.lower() in model.key.lower():
                    sys.stdout.write(f"{model.key}\n")
        return 0
    modes = {m.name: m for m in host.collect("register_modes") if isinstance(m, Mode)}
    if mode_name == "interactive" and "interactive" not in modes:
        if not args.messages:
            _stderr("pi: interactive mode is not installed yet; pass a prompt with -p (see pi --help)")
            return 1
        mode_name = "print"
    mode = modes.get(mode_name)
    if mode is None:
        _stderr(f"pi: no plugin provides the {mode_name!r} mode")
        return 1
    prompts, images = await _compose_prompts(args, cwd, mode_name)
    if prompts is None:
        return 1
    model = None
    thinking = args.thinking
    try:
        if args.model:
            resolver = getattr(registry, "resolve_cli", None)
            if resolver is not None:
                model, suffix = resolver(args.model, args.provider)
                thinking = thinking or suffix
            else:
                pattern, _, suffix = args.model.partition(":")
                model = registry.resolve(pattern, args.provider)
                thinking = thinking or (suffix or None)
    except (ModelNotFound, LookupError) as exc:
        _stderr(f"pi: {exc.args[0] if exc.args else exc}")
        return 1
    if args.api_key:
        provider = model.provider if model is not None else args.provider
        if provider:
            registry.runtime_keys[provider] = args.api_key
    store_options = {
        "session_dir": args.session_dir
        or os.environ.get("PI_CODING_AGENT_SESSION_DIR")
        or _settings_session_dir(settings, cwd),
        "session": args.session,
        "continue_recent": args.continue_recent,
        "fork": args.fork,
        "session_id": args.session_id,
        "no_session": args.no_session,
        "name": args.name,
        "extra": {"resume": args.resume, "interactive": sys.stdin.isatty() and sys.stderr.isatty()},
    }
    try:
        session = await create_session(
            SessionOptions(
                cwd=cwd,
                model=model,
                provider=args.provider,
                thinking_level=thinking,
                tools=None,
                no_tools=args.no_tools,
                api_key=args.api_key,
                settings=settings,
                mode=mode_name,
                flags=flag_values,
                host=host,
                store_options=store_options,
                registry=registry,
            )
        )
    except SessionError as exc:
        _stderr(f"pi: {exc}")
        return 1
    except Exception as exc:
        if type(exc).__name__.endswith(("OpenError", "SessionError", "NotFound")):
            _stderr(f"pi: {exc}")
            return 1
        raise
    _apply_tool_flags(session, args)
    request = RunRequest(
        session=session,
        prompts=prompts,
        images=images,
        args=args,
        host=host,
        load_errors=load_errors,
        header=getattr(session.store, "header", None),
    )
    loop = asyncio.get_running_loop()
    interrupted: dict[str, int] = {}

    def on_signal(signum: int) -> None:
        if interrupted:
            os._exit(128 + signum)
        interrupted["code"] = 128 + signum
        session.request_abort()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        code = mode.run(request)
        if asyncio.iscoroutine(code):
            code = await code
    finally:
        await session.close()
    return interrupted.get("code", int(code or 0))


def _settings_session_dir(settings: dict[str, Any], cwd: str) -> str | None:
    """The ``sessionDir`` setting is relative to the project directory, not the process cwd."""
    value = settings.get("sessionDir")
    if not isinstance(value, str) or not value:
        return None
    return os.path.join(cwd, os.path.expanduser(value))


def _apply_tool_flags(session: Any, args: RunArgs) -> None:
    active = dict(session.active_tools)
    if args.tools is not None:
        names = [t.strip() for t in args.tools.split(",") if t.strip()]
        if names and all(n[0] in "+-" for n in names):
            active = dict(session.active_tools)
            for item in names:
                name = item[1:]
                if item[0] == "+" and name in session.all_tools:
                    active[name] = session.all_tools[name]
                else:
                    active.pop(name, None)
        else:
            active = {n: session.all_tools[n] for n in names if n in session.all_tools}
            for n in names:
                if n not in session.all_tools:
                    _stderr(f"pi: unknown tool {n!r} (available: {', '.join(sorted(session.all_tools))})")
    if args.exclude_tools:
        for name in args.exclude_tools.split(","):
            active.pop(name.strip(), None)
    if args.no_builtin_tools:
        builtins = {"read", "bash", "edit", "write", "grep", "find", "ls"}
        active = {n: t for n, t in active.items() if n not in builtins}
    if args.no_tools:
        active = {}
    session.active_tools = active


async def _compose_prompts(args: RunArgs, cwd: str, mode: str) -> tuple[list[str] | None, list[Any]]:
    stdin_text = None
    # Without a terminal, --resume reads the picked session number from stdin: leave it alone.
    if mode != "rpc" and not sys.stdin.isatty() and not args.resume:
        data = sys.stdin.read()
        stdin_text = data if data.strip() else None
    messages = list(args.messages)
    try:
        from pi_host.cli import input as cli_input
    except ImportError:
        cli_input = None  # type: ignore[assignment]
    if cli_input is not None:
        try:
            first, images, remaining = cli_input.compose_prompt(messages, stdin_text, cwd)
        except Exception as exc:
            _stderr(f"pi: {exc}")
            return None, []
        prompts = ([first] if first else []) + list(remaining)
        return prompts, list(images)
    first = (stdin_text or "") + (messages[0] if messages else "")
    prompts = ([first] if first else []) + messages[1:]
    return prompts, []


def agent_dir() -> str:
    return paths.agent_dir()
