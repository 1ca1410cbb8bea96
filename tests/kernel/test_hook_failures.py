"""A hook that fails, returns what its rule refuses, or tries to exit is named once and the run goes
on; with strict plugins the failure is fatal. In process, through the SDK, every variant; the
command line's one-line report and exit code are checked once each in
``tests/e2e/cli/test_hardening.py``."""

from __future__ import annotations

import textwrap

import pytest

import pi_host
from pi_host.plugins.dispatch import PluginError


def _plugin(tmp_path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return str(path)


async def _run(plugin: str, strict: bool = False) -> tuple[str | None, list[dict]]:
    session = await pi_host.create_session(
        model="faux/faux-1", extension_paths=(plugin,), strict_plugins=strict, settings={}
    )
    failures: list[dict] = []
    session.host.on_error(failures.append)
    try:
        await session.prompt("hi")
        answer = session.last_assistant()
        return (answer.text() if answer else None), failures
    finally:
        await session.close()


@pytest.mark.parametrize(
    "returned, words",
    [
        ('{"entries": [{"type": "custom_message", "content": 5, "customType": "x"}]}', "content must be"),
        ('{"entries": "all of them"}', "entries must be a list"),
        ('{"continue": "please"}', "continue must be"),
        ('"not a dict"', "expected a dict"),
    ],
)
async def test_a_malformed_turn_end_return_is_named_and_the_run_finishes(tmp_path, returned, words):
    bad = _plugin(
        tmp_path,
        "bad_boundary",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def on_turn_end(event):
            return {returned}
        """,
    )
    answer, failures = await _run(bad)
    assert answer == "faux: hi"
    [failure] = failures
    assert failure["plugin"] == "bad_boundary" and failure["event"] == "turn_end"
    assert words in failure["error"]


@pytest.mark.parametrize(
    "statement", ["raise SystemExit(3)", "import sys; sys.exit(0)", "raise KeyboardInterrupt"]
)
async def test_exit_and_keyboard_interrupt_in_a_hook_are_failures_not_exits(tmp_path, statement):
    bad = _plugin(
        tmp_path,
        "exiter",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def on_agent_start(event):
            {statement}
        """,
    )
    answer, failures = await _run(bad)
    assert answer == "faux: hi"
    assert [(f["plugin"], f["event"]) for f in failures] == [("exiter", "agent_start")]


@pytest.mark.parametrize("hook", ["on_agent_start", "on_message_update", "on_turn_end"])
async def test_strict_plugins_make_a_failure_fatal(tmp_path, hook):
    bad = _plugin(
        tmp_path,
        "strict_bad",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def {hook}(event):
            raise RuntimeError("boom")
        """,
    )
    with pytest.raises(PluginError, match=rf"plugin 'strict_bad' failed in {hook[3:]}: RuntimeError: boom"):
        await _run(bad, strict=True)
