"""Reading ``pi``'s argument list (reference §10.1).

Two passes. :func:`prescan` reads what plugin loading needs (``-e``, ``-a``/``-na``, strictness)
before any plugin is imported; after loading, :func:`first_positional` finds a subcommand even
after options (``pi -a plugins``), plugin flags are taken out (:func:`extract_plugin_flags`), and
:func:`parse` reads the host's options: a plain command line without typer
(:mod:`pi_host.cli.quick_args`), anything else (``--help``, an unknown option) with typer, which
refuses unknown ones as pi does (``Error: Unknown option: --bogus``).
"""

from __future__ import annotations

from typing import Any

from pi_host.plugins.registrations import CliFlag

VALUE_OPTIONS = frozenset(
    "--provider --model --api-key --thinking --models --mode --session --session-id --fork --session-dir "
    "--name -n --tools -t --exclude-tools -xt --extension -e "
    "--max-turns --max-cost --max-tokens --max-time".split()
)
"""Host options followed by a value (the value is not a positional argument)."""


class UsageError(Exception):
    """A command line pi-host refuses; ``str()`` is the line to print."""


class Prescan:
    """What :func:`prescan` found."""

    def __init__(self) -> None:
        self.extensions: list[str] = []
        self.approve: bool | None = None
        self.strict = False
        self.no_extensions = False
        self.help = False


def prescan(argv: list[str]) -> Prescan:
    """What plugin loading needs, read before any plugin is imported."""
    found = Prescan()
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            break
        if token in ("-e", "--extension") and index + 1 < len(argv):
            found.extensions.append(argv[index + 1])
            index += 1
        elif token.startswith("--extension="):
            found.extensions.append(token.split("=", 1)[1])
        elif token in ("-a", "--approve"):
            found.approve = True
        elif token in ("-na", "--no-approve"):
            found.approve = False
        elif token == "--strict-plugins":
            found.strict = True
        elif token in ("-ne", "--no-extensions"):
            found.no_extensions = True
        elif token in ("-h", "--help"):
            found.help = True
        index += 1
    return found


def first_positional(argv: list[str], flags: list[CliFlag]) -> tuple[int, str] | None:
    """The index and text of the first argument that is not an option or an option's value."""
    takes_value = set(VALUE_OPTIONS)
    for flag in flags:
        if flag.type != "boolean":
            takes_value.update([f"--{flag.name}", *flag.aliases])
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            return None
        if not token.startswith("-") or token == "-":
            return index, token
        index += 2 if token in takes_value else 1
    return None


def extract_plugin_flags(argv: list[str], flags: list[CliFlag]) -> tuple[list[str], dict[str, Any]]:
    """Take registered plugin flags out of argv: ``(the rest, {flag name: value})``."""
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
            raise UsageError(f"Error: {token} needs a value")
        if flag.type == "list":
            values[flag.name].append(value)
        else:
            values[flag.name] = value
    return rest, values


def parse(argv: list[str], plugin_flags: list[CliFlag], subcommands: list[Any] = ()) -> Any:
    """The host's options and the messages (a :class:`pi_host.cli.options.RunArgs`); an ``int``
    is the exit code of ``--help`` (which lists ``subcommands``). Raises :class:`UsageError` for an
    unknown option or a bad value."""
    from pi_host.cli.quick_args import quick_parse

    quick = quick_parse(argv)
    if quick is not None:
        return quick
    from pi_host.cli.options import RunArgs, build_app

    result = RunArgs()
    try:
        code = build_app(result, plugin_flags, list(subcommands))(argv, prog_name="pi", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:
        # typer may bring its own copy of click: recognise its exceptions by class name
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        if "NoSuchOption" in kinds:
            raise UsageError(f"Error: Unknown option: {exc.option_name}") from None  # type: ignore[attr-defined]
        if "UsageError" in kinds:
            raise UsageError(f"Error: {exc.format_message()}") from None  # type: ignore[attr-defined]
        if "Exit" in kinds:
            return int(getattr(exc, "exit_code", 0) or 0)
        raise
    return code if isinstance(code, int) else result  # click returns --help's exit code
