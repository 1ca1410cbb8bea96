from __future__ import annotations

import time
from pathlib import Path

import pytest
from pi_mode_interactive.editor.completion import (
    FileIndex,
    PiCompleter,
    commands_from,
    extract_mention,
    extract_path,
)
from pi_mode_interactive.editor.fuzzy import fuzzy_filter, fuzzy_score
from prompt_toolkit.completion import CompleteEvent, Completion
from prompt_toolkit.document import Document

COMMANDS = [
    ("model", "Select a model"),
    ("new", "Start a new session"),
    ("resume", "Resume another session"),
    ("compact", "Compact the current context"),
    ("skill:review", "Review code"),
    ("mcp", "Manage MCP servers"),
]


def complete(
    completer: PiCompleter, text: str, *, tab: bool = False, cursor: int | None = None
) -> list[Completion]:
    document = Document(text, len(text) if cursor is None else cursor)
    return list(completer.get_completions(document, CompleteEvent(completion_requested=tab)))


def apply(text: str, completion: Completion) -> str:
    return text[: len(text) + completion.start_position] + completion.text


def make_tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")


@pytest.fixture
def root(tmp_path) -> Path:
    """An empty directory (tmp_path itself holds the isolated home/agent/work dirs)."""
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    make_tree(
        root,
        [
            "README.md",
            "readme-old.txt",
            "src/app/main.py",
            "src/app/reader.py",
            "src/util/strings.py",
            "docs/guide.md",
            "my dir/notes file.txt",
            ".env",
            ".git/config",
            ".git/objects/ab/cdef",
            "node_modules/pkg/index.js",
            "build/out.bin",
            "debug.log",
            "sub/keep.txt",
            "sub/secret.txt",
            "sub/deep/secret.txt",
        ],
    )
    (root / ".gitignore").write_text("node_modules/\n/build\n*.log\n")
    (root / "sub" / ".gitignore").write_text("secret.txt\n")
    return root


# -- slash commands ------------------------------------------------------------------------------


def test_slash_commands_prefix_then_fuzzy_with_descriptions(tmp_path):
    completer = PiCompleter(commands_from(COMMANDS), tmp_path)
    results = complete(completer, "/m")
    names = [c.display_text for c in results]
    # prefix matches in provider order first, then the fuzzy ones ("compact" has an m)
    assert names[:2] == ["/model", "/mcp"]
    assert "/compact" in names[2:]
    assert "/new" not in names
    model = results[0]
    assert model.display_meta_text == "Select a model"
    assert apply("/m", model) == "/model "


def test_slash_fuzzy_and_skill_names(tmp_path):
    completer = PiCompleter(commands_from(COMMANDS), tmp_path)
    assert [c.display_text for c in complete(completer, "/skrev")] == ["/skill:review"]
    assert [c.display_text for c in complete(completer, "/rsm")] == ["/resume"]
    assert complete(completer, "/zzz") == []
    assert len(complete(completer, "/")) == len(COMMANDS)


def test_slash_only_at_start_of_first_line_and_before_arguments(tmp_path):
    completer = PiCompleter(commands_from(COMMANDS), tmp_path)
    assert complete(completer, "hello\n/mo") == []
    assert complete(completer, "/model cla") == []
    assert [c.display_text for c in complete(completer, "  /mo")] == ["/model"]


def test_commands_provider_is_called_live_and_errors_are_swallowed(tmp_path):
    commands = [("one", "")]
    completer = PiCompleter(lambda: commands, tmp_path)
    assert [c.display_text for c in complete(completer, "/")] == ["/one"]
    commands.append(("two", "added later"))
    assert [c.display_text for c in complete(completer, "/t")] == ["/two"]

    def broken():
        raise RuntimeError("boom")

    assert complete(PiCompleter(broken, tmp_path), "/") == []


# -- @ mentions ----------------------------------------------------------------------------------


def test_index_respects_gitignore_and_skips_git(project):
    index = FileIndex(project)
    paths = {entry.display for entry in index.entries()}
    assert {"README.md", "src/", "src/app/main.py", ".env", "sub/keep.txt", "my dir/notes file.txt"} <= paths
    for ignored in (
        "node_modules/",
        "node_modules/pkg/index.js",
        "build/",
        "debug.log",
        ".git/",
        ".git/config",
    ):
        assert ignored not in paths
    # nested .gitignore applies to its own subtree only, at any depth below it
    assert "sub/secret.txt" not in paths
    assert "sub/deep/secret.txt" not in paths
    # breadth first: shallow entries come first
    depths = [entry.depth for entry in index.entries()]
    assert depths == sorted(depths)


def test_git_info_exclude_is_respected(project):
    (project / ".git" / "info").mkdir()
    (project / ".git" / "info" / "exclude").write_text("docs/\n")
    paths = {entry.display for entry in FileIndex(project).entries()}
    assert "docs/" not in paths and "docs/guide.md" not in paths


def test_mention_ranking_basename_prefix_then_substring_then_subsequence(root):
    make_tree(
        root,
        ["zz/xreaderx.py", "reader.py", "lib/reader_utils.py", "r/e/a/d/e/r.txt", "notes/areader.md"],
    )
    index = FileIndex(root)
    ranked = [entry.path for entry in index.search("reader")]
    assert ranked[:2] == ["reader.py", "lib/reader_utils.py"]  # basename prefix, shorter first
    assert set(ranked[2:4]) == {"zz/xreaderx.py", "notes/areader.md"}  # basename substring
    assert ranked[-1] == "r/e/a/d/e/r.txt"  # only a subsequence of the path
    assert fuzzy_score("zzz", "reader.py") is None


def test_mention_completion_inserts_at_path_and_dirs_keep_going(project):
    completer = PiCompleter(commands_from([]), project)
    text = "please look at @mainp"
    results = complete(completer, text)
    assert results, "expected a match for the subsequence 'mainp'"
    assert apply(text, results[0]) == "please look at @src/app/main.py "

    text = "see @sr"
    first = complete(completer, text)[0]
    assert first.display_text == "src/"
    assert apply(text, first) == "see @src/"  # no trailing space after a directory


def test_mention_with_slash_matches_full_path(project):
    completer = PiCompleter(commands_from([]), project)
    displays = [c.display_text for c in complete(completer, "@src/app/")]
    assert displays[:2] == ["src/app/main.py", "src/app/reader.py"]


def test_mention_paths_with_spaces_are_quoted(project):
    completer = PiCompleter(commands_from([]), project)
    results = complete(completer, "@notes")
    assert apply("@notes", results[0]) == '@"my dir/notes file.txt" '
    # continuing inside an open quote
    text = 'x @"my di'
    directory = next(c for c in complete(completer, text) if c.display_text == "my dir/")
    assert apply(text, directory) == 'x @"my dir/'  # quote left open to keep typing
    text = 'x @"my dir/no'
    assert apply(text, complete(completer, text)[0]) == 'x @"my dir/notes file.txt" '


def test_mention_token_detection():
    assert extract_mention("hello @src/ma").raw == "src/ma"
    assert extract_mention("(@README").token == "@README"
    assert extract_mention("email me@example") is None
    assert extract_mention('ask @"some thing').quoted is True
    assert extract_mention("no mention here") is None
    assert extract_path("edit ./src/ma").raw == "./src/ma"
    assert extract_path("just words") is None
    assert extract_path("just words", forced=True).raw == "words"


def test_tree_is_walked_once_and_completions_are_fast(root):
    for directory in range(50):
        folder = root / f"pkg{directory:02d}"
        folder.mkdir()
        for number in range(100):
            (folder / f"module_{directory}_{number}.py").write_text("")
    completer = PiCompleter(commands_from([]), root)
    queries = ["@m", "@mod", "@module_3", "@pkg1", "@mdl42", "@py", "@module_49_99", "@zz", "@", "@p0/m"]
    started = time.perf_counter()
    for _round in range(10):
        for query in queries:
            results = complete(completer, query)
            assert len(results) <= 50
    elapsed = time.perf_counter() - started
    assert completer.file_index.walk_count == 1
    assert len(completer.file_index.entries()) == 5050
    assert elapsed < 10.0, f"100 completions over 5,000 files took {elapsed:.2f}s"
    assert [c.display_text for c in complete(completer, "@module_49_99")][0] == "pkg49/module_49_99.py"


def test_index_is_cached_until_refresh(root):
    make_tree(root, ["old.txt"])
    completer = PiCompleter(commands_from([]), root)
    assert [c.display_text for c in complete(completer, "@new")] == []
    (root / "new.txt").write_text("")
    assert [c.display_text for c in complete(completer, "@new")] == []  # still cached
    completer.refresh(wait=True)
    assert [c.display_text for c in complete(completer, "@new")] == ["new.txt"]
    assert completer.file_index.walk_count == 2


def test_max_age_refreshes_in_background(root):
    make_tree(root, ["old.txt"])
    index = FileIndex(root, max_age=0.0)
    assert [entry.path for entry in index.entries()] == ["old.txt"]
    (root / "fresh.txt").write_text("")
    index.entries()  # starts a background refresh and returns the list it has right away
    deadline = time.monotonic() + 5
    while "fresh.txt" not in [entry.path for entry in index._entries or []] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "fresh.txt" in [entry.path for entry in index._entries or []]
    assert index.walk_count >= 2


def test_start_builds_in_background(root):
    make_tree(root, ["a.txt"])
    index = FileIndex(root)
    index.start()
    assert [entry.path for entry in index.entries()] == ["a.txt"]
    assert index.walk_count == 1


def test_index_is_capped(root):
    make_tree(root, [f"f{number:03d}.txt" for number in range(30)])
    index = FileIndex(root, max_files=10)
    assert len(index.entries()) == 10
    assert index.truncated is True


def test_symlink_loops_do_not_hang(root):
    make_tree(root, ["real/file.txt"])
    (root / "real" / "loop").symlink_to(root / "real", target_is_directory=True)
    paths = [entry.path for entry in FileIndex(root).entries()]
    assert "real/file.txt" in paths
    assert len(paths) < 10


# -- filesystem path completion ------------------------------------------------------------------


def test_path_completion_from_cwd_and_relative_dirs(project):
    completer = PiCompleter(commands_from([]), project)
    text = "open ./sr"
    results = complete(completer, text)
    assert [c.display_text for c in results] == ["src/"]
    assert apply(text, results[0]) == "open ./src/"
    text = "open src/app/ma"
    assert apply(text, complete(completer, text)[0]) == "open src/app/main.py"


def test_path_completion_dirs_first_and_hidden_only_when_asked(project):
    completer = PiCompleter(commands_from([]), project)
    displays = [c.display_text for c in complete(completer, "./")]
    assert displays[0].endswith("/")
    assert ".env" not in displays
    assert ".env" in [c.display_text for c in complete(completer, "./.e")]


def test_tab_forces_path_completion_for_plain_words(project):
    completer = PiCompleter(commands_from([]), project)
    assert complete(completer, "edit REA") == []  # not path-like while typing
    results = complete(completer, "edit REA", tab=True)
    assert sorted(c.display_text for c in results) == ["README.md", "readme-old.txt"]


def test_home_paths_and_quoting(project, isolated_environment):
    home = isolated_environment["home"]
    make_tree(home, ["Documents/a.txt", "Downloads/"])
    completer = PiCompleter(commands_from([]), project)
    assert [c.display_text for c in complete(completer, "~/Do")] == ["Documents/", "Downloads/"]
    assert apply("~/Doc", complete(completer, "~/Doc")[0]) == "~/Documents/"
    text = "cat my"
    assert apply(text, complete(completer, text, tab=True)[0]) == 'cat "my dir/'


def test_missing_directory_gives_no_completions(project):
    completer = PiCompleter(commands_from([]), project)
    assert complete(completer, "./nope/x") == []


def test_fuzzy_filter_orders_best_first_and_requires_all_tokens():
    items = ["claude-sonnet-4", "gpt-4o", "claude-opus-4", "gemini-2.5-pro"]
    assert fuzzy_filter("opus", items)[0] == "claude-opus-4"
    assert set(fuzzy_filter("claude 4", items)) == {"claude-sonnet-4", "claude-opus-4"}
    assert fuzzy_filter("", items) == items
    assert fuzzy_filter("xyz", items) == []
    assert fuzzy_score("gpt", "gpt") > fuzzy_score("gpt", "gpt-4o") > fuzzy_score("gpt", "a-g-p-t")
