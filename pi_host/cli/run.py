"""``pi [options] [@files...] [messages...]``: load plugins, pick a subcommand or a mode, open a
session, run the mode.

Order of work: a pre-scan finds what plugin loading needs (``-e``, trust, strictness); plugins
load through :func:`pi_host.plugins.selection.load_plugins` (the path every command takes); a
subcommand runs if the first positional argument names one; otherwise plugin flags are taken out,
the host's options parsed, and the mode plugin named by ``--mode`` / ``-p`` runs the prompts.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

from pi_host.cli.args import UsageError, extract_plugin_flags, first_positional, parse, prescan
from pi_host.cli.interrupts import Interrupts
from pi_host.plugins.dispatch import PluginError, PluginHost
from pi_host.plugins.registrations import CliFlag, Mode, Subcommand
from pi_host.plugins.selection import LoadedPlugins, PluginRequest, load_plugins

PI_SUBCOMMANDS = ("install", "remove", "uninstall", "update", "list", "config", "auth", "mcp")
"""pi's subcommands that pi-host does not have yet: they say so instead of becoming a prompt."""


class RunRequest:
    """What a mode plugin receives: the open session and the prompts to run (a plain class:
    dataclasses cost start-up time)."""

    def __init__(
        self,
        session: Any,
        prompts: list[str],
        images: list[Any],
        args: Any,
        host: Any,
        stdout: Any = None,
        stderr: Any = None,
        load_errors: list[dict[str, Any]] | None = None,
        header: dict[str, Any] | None = None,
    ) -> None:
        self.session = session
        self.prompts = prompts
        self.images = images
        self.args = args
        """The parsed options: a :class:`pi_host.cli.options.RunArgs`."""
        self.host = host
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.load_errors = load_errors if load_errors is not None else []
        """Plugin failures reported before the mode started (JSON mode prints them first)."""
        self.header = header
        """The session file's header, when the store has one."""
        self.interrupted = False
        """A signal aborted the run: the CLI prints the one line about it (modes stay quiet)."""
        self.new_session: Any = None
        """``await request.new_session(session_file=None, *, store=None, reason=None,
        previous_session_file=None)``: a fresh session with the same options (``/new``), that
        file's session resumed (``/resume``), or one on a store already switched to a new file
        (``/fork``, ``/clone``); the mode closes the old one and owns the new one."""
        self.session_dir: str | None = None
        """Where this run keeps session files (``--session-dir`` or the settings), None: the default."""
        self.reload_session: Any = None
        """``await request.reload_session(session)``: plugins, settings and context loaded again
        on the same store (``/reload``); the old session is shut down but its store stays open."""
        self.resume_on_start = False
        """``-r`` in a mode with a UI: the mode opens its session picker before the first prompt."""
        self.on_interrupt: Any = None
        """Called on the loop after a signal aborted the session (the interactive mode exits)."""


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
    args = parse(rest, plugin_flags)
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
    if loaded.trust.message():
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
    from pi_host.sdk import SessionOptions, create_session
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

    def options(stored: dict[str, Any], start_reason: str = "startup", **changes: Any) -> Any:
        """This run's session options (``changes`` for a reload: new plugins, settings, store)."""
        base = SessionOptions(
            cwd=cwd,
            model=model,
            provider=args.provider,
            thinking_level=thinking,
            no_tools=args.no_tools,
            api_key=args.api_key,
            settings=settings,
            mode=mode.name,
            has_ui=mode.has_ui,
            flags=flag_values,
            host=host,
            project_trusted=loaded.trust.trusted,
            store_options=stored,
            registry=registry,
            start_reason=start_reason,
        )
        return dataclasses.replace(base, **changes) if changes else base

    async def new_session(
        session_file: str | None = None,
        *,
        store: Any = None,
        reason: str | None = None,
        previous_session_file: str | None = None,
    ) -> Any:
        """A fresh session, that file's session resumed, or a session on ``store`` (a store
        already switched to a forked or cloned file)."""
        fresh = {
            "session_dir": store_options["session_dir"],
            "no_session": args.no_session and not session_file,
        }
        if session_file:
            fresh["session"] = session_file
        reason = reason or ("resume" if session_file else "new")
        created = await create_session(
            options(fresh, reason, store=store, previous_session_file=previous_session_file)
        )
        _apply_tool_flags(created, args)
        return created

    try:
        session = await create_session(options(store_options))
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

    async def reload_session(current: Any) -> Any:
        """The plugins, settings and context of ``current`` loaded again, on the same store."""
        reloaded = load_plugins(loaded.request)
        fresh_settings, _ = load_settings(cwd, project_trusted=reloaded.trust.trusted)
        await current.host.dispatch("session_shutdown", {"reason": "reload"}, current.ctx)
        fresh_registry = ModelRegistry.from_plugins(reloaded.host)
        fresh_registry.runtime_keys.update(registry.runtime_keys)  # --api-key
        created = await create_session(
            options(
                {}, "reload", model=current.model, thinking_level=current.thinking_level, settings=fresh_settings,
                host=reloaded.host, project_trusted=reloaded.trust.trusted, store=current.store,
                registry=fresh_registry,
            )
        )  # fmt: skip
        _apply_tool_flags(created, args)
        return created

    import gc

    gc.freeze()  # everything loaded so far lives as long as the process (see pi_host.cli.main)
    gc.enable()
    request.new_session = new_session
    request.session_dir = store_options["session_dir"]
    request.resume_on_start = bool(args.resume and mode.has_ui)
    request.reload_session = reload_session
    interrupts.attach(session, asyncio.get_running_loop(), request)
    try:
        code = mode.run(request)
        if asyncio.iscoroutine(code):
            code = await code
    finally:
        await request.session.close()  # the mode may have replaced it (/new)
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


def _matching(pattern: str, names: Any) -> list[str]:
    """Tool names a ``--tools`` / ``--exclude-tools`` entry names: itself, or a ``*``/``?`` glob."""
    import fnmatch

    if any(char in pattern for char in "*?["):
        return [name for name in names if fnmatch.fnmatchcase(name, pattern)]
    return [pattern] if pattern in names else []


def _apply_tool_flags(session: Any, args: Any) -> None:
    available = session.all_tools
    active = dict(session.active_tools)
    if args.tools is not None:
        entries = [t.strip() for t in args.tools.split(",") if t.strip()]
        if entries and all(n[0] in "+-" for n in entries):
            for item in entries:
                for name in _matching(item[1:], available):
                    if item[0] == "+":
                        active[name] = available[name]
                    else:
                        active.pop(name, None)
        else:
            active = {}
            for entry in entries:
                found = _matching(entry, available)
                if not found:
                    _stderr(f"pi: unknown tool {entry!r} (available: {', '.join(sorted(available))})")
                active.update((name, available[name]) for name in found)
    if args.exclude_tools:
        for entry in args.exclude_tools.split(","):
            for name in _matching(entry.strip(), list(active)):
                active.pop(name, None)
    if args.no_builtin_tools:
        active = {n: t for n, t in active.items() if n not in session.builtin_tools}
    if args.no_tools:
        active = {}
    session.active_tools = active


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
        stdin_text = sys.stdin.read().strip() or None  # trimmed at both ends, as pi does
    auto_resize = (settings.get("images") or {}).get("autoResize", True) is not False
    try:
        first, images, remaining = cli_input.compose_prompt(list(args.messages), stdin_text, cwd, auto_resize)
    except Exception as exc:  # a missing @file, an image that cannot be read...
        _stderr(f"pi: {exc}")
        return None, []
    return ([first] if first else []) + list(remaining), list(images)
