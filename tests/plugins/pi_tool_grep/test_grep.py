"""grep: ripgrep output format, ignore rules, options, limits, long lines, errors."""

from __future__ import annotations

import pi_tool_grep
import pytest

from pi_host.lib.toolkit import find_ripgrep
from tests.support.tools import run, run_error, text_of

pytestmark = pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")


@pytest.fixture
def tool():
    return pi_tool_grep.create_tool()


def matched_files(text: str) -> set[str]:
    return {line.split(":")[0] for line in text.splitlines() if ":" in line and not line.startswith("[")}


def test_ripgrep_lookup_order(tmp_path):
    import os
    import sys

    agent = tmp_path / "agent-dir"
    wheel_rg = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.exists(wheel_rg):  # the ripgrep wheel installs rg next to the interpreter
        assert find_ripgrep(str(agent)) == wheel_rg
    (agent / "bin").mkdir(parents=True)
    own = agent / "bin" / "rg"
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    assert find_ripgrep(str(agent)) == str(own)  # <agent dir>/bin comes first


async def test_match_lines_and_ignore_rules(tool, project):
    result = await run(tool, {"pattern": "needle"}, str(project))
    files = matched_files(text_of(result))
    assert "src/main.py" in files and "README.md" in files
    assert ".hidden/secret.txt" in files  # hidden included
    assert "keep.log" in files  # re-included by !keep.log
    assert "debug.log" not in files and "build/out.txt" not in files
    assert "src/generated/gen.py" not in files and "src/cache.tmp" not in files  # nested .gitignore
    assert "src/main.py:4:     return 'needle'" in text_of(result)


async def test_context_lines_use_dashes(tool, project):
    result = await run(tool, {"pattern": "return", "path": "src", "context": 1}, str(project))
    assert text_of(result).splitlines() == [
        "main.py-3- def main():",
        "main.py:4:     return 'needle'",
        "main.py-5- ",
    ]


async def test_file_target_uses_basename(tool, project):
    result = await run(tool, {"pattern": "import", "path": "src/main.py"}, str(project))
    assert text_of(result) == "main.py:1: import os"


async def test_ignore_case_literal_and_glob(tool, project):
    result = await run(tool, {"pattern": "NEEDLE", "glob": "*.py"}, str(project))
    assert matched_files(text_of(result)) == {"src/util.py"}
    result = await run(tool, {"pattern": "NEEDLE", "glob": "./*.py", "ignoreCase": True}, str(project))
    assert "src/main.py" in matched_files(text_of(result))
    (project / "re.txt").write_text("a.b\naxb\n")
    result = await run(tool, {"pattern": "a.b", "literal": True, "path": "re.txt"}, str(project))
    assert text_of(result) == "re.txt:1: a.b"


async def test_limit_below_one_means_one_and_notice_only_when_more(tool, project):
    result = await run(tool, {"pattern": "needle", "path": "src", "limit": 0}, str(project))
    text = text_of(result)
    assert len([line for line in text.splitlines() if ":" in line and not line.startswith("[")]) == 1
    assert "limit=2" in text
    assert result.details["matchLimitReached"] == 1
    single = await run(tool, {"pattern": "import", "path": "src", "limit": 1}, str(project))
    assert "limit" not in text_of(single)
    assert single.details is None


async def test_trailing_context_after_limit_is_kept(tool, tmp_path):
    (tmp_path / "f.txt").write_text("hit 1\nafter 1\nafter 2\nhit 2\n")
    result = await run(tool, {"pattern": "hit", "limit": 1, "context": 2}, str(tmp_path))
    lines = text_of(result).split("\n\n[")[0].splitlines()
    assert lines == ["f.txt:1: hit 1", "f.txt-2- after 1", "f.txt-3- after 2"]


async def test_long_lines_cut_at_500_chars(tool, tmp_path):
    (tmp_path / "long.txt").write_text("needle" + "x" * 1000 + "\n")
    result = await run(tool, {"pattern": "needle"}, str(tmp_path))
    first = text_of(result).splitlines()[0]
    assert len(first) < 560 and "truncated" in first
    assert result.details["linesTruncated"] is True
    assert "500" in text_of(result)


async def test_no_matches_is_not_an_error(tool, project):
    result = await run(tool, {"pattern": "zzz-not-there"}, str(project))
    assert "No matches" in text_of(result)
    assert not result.is_error


async def test_missing_path_and_bad_regex(tool, project):
    assert "not found" in await run_error(tool, {"pattern": "x", "path": "missing"}, str(project))
    message = await run_error(tool, {"pattern": "(unclosed"}, str(project))
    assert "regex" in message.lower()


async def test_output_capped_at_50kb(tool, tmp_path):
    (tmp_path / "many.txt").write_text(("needle " + "y" * 400 + "\n") * 300)
    result = await run(tool, {"pattern": "needle", "limit": 1000}, str(tmp_path))
    assert len(text_of(result).split("\n\n[")[0].encode()) <= 51200
    assert "50.0KB" in text_of(result)
    assert result.details["truncation"]["truncated"] is True
