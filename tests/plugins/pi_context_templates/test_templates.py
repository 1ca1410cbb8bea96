"""Prompt templates: discovery, argument parsing, substitution (reference §8.5, §11 item 58)."""

from __future__ import annotations

import pytest
from pi_context_templates.templates import Locations, discover, expand, parse_args, substitute


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a "b c"', ["a", "b c"]),
        ("  a   b  ", ["a", "b"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ('""', [""]),
        ('a "" b', ["a", "", "b"]),
        (r'"say \"hi\""', ['say "hi"']),
        (r'"back\slash"', [r"back\slash"]),
        (r"'it\'s'", ["it's"]),
        (r'"mixed \' quote"', [r"mixed \' quote"]),
        ('a"b c"', ['a"b', 'c"']),  # a quote opens quoting only at the start of an argument
        ('"unclosed arg', ['"unclosed', "arg"]),
        ("line\nbreak\ttab", ["line", "break", "tab"]),
        ("", []),
    ],
)
def test_parse_args(text, expected):
    assert parse_args(text) == expected


@pytest.mark.parametrize(
    ("template", "args", "expected"),
    [
        ("Hello ${1:-world} $@", ["a", "b c"], "Hello a a b c"),  # §11 item 58
        ("Hello ${1:-world}", [], "Hello world"),
        ("Hello ${1:-world}", [""], "Hello world"),
        ("$1-$2-$3", ["x", "y"], "x-y-"),
        ("$ARGUMENTS|$@", ["p", "q"], "p q|p q"),
        ("${@:-none}", [], "none"),
        ("${ARGUMENTS:-none}", ["a"], "a"),
        ("${@:2}", ["a", "b", "c"], "b c"),
        ("${@:0}", ["a", "b"], "a b"),
        ("${@:2:1}", ["a", "b", "c"], "b"),
        ("${@:5}", ["a"], ""),
        ("$10", [str(i) for i in range(1, 11)], "10"),
        ("cost: $5", [], "cost: "),
        ("no placeholders", ["x"], "no placeholders"),
        ("$1", ["$2"], "$2"),  # substituted values are never expanded again
        ("${1:-$2}", [], "$2"),
        ("$", ["x"], "$"),
    ],
)
def test_substitute(template, args, expected):
    assert substitute(template, args) == expected


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_discovery_order_and_collisions(isolated_environment, tmp_path):
    agent, cwd = isolated_environment["agent"], tmp_path / "proj"
    write(agent / "prompts" / "review.md", "global review")
    write(cwd / ".pi" / "prompts" / "review.md", "project review")
    write(cwd / ".pi" / "prompts" / "fix.md", "---\ndescription: Fix it\nargument-hint: <file>\n---\nFix $1")
    write(cwd / ".pi" / "prompts" / "nested" / "deep.md", "not loaded (no recursion)")
    write(tmp_path / "extra" / "ship.md", "Ship it")
    found = discover(
        Locations(agent_dir=str(agent), cwd=str(cwd), cli_paths=[str(tmp_path / "extra" / "ship.md")])
    )
    assert sorted(found.templates) == ["fix", "review", "ship"]
    assert found.templates["review"].body == "global review"
    assert any("review" in w and "already defined" in w for w in found.warnings)
    fix = found.templates["fix"]
    assert fix.description == "Fix it" and fix.argument_hint == "<file>" and fix.body == "Fix $1"


def test_untrusted_project_and_disabled_discovery(isolated_environment, tmp_path):
    agent, cwd = isolated_environment["agent"], tmp_path / "proj"
    write(agent / "prompts" / "g.md", "g")
    write(cwd / ".pi" / "prompts" / "p.md", "p")
    write(tmp_path / "cli.md", "c")
    assert list(discover(Locations(str(agent), str(cwd), trusted=False)).templates) == ["g"]
    disabled = discover(
        Locations(str(agent), str(cwd), include_defaults=False, cli_paths=[str(tmp_path / "cli.md")])
    )
    assert list(disabled.templates) == ["cli"]


def test_settings_paths_directories_and_exclusions(isolated_environment, tmp_path):
    write(tmp_path / "team" / "a.md", "a")
    write(tmp_path / "team" / "b.md", "b")
    found = discover(
        Locations(
            str(isolated_environment["agent"]),
            str(tmp_path),
            settings_entries=["team", f"-{tmp_path / 'team' / 'b.md'}"],
        )
    )
    assert list(found.templates) == ["a"]


def test_description_falls_back_to_first_line(isolated_environment, tmp_path):
    write(tmp_path / "p" / "long.md", "\n\n" + "x" * 70 + "\nmore")
    write(tmp_path / "p" / "short.md", "Short line\n")
    found = discover(
        Locations(str(isolated_environment["agent"]), str(tmp_path), cli_paths=[str(tmp_path / "p")])
    )
    assert found.templates["long"].description == "x" * 60 + "..."
    assert found.templates["short"].description == "Short line"


def test_expand(isolated_environment, tmp_path):
    write(tmp_path / "p" / "greet.md", "Hello ${1:-world} $@")
    templates = discover(
        Locations(str(isolated_environment["agent"]), str(tmp_path), cli_paths=[str(tmp_path / "p")])
    ).templates
    assert expand('/greet a "b c"', templates) == "Hello a a b c"
    assert expand("/greet", templates) == "Hello world "
    assert expand("/greet\nmulti\nline", templates) == "Hello multi multi line"
    assert expand("/unknown x", templates) is None
    assert expand("greet x", templates) is None


def test_settings_globs_expand(isolated_environment, tmp_path):
    write(tmp_path / "t" / "a.md", "a")
    write(tmp_path / "t" / "b.txt", "not a template")
    write(tmp_path / "t" / "c.md", "c")
    found = discover(
        Locations(str(isolated_environment["agent"]), str(tmp_path), settings_entries=["t/*.md"])
    )
    assert list(found.templates) == ["a", "c"]


def test_parse_cache_gives_same_templates_and_sees_edits(isolated_environment, tmp_path):
    from pi_host.lib.frontmatter import StatCache

    path = tmp_path / "p" / "fix.md"
    write(path, "---\ndescription: Fix it\nargument-hint: <file>\n---\nFix $1")
    write(tmp_path / "p" / "bad.md", "---\ndescription: [oops\n---\nBody $1")
    where = Locations(str(isolated_environment["agent"]), str(tmp_path), cli_paths=[str(tmp_path / "p")])
    cold = discover(where, StatCache("prompt-templates"))
    warm = discover(where, StatCache("prompt-templates"))
    assert warm.templates["fix"].body is None  # served from the cache, body read on use
    assert expand("/fix a.py", warm.templates) == expand("/fix a.py", cold.templates) == "Fix a.py"
    for name in ("fix", "bad"):
        assert (warm.templates[name].description, warm.templates[name].argument_hint) == (
            cold.templates[name].description,
            cold.templates[name].argument_hint,
        )
    assert warm.warnings == cold.warnings and len(warm.warnings) == 1
    write(path, "---\ndescription: Fix it properly\n---\nRepair $1 now")
    edited = discover(where, StatCache("prompt-templates"))
    assert edited.templates["fix"].description == "Fix it properly"
    assert expand("/fix b.py", edited.templates) == "Repair b.py now"
