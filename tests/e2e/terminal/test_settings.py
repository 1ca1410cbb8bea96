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


def test_settings_saves_choices_and_keeps_keys_it_does_not_know(world):
    settings = world["agent"] / "settings.json"
    settings.write_text(json.dumps({"compaction": {"enabled": False}, "myPlugin": {"colour": "teal"}}))
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.send("/settings")
            term.press("Enter")
            term.wait_for("Settings (saved to the user settings.json)")
            term.send("steering")
            term.wait_for("(1/1)")
            term.press("Enter")
            term.wait_for("Set Steering mode (Enter while working)")
            term.send("all")
            term.wait_for("(1/1)")
            term.press("Enter")
            term.wait_for("Saved steeringMode = all")
            term.send("theme")  # the settings list opens again after a save
            term.wait_for(re.compile(r"› Theme  system"), scrollback=False)
            term.press("Enter")
            term.wait_for("Set Theme")
            term.send("light")
            term.wait_for("(1/1)")
            term.press("Enter")
            term.wait_for("Saved theme = light")
            term.wait_for(re.compile(r"Theme  light"), scrollback=False)  # the list, open again
            term.press("Escape")
            term.wait_gone("Settings (saved")
            term.press("C-d")
            assert term.wait_exit() == 0
    data = json.loads(settings.read_text())
    assert data == {
        "compaction": {"enabled": False},
        "myPlugin": {"colour": "teal"},
        "steeringMode": "all",
        "theme": "light",
    }


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
