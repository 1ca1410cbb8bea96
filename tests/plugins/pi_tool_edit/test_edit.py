"""edit: argument folding, exact and fuzzy matching, errors, CRLF/BOM, diffs."""

from __future__ import annotations

import pi_tool_edit
import pytest

from tests.support.tools import run, run_error, text_of


@pytest.fixture
def tool():
    return pi_tool_edit.create_tool()


def edit_args(path: str, *pairs: tuple[str, str]) -> dict:
    return {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in pairs]}


async def test_single_edit_and_details(tool, tmp_path):
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    result = await run(tool, edit_args("a.py", ("two", "TWO")), str(tmp_path))
    assert (tmp_path / "a.py").read_text() == "one\nTWO\nthree\n"
    assert "1 block" in text_of(result) and "a.py" in text_of(result)
    details = result.details
    assert details["firstChangedLine"] == 2
    assert "-2 two" in details["diff"] and "+2 TWO" in details["diff"]
    assert details["patch"].startswith("--- a.py\n+++ a.py\n@@ -1,")
    assert "\n-two\n+TWO\n" in details["patch"]


async def test_two_disjoint_edits_apply_against_original(tool, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\ngamma\n")
    # The second oldText would not exist after the first edit if edits were applied incrementally.
    result = await run(tool, edit_args("a.txt", ("alpha", "beta-new"), ("beta\n", "B\n")), str(tmp_path))
    assert (tmp_path / "a.txt").read_text() == "beta-new\nB\ngamma\n"
    assert "2 blocks" in text_of(result)


async def test_not_found_tells_model_what_to_do(tool, tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    message = await run_error(tool, edit_args("a.txt", ("bye", "x")), str(tmp_path))
    assert "Could not find" in message and "a.txt" in message and "exactly" in message
    assert "edits[" not in message
    assert (tmp_path / "a.txt").read_text() == "hello\n"


async def test_multi_edit_errors_name_the_edit(tool, tmp_path):
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    message = await run_error(tool, edit_args("a.txt", ("hello", "x"), ("nothere", "y")), str(tmp_path))
    assert message.startswith("edits[1]")


async def test_duplicate_match_is_refused_with_count(tool, tmp_path):
    (tmp_path / "a.txt").write_text("x = 1\nx = 1\n")
    message = await run_error(tool, edit_args("a.txt", ("x = 1", "x = 2")), str(tmp_path))
    assert "2 times" in message and "unique" in message


async def test_duplicates_are_counted_in_fuzzy_space(tool, tmp_path):
    (tmp_path / "a.txt").write_text("x = 1\nx = 1   \n")
    message = await run_error(tool, edit_args("a.txt", ("x = 1\n", "x = 2\n")), str(tmp_path))
    assert "2 times" in message


async def test_overlapping_edits_refused(tool, tmp_path):
    (tmp_path / "a.txt").write_text("abcdef\n")
    message = await run_error(tool, edit_args("a.txt", ("abcd", "1"), ("cdef", "2")), str(tmp_path))
    assert "edits[0]" in message and "edits[1]" in message and "overlap" in message


async def test_empty_old_text_refused(tool, tmp_path):
    (tmp_path / "a.txt").write_text("abc\n")
    message = await run_error(tool, edit_args("a.txt", ("", "x")), str(tmp_path))
    assert "empty" in message


async def test_no_change_refused(tool, tmp_path):
    (tmp_path / "a.txt").write_text("abc\n")
    message = await run_error(tool, edit_args("a.txt", ("abc", "abc")), str(tmp_path))
    assert "No changes" in message


async def test_empty_edits_list_refused(tool, tmp_path):
    (tmp_path / "a.txt").write_text("abc\n")
    message = await run_error(tool, {"path": "a.txt", "edits": []}, str(tmp_path))
    assert "No edits" in message


async def test_missing_file_names_path_and_code(tool, tmp_path):
    message = await run_error(tool, edit_args("gone.txt", ("a", "b")), str(tmp_path))
    assert "gone.txt" in message and "ENOENT" in message


async def test_legacy_top_level_fields_and_json_string(tool, tmp_path):
    (tmp_path / "a.txt").write_text("one two three\n")
    prepared = tool.prepare_arguments({"path": "a.txt", "oldText": "one", "newText": "1"})
    assert prepared == {"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}]}
    await run(tool, {"path": "a.txt", "oldText": "one", "newText": "1"}, str(tmp_path))
    await run(tool, {"path": "a.txt", "edits": '[{"oldText": "two", "newText": "2"}]'}, str(tmp_path))
    await run(
        tool, {"path": "a.txt", "edits": {"oldText": "three", "newText": "3", "extra": True}}, str(tmp_path)
    )
    assert (tmp_path / "a.txt").read_text() == "1 2 3\n"
    both = tool.prepare_arguments(
        {"path": "p", "edits": [{"oldText": "a", "newText": "b"}], "oldText": "c", "newText": "d"}
    )
    assert [e["oldText"] for e in both["edits"]] == ["a", "c"]


async def test_crlf_and_bom_preserved_with_lf_old_text(tool, tmp_path):
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\nline three\r\n")
    await run(tool, edit_args("win.txt", ("line one\nline two", "first\nsecond\nextra")), str(tmp_path))
    assert path.read_bytes() == b"\xef\xbb\xbffirst\r\nsecond\r\nextra\r\nline three\r\n"


async def test_mixed_line_endings_untouched_outside_edit(tool, tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"a\r\nb\nc\rd\n")
    await run(tool, edit_args("mixed.txt", ("b", "B")), str(tmp_path))
    assert path.read_bytes() == b"a\r\nB\nc\rd\n"
    await run(tool, edit_args("mixed.txt", ("c\nd", "C\nD")), str(tmp_path))
    assert path.read_bytes() == b"a\r\nB\nC\rD\n"


async def test_fuzzy_smart_quotes(tool, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(
        "keep \u201cthis\u201d\nsay \u201chello\u201d and \u2018bye\u2019\nlast \u201cline\u201d\n"
    )
    await run(tool, edit_args("q.txt", ("say \"hello\" and 'bye'", 'say "hi"')), str(tmp_path))
    assert path.read_text() == 'keep \u201cthis\u201d\nsay "hi"\nlast \u201cline\u201d\n'


async def test_fuzzy_trailing_whitespace_only_edited_lines_change(tool, tmp_path):
    path = tmp_path / "ws.py"
    path.write_bytes(b"untouched   \r\ndef f():   \r\n    return 1  \r\nend\t\r\n")
    await run(tool, edit_args("ws.py", ("def f():\n    return 1", "def f():\n    return 2")), str(tmp_path))
    assert path.read_bytes() == b"untouched   \r\ndef f():\r\n    return 2\r\nend\t\r\n"


async def test_fuzzy_dashes_and_unicode_spaces(tool, tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("range 1\u20132\nnbsp\u00a0here\nother\n")
    await run(tool, edit_args("d.txt", ("range 1-2", "range 1-3"), ("nbsp here", "plain")), str(tmp_path))
    assert path.read_text() == "range 1-3\nplain\nother\n"


async def test_fuzzy_two_edits_on_one_line(tool, tmp_path):
    path = tmp_path / "l.txt"
    path.write_text("a \u201cx\u201d b \u201cy\u201d   \nnext\n")
    await run(tool, edit_args("l.txt", ('"x"', "X"), ('"y"', "Y")), str(tmp_path))
    assert path.read_text() == "a X b Y\nnext\n"


async def test_fuzzy_match_consuming_newline(tool, tmp_path):
    path = tmp_path / "n.txt"
    path.write_text("foo  \nbar\nbaz\n")
    await run(tool, edit_args("n.txt", ("foo\nbar\n", "qux\n")), str(tmp_path))
    assert path.read_text() == "qux\nbaz\n"


async def test_invalid_utf8_bytes_survive(tool, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(b"caf\xe9 ok\nchange me\n")
    await run(tool, edit_args("latin.txt", ("change me", "changed")), str(tmp_path))
    assert path.read_bytes() == b"caf\xe9 ok\nchanged\n"


async def test_first_changed_line_with_multiple_edits(tool, tmp_path):
    (tmp_path / "m.txt").write_text("".join(f"l{i}\n" for i in range(1, 31)))
    result = await run(tool, edit_args("m.txt", ("l25\n", "L25\n"), ("l7\n", "L7\n")), str(tmp_path))
    assert result.details["firstChangedLine"] == 7
    assert "..." in result.details["diff"]  # two hunks separated
    assert result.details["patch"].count("@@ -") == 2


async def test_randomised_exact_edits_match_plain_replacement(tool, tmp_path):
    import random

    rng = random.Random(1234)
    words = ["alpha", "beta", "gamma", "delta", "  indent", "x = 1;", "", "end"]
    for round_number in range(60):
        eol = rng.choice(["\n", "\r\n"])
        lines = [f"{rng.choice(words)} <{i}>" for i in range(rng.randint(1, 12))]
        original = eol.join(lines) + (eol if rng.random() < 0.7 else "")
        start = rng.randrange(len(lines))
        end = min(len(lines), start + rng.randint(1, 3))
        old = "\n".join(lines[start:end])
        new = f"NEW{round_number}\nsecond"
        path = tmp_path / f"r{round_number}.txt"
        path.write_bytes(original.encode())
        await run(tool, edit_args(path.name, (old, new)), str(tmp_path))
        expected = original.replace(eol.join(lines[start:end]), new.replace("\n", eol), 1)
        assert path.read_bytes().decode() == expected, (original, old)


async def test_randomised_fuzzy_edits_leave_other_lines_byte_identical(tool, tmp_path):
    import random

    rng = random.Random(99)
    for round_number in range(40):
        eol = rng.choice(["\n", "\r\n"])
        count = rng.randint(3, 10)
        plain = [f"say \u201citem {i}\u201d" if rng.random() < 0.5 else f"line {i}" for i in range(count)]
        stored = [text + rng.choice(["", " ", "\t ", "   "]) for text in plain]
        original = eol.join(stored) + eol
        target = rng.randrange(count)
        # Smart quotes on the target line: the plain-quote oldText cannot match exactly.
        plain[target] = f"say \u201citem {target}\u201d"
        stored[target] = plain[target] + "  "
        original = eol.join(stored) + eol
        old = plain[target].replace("\u201c", '"').replace("\u201d", '"')
        path = tmp_path / f"f{round_number}.txt"
        path.write_bytes(original.encode())
        await run(tool, edit_args(path.name, (old, f"REPLACED {round_number}")), str(tmp_path))
        result = path.read_bytes().decode().split(eol)
        assert result[target] == f"REPLACED {round_number}"
        for index, line in enumerate(stored):
            if index != target:
                assert result[index] == line
