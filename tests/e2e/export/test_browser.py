"""The exported page in a real browser: headless Chromium runs the page script and dumps the DOM.

Skipped when Chromium is not installed (``apt-get install chromium``; .ci/run does it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_host.lib.export import export_session_file
from tests.lib.export.test_render import LEAF_PATH
from tests.support import export_sample as sample
from tests.support.html_dom import container_attrs, entry_ids, section
from tests.support.paths import SESSION_FIXTURES

FIXTURES = SESSION_FIXTURES
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    """The DOM after the page script ran; fails on any console message (a script error or a
    Content-Security-Policy refusal would show there)."""
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    return done.stdout


@pytest.fixture
def exported(tmp_path) -> Path:
    source = sample.write(tmp_path / "s.jsonl")
    return Path(export_session_file(str(source), str(tmp_path / "page.html")))


def test_the_page_script_runs_and_shows_the_active_branch(exported, tmp_path):
    dom = dump_dom(exported, tmp_path / "profile")
    assert '<html lang="en" class="js">' in dom
    assert container_attrs(dom, "conversation")["data-rendered"] == "script"
    assert entry_ids(dom, "conversation") == LEAF_PATH
    conversation = section(dom, "conversation")
    assert "Write a <strong>script</strong> for this" in conversation
    assert '<span class="k">def</span>' in conversation  # pygments spans from the python fence
    assert re.search(
        r'<details class="tool" data-call="call_1"><summary><span class="tool-name">bash</span>', conversation
    )
    assert "total 8\napp.py" in section(dom, "e-a1")
    assert "&lt;script&gt;alert('pwned')" in conversation
    assert sample.BRANCH_A_ONLY not in conversation
    assert len(re.findall(r'<li class="[^"]*" data-key=', section(dom, "tree"))) == 14


def test_a_link_to_an_entry_switches_the_conversation_to_its_branch(exported, tmp_path):
    dom = dump_dom(exported, tmp_path / "profile", "#e-a2")
    assert entry_ids(dom, "conversation") == ["m0", "t0", "u1", "a1", "r1", "r2", "a2"]
    assert "u3" in entry_ids(dom, "store")
    conversation = section(dom, "conversation")
    assert sample.BRANCH_A_ONLY in conversation and sample.LEAF_BRANCH_ONLY not in conversation
    assert container_attrs(dom, "conversation")["data-leaf"] == "a2"
    assert re.search(r'<li class="assistant on-path current selected" data-key="a2"', dom)
    assert re.search(r'<li class="user" data-key="u3"', dom)


def test_picking_an_entry_above_the_fork_keeps_the_shown_branch(exported, tmp_path):
    dom = dump_dom(exported, tmp_path / "profile", "#e-u1")
    assert entry_ids(dom, "conversation") == LEAF_PATH


def test_a_session_written_by_pi_renders_in_the_browser(tmp_path):
    page = Path(export_session_file(str(FIXTURES / "pi_basic.jsonl"), str(tmp_path / "basic.html")))
    dom = dump_dom(page, tmp_path / "profile")
    assert container_attrs(dom, "conversation")["data-rendered"] == "script"
    assert entry_ids(dom, "conversation")
    conversation = section(dom, "conversation")
    assert 'class="entry msg user"' in conversation and 'class="entry msg assistant"' in conversation
    assert '<details class="system">' in conversation
