"""``/settings``, ``/trust``, ``/login`` and ``/logout`` in a real terminal (tmux): what they
write to settings.json, trust.json and auth.json, and that a typed key is never shown or saved
anywhere else."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest

from tests.support.interactive import session_files, terminal_pi
from tests.support.loopback import LoopbackServer
from tests.support.terminal import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def _clear_search(term, query: str) -> None:
    term.press(*["BSpace"] * len(query))


def test_settings_lists_pis_entries_described_searchable_and_changed_in_place(world):
    settings = world["agent"] / "settings.json"
    settings.write_text(json.dumps({"compaction": {"enabled": False}, "myPlugin": {"colour": "teal"}}))
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.send("/settings")
            term.press("Enter")
            term.wait_for("(1/33)")  # pi's 33 entries
            term.wait_for(re.compile(r"› Auto-compact\s+false"), scrollback=False)
            term.wait_for("Summarize older messages")  # the highlighted entry's description
            term.wait_for("Type to search · Enter/Space to change · Esc to close")
            for query, before, after in (
                ("steering", "one-at-a-time", "all"),
                ("idle timeout", "5 min", "disabled"),
                ("project trust", "Ask", "Always trust"),
                ("mermaid", "streaming", "off"),
            ):
                term.send(query)
                term.wait_for(re.compile(rf"› \S.*\s{re.escape(before)}\s*$", re.M), scrollback=False)
                term.press("Enter")  # changes the value; the list stays open
                term.wait_for(re.compile(rf"› \S.*\s{re.escape(after)}\s*$", re.M), scrollback=False)
                _clear_search(term, query)
                term.wait_for("(1/33)")
            term.press("Space")  # with no search typed, Space changes the highlighted entry too
            term.wait_for(re.compile(r"› Auto-compact\s+true"), scrollback=False)
            term.press("Escape")
            term.wait_for("Saved steeringMode = all, httpIdleTimeoutMs = 0, defaultProjectTrust = always")
            term.wait_gone("Type to search")
            term.press("C-d")
            assert term.wait_exit() == 0
    assert json.loads(settings.read_text()) == {
        "compaction": {"enabled": True},
        "myPlugin": {"colour": "teal"},
        "steeringMode": "all",
        "httpIdleTimeoutMs": 0,
        "defaultProjectTrust": "always",
        "markdown": {"mermaid": "off"},
    }


PROMPT_COLOUR = re.compile(r"\x1b\[([0-9;]+)m›")
"""The editor's ``›`` in the theme's accent colour (ANSI capture)."""


def _prompt_colour(term) -> str | None:
    """The colour of the editor's prompt: the line under the next-to-last rule (the editor sits
    between two rules, the footer under the last)."""
    lines = term.screen(ansi=True).splitlines()
    rules = [index for index, line in enumerate(lines) if "────" in line]
    if len(rules) < 2:
        return None
    found = PROMPT_COLOUR.search(lines[rules[-2] + 1])
    return found.group(1) if found else None


def test_theme_is_previewed_while_moving_and_escape_restores_it(world):
    settings = world["agent"] / "settings.json"
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.wait_until(lambda screen: _prompt_colour(term) is not None, what="the editor's prompt")
            dark = _prompt_colour(term)
            term.send("/settings")
            term.press("Enter")
            term.wait_for("(1/33)")
            term.send("theme")
            term.wait_for(re.compile(r"› Theme\s+system"), scrollback=False)
            term.press("Enter")
            term.wait_for(re.compile(r"› ✓ system"), scrollback=False)
            term.wait_for("automatic")
            term.press("Down", "Down", "Down")
            term.wait_for(re.compile(r"›\s+light"), scrollback=False)
            # not chosen yet, already drawn with it
            term.wait_until(lambda screen: _prompt_colour(term) not in (None, dark), what="the light theme")
            light = _prompt_colour(term)
            term.press("Escape")  # back to the list: the theme of before comes back, nothing saved
            term.wait_for(re.compile(r"› Theme\s+system"), scrollback=False)
            term.wait_until(lambda screen: _prompt_colour(term) == dark, what="the dark theme again")
            assert "theme" not in json.loads(settings.read_text())
            term.press("Enter")
            term.wait_for(re.compile(r"› ✓ system"), scrollback=False)
            term.press("Down", "Down", "Down")
            term.wait_for(re.compile(r"›\s+light"), scrollback=False)
            term.press("Enter")
            term.wait_for(re.compile(r"› Theme\s+light"), scrollback=False)
            assert _prompt_colour(term) == light
            term.press("Escape")
            term.wait_for("Saved theme = light")
            term.press("C-d")
            assert term.wait_exit() == 0
    assert json.loads(settings.read_text())["theme"] == "light"


def test_login_stores_a_hidden_key_0600_and_logout_removes_it(world):
    secret = "sk-test-SECRET-4242"
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.send("/login")
            term.press("Enter")
            term.wait_for("Log in to a provider")
            term.send("anthropic")
            term.press("Enter")
            term.wait_for("API key for anthropic")
            term.send(secret)
            screen = term.wait_for("*" * len(secret), scrollback=False)
            assert secret not in screen
            term.press("Enter")
            term.wait_for("Saved an API key for anthropic")
            auth = world["agent"] / "auth.json"
            assert json.loads(auth.read_text()) == {"anthropic": {"type": "api_key", "key": secret}}
            assert stat.S_IMODE(os.stat(auth).st_mode) == 0o600
            term.send("/logout")
            term.press("Enter")
            term.wait_for("Log out of a provider")
            term.press("Enter")
            term.wait_for("Removed the credential for anthropic")
            assert secret not in term.scrollback()
            term.press("C-d")
            assert term.wait_exit() == 0
    assert json.loads(auth.read_text()) == {}
    for path in session_files(world):
        assert secret not in path.read_text()


def test_login_to_a_cloud_provider_asks_pis_questions(world):
    """/login amazon-bedrock: the method picker, then the profile, stored as pi stores it."""
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.send("/login amazon-bedrock")
            term.press("Enter")
            term.wait_for("Select Amazon Bedrock authentication method:")
            term.wait_for("Existing AWS credential chain")
            term.press("Down")
            term.wait_for(re.compile(r"›\s+AWS profile"), scrollback=False)
            term.press("Enter")
            term.wait_for("Enter AWS profile name")
            term.send("team-profile")
            term.press("Enter")
            term.wait_for("Saved API key for Amazon Bedrock")
            assert "AWS credential provider chain" in term.scrollback()
            term.press("C-d")
            assert term.wait_exit() == 0
    auth = world["agent"] / "auth.json"
    assert json.loads(auth.read_text()) == {
        "amazon-bedrock": {"type": "api_key", "env": {"AWS_PROFILE": "team-profile"}}
    }


def test_trust_shows_the_decision_and_saves_a_new_one(world):
    project_settings = world["work"] / ".pi" / "settings.json"
    project_settings.parent.mkdir()
    project_settings.write_text("{}")  # a protected resource: trust matters here
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "--no-approve") as term:
            term.send("/trust")
            term.press("Enter")
            term.wait_for_wrapped(f"Project {world['work']} is not trusted")  # a long path wraps
            term.wait_for("protected resources: .pi/settings.json")
            term.wait_for("Trust this project?")
            term.press("Up")  # from "Do not trust it" (the current state) to "Trust it"
            term.press("Enter")
            term.wait_for("Saved: trust ")
            term.press("C-d")
            assert term.wait_exit() == 0
    saved = json.loads((world["agent"] / "trust.json").read_text())
    assert saved.get(os.path.realpath(world["work"])) is True
