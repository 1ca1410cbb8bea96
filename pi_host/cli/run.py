"""``pi [options] [@files...] [messages...]``: load plugins, pick a subcommand or a mode, open a
session, run the mode.

Order of work: a pre-scan finds what plugin loading needs (``-e``, trust, strictness); plugins
load through :func:`pi_host.plugins.selection.load_plugins` (the path every command takes); a
subcommand runs if the first positional argument names one; otherwise plugin flags are taken out,
the host's options parsed, and the mode plugin named by ``--mode`` / ``-p`` runs the prompts.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pi_host.cli import fast_exit
from pi_host.cli.args import UsageError, extract_plugin_flags, first_positional, parse, prescan
from pi_host.cli.interrupts import Interrupts
from pi_host.plugins.dispatch import PluginError, PluginHost
from pi_host.plugins.modes import ModeRun
from pi_host.plugins.registrations import CliFlag, Mode, Subcommand
from pi_host.plugins.selection import LoadedPlugins, PluginRequest, load_plugins

PI_SUBCOMMANDS = ("install", "remove", "uninstall", "update", "list", "config", "auth", "mcp")
"""pi's subcommands that pi-host does not have yet: they say so instead of becoming a prompt."""


RunRequest = ModeRun
"""The mode contract's old name (:class:`pi_host.plugins.modes.ModeRun`)."""


def _stderr(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


def run_cli(argv: list[str]) -> int:
    interrupts = Interrupts()
    interrupts.install()
    pre = prescan(argv)
    load_errors: list[dict[str, Any]] = []

    def on_plugin_error(payload: dict[str, Any]) -> None:
        load_errors.append(payload)
        _stderr(f"pi: plugin {payload['plugin']!r} failed in {payload['event']}: {payload['error']}")

    plugin_request = PluginRequest(
        cwd=os.getcwd(),
        approve=pre.approve,
        extension_paths=tuple(pre.extensions),
        builtins_only=True if pre.no_extensions else None,
        strict=pre.strict,
        on_error=on_plugin_error,
    )
    try:
        loaded = load_plugins(plugin_request)
        loaded.request = plugin_request  # /reload loads the same plugins again
        fast_exit.watch(loaded.host)
    except PluginError:  # --strict-plugins: the failure was named in its one line already
        return 1
    try:
        return _command(argv, loaded, load_errors, interrupts)
    except UsageError as exc:
        _stderr(str(exc))
        return 1
    except PluginError:  # --strict-plugins: the failure was named in its one line already
        return 1
    finally:
        for line in loaded.host.repeated_failures():
            _stderr(f"pi: {line}")


def _command(
    argv: list[str], loaded: LoadedPlugins, load_errors: list[dict[str, Any]], interrupts: Interrupts
) -> int:
    host = loaded.host
    for line in loaded.problems:
        _stderr(f"pi: settings: {line}")
    plugin_flags = [f for f in host.collect("register_cli_flags") if isinstance(f, CliFlag)]
    positional = first_positional(argv, plugin_flags)
    if positional is not None:
        index, name = positional
        if name == "plugins":
            from pi_host.cli.plugins_cmd import run_plugins_command

            return run_plugins_command(host, argv[index + 1 :])
        for sub in host.collect("register_subcommands"):
            if isinstance(sub, Subcommand) and sub.name == name:
                return int(sub.run(argv[index + 1 :]) or 0)
        if name in PI_SUBCOMMANDS:
            _stderr(f"pi: 'pi {name}' is not available in pi-host yet (see pi --help)")
            return 1
    rest, flag_values = extract_plugin_flags(argv, plugin_flags)
    subcommands = [Subcommand("plugins", lambda argv: 0, "List plugins: loaded, failed, disabled or skipped")]
    subcommands += [s for s in host.collect("register_subcommands") if isinstance(s, Subcommand)]
    args = parse(rest, plugin_flags, subcommands)
    if isinstance(args, int):  # --help was printed
        return args
    if args.version:  # not first on the line (the first is answered before anything loads)
        from pi_host._version import __version__

        sys.stdout.write(f"{__version__}\n")
        return 0
    if args.export:
        from pi_host.cli.export_cmd import run_export

        return run_export(args.export, args.messages[0] if args.messages else None)
    mode = _choose_mode(args, host)
    asked_later = mode.can_ask and loaded.trust.reason == "defaultProjectTrust=ask"
    if loaded.trust.message() and not asked_later:  # a mode that asks says it itself
        _stderr(f"pi: {loaded.trust.message()}")
    import asyncio

    return asyncio.run(_run(args, mode, loaded, flag_values, load_errors, interrupts))


def _choose_mode(args: Any, host: PluginHost) -> Mode:
    """``--mode <name>`` (any registered mode or alias), ``-p`` (print), else the interactive
    mode on a terminal and print mode when a stream is redirected."""
    modes: dict[str, Mode] = {}
    for mode in host.collect("register_modes"):
        if isinstance(mode, Mode):
            modes[mode.name] = mode
            for alias in mode.aliases:
                modes.setdefault(alias, mode)
    if args.mode is not None:
        if args.mode not in modes:
            installed = ", ".join(sorted(modes)) or "none"
            raise UsageError(f'Error: Invalid mode "{args.mode}". Installed modes: {installed}')
        return modes[args.mode]
    wanted = "print" if args.print_mode or not (sys.stdin.isatty() and sys.stdout.isatty()) else "interactive"
    if wanted == "interactive" and "interactive" not in modes:
        if not args.messages:
            raise UsageError(
                "pi: interactive mode is not installed yet; pass a prompt with -p (see pi --help)"
            )
        wanted = "print"
    if wanted not in modes:
        raise UsageError(f"pi: no plugin provides the {wanted!r} mode")
    return modes[wanted]


async def _run(
    args: Any,
    mode: Mode,
    loaded: LoadedPlugins,
    flag_values: dict[str, Any],
    load_errors: list[dict[str, Any]],
    interrupts: Interrupts,
) -> int:
    import asyncio

    from pi_host.cli.pydantic_plugins import skip_scan_when_none_installed
    from pi_host.config.models import ModelNotFound, ModelRegistry
    from pi_host.config.paths import cache_dir
    from pi_host.config.settings import load_settings
    from pi_host.runtime.factory import SessionFactory, SessionOptions
    from pi_host.session.errors import SessionError

    skip_scan_when_none_installed(cache_dir())  # before the first model is built

    cwd = os.getcwd()
    host = loaded.host
    registry = ModelRegistry.from_plugins(host)
    if args.list_models:
        sys.stdout.write(
            registry.format_model_list(args.messages[0] if args.messages else None).rstrip("\n") + "\n"
        )
        return 0
    settings, problems = load_settings(cwd, project_trusted=loaded.trust.trusted)
    for line in problems:
        if line not in loaded.problems:  # an unreadable file was already named while loading plugins
            _stderr(f"pi: settings: {line}")
    prompts, images = _compose_prompts(args, cwd, mode.name, settings)
    if prompts is None:
        return 1
    thinking = args.thinking
    try:
        model, suffix = registry.resolve_cli(args.model, args.provider) if args.model else (None, None)
    except (ModelNotFound, LookupError) as exc:
        _stderr(f"pi: {exc.args[0] if exc.args else exc}")
        return 1
    thinking = thinking or suffix
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
        # A terminal mode shows its own session picker once it runs (request.resume_on_start).
        "resume": args.resume and not mode.has_ui,
        "interactive": sys.stdin.isatty() and sys.stderr.isatty(),
    }

    def reload_plugins() -> tuple[Any, bool | None]:
        reloaded = load_plugins(loaded.request)
        fast_exit.watch(reloaded.host)  # /reload may bring a plugin the first load did not have
        return reloaded.host, reloaded.trust.trusted

    limits = _limits(args)
    if isinstance(limits, str):
        _stderr(limits)
        return 1
    base = SessionOptions(
        limits=limits,
        cwd=cwd,
        model=model,
        provider=args.provider,
        thinking_level=thinking,
        no_tools=args.no_tools,
        tool_selection=_tool_selection(args),
        api_key=args.api_key,
        settings=settings,
        mode=mode.name,
        has_ui=mode.has_ui,
        flags=flag_values,
        host=host,
        project_trusted=loaded.trust.trusted,
        store_options=store_options,
        registry=registry,
    )
    factory = SessionFactory(base, session_dir=store_options["session_dir"], reload_plugins=reload_plugins)
    run = ModeRun(
        factory,
        prompts,
        images,
        args,
        host,
        load_errors=load_errors,
        resume_on_start=bool(args.resume and mode.has_ui),
    )

    import gc

    gc.freeze()  # everything loaded so far lives as long as the process (see pi_host.cli.main)
    gc.enable()
    interrupts.attach(asyncio.get_running_loop(), run)
    try:
        if not mode.opens_session:  # a mode written before the contract: its session is headless
            await run.open_session()
        code = mode.run(run)
        if asyncio.iscoroutine(code):
            code = await code
    except SessionError as exc:  # the session could not be opened (a bad file, a missing cwd...)
        _stderr(f"pi: {exc}")
        return 1
    except Exception as exc:
        if run.session is None and type(exc).__name__.endswith(("OpenError", "SessionError", "NotFound")):
            _stderr(f"pi: {exc}")
            return 1
        raise
    finally:
        if run.session is not None:
            await run.session.close()  # the mode may have replaced it (/new)
    if interrupts.code:
        _stderr(interrupts.line)
        return interrupts.code
    return int(code or 0)


def _settings_session_dir(settings: dict[str, Any], cwd: str) -> str | None:
    """The ``sessionDir`` setting is relative to the project directory, not the process cwd."""
    value = settings.get("sessionDir")
    if not isinstance(value, str) or not value:
        return None
    return os.path.join(cwd, os.path.expanduser(value))


def _limits(args: Any) -> Any:
    """``--max-turns`` / ``--max-cost`` / ``--max-tokens`` / ``--max-time`` (None: none given;
    a string: the error to print)."""
    given = (args.max_turns, args.max_cost, args.max_tokens, args.max_time)
    if all(value is None for value in given):
        return None
    from pi_host.agent.budget import Limits, parse_duration

    try:
        turns = int(args.max_turns) if args.max_turns is not None else None
        cost = float(args.max_cost) if args.max_cost is not None else None
        tokens = int(float(args.max_tokens)) if args.max_tokens is not None else None
    except ValueError as exc:
        return f"Error: a budget option needs a number ({exc})"
    seconds = parse_duration(args.max_time) if args.max_time is not None else None
    if args.max_time is not None and seconds is None:
        return f"Error: --max-time {args.max_time!r}: give seconds, or 90s, 5m, 1h"
    if any(value is not None and value < 0 for value in (turns, cost, tokens)):
        return "Error: budgets cannot be negative"
    return Limits(turns=turns, cost=cost, tokens=tokens, time_s=seconds)


def _tool_selection(args: Any) -> Any:
    """``--tools`` / ``--exclude-tools`` / ``--no-builtin-tools``, applied when each session of
    the run is built (``--no-tools`` is the session's own ``no_tools``)."""
    if args.tools is None and not args.exclude_tools and not args.no_builtin_tools:
        return None
    from pi_host.session.parts import ToolSelection

    return ToolSelection(tools=args.tools, exclude=args.exclude_tools, no_builtin=bool(args.no_builtin_tools))


def _compose_prompts(
    args: Any, cwd: str, mode: str, settings: dict[str, Any]
) -> tuple[list[str] | None, list[Any]]:
    from pi_host.cli import input as cli_input

    stdin_text = None
    if mode == "rpc" and any(message.startswith("@") for message in args.messages):
        _stderr("Error: @file arguments are not supported in RPC mode")
        return None, []
    # Without a terminal, --resume reads the picked session number from stdin: leave it alone.
    if mode != "rpc" and not sys.stdin.isatty() and not args.resume:
        try:
            stdin_text = cli_input.read_stdin(sys.stdin)  # capped; trimmed at both ends, as pi does
        except cli_input.InputFileError as exc:
            _stderr(f"pi: {exc}")
            return None, []
    auto_resize = (settings.get("images") or {}).get("autoResize", True) is not False
    try:
        first, images, remaining = cli_input.compose_prompt(list(args.messages), stdin_text, cwd, auto_resize)
    except Exception as exc:  # a missing @file, an image that cannot be read...
        _stderr(f"pi: {exc}")
        return None, []
    return ([first] if first else []) + list(remaining), list(images)
