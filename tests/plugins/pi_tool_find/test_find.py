"""find: glob semantics, nested .gitignore via pathspec, limits, directories."""

from __future__ import annotations

import pi_tool_find
import pytest

from tests.support.tools import run, run_error, text_of


@pytest.fixture
def tool():
    return pi_tool_find.create_tool()


def paths(result) -> list[str]:
    return [line for line in text_of(result).split("\n\n[")[0].splitlines()]


async def test_name_pattern_any_depth_respects_nested_gitignore(tool, project):
    found = paths(await run(tool, {"pattern": "*.py"}, str(project)))
    assert set(found) == {"src/main.py", "src/util.py", "src/deep/nested/file.py", "pkg/src/other.py"}


async def test_path_pattern_anchored_at_search_dir(tool, project):
    assert paths(await run(tool, {"pattern": "src/*.py"}, str(project))) == ["src/main.py", "src/util.py"]
    assert paths(await run(tool, {"pattern": "./src/*.py"}, str(project))) == ["src/main.py", "src/util.py"]
    anywhere = set(paths(await run(tool, {"pattern": "**/src/*.py"}, str(project))))
    assert anywhere == {"src/main.py", "src/util.py", "pkg/src/other.py"}


async def test_ts_example_from_reference(tool, tmp_path):
    for name in ("src/a.ts", "pkg/src/b.ts"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert paths(await run(tool, {"pattern": "src/*.ts"}, str(tmp_path))) == ["src/a.ts"]


async def test_hidden_included_and_directories_marked(tool, project):
    found = paths(await run(tool, {"pattern": "*"}, str(project)))
    assert ".env" in found and ".hidden/" in found and ".hidden/secret.txt" in found
    assert "src/" in found and "src/deep/nested/" in found
    assert not any(p.startswith("build") for p in found)
    assert "keep.log" in found and "debug.log" not in found
    assert not any(".git/" in p for p in found)


async def test_nested_repository_starts_fresh(tool, project):
    # vendor/ holds .git: the outer "*.log" rule stops applying inside it.
    assert "vendor/lib.log" in paths(await run(tool, {"pattern": "*.log"}, str(project)))


async def test_search_inside_repo_subdir_uses_parent_rules(tool, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.gen\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.gen").write_text("")
    (tmp_path / "sub" / "b.txt").write_text("")
    assert paths(await run(tool, {"pattern": "*", "path": "sub"}, str(tmp_path))) == ["b.txt"]


async def test_smart_case(tool, tmp_path):
    (tmp_path / "README.MD").write_text("")
    assert paths(await run(tool, {"pattern": "*.md"}, str(tmp_path))) == ["README.MD"]
    assert "No files" in text_of(await run(tool, {"pattern": "*.Md"}, str(tmp_path)))


async def test_braces_and_classes(tool, tmp_path):
    for name in ("a.js", "b.ts", "c.py", "d1.txt", "dx.txt"):
        (tmp_path / name).write_text("")
    assert paths(await run(tool, {"pattern": "*.{js,ts}"}, str(tmp_path))) == ["a.js", "b.ts"]
    assert paths(await run(tool, {"pattern": "d[0-9].txt"}, str(tmp_path))) == ["d1.txt"]


async def test_limit_and_notice(tool, tmp_path):
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("")
    result = await run(tool, {"pattern": "*.txt", "limit": 3}, str(tmp_path))
    assert len(paths(result)) == 3
    assert "limit=6" in text_of(result)
    assert result.details["resultLimitReached"] == 3
    exact = await run(tool, {"pattern": "*.txt", "limit": 5}, str(tmp_path))
    assert "limit" not in text_of(exact)
    one = await run(tool, {"pattern": "*.txt", "limit": 0}, str(tmp_path))
    assert len(paths(one)) == 1


async def test_missing_path_and_no_results(tool, tmp_path):
    assert "not found" in await run_error(tool, {"pattern": "*", "path": "nope"}, str(tmp_path))
    assert "No files" in text_of(await run(tool, {"pattern": "*.zig"}, str(tmp_path)))
