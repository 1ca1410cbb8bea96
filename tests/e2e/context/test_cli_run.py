"""`pi` itself in a project with AGENTS.md, a skill and a prompt template (subprocess runs)."""

from __future__ import annotations

import json
import os
from functools import partial

import pytest

from tests.support.pi import PI_SCRIPT, run_pi

pytestmark = pytest.mark.skipif(not os.path.exists(PI_SCRIPT[0]), reason="pi entry point not installed")

pi = partial(run_pi, "--model", "faux/faux-1", command=PI_SCRIPT)
"""The ``pi`` console script on the faux model."""


def make_project(work):
    (work / "AGENTS.md").write_text("Use tabs.\n")
    (work / ".pi" / "skills" / "hello").mkdir(parents=True)
    (work / ".pi" / "skills" / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Say hello nicely\n---\nSay hello in French.\n"
    )
    (work / ".pi" / "prompts").mkdir()
    (work / ".pi" / "prompts" / "review.md").write_text(
        "---\ndescription: Review\n---\nReview $1. Focus: ${@:2}"
    )


def events(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_json_run_carries_context_and_expands_template(isolated_environment):
    work = isolated_environment["work"]
    make_project(work)
    result = pi("-a", "--mode", "json", "--no-session", "/review main.py speed memory", cwd=work)
    assert result.returncode == 0, result.stderr
    ends = [e["message"] for e in events(result.stdout) if e["type"] == "message_end"]
    system = next(m for m in ends if m["role"] == "system")
    assert list(system["sections"])[:1] == ["preamble"]
    assert list(system["sections"])[-3:] == ["project_context", "skills", "cwd"]
    assert (
        f'<project_instructions path="{work / "AGENTS.md"}">\nUse tabs.\n'
        in system["sections"]["project_context"]
    )
    assert "<name>hello</name>" in system["sections"]["skills"]
    user = next(m for m in ends if m["role"] == "user")
    assert user["content"][0]["text"] == "Review main.py. Focus: speed memory"


def test_untrusted_print_run_skips_project_resources_with_one_line(isolated_environment):
    work = isolated_environment["work"]
    make_project(work)
    result = pi("-p", "/review main.py", cwd=work)
    assert result.returncode == 0
    assert result.stdout == "faux: /review main.py\n"  # the project template was not loaded
    skipped = [line for line in result.stderr.splitlines() if "not trusted" in line]
    assert len(skipped) == 1 and ".pi/skills" in skipped[0] and ".pi/prompts" in skipped[0]


def test_at_file_arguments_and_missing_file(isolated_environment):
    work = isolated_environment["work"]
    (work / "notes.txt").write_text("hello notes")
    ok = pi("-p", "@notes.txt", "Summarise", cwd=work)
    assert ok.returncode == 0
    assert ok.stdout == f'faux: <file name="{work / "notes.txt"}">\nhello notes\n</file>\nSummarise\n'
    missing = pi("-p", "@absent.txt", "x", cwd=work)
    assert missing.returncode == 1
    assert str(work / "absent.txt") in missing.stderr


def test_prompt_flags_on_the_command_line(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    make_project(work)
    result = pi(
        *("--mode", "json", "--no-session", "-nc", "-ns", "-np"),
        *(
            "--system-prompt",
            "Be a pirate.",
            "--append-system-prompt",
            "one",
            "--append-system-prompt",
            "two",
        ),
        *("--skill", str(work / ".pi" / "skills" / "hello")),
        "/skill:hello bonjour",
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    ends = [e["message"] for e in events(result.stdout) if e["type"] == "message_end"]
    system = next(m for m in ends if m["role"] == "system")
    assert list(system["sections"]) == ["preamble", "addendum", "skills", "cwd"]
    assert system["sections"]["preamble"] == "Be a pirate."
    assert system["sections"]["addendum"] == "<addendum>\none\n\ntwo\n</addendum>"
    user = next(m for m in ends if m["role"] == "user")
    assert user["content"][0]["text"].startswith('<skill name="hello"')
    assert user["content"][0]["text"].endswith("</skill>\n\nbonjour")
