"""The typer-free reader of plain command lines agrees with the typer app on every option."""

from __future__ import annotations

import pytest
import typer

from pi_host.cli.options import RunArgs, build_app
from pi_host.cli.quick_args import OPTIONS, quick_parse


def typer_parse(argv):
    result = RunArgs()
    build_app(result, [])(argv, prog_name="pi", standalone_mode=False)
    return result


def test_the_option_table_is_the_typer_apps():
    command = typer.main.get_command(build_app(RunArgs(), []))
    declared = {}
    for param in command.params:
        for opt in param.opts:
            if opt in ("-h", "--help"):
                continue
            kind = "flag" if param.is_flag else ("list" if param.multiple else "value")
            declared[opt] = (param.name, kind)
    assert declared == OPTIONS


CASES = [
    [],
    ["hello"],
    ["--model", "faux/faux-1", "-p", "hello", "world"],
    ["-c", "--model=anthropic/claude:high", "--thinking", "low", "msg"],
    ["-e", "a.py", "--extension", "b.py", "-ne", "-na", "-a", "--strict-plugins"],
    ["--session", "abc", "--session-dir", "/tmp/x", "--no-session", "-n", "named", "-r", "--fork", "f"],
    ["--tools", "read,ls", "-xt", "bash", "-nbt", "-nt", "--mode", "json", "--offline", "--verbose"],
    ["@file.md", "first", "--provider", "openai", "--model", "gpt", "second"],
    ["--api-key", "k", "--models", "a,b", "--list-models", "search"],
    ["msg", "--", "-not-an-option", "--print"],
    ["--session-id", "0123"],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv) or "(empty)")
def test_quick_parse_reads_plain_command_lines_as_typer_does(argv):
    quick = quick_parse(argv)
    assert quick is not None
    assert quick == typer_parse(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--bogus"],
        ["-pc"],
        ["--model"],
        ["--print=yes"],
        ["--tools", "-bash"],
        ["-x", "y"],
    ],
)
def test_anything_unusual_is_left_to_typer(argv):
    assert quick_parse(argv) is None
